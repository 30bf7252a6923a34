"""vine ingest: folders and files become nodes in one commit, idempotently, and a bad
file is reported without stopping the run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm import Vine
from monkeyllm.ingest import ingest

from ..forestkit import assert_ok, git, head, status


def _meta(root: Path, node_id: str) -> dict:
    text = (root / (node_id + ".md")).read_text(encoding="utf-8")
    return yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))


def _paths(report: dict, bucket: str) -> dict[str, dict]:
    return {Path(e["path"]).name: e for e in report[bucket]}


def test_a_mixed_folder_lands_in_one_commit(vine: Vine, source: Path) -> None:
    before = head(vine.root)
    report = ingest(vine, [source])
    root = vine.root
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert report["commit"] == head(root)
    assert git(root, "log", "-1", "--format=%s").strip() == "ingest(_index): 11 created, 0 updated"
    assert status(root) == ""
    created = _paths(report, "created")
    assert set(created) == {
        "architecture.md",
        "plan.txt",
        "own.md",
        "Own.md",
        "sales.csv",
        "stock.tsv",
        "people.json",
        "config.json",
        "shop.db",
        "logo.png",
        "4412.md",
    }
    assert {k: v["type"] for k, v in created.items()} == {
        "architecture.md": "note",
        "plan.txt": "note",
        "own.md": "note",
        "Own.md": "note",
        "sales.csv": "dataset",
        "stock.tsv": "dataset",
        "people.json": "dataset",
        "config.json": "document",
        "shop.db": "dataset",
        "logo.png": "media",
        "4412.md": "note",
    }
    assert created["architecture.md"]["id"] == "projects/mixer-llm/architecture"
    # Own.md sorts first and takes the plain slug; own.md gets the hash suffix.
    assert created["Own.md"]["id"] == "own"
    assert created["own.md"]["id"].startswith("own-") and len(created["own.md"]["id"]) == 10
    assert report["branches"] == [
        "nota-fiscal/_index",
        "projects/_index",
        "projects/mixer-llm/_index",
    ]
    assert set(_paths(report, "unsupported")) == {"archive.xyz"}
    failed = _paths(report, "failed")
    assert set(failed) == {"latin.txt", "bad.json", "leak.md"}
    assert "not UTF-8" in failed["latin.txt"]["reason"]
    assert "not valid JSON" in failed["bad.json"]["reason"]
    assert "outside the source" in failed["leak.md"]["reason"]
    assert "1 row skipped" in created["sales.csv"]["warnings"][0]
    assert report["counts"] == {
        "created": 11,
        "updated": 0,
        "unchanged": 0,
        "unsupported": 1,
        "failed": 3,
        "stale": 0,
        "conflict": 0,
        "unresolved_links": 0,
    }
    assert vine.problems() == []
    committed = set(git(root, "show", "--name-only", "--format=", "HEAD").split())
    assert all(p.endswith(".md") for p in committed)
    assert "projects/mixer-llm/_index.md" in committed and "_index.md" in committed


def test_nodes_read_back_through_the_calls(vine: Vine, source: Path) -> None:
    report = ingest(vine, [source])
    ids = {Path(e["path"]).name: e["id"] for e in report["created"]}
    arch = assert_ok(vine.look(ids["architecture.md"]))
    assert arch["title"] == "Mixer architecture"
    assert arch["summary"] == (
        "The mixer routes prompts to three models. It keeps a cache of answers."
    )
    assert arch["source"] == "ingest"
    meta = _meta(vine.root, ids["architecture.md"])
    assert meta["source_path"] == "Projects/Mixer LLM/architecture.md"
    assert len(meta["source_hash"]) == 64 and meta["confidence"] == 0.7
    assert meta["origin"].startswith("file://") and meta["origin"].endswith("architecture.md")
    assert "Details" in assert_ok(vine.pick(ids["architecture.md"]))["body"]
    own = _meta(vine.root, ids["own.md"])
    assert own["title"] == "Exchange policy" and own["summary"] == "Return windows per channel."
    assert own["tags"] == ["policy"]
    sales = assert_ok(
        vine.query(ids["sales.csv"], "SELECT region, month, total, code FROM sales ORDER BY month")
    )
    assert sales["rows"] == [
        ["South", "2026-01-05", 10.5, "007"],
        ["North", "2026-02-01", 3.0, "008"],
        ["East", "2026-03-01", 7.0, "009"],
    ]
    look = assert_ok(vine.look(ids["sales.csv"]))
    assert look["query_manual"]["tables"] == {"sales": ["region", "month", "total", "code"]}
    assert look["sample_rows"]["rows"][0] == ["South", "2026-01-05", 10.5, "007"]
    assert assert_ok(vine.query(ids["stock.tsv"], "SELECT SUM(qty) FROM stock"))["rows"] == [[13]]
    people = assert_ok(vine.query(ids["people.json"], "SELECT name, age, active FROM people"))
    assert people["rows"] == [["Ana", 31, 1], ["Bo", None, None]]
    shop = assert_ok(vine.query(ids["shop.db"], "SELECT COUNT(*) FROM items"))
    assert shop["rows"] == [[3]]
    shop_meta = _meta(vine.root, ids["shop.db"])
    assert shop_meta["payload"] == "shop.db" and shop_meta["payload_type"] == "sqlite"
    assert "## Sample rows" in assert_ok(vine.pick(ids["shop.db"]))["body"]
    logo = _meta(vine.root, ids["logo.png"])
    assert logo["type"] == "media" and logo["payload_type"] == "image"
    assert logo["payload"].startswith("_assets/") and (vine.root / logo["payload"]).is_file()
    assert "16×8 pixels" in assert_ok(vine.pick(ids["logo.png"]))["body"]
    assert _meta(vine.root, ids["4412.md"])["aliases"] == ["NF-4412", "nota-fiscal/4412", "4412"]
    assert _meta(vine.root, ids["config.json"])["type"] == "document"
    children = {c["id"] for c in assert_ok(vine.look("projects/_index"))["children"]}
    assert children == {"projects/plan", "projects/mixer-llm/_index"}
    assert (
        "coverage: 1 bananas, 1 sub-branches" in (vine.root / "projects" / "_index.md").read_text()
    )


def test_rerun_edit_curate_and_remove(vine: Vine, source: Path) -> None:
    first = ingest(vine, [source])
    ids = {Path(e["path"]).name: e["id"] for e in first["created"]}
    sha = head(vine.root)
    again = ingest(vine, [source])
    assert again["commit"] is None and head(vine.root) == sha
    assert again["counts"]["unchanged"] == 11 and again["counts"]["created"] == 0
    assert again["branches"] == []

    # A person curates one summary; the source of another changes.
    assert_ok(
        vine.graft(
            ids["architecture.md"],
            {"set_frontmatter": {"summary": "How the mixer routes prompts."}},
        )
    )
    arch = source / "Projects" / "Mixer LLM" / "architecture.md"
    arch.write_text("# Mixer architecture\n\nNow four models.\n", encoding="utf-8")
    plan = source / "Projects" / "plan.txt"
    plan.write_text("Ship the beta in April.\n", encoding="utf-8")
    (source / "sales.csv").write_text("Region,Total\nWest,1\n", encoding="utf-8")
    grafted = head(vine.root)
    third = ingest(vine, [source])
    assert git(vine.root, "rev-parse", "HEAD~1").strip() == grafted
    assert {Path(e["path"]).name for e in third["updated"]} == {
        "architecture.md",
        "plan.txt",
        "sales.csv",
    }
    assert third["counts"]["unchanged"] == 8
    curated = assert_ok(vine.look(ids["architecture.md"]))
    assert curated["summary"] == "How the mixer routes prompts."
    assert "Now four models." in assert_ok(vine.pick(ids["architecture.md"]))["body"]
    refreshed = assert_ok(vine.look(ids["plan.txt"]))
    assert refreshed["summary"] == "Ship the beta in April."
    assert (
        "- [[projects/plan]] — Ship the beta in April."
        in (vine.root / "projects" / "_index.md").read_text()
    )
    rows = assert_ok(vine.query(ids["sales.csv"], "SELECT * FROM sales"))
    assert rows["columns"] == ["region", "total"] and rows["rows"] == [["West", 1]]
    assert status(vine.root) == "" and vine.problems() == []

    # A vanished source is reported and its node kept.
    plan.unlink()
    fourth = ingest(vine, [source])
    assert fourth["commit"] is None
    assert fourth["stale"] == [{"path": str(plan.resolve()), "id": "projects/plan"}]
    assert (vine.root / "projects" / "plan.md").is_file()


def test_a_persons_body_edit_is_never_overwritten_by_a_reingest(vine: Vine, source: Path) -> None:
    """graft replace_section on an ingested note, then its source changes: the node
    stays as the person left it and the report says conflict; prefer_source takes the
    source (tags and links kept either way)."""
    first = ingest(vine, [source])
    ids = {Path(e["path"]).name: e["id"] for e in first["created"]}
    note = ids["architecture.md"]
    body = assert_ok(vine.pick(note))["body"]
    header = (
        next(line[3:] for line in body.split("\n") if line.startswith("## "))
        if "\n## " in body
        else None
    )
    patch: dict[str, Any] = {
        "add_links": [{"rel": "related-to", "target": ids["plan.txt"]}],
        "set_frontmatter": {"tags": ["curated"]},
    }
    patch["replace_section" if header else "append_section"] = {
        "header": header or "Review",
        "body": "Checked by Ana: the router is stateless.",
    }
    assert_ok(vine.graft(note, patch))
    edited = (vine.root / (note + ".md")).read_text()
    arch = source / "Projects" / "Mixer LLM" / "architecture.md"
    arch.write_text("# Mixer architecture\n\nNow five models.\n", encoding="utf-8")
    (source / "Projects" / "plan.txt").write_text("Ship in May.\n", encoding="utf-8")
    report = ingest(vine, [source])
    assert report["conflict"] == [{"path": str(arch), "id": note, "reason": ANY_TEXT}]
    assert "edited" in report["conflict"][0]["reason"]
    assert report["counts"]["conflict"] == 1
    assert [e["id"] for e in report["updated"]] == [ids["plan.txt"]]  # the rest goes on
    assert (vine.root / (note + ".md")).read_text() == edited
    assert "Now five models." not in assert_ok(vine.pick(note))["body"]
    again = ingest(vine, [source])  # still a conflict, still kept
    assert again["counts"]["conflict"] == 1 and again["commit"] is None
    taken = ingest(vine, [source], prefer_source=True)
    assert [e["id"] for e in taken["updated"]] == [note] and taken["conflict"] == []
    picked = assert_ok(vine.pick(note))["body"]
    assert "Now five models." in picked and "stateless" not in picked
    looked = assert_ok(vine.look(note))
    assert looked["tags"] == ["curated"]
    assert {"rel": "related-to", "target": ids["plan.txt"]} in [
        {"rel": e["rel"], "target": e["target"]} for e in looked["edges_out"]
    ]
    arch.write_text("# Mixer architecture\n\nSix now.\n", encoding="utf-8")
    assert [e["id"] for e in ingest(vine, [source])["updated"]] == [note]  # unedited again


def test_wikilinks_resolve_as_the_source_meant_them(vine: Vine, tmp_path: Path) -> None:
    """An Obsidian vault: short names and paths from the source folder become links to
    the nodes their files became; ambiguous and missing names are listed."""
    from monkeyllm.validate import validate

    vault = tmp_path / "vault"
    (vault / "recipes").mkdir(parents=True)
    (vault / "journal").mkdir()
    (vault / "recipes" / "pao-de-queijo.md").write_text(
        "# Pão de queijo\n\nCheese bread from Minas.\n", encoding="utf-8"
    )
    (vault / "recipes" / "notes.md").write_text("# Recipe notes\n\nAbout recipes.\n")
    (vault / "journal" / "notes.md").write_text("# Journal notes\n\nAbout days.\n")
    (vault / "journal" / "sunday.md").write_text(
        "# Sunday\n\nBaked [[pao-de-queijo]] and [[recipes/pao-de-queijo|the bread]] "
        "again, see [[pao-de-queijo#Steps]].\n\nAlso [[notes]], [[ghost-page]] and "
        "[[journal/_index]].\n\n`[[pao-de-queijo]]` in code stays, as does:\n\n"
        "```\n[[pao-de-queijo]]\n```\n",
        encoding="utf-8",
    )
    (vault / "index.md").write_text("# Index\n\nStart at [[notes]].\n")  # which notes?
    report = ingest(vine, [vault], into="notes")
    body = assert_ok(vine.pick("notes/journal/sunday"))["body"]
    assert (
        "Baked [[notes/recipes/pao-de-queijo|pao-de-queijo]] and "
        "[[notes/recipes/pao-de-queijo|the bread]] again, see "
        "[[notes/recipes/pao-de-queijo#Steps|pao-de-queijo]]." in body
    )
    assert "`[[pao-de-queijo]]` in code" in body and "```\n[[pao-de-queijo]]\n```" in body
    assert "Also [[notes/journal/notes|notes]]," in body  # the note's own folder first
    problems = {(e["id"], e["link"]): e["reason"] for e in report["unresolved_links"]}
    assert set(problems) == {
        ("notes/index", "[[notes]]"),
        ("notes/journal/sunday", "[[ghost-page]]"),
        ("notes/journal/sunday", "[[journal/_index]]"),
    }
    ambiguous = problems[("notes/index", "[[notes]]")]
    assert ambiguous.startswith("ambiguous: 2 files")
    assert "notes/journal/notes" in ambiguous and "notes/recipes/notes" in ambiguous
    assert (
        problems[("notes/journal/sunday", "[[ghost-page]]")] == "no file of the source is named so"
    )
    assert report["counts"]["unresolved_links"] == 3
    wiki = [f for f in validate(vine.root) if f.code == "body.broken-wikilink"]
    assert {f.message.split("'")[1] for f in wiki} == {"notes", "ghost-page", "journal/_index"}
    # a second vault file linking to one ingested earlier resolves too
    (vault / "journal" / "monday.md").write_text("# Monday\n\nMore [[Pao-de-Queijo]].\n")
    ingest(vine, [vault], into="notes")
    assert (
        "[[notes/recipes/pao-de-queijo|Pao-de-Queijo]]"
        in assert_ok(vine.pick("notes/journal/monday"))["body"]
    )


class _AnyText(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and bool(other)

    __hash__ = str.__hash__


ANY_TEXT = _AnyText("")


def test_into_a_new_branch_and_single_files(vine: Vine, source: Path, tmp_path: Path) -> None:
    report = ingest(
        vine,
        [source / "stock.tsv", source / "own.md", tmp_path / "missing.md"],
        into="imports/2026",
    )
    assert report["branches"] == ["imports/_index", "imports/2026/_index"]
    assert {e["id"] for e in report["created"]} == {"imports/2026/stock", "imports/2026/own"}
    assert report["failed"] == [
        {"path": str(tmp_path / "missing.md"), "reason": "no such file or folder"}
    ]
    assert vine.problems() == [] and status(vine.root) == ""
    assert (
        ingest(vine, [source / "stock.tsv"], into="imports/2026/_index")["counts"]["unchanged"] == 1
    )


def test_limits_and_refusals(vine: Vine, source: Path) -> None:
    report = ingest(vine, [source / "sales.csv", source / "stock.tsv"], max_bytes=60)
    assert "too large" in _paths(report, "failed")["sales.csv"]["reason"]
    assert _paths(report, "created")["stock.tsv"]["type"] == "dataset"
    overlap = ingest(vine, [vine.root / "_meta"])
    assert "overlaps the forest" in overlap["failed"][0]["reason"]
    assert overlap["commit"] is None
    with pytest.raises(Exception, match="not a valid node id"):
        ingest(vine, [source], into="Bad Name")
    with Vine(vine.root, writable=False) as reader, pytest.raises(Exception, match="read-only"):
        ingest(reader, [source])


def test_a_dialect_without_media_reports_the_file(vine: Vine, source: Path) -> None:
    schema = vine.root / "_meta" / "schema.md"
    schema.write_text(
        schema.read_text().replace(
            "| `media` | an image or audio file, described by its body |\n", ""
        )
    )
    git(vine.root, "commit", "-qam", "drop media")
    report = ingest(vine, [source / "logo.png", source / "own.md"])
    reason = _paths(report, "failed")["logo.png"]["reason"]
    assert reason.startswith("E_SCHEMA: unknown type: media")
    assert report["counts"]["created"] == 1


def test_a_failed_commit_leaves_the_forest_as_it_was(vine: Vine, source: Path) -> None:
    from monkeyllm.writes import transaction

    before = head(vine.root)

    def boom(step: str) -> None:
        if step == "before-commit":
            raise RuntimeError("injected")

    transaction.FAULT = boom
    try:
        with pytest.raises(RuntimeError):
            ingest(vine, [source])
    finally:
        transaction.FAULT = None
    assert head(vine.root) == before and status(vine.root) == ""
    left = [
        p
        for p in vine.root.rglob("*")
        if p.is_file() and p.suffix in (".db", ".png") and "_derived" not in p.parts
    ]
    assert left == []
    assert vine.problems() == []
    assert ingest(vine, [source])["counts"]["created"] == 11


def test_office_files_without_the_extra_are_unsupported(
    vine: Vine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if the extra were not installed (a None entry makes the import machinery
    # report the module absent).
    monkeypatch.setitem(sys.modules, "docx", None)
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    (tmp_path / "brief.docx").write_bytes(b"PK")
    (tmp_path / "book.xlsx").write_bytes(b"PK")
    report = ingest(vine, [tmp_path / "brief.docx", tmp_path / "book.xlsx"])
    assert all('pip install "monkeyllm[ingest]"' in e["reason"] for e in report["unsupported"])
    assert len(report["unsupported"]) == 2 and report["commit"] is None


def test_office_files_with_the_extra(vine: Vine, tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    openpyxl = pytest.importorskip("openpyxl")
    doc = docx.Document()
    doc.add_heading("Quarterly brief", level=0)
    doc.add_paragraph("Revenue grew in the south. Costs stayed flat.")
    doc.add_heading("Numbers", level=1)
    table = doc.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "region", "total"
    table.cell(1, 0).text, table.cell(1, 1).text = "South", "10"
    doc.save(tmp_path / "brief.docx")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Orders 2026"
    sheet.append(["Customer", "Total"])
    sheet.append(["Acme", 12.5])
    sheet.append(["Bolt", 3])
    book.create_sheet("Empty")
    book.save(tmp_path / "book.xlsx")
    (tmp_path / "broken.docx").write_bytes(b"PK not really")
    report = ingest(
        vine, [tmp_path / "brief.docx", tmp_path / "book.xlsx", tmp_path / "broken.docx"]
    )
    created = _paths(report, "created")
    assert created["brief.docx"]["type"] == "document"
    brief = assert_ok(vine.pick(created["brief.docx"]["id"]))
    assert brief["title"] == "Quarterly brief"
    assert "## Numbers" in brief["body"] and "| South | 10 |" in brief["body"]
    assert (
        assert_ok(vine.look(created["brief.docx"]["id"]))["summary"]
        == "Revenue grew in the south. Costs stayed flat."
    )
    rows = assert_ok(
        vine.query(created["book.xlsx"]["id"], "SELECT customer, total FROM orders_2026")
    )
    assert rows["rows"] == [["Acme", 12.5], ["Bolt", 3.0]]
    assert "not a readable .docx" in _paths(report, "failed")["broken.docx"]["reason"]
    assert vine.problems() == [] and status(vine.root) == ""


def test_json_scalars_and_unreadable_office_files_are_named_in_plain_words(
    vine: Vine, tmp_path: Path
) -> None:
    """A JSON file holding one value is described with JSON's names (a string, a
    number, null), and a .docx or .xlsx that does not open says why in words, not
    with the library's exception class (PackageNotFoundError, BadZipFile, KeyError)."""
    pytest.importorskip("docx")
    pytest.importorskip("openpyxl")
    src = tmp_path / "src"
    src.mkdir()
    for name, text in {"s": '"hi"', "n": "4.5", "i": "42", "b": "true", "z": "null"}.items():
        (src / f"{name}.json").write_text(text, encoding="utf-8")
    (src / "text.docx").write_text("a note, not a Word file\n", encoding="utf-8")
    (src / "text.xlsx").write_text("a note, not a workbook\n", encoding="utf-8")
    import zipfile

    with zipfile.ZipFile(src / "empty.docx", "w") as z:
        z.writestr("readme.txt", "no Word parts")
    report = ingest(vine, [src])
    summaries = {
        Path(e["path"]).stem: assert_ok(vine.look(e["id"]))["summary"] for e in report["created"]
    }
    assert summaries == {
        "s": "s: a JSON string value.",
        "n": "n: a JSON number value.",
        "i": "i: a JSON number value.",
        "b": "b: a JSON boolean value.",
        "z": "z: a JSON null value.",
    }
    failed = {Path(e["path"]).name: e["reason"] for e in report["failed"]}
    assert set(failed) == {"text.docx", "text.xlsx", "empty.docx"}
    assert "not a zip package" in failed["text.docx"] and ".doc " in failed["text.docx"]
    assert "not a zip package" in failed["text.xlsx"] and ".xls " in failed["text.xlsx"]
    assert "without the parts" in failed["empty.docx"]
    for reason in failed.values():
        assert not any(w in reason for w in ("Error", "BadZipFile", "KeyError")), reason


