"""plant: notes, branches and datasets, each in one commit with its parent index entry;
every refusal leaves the forest exactly as it was."""

from __future__ import annotations

import datetime
import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm import Vine

from .forestkit import PROSPECTING, assert_error, assert_ok, files_of, git, head, status

TODAY = datetime.date.today().isoformat()
EM = "\u2014"

CLIENTS = {"id": "clients/_index", "type": "branch", "parent": "_index", "title": "Clients",
           "summary": "Clients and prospects of the company."}


# -- helpers -------------------------------------------------------------------------


def split(path: Path) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of a node file, checking the file shape on the way."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and text.endswith("\n"), text
    front, sep, body = text[4:].partition("\n---\n\n")
    assert sep, text
    return yaml.safe_load(front), body


def section_lines(body: str, name: str) -> list[str]:
    """The non-blank lines of the H2 section ``name``."""
    lines = body.split("\n")
    start = lines.index(f"## {name}")
    out = []
    for line in lines[start + 1:]:
        if line.startswith("#") and not line.startswith("###"):
            break
        if line.strip():
            out.append(line)
    return out


def changed_files(root: Path, rev: str = "HEAD") -> set[str]:
    return set(git(root, "show", "--name-only", "--format=", rev).split())


@pytest.fixture
def vine(tmp_path: Path) -> Iterator[Vine]:
    with Vine.init(tmp_path / "f", "Title") as v:
        yield v


@pytest.fixture
def clients(vine: Vine) -> Vine:
    assert_ok(vine.plant(dict(CLIENTS)))
    return vine


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vine]:
    """One forest for the refusals: none of them may change it."""
    with Vine.init(tmp_path_factory.mktemp("refusals") / "f", "Title") as v:
        assert_ok(v.plant(dict(CLIENTS)))
        yield v


# -- notes ---------------------------------------------------------------------------


def test_note_file_index_commit_and_response(vine: Vine) -> None:
    root = vine.root
    before = head(root)
    out = assert_ok(vine.plant({
        "id": "field-notes", "type": "note", "parent": "_index", "title": "Field notes",
        "summary": "Observations taken in the orchard during the harvest.",
        "tags": ["orchard"], "source_path": "inbox/field.txt", "confidence": 1.0,
        "created": "1999-01-01", "updated": "1999-01-01",
        "body": "Pears ripened early along the northern wall.",
    }))
    assert out == {"id": "field-notes", "created": True, "commit": head(root),
                   "trail": ["_index"]}
    assert out["commit"] != before
    meta, body = split(root / "field-notes.md")
    assert set(meta) == {"id", "type", "title", "summary", "created", "updated", "tags",
                         "source_path", "source"}
    assert meta["id"] == "field-notes" and meta["type"] == "note"
    assert meta["title"] == "Field notes"
    assert meta["summary"] == "Observations taken in the orchard during the harvest."
    assert meta["created"] == meta["updated"] == TODAY
    assert meta["source"] == "agent" and meta["tags"] == ["orchard"]
    assert meta["source_path"] == "inbox/field.txt"
    assert body == "# Field notes\n\nPears ripened early along the northern wall.\n"

    imeta, ibody = split(root / "_index.md")
    assert section_lines(ibody, "Direct bananas") == [
        f"- [[field-notes]] {EM} Observations taken in the orchard during the harvest."]
    assert imeta["coverage"] == "1 bananas, 0 sub-branches"
    assert imeta["updated"] == TODAY

    log = git(root, "log", "-1", "--format=%s%n%an <%ae>%n%cn <%ce>%n%P").split("\n")
    assert log[0] == "plant(field-notes): Field notes [source=agent]"
    assert log[1] == log[2] == "vine <vine@monkeyllm.local>"
    assert log[3] == before
    assert changed_files(root) == {"field-notes.md", "_index.md"}
    assert status(root) == ""


