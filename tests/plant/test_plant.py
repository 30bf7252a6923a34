"""plant: notes, branches and datasets, each in one commit with its parent index entry;
every refusal leaves the forest exactly as it was."""

from __future__ import annotations

import datetime

import pytest

from monkeyllm import Vine

from ..forestkit import assert_ok, git, head, node, status
from .kit import CLIENTS, EM, changed_files, section_lines, split

TODAY = datetime.date.today().isoformat()


# -- notes ---------------------------------------------------------------------------


def test_note_file_index_commit_and_response(vine: Vine) -> None:
    root = vine.root
    before = head(root)
    out = assert_ok(
        vine.plant(
            node(
                "field-notes",
                "_index",
                "Field notes",
                "Observations taken in the orchard during the harvest.",
                tags=["orchard"],
                source_path="inbox/field.txt",
                confidence=1.0,
                created="1999-01-01",
                updated="1999-01-01",
                body="Pears ripened early along the northern wall.",
            )
        )
    )
    assert out == {"id": "field-notes", "created": True, "commit": head(root), "trail": ["_index"]}
    assert out["commit"] != before
    meta, body = split(root / "field-notes.md")
    assert set(meta) == {
        "id",
        "type",
        "title",
        "summary",
        "created",
        "updated",
        "tags",
        "source_path",
        "source",
    }
    assert meta["id"] == "field-notes" and meta["type"] == "note"
    assert meta["title"] == "Field notes"
    assert meta["summary"] == "Observations taken in the orchard during the harvest."
    assert meta["created"] == meta["updated"] == TODAY
    assert meta["source"] == "agent" and meta["tags"] == ["orchard"]
    assert meta["source_path"] == "inbox/field.txt"
    assert body == "# Field notes\n\nPears ripened early along the northern wall.\n"

    imeta, ibody = split(root / "_index.md")
    assert section_lines(ibody, "Direct bananas") == [
        f"- [[field-notes]] {EM} Observations taken in the orchard during the harvest."
    ]
    assert imeta["coverage"] == "1 bananas, 0 sub-branches"
    assert imeta["updated"] == TODAY

    log = git(root, "log", "-1", "--format=%s%n%an <%ae>%n%cn <%ce>%n%P").split("\n")
    assert log[0] == "plant(field-notes): Field notes [source=agent]"
    assert log[1] == log[2] == "vine <vine@monkeyllm.local>"
    assert log[3] == before
    assert changed_files(root) == {"field-notes.md", "_index.md"}
    assert status(root) == ""


def test_empty_body_gets_the_title_and_headed_bodies_are_kept(vine: Vine) -> None:
    assert_ok(vine.plant(node("a", "_index", "Alpha", "First letter.")))
    assert split(vine.root / "a.md")[1] == "# Alpha\n"
    assert_ok(
        vine.plant(node("b", "_index", "Beta", "Second letter.", body="# Own title\n\nText."))
    )
    assert split(vine.root / "b.md")[1] == "# Own title\n\nText.\n"
    assert_ok(vine.plant(node("c", "_index", "Gamma", "Third letter.", body="## Part\n\nText.")))
    assert split(vine.root / "c.md")[1] == "## Part\n\nText.\n"


def test_source_confidence_and_extras(vine: Vine) -> None:
    assert_ok(
        vine.plant(
            node(
                "m",
                "_index",
                "Manual",
                "Written by a person.",
                source="manual",
                confidence=0.7,
                origin="https://example.com/m",
                aliases=["hand note"],
                custom_field={"k": [1, 2]},
            )
        )
    )
    meta, _ = split(vine.root / "m.md")
    assert meta["source"] == "manual" and meta["confidence"] == 0.7
    assert meta["origin"] == "https://example.com/m" and meta["aliases"] == ["hand note"]
    assert meta["custom_field"] == {"k": [1, 2]}
    assert git(vine.root, "log", "-1", "--format=%s").strip() == "plant(m): Manual [source=manual]"


def test_entries_in_plant_order_and_coverage(vine: Vine) -> None:
    for leaf in ("zeta", "alpha", "mid"):
        assert_ok(vine.plant(node(leaf, "_index", leaf.title(), f"About {leaf}.")))
    for folder in ("yy", "bb"):
        assert_ok(
            vine.plant(node(folder, "_index", folder.upper(), f"Branch {folder}.", type="branch"))
        )
    meta, body = split(vine.root / "_index.md")
    assert section_lines(body, "Direct bananas") == [
        f"- [[zeta]] {EM} About zeta.",
        f"- [[alpha]] {EM} About alpha.",
        f"- [[mid]] {EM} About mid.",
    ]
    assert section_lines(body, "Sub-branches") == [
        f"- [[yy/_index]] {EM} Branch yy.",
        f"- [[bb/_index]] {EM} Branch bb.",
    ]
    assert meta["coverage"] == "3 bananas, 2 sub-branches"
    # The master keeps its four sections in order.
    heads = [line for line in body.split("\n") if line.startswith("## ")]
    assert heads == ["## Sub-branches", "## Direct bananas", "## Cross trails", "## Landmarks"]
    assert len(git(vine.root, "log", "--format=%H").split()) == 6


