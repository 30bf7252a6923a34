"""plant with a list: up to 20 nodes, rehearsed in order, in one commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import TEXT_TABLE, assert_error, assert_ok, node


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def vine(tmp_path: Path):  # noqa: ANN201
    with Vine.init(tmp_path / "f", "Batch forest") as v:
        yield v


def _note(node_id: str, parent: str, summary: str = "A note.") -> dict:
    return node(node_id, parent, node_id.title(), summary)


def test_a_branch_ships_with_its_children_in_one_commit(vine: Vine) -> None:
    before = _git(vine.root, "rev-parse", "HEAD").strip()
    out = assert_ok(
        vine.plant(
            [
                node("ops/_index", "_index", "Ops", "Operations.", type="branch"),
                _note("ops/a", "ops/_index", "First."),
                _note("ops/b", "ops/_index", "Second."),
                _note("top", "_index", "At the root."),
            ]
        )
    )
    assert out["created"] == ["ops/_index", "ops/a", "ops/b", "top"]
    assert out["count"] == 4 and out["commit"] == _git(vine.root, "rev-parse", "HEAD").strip()
    assert _git(vine.root, "log", "-1", "--format=%s") == "plant(batch): 4 nodes\n"
    assert _git(vine.root, "rev-parse", "HEAD~1").strip() == before
    files = set(_git(vine.root, "show", "--name-only", "--format=", "HEAD").split())
    assert files == {"_index.md", "ops/_index.md", "ops/a.md", "ops/b.md", "top.md"}
    ops = (vine.root / "ops" / "_index.md").read_text()
    assert "- [[ops/a]] — First.\n- [[ops/b]] — Second." in ops
    assert "coverage: 2 bananas, 0 sub-branches" in ops
    root = (vine.root / "_index.md").read_text()
    assert "- [[ops/_index]] — Operations." in root and "- [[top]] — At the root." in root
    assert "coverage: 1 bananas, 1 sub-branches" in root
    assert _git(vine.root, "status", "--porcelain") == ""
    assert [n["id"] for n in vine.scan("ops")["nodes"]] == ["ops/a", "ops/b"]


def test_one_bad_node_refuses_the_whole_batch(vine: Vine) -> None:
    before = _git(vine.root, "rev-parse", "HEAD").strip()
    err = assert_error(
        vine.plant([_note("fine", "_index"), {**_note("bad", "_index"), "type": "widget"}]),
        "E_SCHEMA",
    )
    assert err["message"].startswith("bad: ")
    assert _git(vine.root, "rev-parse", "HEAD").strip() == before
    assert not (vine.root / "fine.md").exists()
    assert _git(vine.root, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    "nodes, code",
    [
        ([], "E_SCHEMA"),
        ([_note(f"n{i}", "_index") for i in range(21)], "E_SCHEMA"),
        ([_note("twice", "_index"), _note("twice", "_index")], "E_SCHEMA"),
        ([node("ds", "_index", "D", "Rows.", type="dataset", schema=TEXT_TABLE)], "E_SCHEMA"),
        ([_note("orphan/x", "orphan/_index")], "E_NOT_FOUND"),
    ],
)
def test_refusals(vine: Vine, nodes: list, code: str) -> None:
    assert_error(vine.plant(nodes), code)
    assert _git(vine.root, "status", "--porcelain") == ""


def test_existing_ids_with_if_absent(vine: Vine) -> None:
    assert_ok(vine.plant(_note("old", "_index")))
    assert_error(vine.plant([_note("old", "_index"), _note("new", "_index")]), "E_SCHEMA")
    out = assert_ok(vine.plant([_note("old", "_index"), _note("new", "_index")], if_absent=True))
    assert out["created"] == ["new"] and out["existing"] == ["old"]
    again = assert_ok(vine.plant([_note("old", "_index")], if_absent=True))
    assert again == {"created": [], "count": 0, "existing": ["old"]}


def test_dry_run_lists_every_problem(vine: Vine) -> None:
    ok = assert_ok(vine.plant([_note("a", "_index"), _note("b", "_index")], dry_run=True))
    assert ok == {"valid": True, "count": 2, "dry_run": True}
    err = assert_error(
        vine.plant(
            [{**_note("a", "_index"), "summary": ""}, {**_note("b", "_index"), "type": "widget"}],
            dry_run=True,
        ),
        "E_FRONTMATTER",
    )
    assert [e["index"] for e in err["errors"]] == [0, 1]
    assert not (vine.root / "a.md").exists()