def test_empty_body_gets_the_title_and_headed_bodies_are_kept(vine: Vine) -> None:
    assert_ok(vine.plant({"id": "a", "type": "note", "parent": "_index", "title": "Alpha",
                          "summary": "First letter."}))
    assert split(vine.root / "a.md")[1] == "# Alpha\n"
    assert_ok(vine.plant({"id": "b", "type": "note", "parent": "_index", "title": "Beta",
                          "summary": "Second letter.", "body": "# Own title\n\nText."}))
    assert split(vine.root / "b.md")[1] == "# Own title\n\nText.\n"
    assert_ok(vine.plant({"id": "c", "type": "note", "parent": "_index", "title": "Gamma",
                          "summary": "Third letter.", "body": "## Part\n\nText."}))
    assert split(vine.root / "c.md")[1] == "## Part\n\nText.\n"


def test_source_confidence_and_extras(vine: Vine) -> None:
    assert_ok(vine.plant({"id": "m", "type": "note", "parent": "_index", "title": "Manual",
                          "summary": "Written by a person.", "source": "manual",
                          "confidence": 0.7, "origin": "https://example.com/m",
                          "aliases": ["hand note"], "custom_field": {"k": [1, 2]}}))
    meta, _ = split(vine.root / "m.md")
    assert meta["source"] == "manual" and meta["confidence"] == 0.7
    assert meta["origin"] == "https://example.com/m" and meta["aliases"] == ["hand note"]
    assert meta["custom_field"] == {"k": [1, 2]}
    assert git(vine.root, "log", "-1", "--format=%s").strip() == \
        "plant(m): Manual [source=manual]"


def test_entries_in_plant_order_and_coverage(vine: Vine) -> None:
    for leaf in ("zeta", "alpha", "mid"):
        assert_ok(vine.plant({"id": leaf, "type": "note", "parent": "_index",
                              "title": leaf.title(), "summary": f"About {leaf}."}))
    for folder in ("yy", "bb"):
        assert_ok(vine.plant({"id": folder, "type": "branch", "parent": "_index",
                              "title": folder.upper(), "summary": f"Branch {folder}."}))
    meta, body = split(vine.root / "_index.md")
    assert section_lines(body, "Direct bananas") == [
        f"- [[zeta]] {EM} About zeta.", f"- [[alpha]] {EM} About alpha.",
        f"- [[mid]] {EM} About mid."]
    assert section_lines(body, "Sub-branches") == [
        f"- [[yy/_index]] {EM} Branch yy.", f"- [[bb/_index]] {EM} Branch bb."]
    assert meta["coverage"] == "3 bananas, 2 sub-branches"
    # The master keeps its four sections in order.
    heads = [line for line in body.split("\n") if line.startswith("## ")]
    assert heads == ["## Sub-branches", "## Direct bananas", "## Cross trails",
                     "## Landmarks"]
    assert len(git(vine.root, "log", "--format=%H").split()) == 6


def test_planted_node_is_visible_at_once(vine: Vine) -> None:
    other = Vine(vine.root, writable=False)
    try:
        assert_ok(vine.plant({"id": "quince", "type": "note", "parent": "_index",
                              "title": "Quince jelly", "tags": ["preserves"],
                              "summary": "Quince jelly recipe with cardamom and lemon.",
                              "body": "Simmer the quinces with zzcardamomzz pods."}))
        late = Vine(vine.root, writable=False)
        try:
            for reader in (vine, other, late):
                look = assert_ok(reader.look("quince"))
                assert look["summary"] == "Quince jelly recipe with cardamom and lemon."
                assert look["title"] == "Quince jelly"
                found = assert_ok(reader.locate("quince jelly cardamom"))
                assert found["results"][0]["id"] == "quince"
                scanned = assert_ok(reader.scan("_index"))
                assert "quince" in {n["id"] for n in scanned["nodes"]}
                sniffed = assert_ok(reader.sniff("zzcardamomzz"))
                assert [r["id"] for r in sniffed["results"]] == ["quince"]
                children = assert_ok(reader.look("_index"))["children"]
                assert "quince" in {c["id"] for c in children}
        finally:
            late.close()
    finally:
        other.close()