def test_a_file_ingested_before_is_not_planted_again_in_another_branch(
    vine: Vine, source: Path
) -> None:
    """Ingesting a file again into another branch reported it "unchanged" (and a changed
    one "updated" where it already was), as if it were now there: it is refused, named
    where its node lives and how to refresh or move it; a transplanted node still
    refreshes where a person moved it."""
    plan = source / "Projects" / "plan.txt"
    assert ingest(vine, [plan], into="notes")["created"][0]["id"] == "notes/plan"
    before = head(vine.root)
    for changed in (False, True):
        if changed:
            plan.write_text("Ship the beta in April. Then gather feedback.\n", encoding="utf-8")
        report = ingest(vine, [plan], into="projects")
        assert report["commit"] is None and head(vine.root) == before
        assert report["counts"] == {**report["counts"], "unchanged": 0, "updated": 0, "failed": 1}
        assert report["failed"] == [
            {
                "path": str(plan),
                "reason": "ingested before as notes/plan, in notes/_index (not under "
                "projects/_index): one file is one node, so it is not planted twice. Ingest "
                "it with into='notes' to refresh it there, or move the node first: "
                "transplant('notes/plan', new_id='projects/plan')",
            }
        ]
    assert vine.look("projects/plan")["error"]["code"] == "E_NOT_FOUND"
    assert_ok(
        vine.plant(
            {
                "id": "projects/_index",
                "type": "branch",
                "parent": "_index",
                "title": "Projects",
                "summary": "Projects and their plans.",
            }
        )
    )
    assert_ok(vine.transplant("notes/plan", "projects/plan"))
    for into in ("notes", "projects"):  # moved out of notes, by a person: it is the node
        plan.write_text(f"Ship it from {into}. Then rest.\n", encoding="utf-8")
        assert [e["id"] for e in ingest(vine, [plan], into=into)["updated"]] == ["projects/plan"]


def test_a_table_summary_counts_its_rows_in_words(vine: Vine, tmp_path: Path) -> None:
    """ "1 row", "2 rows": a summary is read in every listing, "row(s)" in none."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "one.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (src / "two.csv").write_text("a,b\n1,2\n3,4\n5\n", encoding="utf-8")
    report = ingest(vine, [src])
    summaries = {
        Path(e["path"]).stem: assert_ok(vine.look(e["id"]))["summary"] for e in report["created"]
    }
    assert summaries == {"one": "one: 1 row of a, b.", "two": "two: 2 rows of a, b."}
    warned = {Path(e["path"]).stem: e.get("warnings", []) for e in report["created"]}
    assert warned["two"] == ["1 row skipped: wrong number of fields (line 4)"]
