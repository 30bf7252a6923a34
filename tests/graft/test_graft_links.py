"""graft's links: adding (with fortification), removing, and the edges the catalog then
holds."""

from __future__ import annotations

from typing import Any

import pytest

from monkeyllm import Vine

from ..forestkit import assert_error, assert_ok, head, links, meta_of, node_path, status
from .kit import blob, changed_files, subject, tracked, unchanged


def test_add_link_appears_in_look_and_move(vine: Vine) -> None:
    root = vine.root
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {"add_links": [{"rel": "supersedes", "target": "kb/beta", "note": "replaces beta"}]},
        )
    )
    assert out["commit"] == head(root) and out["fortified"] == []
    assert "summary_stale" not in out
    assert subject(root) == "graft(kb/alpha): +1 links"
    assert changed_files(root) == {"kb/alpha.md"}
    links = meta_of(node_path(vine.root, "kb/alpha"))["links"]
    assert links == [
        {"rel": "part-of", "target": "kb/_index"},
        {"rel": "supersedes", "target": "kb/beta", "note": "replaces beta"},
    ]
    edges = assert_ok(vine.look("kb/alpha"))["edges_out"]
    assert {"rel": "supersedes", "target": "kb/beta"} in [
        {"rel": e["rel"], "target": e["target"]} for e in edges
    ]
    incoming = assert_ok(vine.look("kb/beta"))["edges_in"]
    assert {"rel": "superseded-by", "source": "kb/alpha"} in [
        {"rel": e["rel"], "source": e["source"]} for e in incoming
    ]
    moved = assert_ok(vine.move("kb/alpha", rel="supersedes"))["neighbors"]
    assert [(n["id"], n["direction"]) for n in moved] == [("kb/beta", "out")]
    back = assert_ok(vine.move("kb/beta", direction="in"))["neighbors"]
    assert ("kb/alpha", "superseded-by") in [(n["id"], n["rel"]) for n in back]
    assert status(root) == ""


def test_discovered_shortcut_defaults(vine: Vine) -> None:
    assert_ok(
        vine.graft(
            "kb/alpha",
            {"add_links": links(("discovered-shortcut", "kb/gamma"), ("related-to", "kb/beta"))},
        )
    )
    written = meta_of(node_path(vine.root, "kb/alpha"))["links"]
    assert {
        "rel": "discovered-shortcut",
        "target": "kb/gamma",
        "confidence": 0.5,
        "discovered_by": "agent",
    } in written
    assert {"rel": "related-to", "target": "kb/beta"} in written
    assert subject(vine.root) == "graft(kb/alpha): +2 links"
    assert_ok(
        vine.graft(
            "kb/beta",
            {
                "add_links": [
                    {"rel": "discovered-shortcut", "target": "kb/gamma", "confidence": 0.9}
                ]
            },
        )
    )
    assert meta_of(node_path(vine.root, "kb/beta"))["links"] == [
        {
            "rel": "discovered-shortcut",
            "target": "kb/gamma",
            "confidence": 0.9,
            "discovered_by": "agent",
        }
    ]


def _heat(vine: Vine, node_id: str) -> float:
    return assert_ok(vine.look(node_id))["stats"]["heat"]


@pytest.mark.parametrize("target", ["kb/_index", "kb/_index.md", "/kb/_index/"])
def test_fortification(vine: Vine, target: str) -> None:
    root = vine.root
    before, files = head(root), tracked(root)
    heat_a, heat_b = _heat(vine, "kb/alpha"), _heat(vine, "kb/_index")
    out = assert_ok(vine.graft("kb/alpha", {"add_links": [{"rel": "part-of", "target": target}]}))
    assert out == {
        "id": "kb/alpha",
        "commit": None,
        "fortified": [{"rel": "part-of", "target": "kb/_index"}],
        "trail": ["_index", "kb/_index"],
        "revision": blob(root, "kb/alpha"),
    }
    unchanged(vine, before, files)
    # Both ends are hotter by the fortification, more than a look alone deposits.
    assert _heat(vine, "kb/alpha") - heat_a >= 0.09
    assert _heat(vine, "kb/_index") - heat_b >= 0.09
    meta = meta_of(node_path(vine.root, "kb/alpha"))
    assert meta["links"] == [{"rel": "part-of", "target": "kb/_index"}]


def test_mixed_patch_commits_and_reports_fortified(vine: Vine) -> None:
    out = assert_ok(
        vine.graft(
            "kb/alpha", {"add_links": links(("part-of", "kb/_index"), ("related-to", "kb/gamma"))}
        )
    )
    assert out["commit"] == head(vine.root)
    assert out["fortified"] == [{"rel": "part-of", "target": "kb/_index"}]
    assert subject(vine.root) == "graft(kb/alpha): +1 links"
    assert meta_of(node_path(vine.root, "kb/alpha"))["links"] == [
        {"rel": "part-of", "target": "kb/_index"},
        {"rel": "related-to", "target": "kb/gamma"},
    ]


def test_fortify_beside_a_summary_change(vine: Vine) -> None:
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "set_frontmatter": {"summary": "Alpha again."},
                "add_links": [{"rel": "part-of", "target": "kb/_index"}],
            },
        )
    )
    assert out["commit"] == head(vine.root)
    assert out["fortified"] == [{"rel": "part-of", "target": "kb/_index"}]
    assert subject(vine.root) == "graft(kb/alpha): set summary"