# -- branches ------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["x", "x/_index"])
def test_branch_id_forms(vine: Vine, given: str) -> None:
    out = assert_ok(vine.plant({"id": given, "type": "branch", "parent": "_index",
                                "title": "X", "summary": "The x branch."}))
    assert out["id"] == "x/_index" and out["trail"] == ["_index"]
    meta, _ = split(vine.root / "x" / "_index.md")
    assert meta["id"] == "x/_index" and meta["type"] == "branch"
    assert meta["coverage"] == "0 bananas, 0 sub-branches"
    assert git(vine.root, "log", "-1", "--format=%s").strip() == \
        "plant(x/_index): X [source=agent]"
    assert changed_files(vine.root) == {"x/_index.md", "_index.md"}
    _, body = split(vine.root / "_index.md")
    assert section_lines(body, "Sub-branches") == [f"- [[x/_index]] {EM} The x branch."]
    assert section_lines(body, "Direct bananas") == []
    assert assert_ok(vine.look("x/_index"))["type"] == "branch"


def test_branch_with_empty_body_is_only_its_title(vine: Vine) -> None:
    """forest-format §2.3: "A branch planted with an empty body gets only `# <Title>`.
    Missing sections are appended at the end of the body as `\\n\\n## <Name>\\n`"."""
    assert_ok(vine.plant({"id": "x", "type": "branch", "parent": "_index", "title": "X",
                          "summary": "The x branch."}))
    assert split(vine.root / "x" / "_index.md")[1] == "# X\n"
    assert_ok(vine.plant({"id": "x/leaf", "type": "note", "parent": "x", "title": "Leaf",
                          "summary": "A leaf."}))
    assert split(vine.root / "x" / "_index.md")[1] == \
        f"# X\n\n## Direct bananas\n\n- [[x/leaf]] {EM} A leaf.\n"


def test_three_levels_deep(vine: Vine) -> None:
    assert_ok(vine.plant({"id": "a", "type": "branch", "parent": "_index", "title": "A",
                          "summary": "Level one."}))
    assert_ok(vine.plant({"id": "a/b/_index", "type": "branch", "parent": "a",
                          "title": "B", "summary": "Level two."}))
    assert_ok(vine.plant({"id": "a/b/c", "type": "branch", "parent": "a/b/_index",
                          "title": "C", "summary": "Level three."}))
    out = assert_ok(vine.plant({"id": "a/b/c/leaf", "type": "note", "parent": "a/b/c",
                                "title": "Leaf", "summary": "Deep leaf."}))
    assert out["trail"] == ["_index", "a/_index", "a/b/_index", "a/b/c/_index"]
    assert changed_files(vine.root) == {"a/b/c/leaf.md", "a/b/c/_index.md"}
    for index, line, cov in (
            ("a/_index", f"- [[a/b/_index]] {EM} Level two.", "0 bananas, 1 sub-branches"),
            ("a/b/_index", f"- [[a/b/c/_index]] {EM} Level three.",
             "0 bananas, 1 sub-branches"),
            ("a/b/c/_index", f"- [[a/b/c/leaf]] {EM} Deep leaf.",
             "1 bananas, 0 sub-branches")):
        meta, body = split(vine.root / (index + ".md"))
        assert line in body.split("\n")
        assert meta["coverage"] == cov
    assert assert_ok(vine.look("a/b/c/leaf"))["summary"] == "Deep leaf."
    children = assert_ok(vine.move("a/b/c/_index", rel="children"))["neighbors"]
    assert [n["id"] for n in children] == ["a/b/c/leaf"]
    assert status(vine.root) == ""


# -- datasets ------------------------------------------------------------------------

