"""graft: frontmatter, links (with fortification), sections and bodies, each in one
commit; a summary change reaches every index line of the node in that same commit."""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from monkeyllm import Vine

from .forestkit import assert_error, assert_ok, git, head, meta_of, node_path, status


def blob(root: Path, node_id: str) -> str:
    """The node's revision as reads give it: its blob id in HEAD, cut to 12."""
    return git(root, "rev-parse", f"HEAD:{node_id}.md").strip()[:12]

TODAY = datetime.date.today().isoformat()
OLD = "2025-01-01"
EM = "\u2014"

ALPHA_BODY = """# Alpha

Intro paragraph.

## Usage

Use alpha daily.

### Details

Fine print.

## History

Alpha began in 2020.
"""
ALPHA_SUMMARY = "Alpha, the first letter of the kb."
CROSS = "- Alpha explains the letters \u2192 [[kb/alpha]]"


# -- helpers -------------------------------------------------------------------------


def subject(root: Path) -> str:
    return git(root, "log", "-1", "--format=%s").strip()


def changed_files(root: Path, rev: str = "HEAD") -> set[str]:
    return set(git(root, "show", "--name-only", "--format=", rev).split())


def tracked(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in git(root, "ls-files").split()}


def split(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    front, sep, body = text[4:].partition("\n---\n\n")
    assert text.startswith("---\n") and sep, text
    return yaml.safe_load(front), body


def body_of(vine: Vine, node_id: str) -> str:
    return split(vine.root / (node_id + ".md"))[1]


def unchanged(vine: Vine, before: str, files: dict[str, bytes]) -> None:
    assert head(vine.root) == before
    assert tracked(vine.root) == files
    assert status(vine.root) == ""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kb/_index with alpha, beta and gamma, listed also in the master's Landmarks and
    Cross trails; every file aged to an old ``updated`` so refreshes show."""
    root = tmp_path_factory.mktemp("graft") / "f"
    with Vine.init(root, "Title") as v:
        assert_ok(v.plant({"id": "kb", "type": "branch", "parent": "_index",
                           "title": "Knowledge", "summary": "Letters and their uses."}))
        assert_ok(v.plant({"id": "kb/alpha", "type": "note", "parent": "kb",
                           "title": "Alpha", "summary": ALPHA_SUMMARY, "body": ALPHA_BODY,
                           "links": [{"rel": "part-of", "target": "kb/_index"}]}))
        for leaf in ("beta", "gamma"):
            assert_ok(v.plant({"id": f"kb/{leaf}", "type": "note", "parent": "kb",
                               "title": leaf.title(), "summary": f"{leaf.title()} letter."}))
    index = root / "_index.md"
    text = index.read_text(encoding="utf-8")
    text = text.replace("## Cross trails\n", f"## Cross trails\n\n{CROSS}\n")
    text = text.rstrip("\n") + f"\n\n- [[kb/alpha]] {EM} {ALPHA_SUMMARY}\n"
    index.write_text(text, encoding="utf-8")
    for path in root.rglob("*.md"):
        if ".git" not in path.parts:
            path.write_text(path.read_text(encoding="utf-8").replace(
                f"updated: '{TODAY}'", f"updated: '{OLD}'"), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "age")
    return root


@pytest.fixture
def vine(template: Path, tmp_path: Path) -> Iterator[Vine]:
    root = tmp_path / "f"
    shutil.copytree(template, root, ignore=shutil.ignore_patterns("_derived", ".vine.lock"))
    with Vine(root) as v:
        yield v


@pytest.fixture(scope="module")
def shared(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vine]:
    """One forest for the refusals, which must leave it as it was."""
    root = tmp_path_factory.mktemp("graft-refusals") / "f"
    shutil.copytree(template, root, ignore=shutil.ignore_patterns("_derived", ".vine.lock"))
    with Vine(root) as v:
        yield v


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
    assert out == {"id": "kb/alpha", "commit": head(root), "fortified": [],
                   "trail": ["_index", "kb/_index"], "revision": blob(root, "kb/alpha")}
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
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {
        "title": "A", "aliases": ["x"], "tags": ["t"]}}))
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
    assert assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"origin": None}}))[
        "commit"] is None
    unchanged(vine, before, files)


def test_same_value_is_no_commit(shared: Vine) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"summary": ALPHA_SUMMARY}}))
    assert out["commit"] is None and out["fortified"] == []
    unchanged(vine, before, files)


@pytest.mark.parametrize("key, value", [
    ("id", "kb/other"), ("type", "concept"), ("created", "2020-01-01"),
    ("updated", "2020-01-01"), ("source", "manual"), ("payload_hash", "0" * 64),
    ("links", []), ("coverage", "1 bananas, 0 sub-branches"), ("moved_from", ["x"]),
    ("unknown_key", "x"),
])
def test_immutable_fields_are_read_only(shared: Vine, key: str, value: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    err = assert_error(vine.graft("kb/alpha", {"set_frontmatter": {key: value}}),
                       "E_READONLY")
    assert key in err["message"]
    # Even beside a legal change, nothing is written.
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"title": "New", key: value},
                                         "append_section": {"header": "N", "body": "b"}}),
                 "E_READONLY")
    unchanged(vine, before, files)


@pytest.mark.parametrize("summary", [
    "", "   ", "s" * 241, "This document describes the alpha letter.",
    "FILE CONTAINING the alpha letter.", 42, None,
], ids=["empty", "blank", "61-tokens", "this-document", "file-containing", "number", "null"])
def test_summary_rules(shared: Vine, summary: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"summary": summary}}),
                 "E_FRONTMATTER")
    unchanged(vine, before, files)


def test_summary_of_60_tokens_is_accepted(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"summary": "s" * 240}}))


@pytest.mark.parametrize("aliases", [
    [f"a{i}" for i in range(17)], [""], ["  "], ["a" * 81], "one alias", [1],
], ids=["seventeen", "empty", "blank", "81-chars", "not-a-list", "not-strings"])
def test_alias_limits(shared: Vine, aliases: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"aliases": aliases}}),
                 "E_SCHEMA")
    unchanged(vine, before, files)


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
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"confidence": 2}}),
                 "E_FRONTMATTER")
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"confidence": True}}),
                 "E_FRONTMATTER")
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {"tags": "one"}}),
                 "E_FRONTMATTER")
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
    assert [e.split("]]")[0] for e in entries] == ["- [[kb/alpha", "- [[kb/beta",
                                                  "- [[kb/gamma"]

    master_meta, master = split(root / "_index.md")
    lines = master.split("\n")
    assert lines[-2] == f"- [[kb/alpha]] {EM} {new}"         # the Landmarks line
    assert CROSS in lines                                     # a cross trail is not an entry
    assert master_meta["updated"] == TODAY
    assert ALPHA_SUMMARY not in master
    assert status(root) == ""
    # The catalog agrees: the branch digest shows the new scent.
    children = assert_ok(vine.look("kb/_index"))["children"]
    assert {c["id"]: c["summary"] for c in children}["kb/alpha"] == new
    assert assert_ok(vine.locate("revised scent"))["results"][0]["id"] == "kb/alpha"


def test_branch_summary_gets_its_coverage_suffix(vine: Vine) -> None:
    root = vine.root
    out = assert_ok(vine.graft("kb/_index", {"set_frontmatter": {
        "summary": "Letters, their uses and history."}}))
    assert out["trail"] == ["_index"]
    assert changed_files(root) == {"kb/_index.md", "_index.md"}
    _, master = split(root / "_index.md")
    assert (f"- [[kb/_index]] {EM} Letters, their uses and history. "
            "3 bananas, 0 sub-branches.") in master.split("\n")
    assert status(root) == ""


def test_summary_of_an_unlisted_node_touches_only_its_file(vine: Vine) -> None:
    assert_ok(vine.graft("_meta/schema", {"set_frontmatter": {"summary": "The dialect."}}))
    assert changed_files(vine.root) == {"_meta/schema.md"}


# -- links ---------------------------------------------------------------------------


def test_add_link_appears_in_look_and_move(vine: Vine) -> None:
    root = vine.root
    out = assert_ok(vine.graft("kb/alpha", {"add_links": [
        {"rel": "supersedes", "target": "kb/beta", "note": "replaces beta"}]}))
    assert out["commit"] == head(root) and out["fortified"] == []
    assert "summary_stale" not in out
    assert subject(root) == "graft(kb/alpha): +1 links"
    assert changed_files(root) == {"kb/alpha.md"}
    links = meta_of(node_path(vine.root, "kb/alpha"))["links"]
    assert links == [{"rel": "part-of", "target": "kb/_index"},
                     {"rel": "supersedes", "target": "kb/beta", "note": "replaces beta"}]
    edges = assert_ok(vine.look("kb/alpha"))["edges_out"]
    assert {"rel": "supersedes", "target": "kb/beta"} in [
        {"rel": e["rel"], "target": e["target"]} for e in edges]
    incoming = assert_ok(vine.look("kb/beta"))["edges_in"]
    assert {"rel": "superseded-by", "source": "kb/alpha"} in [
        {"rel": e["rel"], "source": e["source"]} for e in incoming]
    moved = assert_ok(vine.move("kb/alpha", rel="supersedes"))["neighbors"]
    assert [(n["id"], n["direction"]) for n in moved] == [("kb/beta", "out")]
    back = assert_ok(vine.move("kb/beta", direction="in"))["neighbors"]
    assert ("kb/alpha", "superseded-by") in [(n["id"], n["rel"]) for n in back]
    assert status(root) == ""


def test_discovered_shortcut_defaults(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"add_links": [
        {"rel": "discovered-shortcut", "target": "kb/gamma"},
        {"rel": "related-to", "target": "kb/beta"}]}))
    links = meta_of(node_path(vine.root, "kb/alpha"))["links"]
    assert {"rel": "discovered-shortcut", "target": "kb/gamma", "confidence": 0.5,
            "discovered_by": "agent"} in links
    assert {"rel": "related-to", "target": "kb/beta"} in links
    assert subject(vine.root) == "graft(kb/alpha): +2 links"
    assert_ok(vine.graft("kb/beta", {"add_links": [
        {"rel": "discovered-shortcut", "target": "kb/gamma", "confidence": 0.9}]}))
    assert meta_of(node_path(vine.root, "kb/beta"))["links"] == [
        {"rel": "discovered-shortcut", "target": "kb/gamma", "confidence": 0.9,
         "discovered_by": "agent"}]


def _heat(vine: Vine, node_id: str) -> float:
    return assert_ok(vine.look(node_id))["stats"]["heat"]


@pytest.mark.parametrize("target", ["kb/_index", "kb/_index.md", "/kb/_index/"])
def test_fortification(vine: Vine, target: str) -> None:
    root = vine.root
    before, files = head(root), tracked(root)
    heat_a, heat_b = _heat(vine, "kb/alpha"), _heat(vine, "kb/_index")
    out = assert_ok(vine.graft("kb/alpha", {"add_links": [{"rel": "part-of",
                                                            "target": target}]}))
    assert out == {"id": "kb/alpha", "commit": None,
                   "fortified": [{"rel": "part-of", "target": "kb/_index"}],
                   "trail": ["_index", "kb/_index"], "revision": blob(root, "kb/alpha")}
    unchanged(vine, before, files)
    # Both ends are hotter by the fortification, more than a look alone deposits.
    assert _heat(vine, "kb/alpha") - heat_a >= 0.09
    assert _heat(vine, "kb/_index") - heat_b >= 0.09
    meta = meta_of(node_path(vine.root, "kb/alpha"))
    assert meta["links"] == [{"rel": "part-of", "target": "kb/_index"}]


def test_mixed_patch_commits_and_reports_fortified(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"add_links": [
        {"rel": "part-of", "target": "kb/_index"},
        {"rel": "related-to", "target": "kb/gamma"}]}))
    assert out["commit"] == head(vine.root)
    assert out["fortified"] == [{"rel": "part-of", "target": "kb/_index"}]
    assert subject(vine.root) == "graft(kb/alpha): +1 links"
    assert meta_of(node_path(vine.root, "kb/alpha"))["links"] == [
        {"rel": "part-of", "target": "kb/_index"}, {"rel": "related-to", "target": "kb/gamma"}]


def test_fortify_beside_a_summary_change(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {
        "set_frontmatter": {"summary": "Alpha again."},
        "add_links": [{"rel": "part-of", "target": "kb/_index"}]}))
    assert out["commit"] == head(vine.root)
    assert out["fortified"] == [{"rel": "part-of", "target": "kb/_index"}]
    assert subject(vine.root) == "graft(kb/alpha): set summary"


def test_the_same_link_twice_in_one_patch_is_added_once(vine: Vine) -> None:
    assert_ok(vine.graft("kb/beta", {"add_links": [
        {"rel": "related-to", "target": "kb/gamma"},
        {"rel": "related-to", "target": "kb/gamma"}]}))
    meta = meta_of(node_path(vine.root, "kb/beta"))
    assert meta["links"] == [{"rel": "related-to", "target": "kb/gamma"}]


def test_remove_links(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"add_links": [
        {"rel": "related-to", "target": "kb/beta"}]}))
    out = assert_ok(vine.graft("kb/alpha", {"remove_links": [
        {"rel": "related-to", "target": "kb/beta"}]}))
    assert out["commit"] == head(vine.root)
    assert subject(vine.root) == "graft(kb/alpha): -1 links"
    meta = meta_of(node_path(vine.root, "kb/alpha"))
    assert meta["links"] == [{"rel": "part-of", "target": "kb/_index"}]
    edges = assert_ok(vine.look("kb/alpha"))["edges_out"]
    assert [e["target"] for e in edges] == ["kb/_index"]
    # Removing the last link drops the key.
    assert_ok(vine.graft("kb/alpha", {"remove_links": [
        {"rel": "part-of", "target": "kb/_index"}]}))
    assert "links" not in meta_of(node_path(vine.root, "kb/alpha"))
    assert assert_ok(vine.look("kb/alpha"))["edges_out"] == []
    # A link that is not there: nothing to do.
    before, files = head(vine.root), tracked(vine.root)
    assert assert_ok(vine.graft("kb/alpha", {"remove_links": [
        {"rel": "part-of", "target": "kb/_index"}]}))["commit"] is None
    unchanged(vine, before, files)


def test_add_and_remove_in_one_patch(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {
        "add_links": [{"rel": "related-to", "target": "kb/beta"},
                      {"rel": "related-to", "target": "kb/gamma"}],
        "remove_links": [{"rel": "part-of", "target": "kb/_index"}]}))
    assert subject(vine.root) == "graft(kb/alpha): +2 links; -1 links"
    assert [link["target"] for link in meta_of(node_path(vine.root, "kb/alpha"))["links"]] == [
        "kb/beta", "kb/gamma"]


def test_more_than_50_links(vine: Vine) -> None:
    before, files = head(vine.root), tracked(vine.root)
    many = [{"rel": "related-to", "target": f"kb/t{i}"} for i in range(50)]
    assert_error(vine.graft("kb/alpha", {"add_links": many}), "E_SCHEMA")   # 1 + 50
    assert_error(vine.graft("kb/beta", {"add_links": [*many, {"rel": "related-to",
                                                            "target": "kb/t50"}]}),
                 "E_SCHEMA")
    unchanged(vine, before, files)
    assert_ok(vine.graft("kb/beta", {"add_links": many}))                    # exactly 50
    assert len(meta_of(node_path(vine.root, "kb/beta"))["links"]) == 50
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/beta", {"add_links": [{"rel": "related-to",
                                                       "target": "kb/t99"}]}), "E_SCHEMA")
    unchanged(vine, before, files)
    # Fortifying at the cap is still fine.
    out = assert_ok(vine.graft("kb/beta", {"add_links": [many[0]]}))
    assert out["commit"] is None and out["fortified"] == [many[0]]


@pytest.mark.parametrize("links", [
    [{"rel": "likes", "target": "kb/beta"}],
    [{"rel": "related-to"}],
    [{"target": "kb/beta"}],
    "kb/beta",
    [{"rel": "related-to", "target": "kb/beta", "confidence": 3}],
], ids=["unknown-rel", "no-target", "no-rel", "not-a-list", "bad-confidence"])
def test_bad_links(shared: Vine, links: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    out = vine.graft("kb/alpha", {"add_links": links})
    assert out["error"]["code"] in ("E_SCHEMA", "E_FRONTMATTER"), out
    if links and isinstance(links, list) and links[0].get("rel") == "likes":
        assert_error(out, "E_SCHEMA")
    unchanged(vine, before, files)


# -- sections and bodies -------------------------------------------------------------


def test_append_section(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"append_section": {
        "header": "Notes", "body": "\n  Learned during a hunt.  \n\n"}}))
    assert out["summary_stale"] is True
    assert body_of(vine, "kb/alpha") == ALPHA_BODY + "\n## Notes\n\nLearned during a hunt.\n"
    assert subject(vine.root) == "graft(kb/alpha): append 'Notes'"
    assert changed_files(vine.root) == {"kb/alpha.md"}
    assert meta_of(node_path(vine.root, "kb/alpha"))["updated"] == TODAY
    assert assert_ok(vine.pick("kb/alpha", section="Notes"))["body"].endswith(
        "Learned during a hunt.")
    assert "Notes" in assert_ok(vine.look("kb/alpha"))["outline"]


@pytest.mark.parametrize("header, expected", [
    ("Usage", "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nNew text.\n\n## History\n\n"
              "Alpha began in 2020.\n"),
    ("usage", "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nNew text.\n\n## History\n\n"
              "Alpha began in 2020.\n"),
    ("Details", "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nUse alpha daily.\n\n"
                "### Details\n\nNew text.\n\n## History\n\nAlpha began in 2020.\n"),
    ("History", "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nUse alpha daily.\n\n"
                "### Details\n\nFine print.\n\n## History\n\nNew text.\n"),
])
def test_replace_section(vine: Vine, header: str, expected: str) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_section": {"header": header,
                                                                "body": "New text."}}))
    assert out["summary_stale"] is True
    assert body_of(vine, "kb/alpha") == expected
    assert subject(vine.root) == f"graft(kb/alpha): replace '{header}'"
    assert status(vine.root) == ""


def test_replace_section_stops_at_a_higher_header(vine: Vine) -> None:
    assert_ok(vine.graft("kb/beta", {"replace_body": "# Beta\n\n## One\n\nx\n\n# Two\n\ny"}))
    assert_ok(vine.graft("kb/beta", {"replace_section": {"header": "One", "body": "z"}}))
    assert body_of(vine, "kb/beta") == "# Beta\n\n## One\n\nz\n\n# Two\n\ny\n"


def test_missing_section(shared: Vine) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"replace_section": {"header": "Nowhere",
                                                             "body": "x"}}), "E_NOT_FOUND")
    assert_error(vine.graft("kb/alpha", {
        "set_frontmatter": {"title": "New"},
        "replace_section": {"header": "Nowhere", "body": "x"}}), "E_NOT_FOUND")
    unchanged(vine, before, files)


@pytest.mark.parametrize("arg", [{"header": "", "body": "x"}, {"header": "H"}, "H",
                                 {"body": "x"}], ids=["empty-header", "no-body", "string",
                                                      "no-header"])
def test_bad_section_argument(shared: Vine, arg: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"append_section": arg}), "E_SCHEMA")
    assert_error(vine.graft("kb/alpha", {"replace_section": arg}), "E_SCHEMA")
    unchanged(vine, before, files)


def test_replace_body(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": "# Alpha\n\nOne two three."}))
    assert out["summary_stale"] is True
    assert body_of(vine, "kb/alpha") == "# Alpha\n\nOne two three.\n"
    assert subject(vine.root) == "graft(kb/alpha): replace body (5 words)"
    assert assert_ok(vine.look("kb/alpha"))["outline"] == []
    assert assert_ok(vine.sniff("One two three"))["results"][0]["id"] == "kb/alpha"
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": ""}))
    assert out["commit"] == head(vine.root)
    assert subject(vine.root) == "graft(kb/alpha): replace body (0 words)"
    assert assert_ok(vine.look("kb/alpha"))["summary"] == ALPHA_SUMMARY


def test_replace_body_with_summary_is_not_stale(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": "# Alpha\n\nShort.",
                                            "set_frontmatter": {"summary": "Short alpha."}}))
    assert "summary_stale" not in out
    assert subject(vine.root) == "graft(kb/alpha): set summary; replace body (3 words)"
    assert changed_files(vine.root) == {"kb/alpha.md", "kb/_index.md", "_index.md"}


@pytest.mark.parametrize("node_id, patch", [
    ("kb/alpha", {"replace_body": "x", "append_section": {"header": "H", "body": "b"}}),
    ("kb/alpha", {"replace_body": "x", "replace_section": {"header": "Usage", "body": "b"}}),
    ("kb/_index", {"replace_body": "# Knowledge\n"}),
    ("_index", {"replace_body": "# Title\n"}),
    ("kb/alpha", {"replace_body": 3}),
    ("kb/alpha", {}),
    ("kb/alpha", {"rename": "x"}),
    ("kb/alpha", {"set_frontmatter": {"title": "T"}, "bogus": 1}),
    ("kb/alpha", {"set_frontmatter": "title"}),
    ("kb/alpha", {"remove_links": "kb/beta"}),
], ids=["body+append", "body+replace", "body-of-branch", "body-of-master", "body-not-str",
        "empty", "unknown-key", "unknown-beside-known", "frontmatter-not-object",
        "remove-not-list"])
def test_patch_shape_refusals(shared: Vine, node_id: str, patch: dict[str, Any]) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft(node_id, patch), "E_SCHEMA")
    unchanged(vine, before, files)


def test_unknown_node(shared: Vine) -> None:
    vine = shared
    assert_error(vine.graft("kb/nothing", {"set_frontmatter": {"title": "T"}}), "E_NOT_FOUND")
    assert_error(vine.graft("../outside", {"set_frontmatter": {"title": "T"}}), "E_NOT_FOUND")


def test_summary_stale_only_when_the_body_changed(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"tags": ["x"]}}))
    assert "summary_stale" not in out
    out = assert_ok(vine.graft("kb/alpha", {"append_section": {"header": "N", "body": "b"},
                                            "set_frontmatter": {"summary": "Alpha noted."}}))
    assert "summary_stale" not in out


def test_index_sections_can_be_appended(vine: Vine) -> None:
    assert_ok(vine.graft("kb/_index", {"append_section": {"header": "Reading order",
                                                          "body": "Alpha first."}}))
    meta, body = split(vine.root / "kb/_index.md")
    assert body.endswith("## Reading order\n\nAlpha first.\n")
    assert meta["coverage"] == "3 bananas, 0 sub-branches"


# -- commit subjects -----------------------------------------------------------------


@pytest.mark.parametrize("patch", [
    {"append_section": {"header": "First\nSecond", "body": "Text."}},
    {"replace_section": {"header": "Usage\nInjected", "body": "Text."}},
], ids=["append", "replace"])
def test_a_header_never_breaks_the_commit_subject(vine: Vine, patch: dict[str, Any]) -> None:
    """§9: one subject line. A header with a line break must be refused (it would also
    write a second line under the ``##``), or flattened."""
    before, files = head(vine.root), tracked(vine.root)
    out = vine.graft("kb/alpha", patch)
    if "error" in out:
        assert out["error"]["code"] in ("E_SCHEMA", "E_NOT_FOUND"), out
        unchanged(vine, before, files)
        return
    message = git(vine.root, "log", "-1", "--format=%B").strip()
    assert "\n" not in message, message


def test_subject_parts_in_reference_order(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {
        "set_frontmatter": {"title": "Alpha prime", "tags": ["a"]},
        "add_links": [{"rel": "related-to", "target": "kb/beta"},
                      {"rel": "related-to", "target": "kb/gamma"}],
        "remove_links": [{"rel": "part-of", "target": "kb/_index"}],
        "append_section": {"header": "Notes", "body": "Seen."}}))
    assert subject(vine.root) == \
        "graft(kb/alpha): set tags,title; +2 links; -1 links; append 'Notes'"
    assert meta_of(node_path(vine.root, "kb/alpha"))["updated"] == TODAY
    assert status(vine.root) == ""


def test_append_comes_before_replace_in_the_subject(vine: Vine) -> None:
    """§6.9 lists the parts as ... `append '<h>'`, `replace '<h>'`, `replace body`."""
    assert_ok(vine.graft("kb/alpha", {
        "replace_section": {"header": "History", "body": "Older than thought."},
        "append_section": {"header": "Notes", "body": "Seen."}}))
    assert subject(vine.root) == "graft(kb/alpha): append 'Notes'; replace 'History'"


# -- the contract's example on the sample brain --------------------------------------


def test_seed_example_on_the_sample_brain(brain_copy: Path) -> None:
    root = brain_copy
    new = "Return and exchange windows per channel, superseded for 2027."
    with Vine(root) as vine:
        before = head(root)
        others = {rel: (root / rel).read_bytes()
                  for rel in ("operations/_index.md", "contracts/_index.md",
                              "people/ana-ribeiro.md")}
        out = assert_ok(vine.graft("sales/exchange-policy", {
            "set_frontmatter": {"summary": new},
            "add_links": [{"rel": "succeeds", "target": "sales/exchange-policy-2025"}],
            "append_section": {"header": "Notes",
                               "body": "Superseded by the 2027 policy from January."}}))
        assert out == {"id": "sales/exchange-policy", "commit": head(root),
                       "fortified": [{"rel": "succeeds",
                                      "target": "sales/exchange-policy-2025"}],
                       "trail": ["_index", "sales/_index"],
                       "revision": blob(root, "sales/exchange-policy")}
        assert git(root, "rev-parse", "HEAD~1").strip() == before
        assert subject(root) == \
            "graft(sales/exchange-policy): set summary; append 'Notes'"
        assert changed_files(root) == {"sales/exchange-policy.md", "sales/_index.md",
                                       "_index.md"}
        assert status(root) == ""
        meta, body = split(root / "sales/exchange-policy.md")
        assert meta["summary"] == new and meta["updated"] == TODAY
        assert meta["created"] == "2026-01-05"
        assert [link for link in meta["links"] if link["rel"] == "succeeds"] == [
            {"rel": "succeeds", "target": "sales/exchange-policy-2025"}]
        assert body.endswith("## Notes\n\nSuperseded by the 2027 policy from January.\n")
        for index in ("sales/_index.md", "_index.md"):
            lines = split(root / index)[1].split("\n")
            assert f"- [[sales/exchange-policy]] {EM} {new}" in lines
        for rel, data in others.items():
            assert (root / rel).read_bytes() == data
        assert assert_ok(vine.look("sales/exchange-policy"))["summary"] == new
        found = assert_ok(vine.locate("exchange policy superseded 2027"))["results"]
        assert "sales/exchange-policy" in [r["id"] for r in found]
    with Vine(root, writable=False) as reader:
        assert assert_ok(reader.look("sales/exchange-policy"))["summary"] == new


def test_replace_section_names_the_subsections_it_removed(vine: Vine) -> None:
    """Usage holds ### Details: replacing Usage with text that lacks it says so."""
    out = assert_ok(vine.graft("kb/alpha", {"replace_section": {"header": "usage",
                                                                "body": "New text."}}))
    assert out["sections_replaced"] == ["Usage"]
    assert out["sections_removed"] == ["Details"]
    assert "removed its subsections 'Details'" in out["hint"]
    assert f"git show {out['commit'][:12]}^:kb/alpha.md" in out["hint"]
    assert "Details" not in assert_ok(vine.look("kb/alpha"))["outline"]


def test_replace_section_keeping_its_subsections_removes_nothing(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_section": {
        "header": "Usage", "body": "Use it weekly.\n\n### Details\n\nFiner print."}}))
    assert out["sections_replaced"] == ["Usage"]
    assert "sections_removed" not in out and "hint" not in out
    assert assert_ok(vine.look("kb/alpha"))["outline"] == ["Usage", "Details", "History"]


def test_replace_section_without_subsections_removes_nothing(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_section": {"header": "History",
                                                                "body": "Since 2019."}}))
    assert out["sections_replaced"] == ["History"] and "sections_removed" not in out


def test_replace_body_names_the_sections_it_removed(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": "# Alpha\n\n## Usage\n\nDaily."}))
    assert out["sections_removed"] == ["Details", "History"]
    assert "sections_replaced" not in out
    assert "no longer holds the sections 'Details', 'History'" in out["hint"]
