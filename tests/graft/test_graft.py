"""graft: frontmatter, links (with fortification), sections and bodies, each in one
commit; a summary change reaches every index line of the node in that same commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine
from monkeyllm.validate import fix, validate

from ..forestkit import assert_error, assert_ok, git, head, meta_of, node, node_path, status
from .kit import (
    ALPHA_BODY,
    ALPHA_SUMMARY,
    CROSS,
    EM,
    OLD,
    TODAY,
    blob,
    body_of,
    changed_files,
    refused_frontmatter,
    split,
    subject,
    tracked,
    unchanged,
)

# -- helpers -------------------------------------------------------------------------


def test_fixture_shape(vine: Vine) -> None:
    _, master = split(vine.root / "_index.md")
    assert master.split("\n")[-2] == f"- [[kb/alpha]] {EM} {ALPHA_SUMMARY}"
    assert meta_of(node_path(vine.root, "kb/alpha"))["updated"] == OLD
    assert status(vine.root) == ""


# -- set_frontmatter -----------------------------------------------------------------


MUTABLE = [
    ("title", "Alpha renamed"),
    ("summary", "Alpha, revised after the review."),
    ("tags", ["letters", "greek"]),
    ("confidence", 0.4),
    ("aliases", ["first letter", "a"]),
    ("origin", "https://example.com/alpha"),
]


@pytest.mark.parametrize("key, value", MUTABLE, ids=[k for k, _ in MUTABLE])
def test_set_each_mutable_field(vine: Vine, key: str, value: Any) -> None:
    root = vine.root
    before = head(root)
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {key: value}}))
    assert out == {
        "id": "kb/alpha",
        "commit": head(root),
        "fortified": [],
        "trail": ["_index", "kb/_index"],
        "revision": blob(root, "kb/alpha"),
    }
    assert out["commit"] != before
    meta = meta_of(node_path(vine.root, "kb/alpha"))
    assert meta[key] == value
    assert meta["updated"] == TODAY
    assert meta["created"] == meta_of(node_path(vine.root, "kb/beta"))["created"]
    assert subject(root) == f"graft(kb/alpha): set {key}"
    log = git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip()
    assert log == "vine <vine@monkeyllm.local>|vine <vine@monkeyllm.local>"
    assert body_of(vine, "kb/alpha") == ALPHA_BODY
    expected = {"kb/alpha.md"} | ({"kb/_index.md", "_index.md"} if key == "summary" else set())
    assert changed_files(root) == expected
    assert status(root) == ""
    if key in ("title", "summary", "tags", "confidence"):
        assert assert_ok(vine.look("kb/alpha"))[key] == value


def test_title_does_not_propagate(vine: Vine) -> None:
    before = tracked(vine.root)
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"title": "Renamed"}}))
    assert (vine.root / "kb/_index.md").read_bytes() == before["kb/_index.md"]
    assert (vine.root / "_index.md").read_bytes() == before["_index.md"]


def test_several_fields_sorted_in_the_subject(vine: Vine) -> None:
    assert_ok(
        vine.graft("kb/alpha", {"set_frontmatter": {"title": "A", "aliases": ["x"], "tags": ["t"]}})
    )
    assert subject(vine.root) == "graft(kb/alpha): set aliases,tags,title"


def test_confidence_one_is_omitted(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"confidence": 0.3}}))
    assert meta_of(node_path(vine.root, "kb/alpha"))["confidence"] == 0.3
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"confidence": 1.0}}))
    assert "confidence" not in meta_of(node_path(vine.root, "kb/alpha"))
    assert assert_ok(vine.look("kb/alpha"))["confidence"] == 1.0


def test_origin_null_clears(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"origin": "s3://bucket/a.pdf"}}))
    assert meta_of(node_path(vine.root, "kb/alpha"))["origin"] == "s3://bucket/a.pdf"
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"origin": None}}))
    assert out["commit"] == head(vine.root)
    assert "origin" not in meta_of(node_path(vine.root, "kb/alpha"))
    assert subject(vine.root) == "graft(kb/alpha): set origin"
    # Clearing what is not there changes nothing.
    before, files = head(vine.root), tracked(vine.root)
    assert (
        assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"origin": None}}))["commit"] is None
    )
    unchanged(vine, before, files)


def test_same_value_is_no_commit(shared: Vine) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"summary": ALPHA_SUMMARY}}))
    assert out["commit"] is None and out["fortified"] == []
    unchanged(vine, before, files)


@pytest.mark.parametrize(
    "key, value",
    [
        ("id", "kb/other"),
        ("type", "concept"),
        ("created", "2020-01-01"),
        ("updated", "2020-01-01"),
        ("source", "manual"),
        ("payload_hash", "0" * 64),
        ("links", []),
        ("coverage", "1 bananas, 0 sub-branches"),
        ("moved_from", ["x"]),
        ("unknown_key", "x"),
    ],
)
def test_immutable_fields_are_read_only(shared: Vine, key: str, value: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    err = assert_error(vine.graft("kb/alpha", {"set_frontmatter": {key: value}}), "E_READONLY")
    assert key in err["message"]
    # Even beside a legal change, nothing is written.
    assert_error(
        vine.graft(
            "kb/alpha",
            {
                "set_frontmatter": {"title": "New", key: value},
                "append_section": {"header": "N", "body": "b"},
            },
        ),
        "E_READONLY",
    )
    unchanged(vine, before, files)


@pytest.mark.parametrize(
    "summary",
    [
        "",
        "   ",
        "s" * 241,
        "This document describes the alpha letter.",
        "FILE CONTAINING the alpha letter.",
        42,
        None,
    ],
    ids=["empty", "blank", "61-tokens", "this-document", "file-containing", "number", "null"],
)
def test_summary_rules(shared: Vine, summary: Any) -> None:
    refused_frontmatter(shared, "summary", summary, "E_FRONTMATTER")


def test_summary_of_60_tokens_is_accepted(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"summary": "s" * 240}}))


@pytest.mark.parametrize(
    "aliases",
    [[f"a{i}" for i in range(17)], [""], ["  "], ["a" * 81], "one alias", [1]],
    ids=["seventeen", "empty", "blank", "81-chars", "not-a-list", "not-strings"],
)
def test_alias_limits(shared: Vine, aliases: Any) -> None:
    refused_frontmatter(shared, "aliases", aliases, "E_SCHEMA")


def test_sixteen_aliases_of_80_chars_are_accepted(vine: Vine) -> None:
    aliases = [f"{i:02d}" + "a" * 78 for i in range(16)]
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"aliases": aliases}}))
    assert meta_of(node_path(vine.root, "kb/alpha"))["aliases"] == aliases


@pytest.mark.parametrize("origin", ["has space", "x" * 2049, "a\x7fb", "a\tb", ""])
def test_bad_origin(shared: Vine, origin: str) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"origin": origin}}), "E_SCHEMA")
    unchanged(vine, before, files)


def test_bad_tags_and_confidence(shared: Vine) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"confidence": 2}}), "E_FRONTMATTER")
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"confidence": True}}), "E_FRONTMATTER")
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"tags": "one"}}), "E_FRONTMATTER")
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"title": ""}}), "E_FRONTMATTER")
    unchanged(vine, before, files)


# -- summary propagation -------------------------------------------------------------


def test_summary_propagates_to_every_index_in_one_commit(vine: Vine) -> None:
    root = vine.root
    new = "Alpha: the first letter, now with a revised scent."
    old_index = split(root / "kb/_index.md")[0]
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"summary": new}}))
    assert out["commit"] == head(root)
    assert changed_files(root) == {"kb/alpha.md", "kb/_index.md", "_index.md"}
    assert len(git(root, "log", "--format=%H", f"{out['commit']}~1..HEAD").split()) == 1

    kb_meta, kb_body = split(root / "kb/_index.md")
    assert f"- [[kb/alpha]] {EM} {new}" in kb_body.split("\n")
    assert f"- [[kb/alpha]] {EM} {ALPHA_SUMMARY}" not in kb_body
    assert kb_meta["updated"] == TODAY
    assert kb_meta["coverage"] == old_index["coverage"] == "3 bananas, 0 sub-branches"
    # Entries keep their place.
    entries = [line for line in kb_body.split("\n") if line.startswith("- [[")]
    assert [e.split("]]")[0] for e in entries] == ["- [[kb/alpha", "- [[kb/beta", "- [[kb/gamma"]

    master_meta, master = split(root / "_index.md")
    lines = master.split("\n")
    assert lines[-2] == f"- [[kb/alpha]] {EM} {new}"  # the Landmarks line
    assert CROSS in lines  # a cross trail is not an entry
    assert master_meta["updated"] == TODAY
    assert ALPHA_SUMMARY not in master
    assert status(root) == ""
    # The catalog agrees: the branch digest shows the new scent.
    children = assert_ok(vine.look("kb/_index"))["children"]
    assert {c["id"]: c["summary"] for c in children}["kb/alpha"] == new
    assert assert_ok(vine.locate("revised scent"))["results"][0]["id"] == "kb/alpha"


def test_branch_summary_gets_its_coverage_suffix(vine: Vine) -> None:
    root = vine.root
    out = assert_ok(
        vine.graft(
            "kb/_index", {"set_frontmatter": {"summary": "Letters, their uses and history."}}
        )
    )
    assert out["trail"] == ["_index"]
    assert changed_files(root) == {"kb/_index.md", "_index.md"}
    _, master = split(root / "_index.md")
    assert (
        f"- [[kb/_index]] {EM} Letters, their uses and history. 3 bananas, 0 sub-branches."
    ) in master.split("\n")
    assert status(root) == ""


def test_summary_of_an_unlisted_node_touches_only_its_file(vine: Vine) -> None:
    assert_ok(vine.graft("_meta/schema", {"set_frontmatter": {"summary": "The dialect."}}))
    assert changed_files(vine.root) == {"_meta/schema.md"}


def test_a_propagated_coverage_suffix_counts_in_words(tmp_path: Path) -> None:
    """The suffix a branch's summary carries into the entries listing it said "1 bananas,
    1 sub-branches."; it reads as counted, and validate keeps it so (the frontmatter
    keeps its documented fixed form)."""
    with Vine.init(tmp_path / "f", "Counts") as v:
        for spec in (
            node("a/_index", "_index", "A", "Things of kind a.", type="branch"),
            node("a/b/_index", "a/_index", "B", "Things of kind b.", type="branch"),
            node("a/leaf", "a/_index", "Leaf", "One leaf of a."),
        ):
            assert_ok(v.plant(spec))
        assert meta_of(v.root / "a/_index.md")["coverage"] == "1 bananas, 1 sub-branches"
        assert_ok(v.graft("a/_index", {"set_frontmatter": {"summary": "Things of a, now."}}))
        line = f"- [[a/_index]] {EM} Things of a, now. 1 banana, 1 sub-branch."
        assert line in split(v.root / "_index.md")[1].split("\n")
    assert [f.code for f in validate(v.root) if f.code.startswith("index.")] == []
    # An entry gone stale with the old wording is repaired in words too.
    master = v.root / "_index.md"
    master.write_text(
        master.read_text().replace(line, f"- [[a/_index]] {EM} Old. 1 bananas, 1 sub-branches.")
    )
    git(v.root, "commit", "-qam", "a stale entry")
    assert [r["code"] for r in fix(v.root)["repairs"]] == ["index.stale-summary"]
    assert line in split(master)[1].split("\n")