SEED_BODY = f"""# Client prospecting 2026

## Query manual

Tables:
- `clients(name TEXT, site TEXT, segment TEXT, collected_at TEXT)`

Example queries:
- `SELECT * FROM clients LIMIT 5`
- `SELECT COUNT(*) FROM clients`

## Sample rows

### clients {EM} 1 row

| name | site | segment | collected_at |
| --- | --- | --- | --- |
| Acme | acme.example | industry | 2026-01-14 |
"""


def test_seed_dataset_example(clients: Vine) -> None:
    root = clients.root
    out = assert_ok(clients.plant(dict(PROSPECTING)))
    assert out == {"id": "clients/prospecting-2026", "created": True, "commit": head(root),
                   "trail": ["_index", "clients/_index"]}
    db = root / "clients" / "prospecting-2026.db"
    assert db.is_file()
    conn = sqlite3.connect(db)
    try:
        info = conn.execute("PRAGMA table_info(clients)").fetchall()
        rows = conn.execute("SELECT * FROM clients").fetchall()
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    finally:
        conn.close()
    assert [(c[1], c[2], c[5]) for c in info] == [
        ("name", "TEXT", 1), ("site", "TEXT", 0), ("segment", "TEXT", 0),
        ("collected_at", "TEXT", 0)]
    assert tables == [("clients",)]
    assert rows == [("Acme", "acme.example", "industry", "2026-01-14")]

    meta, body = split(root / "clients" / "prospecting-2026.md")
    assert meta["payload"] == "prospecting-2026.db" and meta["payload_type"] == "sqlite"
    assert meta["payload_hash"] == hashlib.sha256(db.read_bytes()).hexdigest()
    assert "schema" not in meta and "rows" not in meta and "parent" not in meta
    assert body == SEED_BODY

    assert git(root, "log", "-1", "--format=%s").strip() == \
        "plant(clients/prospecting-2026): Client prospecting 2026 [source=agent]"
    assert changed_files(root) == {"clients/prospecting-2026.md", "clients/_index.md"}
    assert not [f for f in git(root, "ls-files").split() if not f.endswith(".md")
                and f != ".gitignore"]
    assert status(root) == ""

    query = assert_ok(clients.query("clients/prospecting-2026",
                                    "SELECT name, segment FROM clients"))
    assert query["rows"] == [["Acme", "industry"]]
    look = assert_ok(clients.look("clients/prospecting-2026"))
    assert look["query_manual"]["tables"] == {
        "clients": ["name", "site", "segment", "collected_at"]}


def test_dataset_without_rows_has_no_sample_rows(clients: Vine) -> None:
    spec = {k: v for k, v in PROSPECTING.items() if k != "rows"}
    assert_ok(clients.plant(spec))
    _, body = split(clients.root / "clients" / "prospecting-2026.md")
    assert "## Query manual" in body and "## Sample rows" not in body
    conn = sqlite3.connect(clients.root / "clients" / "prospecting-2026.db")
    try:
        assert conn.execute("SELECT COUNT(*) FROM clients").fetchone() == (0,)
    finally:
        conn.close()


