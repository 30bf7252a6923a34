"""``transplant`` refuses, as ``prune`` does, when a file the catalog skips (its
frontmatter cannot be parsed) links to the node: no write can rewrite that link, so the
move would leave it pointing at the old id, unseen."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import assert_error, assert_ok, files_of, git, head, status
from .grove import BROKEN, grow, node, write_unparsed


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return grow(tmp_path_factory.mktemp("grove") / "f")


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", message)


def test_a_file_whose_frontmatter_cannot_be_parsed_holds_the_node(vine: Vine, root: Path) -> None:
    for leaf in ("stray", "lone", "quiet"):
        assert_ok(vine.plant(node(f"kb/{leaf}", "kb", leaf.title(), f"The {leaf} note.")))
    files = write_unparsed(root)
    before, tree = head(root), files_of(root)
    for target, path in (("kb/stray", "other/linked.md"), ("kb/lone", "other/prose.md")):
        for args in ({}, {"dry_run": True}):
            err = assert_error(vine.transplant(target, target + "-moved", **args), "E_ANCHORED")
            assert [u["path"] for u in err["unparsed"]] == [path], err
            assert err["unparsed_count"] == 1 and err["unparsed"][0]["reason"]
            assert err["anchors"] == [] and err["anchor_count"] == 0
            assert path in err["message"] and "1 file whose frontmatter" in err["message"]
            assert "does not move" in err["message"]
            assert "vine validate" in err["hint"] and "transplant again" in err["hint"]
    assert head(root) == before and files_of(root) == tree and status(root) == ""
    # A bare mention in prose is no link: that node moves as usual.
    assert assert_ok(vine.transplant("kb/quiet", "kb/quiet-moved"))["new_id"] == "kb/quiet-moved"
    # Once the file is repaired, the move goes through and rewrites its link.
    (root / "other/linked.md").write_text(
        files["other/linked.md"].replace("[unclosed", "Linked"), encoding="utf-8"
    )
    commit_all(root, "fix")
    out = assert_ok(vine.transplant("kb/stray", "kb/stray-moved"))
    assert out["backlinks_rewritten"] == 1
    assert "target: kb/stray-moved" in (root / "other/linked.md").read_text(encoding="utf-8")


def test_the_anchors_it_could_rewrite_are_named_beside_the_file(vine: Vine, root: Path) -> None:
    """kb/alpha has parsed backlinks too (kb/beta, other/gamma): the refusal names them
    as anchors, with the unparsed file, as prune's does."""
    (root / "other/broken.md").write_text(
        BROKEN.format(name="broken", links="", body="Cites [[kb/alpha]]."), encoding="utf-8"
    )
    commit_all(root, "broken")
    before = head(root)
    err = assert_error(vine.transplant("kb/alpha", "other/alpha", dry_run=True), "E_ANCHORED")
    assert [u["path"] for u in err["unparsed"]] == ["other/broken.md"]
    assert {a["source"] for a in err["anchors"]} == {"kb/beta", "other/gamma"}
    assert err["anchor_count"] == len(err["anchors"]) and "out_of_scope" not in err
    assert head(root) == before and (root / "kb/alpha.md").exists()