def test_planted_node_is_visible_at_once(vine: Vine) -> None:
    other = Vine(vine.root, writable=False)
    try:
        assert_ok(
            vine.plant(
                {
                    "id": "quince",
                    "type": "note",
                    "parent": "_index",
                    "title": "Quince jelly",
                    "tags": ["preserves"],
                    "summary": "Quince jelly recipe with cardamom and lemon.",
                    "body": "Simmer the quinces with zzcardamomzz pods.",
                }
            )
        )
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
    out = assert_ok(vine.plant(node(given, "_index", "X", "The x branch.", type="branch")))
    assert out["id"] == "x/_index" and out["trail"] == ["_index"]
    meta, _ = split(vine.root / "x" / "_index.md")
    assert meta["id"] == "x/_index" and meta["type"] == "branch"
    assert meta["coverage"] == "0 bananas, 0 sub-branches"
    assert git(vine.root, "log", "-1", "--format=%s").strip() == "plant(x/_index): X [source=agent]"
    assert changed_files(vine.root) == {"x/_index.md", "_index.md"}
    _, body = split(vine.root / "_index.md")
    assert section_lines(body, "Sub-branches") == [f"- [[x/_index]] {EM} The x branch."]
    assert section_lines(body, "Direct bananas") == []
    assert assert_ok(vine.look("x/_index"))["type"] == "branch"


def test_branch_with_empty_body_is_only_its_title(vine: Vine) -> None:
    """forest-format §2.3: "A branch planted with an empty body gets only `# <Title>`.
    Missing sections are appended at the end of the body as `\\n\\n## <Name>\\n`"."""
    assert_ok(vine.plant(node("x", "_index", "X", "The x branch.", type="branch")))
    assert split(vine.root / "x" / "_index.md")[1] == "# X\n"
    assert_ok(
        vine.plant(
            {"id": "x/leaf", "type": "note", "parent": "x", "title": "Leaf", "summary": "A leaf."}
        )
    )
    assert (
        split(vine.root / "x" / "_index.md")[1]
        == f"# X\n\n## Direct bananas\n\n- [[x/leaf]] {EM} A leaf.\n"
    )


def test_three_levels_deep(vine: Vine) -> None:
    assert_ok(
        vine.plant(
            {"id": "a", "type": "branch", "parent": "_index", "title": "A", "summary": "Level one."}
        )
    )
    assert_ok(vine.plant(node("a/b/_index", "a", "B", "Level two.", type="branch")))
    assert_ok(vine.plant(node("a/b/c", "a/b/_index", "C", "Level three.", type="branch")))
    out = assert_ok(vine.plant(node("a/b/c/leaf", "a/b/c", "Leaf", "Deep leaf.")))
    assert out["trail"] == ["_index", "a/_index", "a/b/_index", "a/b/c/_index"]
    assert changed_files(vine.root) == {"a/b/c/leaf.md", "a/b/c/_index.md"}
    for index, line, cov in (
        ("a/_index", f"- [[a/b/_index]] {EM} Level two.", "0 bananas, 1 sub-branches"),
        ("a/b/_index", f"- [[a/b/c/_index]] {EM} Level three.", "0 bananas, 1 sub-branches"),
        ("a/b/c/_index", f"- [[a/b/c/leaf]] {EM} Deep leaf.", "1 bananas, 0 sub-branches"),
    ):
        meta, body = split(vine.root / (index + ".md"))
        assert line in body.split("\n")
        assert meta["coverage"] == cov
    assert assert_ok(vine.look("a/b/c/leaf"))["summary"] == "Deep leaf."
    children = assert_ok(vine.move("a/b/c/_index", rel="children"))["neighbors"]
    assert [n["id"] for n in children] == ["a/b/c/leaf"]
    assert status(vine.root) == ""


def test_a_link_to_a_node_that_does_not_exist_is_said(vine: Vine) -> None:
    """plant keeps a dangling link target and names it (vine validate reports it); a
    batch whose nodes link to each other has none."""
    vine.plant(CLIENTS)
    one = node(
        "clients/acme",
        "clients/_index",
        "Acme",
        "A client.",
        links=[
            {"rel": "related-to", "target": "clients/nobody"},
            {"rel": "related-to", "target": "clients/_index"},
        ],
    )
    out = vine.plant(one)
    assert out["created"] is True and out["dangling"] == ["clients/nobody"]
    assert "links.dangling" in out["hint"]
    pair = [
        node(
            "clients/a",
            "clients/_index",
            "A",
            "First.",
            links=[{"rel": "related-to", "target": "clients/b"}],
        ),
        node(
            "clients/b",
            "clients/_index",
            "B",
            "Second.",
            links=[{"rel": "related-to", "target": "clients/gone"}],
        ),
    ]
    batch = vine.plant(pair)
    assert batch["count"] == 2 and batch["dangling"] == ["clients/gone"]