def test_generated_manual_shapes(clients: Vine) -> None:
    """§2.4: schema order, the wide-table rule, 12 sample columns, cell rendering."""
    wide = {f"c{i:02d}": "TEXT" for i in range(14)}
    long_text = "word " * 40
    assert_ok(clients.plant({
        "id": "clients/shapes", "type": "dataset", "parent": "clients/_index",
        "title": "Shapes", "summary": "Rows that exercise the generated manual.",
        "body": "Intro line.\n\n## Notes\n\nRead me first.",
        "schema": {
            "zeta": {"columns": {"id": "integer", "note": "TEXT", "blob": "BLOB",
                                 "val": "real"}},
            "alpha": {"columns": wide},
            "empty": {"columns": {"x": "TEXT"}},
        },
        "rows": {
            "zeta": [[1, "a | b\n  c", b"\x00\x01\x02", None], [2, long_text, None, 1.5],
                     [3, "x", None, 2.0], [4, "y", None, 3.0]],
            "alpha": [[f"v{i}" for i in range(14)]],
        },
    }))
    _, body = split(clients.root / "clients" / "shapes.md")
    assert body.startswith("# Shapes\n\nIntro line.\n\n## Notes\n\nRead me first.\n\n")
    manual = body[body.index("## Query manual"):body.index("## Sample rows")]
    cols = ", ".join(f"c{i:02d} TEXT" for i in range(14))
    assert manual.split("\n")[:6] == [
        "## Query manual", "", "Tables:",
        "- `zeta(id INTEGER, note TEXT, blob BLOB, val REAL)`",
        f"- `alpha({cols})`",
        "- `empty(x TEXT)`"]
    examples = section_after(manual, "Example queries:")
    assert examples[0:2] == ["- `SELECT * FROM zeta LIMIT 5`", "- `SELECT COUNT(*) FROM zeta`"]
    assert examples[2] == "- `SELECT COUNT(*) FROM alpha`"
    assert "SELECT * FROM alpha" not in manual
    assert "alpha" in examples[3] and "`" not in examples[3]   # the "name columns" line
    assert examples[4:6] == ["- `SELECT * FROM empty LIMIT 5`",
                             "- `SELECT COUNT(*) FROM empty`"]

    samples = body[body.index("## Sample rows"):].split("\n")
    zeta = samples.index(f"### zeta {EM} 4 rows")
    assert samples[zeta + 2:zeta + 7] == [
        "| id | note | blob | val |",
        "| --- | --- | --- | --- |",
        "| 1 | a \\| b c | <blob 3 bytes> |  |",
        f"| 2 | {long_text.strip()[:120]}\u2026 |  | 1.5 |",
        "| 3 | x |  | 2.0 |"]
    alpha = samples.index(f"### alpha {EM} 1 row")
    assert samples[alpha + 2] == "| " + " | ".join(f"c{i:02d}" for i in range(12)) + " |"
    assert samples[alpha + 3] == "|" + " --- |" * 12
    assert samples[alpha + 4] == "| " + " | ".join(f"v{i}" for i in range(12)) + " |"
    assert "2" in samples[alpha + 5] and samples[alpha + 5].startswith("_")
    empty = samples.index(f"### empty {EM} 0 rows")
    assert samples[empty + 2] == "_No rows._"