def test_the_same_link_twice_in_one_patch_is_added_once(vine: Vine) -> None:
    assert_ok(
        vine.graft(
            "kb/beta", {"add_links": links(("related-to", "kb/gamma"), ("related-to", "kb/gamma"))}
        )
    )
    meta = meta_of(node_path(vine.root, "kb/beta"))
    assert meta["links"] == [{"rel": "related-to", "target": "kb/gamma"}]


def test_remove_links(vine: Vine) -> None:
    assert_ok(vine.graft("kb/alpha", {"add_links": [{"rel": "related-to", "target": "kb/beta"}]}))
    out = assert_ok(
        vine.graft("kb/alpha", {"remove_links": [{"rel": "related-to", "target": "kb/beta"}]})
    )
    assert out["commit"] == head(vine.root)
    assert subject(vine.root) == "graft(kb/alpha): -1 links"
    meta = meta_of(node_path(vine.root, "kb/alpha"))
    assert meta["links"] == [{"rel": "part-of", "target": "kb/_index"}]
    edges = assert_ok(vine.look("kb/alpha"))["edges_out"]
    assert [e["target"] for e in edges] == ["kb/_index"]
    # Removing the last link drops the key.
    assert_ok(vine.graft("kb/alpha", {"remove_links": [{"rel": "part-of", "target": "kb/_index"}]}))
    assert "links" not in meta_of(node_path(vine.root, "kb/alpha"))
    assert assert_ok(vine.look("kb/alpha"))["edges_out"] == []
    # A link that is not there: nothing to do.
    before, files = head(vine.root), tracked(vine.root)
    assert (
        assert_ok(
            vine.graft("kb/alpha", {"remove_links": [{"rel": "part-of", "target": "kb/_index"}]})
        )["commit"]
        is None
    )
    unchanged(vine, before, files)


def test_add_and_remove_in_one_patch(vine: Vine) -> None:
    assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "add_links": links(("related-to", "kb/beta"), ("related-to", "kb/gamma")),
                "remove_links": [{"rel": "part-of", "target": "kb/_index"}],
            },
        )
    )
    assert subject(vine.root) == "graft(kb/alpha): +2 links; -1 links"
    assert [link["target"] for link in meta_of(node_path(vine.root, "kb/alpha"))["links"]] == [
        "kb/beta",
        "kb/gamma",
    ]


def test_more_than_50_links(vine: Vine) -> None:
    before, files = head(vine.root), tracked(vine.root)
    many = [{"rel": "related-to", "target": f"kb/t{i}"} for i in range(50)]
    assert_error(vine.graft("kb/alpha", {"add_links": many}), "E_SCHEMA")  # 1 + 50
    assert_error(
        vine.graft("kb/beta", {"add_links": [*many, {"rel": "related-to", "target": "kb/t50"}]}),
        "E_SCHEMA",
    )
    unchanged(vine, before, files)
    assert_ok(vine.graft("kb/beta", {"add_links": many}))  # exactly 50
    assert len(meta_of(node_path(vine.root, "kb/beta"))["links"]) == 50
    before, files = head(vine.root), tracked(vine.root)
    assert_error(
        vine.graft("kb/beta", {"add_links": [{"rel": "related-to", "target": "kb/t99"}]}),
        "E_SCHEMA",
    )
    unchanged(vine, before, files)
    # Fortifying at the cap is still fine.
    out = assert_ok(vine.graft("kb/beta", {"add_links": [many[0]]}))
    assert out["commit"] is None and out["fortified"] == [many[0]]


@pytest.mark.parametrize(
    "links",
    [
        [{"rel": "likes", "target": "kb/beta"}],
        [{"rel": "related-to"}],
        [{"target": "kb/beta"}],
        "kb/beta",
        [{"rel": "related-to", "target": "kb/beta", "confidence": 3}],
    ],
    ids=["unknown-rel", "no-target", "no-rel", "not-a-list", "bad-confidence"],
)
def test_bad_links(shared: Vine, links: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    out = vine.graft("kb/alpha", {"add_links": links})
    assert out["error"]["code"] in ("E_SCHEMA", "E_FRONTMATTER"), out
    if links and isinstance(links, list) and links[0].get("rel") == "likes":
        assert_error(out, "E_SCHEMA")
    unchanged(vine, before, files)


def test_a_link_to_a_node_that_does_not_exist_is_kept_and_said(vine: Vine) -> None:
    """The format keeps a dangling target, and `vine validate` reports it as an error:
    the write says so, naming it, while a link to a node that exists says nothing."""
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "add_links": [
                    {"rel": "related-to", "target": "kb/beta"},
                    {"rel": "related-to", "target": "kb/not-yet"},
                ]
            },
        )
    )
    assert out["commit"] == head(vine.root)
    assert out["dangling"] == ["kb/not-yet"]
    assert "'kb/not-yet'" in out["hint"] and "links.dangling" in out["hint"]
    stored = meta_of(node_path(vine.root, "kb/alpha"))["links"]
    assert {"rel": "related-to", "target": "kb/not-yet"} in stored
    again = assert_ok(
        vine.graft("kb/alpha", {"add_links": [{"rel": "related-to", "target": "kb/beta"}]})
    )
    assert "dangling" not in again and "hint" not in again