def section_after(text: str, marker: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index(marker)
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


def test_caller_query_manual_is_kept_verbatim(clients: Vine) -> None:
    body = ("# Prospects\n\n## Query manual\n\nAsk `SELECT name FROM clients`; site is a "
            "bare domain.\n\n## Notes\n\nCollected by hand.\n")
    assert_ok(clients.plant({**PROSPECTING, "body": body}))
    assert split(clients.root / "clients" / "prospecting-2026.md")[1] == body


def test_payload_name_can_be_given(clients: Vine) -> None:
    assert_ok(clients.plant({**PROSPECTING, "payload": "prospects.db"}))
    assert (clients.root / "clients" / "prospects.db").is_file()
    assert not (clients.root / "clients" / "prospecting-2026.db").exists()
    query = assert_ok(clients.query("clients/prospecting-2026", "SELECT COUNT(*) FROM clients"))
    assert query["rows"] == [[1]]


# -- refusals ------------------------------------------------------------------------

NOTE = {"id": "clients/x", "type": "note", "parent": "clients/_index", "title": "X",
        "summary": "About x."}
DATASET = {"id": "clients/d", "type": "dataset", "parent": "clients/_index", "title": "D",
           "summary": "About d.", "schema": {"t": {"columns": {"a": "TEXT"}}}}


def _without(spec: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != key}


REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("rows-without-schema", {**NOTE, "rows": {"t": [["a"]]}}, "E_SCHEMA"),
    ("dataset-rows-without-schema", {**_without(DATASET, "schema"), "rows": {"t": [["a"]]}},
     "E_SCHEMA"),
    ("schema-on-note", {**NOTE, "schema": {"t": {"columns": {"a": "TEXT"}}}}, "E_SCHEMA"),
    ("table-uppercase", {**DATASET, "schema": {"T": {"columns": {"a": "TEXT"}}}}, "E_SCHEMA"),
    ("table-dash", {**DATASET, "schema": {"my-t": {"columns": {"a": "TEXT"}}}}, "E_SCHEMA"),
    ("table-65-chars", {**DATASET, "schema": {"t" * 65: {"columns": {"a": "TEXT"}}}},
     "E_SCHEMA"),
    ("column-digit-first", {**DATASET, "schema": {"t": {"columns": {"1a": "TEXT"}}}},
     "E_SCHEMA"),
    ("column-quote", {**DATASET, "schema": {"t": {"columns": {'a"b': "TEXT"}}}}, "E_SCHEMA"),
    ("column-65-chars", {**DATASET, "schema": {"t": {"columns": {"c" * 65: "TEXT"}}}},
     "E_SCHEMA"),
    ("type-varchar", {**DATASET, "schema": {"t": {"columns": {"a": "VARCHAR"}}}}, "E_SCHEMA"),
    ("type-injection", {**DATASET, "schema": {"t": {"columns": {"a": "TEXT); DROP"}}}},
     "E_SCHEMA"),
    ("type-not-string", {**DATASET, "schema": {"t": {"columns": {"a": 1}}}}, "E_SCHEMA"),
    ("primary-key-undeclared",
     {**DATASET, "schema": {"t": {"columns": {"a": "TEXT"}, "primary_key": ["b"]}}},
     "E_SCHEMA"),
    ("eleven-tables",
     {**DATASET, "schema": {f"t{i}": {"columns": {"a": "TEXT"}} for i in range(11)}},
     "E_SCHEMA"),
    ("fifty-one-columns",
     {**DATASET, "schema": {"t": {"columns": {f"c{i}": "TEXT" for i in range(51)}}}},
     "E_SCHEMA"),
    ("zero-columns", {**DATASET, "schema": {"t": {"columns": {}}}}, "E_SCHEMA"),
    ("zero-tables", {**DATASET, "schema": {}}, "E_SCHEMA"),
    ("row-too-wide", {**DATASET, "rows": {"t": [["a", "b"]]}}, "E_SCHEMA"),
    ("row-too-short", {**DATASET, "schema": {"t": {"columns": {"a": "TEXT", "b": "TEXT"}}},
                       "rows": {"t": [["a", "b"], ["a"]]}}, "E_SCHEMA"),
    ("rows-undeclared-table", {**DATASET, "rows": {"u": [["a"]]}}, "E_SCHEMA"),
    ("payload-not-db", {**DATASET, "payload": "d.csv"}, "E_SCHEMA"),
    ("payload-in-folder", {**DATASET, "payload": "sub/d.db"}, "E_SCHEMA"),
    ("payload-type-of-dataset", {**DATASET, "payload_type": "pdf"}, "E_SCHEMA"),
    ("unknown-type", {**NOTE, "type": "widget"}, "E_SCHEMA"),
    ("unknown-rel", {**NOTE, "links": [{"rel": "likes", "target": "clients/_index"}]},
     "E_SCHEMA"),
    ("fifty-one-links",
     {**NOTE, "links": [{"rel": "related-to", "target": f"t{i}"} for i in range(51)]},
     "E_SCHEMA"),
    ("entity-without-kind", {**NOTE, "type": "entity"}, "E_FRONTMATTER"),
    ("entity-bad-kind", {**NOTE, "type": "entity", "entity_kind": "robot"}, "E_FRONTMATTER"),
    ("bad-source", {**NOTE, "source": "robot"}, "E_FRONTMATTER"),
    ("bad-payload-type", {**NOTE, "payload_type": "exe"}, "E_FRONTMATTER"),
    ("empty-summary", {**NOTE, "summary": ""}, "E_FRONTMATTER"),
    ("blank-summary", {**NOTE, "summary": "   "}, "E_FRONTMATTER"),
    ("missing-summary", _without(NOTE, "summary"), "E_FRONTMATTER"),
    ("summary-61-tokens", {**NOTE, "summary": "s" * 241}, "E_FRONTMATTER"),
    ("summary-this-document-describes",
     {**NOTE, "summary": "This document describes the clients."}, "E_FRONTMATTER"),
    ("summary-file-containing", {**NOTE, "summary": "file containing the clients."},
     "E_FRONTMATTER"),
    ("missing-title", _without(NOTE, "title"), "E_FRONTMATTER"),
    ("empty-title", {**NOTE, "title": ""}, "E_FRONTMATTER"),
    ("confidence-over-one", {**NOTE, "confidence": 1.5}, "E_FRONTMATTER"),
    ("bad-origin", {**NOTE, "origin": "has space"}, "E_SCHEMA"),
    ("moved-from", {**NOTE, "moved_from": ["clients/old"]}, "E_SCHEMA"),
    ("missing-parent-branch", {**NOTE, "id": "nowhere/x", "parent": "nowhere/_index"},
     "E_NOT_FOUND"),
    ("parent-not-the-ids-parent", {**NOTE, "parent": "_index"}, "E_SCHEMA"),
    ("parent-missing", _without(NOTE, "parent"), "E_SCHEMA"),
    ("leaf-named-index", {**NOTE, "id": "clients/sub/_index"}, "E_SCHEMA"),
    ("id-dotdot", {**NOTE, "id": "../x", "parent": "_index"}, "E_SCHEMA"),
    ("id-space-upper", {**NOTE, "id": "A B", "parent": "_index"}, "E_SCHEMA"),
    ("id-inner-dotdot", {**NOTE, "id": "clients/../y"}, "E_SCHEMA"),
    ("id-uppercase", {**NOTE, "id": "clients/Upper"}, "E_SCHEMA"),
    ("id-backslash", {**NOTE, "id": "clients\\x"}, "E_SCHEMA"),
    ("id-private-folder", {**NOTE, "id": "_derived/x", "parent": "_derived/_index"},
     "E_SCHEMA"),
    ("id-segment-too-long", {**NOTE, "id": "clients/" + "a" * 300}, "E_SCHEMA"),
    ("id-too-long", {**NOTE, "id": "clients/" + "/".join(["a" * 9] * 120)}, "E_SCHEMA"),
]


@pytest.mark.parametrize("spec, code", [(s, c) for _, s, c in REFUSALS],
                         ids=[name for name, _, _ in REFUSALS])
def test_refusal_leaves_forest_untouched(shared: Vine, spec: dict[str, Any],
                                         code: str) -> None:
    clients = shared
    root = clients.root
    before, files = head(root), files_of(root)
    assert_error(clients.plant(spec), code)
    assert status(root) == ""
    assert head(root) == before
    assert files_of(root) == files
    assert not (root / "_derived" / "journal.json").exists()
    # The refusal is repeatable: nothing half-planted is left to collide with.
    assert_error(clients.plant(spec), code)


@pytest.mark.parametrize("node_id", ["", "   "])
def test_empty_id_is_refused(shared: Vine, node_id: str) -> None:
    clients = shared
    before, files = head(clients.root), files_of(clients.root)
    err = clients.plant({**NOTE, "id": node_id})["error"]
    assert err["code"] in ("E_SCHEMA", "E_FRONTMATTER")
    assert head(clients.root) == before and files_of(clients.root) == files
    assert status(clients.root) == ""


def test_summary_of_exactly_60_tokens_is_accepted(clients: Vine) -> None:
    assert_ok(clients.plant({**NOTE, "summary": "s" * 240}))


def test_existing_payload_is_never_overwritten(clients: Vine) -> None:
    root = clients.root
    db = root / "clients" / "d.db"
    db.write_bytes(b"an operator's file, not sqlite")
    before, files = head(root), files_of(root)
    err = assert_error(clients.plant(dict(DATASET)), "E_SCHEMA")
    assert "exists" in err["message"]
    assert db.read_bytes() == b"an operator's file, not sqlite"
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert_error(clients.look("clients/d"), "E_NOT_FOUND")


def test_existing_id_and_if_absent(clients: Vine) -> None:
    root = clients.root
    first = assert_ok(clients.plant(dict(NOTE)))
    before, files = head(root), files_of(root)
    assert first["commit"] == before
    assert_error(clients.plant({**NOTE, "summary": "Another x."}), "E_SCHEMA")
    again = assert_ok(clients.plant({**NOTE, "summary": "Another x."}, if_absent=True))
    assert again == {"id": "clients/x", "created": False, "trail": ["_index", "clients/_index"]}
    # A branch planted twice, under either spelling of its id.
    assert assert_ok(clients.plant(dict(CLIENTS), if_absent=True))["created"] is False
    assert_error(clients.plant({**CLIENTS, "id": "clients"}), "E_SCHEMA")
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert split(root / "clients" / "x.md")[0]["summary"] == "About x."
    _, body = split(root / "clients" / "_index.md")
    assert section_lines(body, "Direct bananas") == [f"- [[clients/x]] {EM} About x."]


def test_existing_dataset_if_absent_keeps_its_payload(clients: Vine) -> None:
    assert_ok(clients.plant(dict(PROSPECTING)))
    db = clients.root / "clients" / "prospecting-2026.db"
    data = db.read_bytes()
    out = assert_ok(clients.plant(dict(PROSPECTING), if_absent=True))
    assert out["created"] is False
    assert db.read_bytes() == data


# -- dry runs ------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [NOTE, DATASET, PROSPECTING,
                                  {**CLIENTS, "id": "clients/sub", "parent": "clients"}],
                         ids=["note", "dataset", "seed-dataset", "branch"])
def test_dry_run_writes_nothing(clients: Vine, spec: dict[str, Any]) -> None:
    root = clients.root
    before, files = head(root), files_of(root)
    out = assert_ok(clients.plant(dict(spec), dry_run=True))
    assert out["valid"] is True and out["dry_run"] is True and "created" not in out
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert_error(clients.look(out["id"]), "E_NOT_FOUND")
    # ... and the real plant still works afterwards.
    assert assert_ok(clients.plant(dict(spec)))["created"] is True


def test_dry_run_of_an_invalid_node_answers_its_errors(clients: Vine) -> None:
    """§6.8: a dry run collects every problem into ``errors`` inside the envelope."""
    before, files = head(clients.root), files_of(clients.root)
    out = clients.plant({**NOTE, "type": "widget", "summary": ""}, dry_run=True)
    err = assert_error(out, "E_SCHEMA")
    assert head(clients.root) == before and files_of(clients.root) == files
    assert isinstance(err.get("errors"), list) and len(err["errors"]) >= 2
    assert {e["code"] for e in err["errors"]} >= {"E_SCHEMA", "E_FRONTMATTER"}


@pytest.mark.parametrize("title", ["Line one\nLine two", "Tab\there", "Carriage\rreturn"],
                         ids=["newline", "tab", "carriage-return"])
def test_a_title_never_breaks_the_commit_subject(clients: Vine, title: str) -> None:
    """§9: the subject is one line, `plant(<id>): <title> [source=<s>]`. A title with a
    line break must be refused, or flattened; never split into a commit body."""
    before = head(clients.root)
    out = clients.plant({**NOTE, "title": title})
    if "error" in out:
        assert out["error"]["code"] in ("E_FRONTMATTER", "E_SCHEMA")
        assert head(clients.root) == before and status(clients.root) == ""
        return
    message = git(clients.root, "log", "-1", "--format=%B").strip()
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith("plant(clients/x): ") and message.endswith(" [source=agent]")
