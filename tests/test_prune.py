"""``prune``: one node out in one commit, refused while anchored unless forced, its
payload kept in the graveyard, its id free again; every refusal changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import assert_error, assert_ok, counter, files_of, git, head, meta_of, status
from .grove import body_of, grow, node, write_unparsed


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return grow(tmp_path_factory.mktemp("grove") / "f")


def changed_in(root: Path, sha: str) -> dict[str, str]:
    """What one commit did to each path: A, M or D."""
    out = git(root, "show", "--name-status", "--format=", "--no-renames", sha)
    return {line.split("\t")[1]: line.split("\t")[0] for line in out.splitlines() if line}


def test_a_leaf_goes_in_one_commit_and_git_keeps_it(vine: Vine, root: Path) -> None:
    assert_ok(vine.plant(node("kb/stray", "kb", "Stray", "A note planted by mistake.")))
    before = head(root)
    coverage = meta_of(root / "kb/_index.md")["coverage"]
    out = assert_ok(vine.prune("kb/stray"))
    assert out == {
        "id": "kb/stray",
        "pruned": True,
        "backlinks_removed": 0,
        "payload_moved": None,
        "commit": head(root),
    }
    assert git(root, "log", "-1", "--format=%s").strip() == "prune(kb/stray)"
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert changed_in(root, out["commit"]) == {"kb/stray.md": "D", "kb/_index.md": "M"}
    assert not (root / "kb/stray.md").exists() and status(root) == ""
    index = root / "kb/_index.md"
    assert "[[kb/stray]]" not in body_of(index)
    assert coverage == "4 bananas, 0 sub-branches"
    assert meta_of(index)["coverage"] == "3 bananas, 0 sub-branches"
    # No read offers it afterwards, at once (the catalog row went with the commit).
    assert_error(vine.look("kb/stray"), "E_NOT_FOUND")
    assert "kb/stray" not in {r["id"] for r in assert_ok(vine.locate("stray", k=10))["results"]}
    listed = assert_ok(vine.scan("kb", fields=["id"]))["nodes"]
    assert "kb/stray" not in {n["id"] for n in listed}
    with Vine(root, writable=False) as fresh:
        assert_error(fresh.look("kb/stray"), "E_NOT_FOUND")
    # History keeps it: git revert brings it back.
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "revert", "--no-edit", "HEAD")
    assert assert_ok(vine.look("kb/stray"))["summary"] == "A note planted by mistake."


def test_an_anchored_node_is_refused_then_forced(vine: Vine, root: Path) -> None:
    before, files = head(root), files_of(root)
    err = assert_error(vine.prune("kb/alpha"), "E_ANCHORED")
    assert err["anchors"] == [
        {"source": "kb/beta", "rel": "related-to"},
        {"source": "other/gamma", "rel": "related-to"},
        {"source": "other/gamma", "rel": "mentioned-in"},
    ]
    assert err["anchor_count"] == 3 and "force" in err["hint"]
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert assert_ok(vine.look("kb/alpha"))["id"] == "kb/alpha"

    out = assert_ok(vine.prune("kb/alpha", force=True))
    assert out["pruned"] is True and out["backlinks_removed"] == 3
    # Every pointing node lost exactly its links to alpha, in the same commit.
    assert changed_in(root, out["commit"]) == {
        "kb/alpha.md": "D",
        "kb/_index.md": "M",
        "_index.md": "M",
        "kb/beta.md": "M",
        "other/gamma.md": "M",
    }
    assert "links" not in meta_of(root / "kb/beta.md")
    assert "links" not in meta_of(root / "other/gamma.md")
    assert meta_of(root / "kb/beta.md")["updated"] == meta_of(root / "kb/_index.md")["updated"]
    # Body wikilinks are prose: they stay (validate reports them as broken).
    assert "[[kb/alpha]]" in body_of(root / "kb/beta.md")
    assert "[[kb/alpha]]" not in body_of(root / "_index.md")  # the Landmarks entry
    assert meta_of(root / "kb/_index.md")["coverage"] == "2 bananas, 0 sub-branches"
    assert assert_ok(vine.look("kb/beta"))["edges_out"] == []
    assert_error(vine.look("kb/alpha"), "E_NOT_FOUND")
    assert status(root) == ""


def test_anchors_show_twenty_and_count_them_all(vine: Vine, root: Path) -> None:
    for batch in (range(0, 20), range(20, 25)):
        assert_ok(
            vine.plant(
                [
                    node(
                        f"kb/fan-{i:02d}",
                        "kb",
                        f"Fan {i}",
                        f"Fan number {i}.",
                        links=[{"rel": "related-to", "target": "kb/data"}],
                    )
                    for i in batch
                ]
            )
        )
    err = assert_error(vine.prune("kb/data"), "E_ANCHORED")
    assert len(err["anchors"]) == 20 and err["anchor_count"] == 25
    assert err["anchors"][0] == {"source": "kb/fan-00", "rel": "related-to"}


def test_a_payload_goes_to_the_graveyard_never_deleted(vine: Vine, root: Path) -> None:
    db = root / "kb/data.db"
    data = db.read_bytes()
    out = assert_ok(vine.prune("kb/data"))
    assert out["payload_moved"] == "_derived/graveyard/kb/data/data.db"
    assert not db.exists()
    assert (root / out["payload_moved"]).read_bytes() == data
    assert_error(vine.query("kb/data", "SELECT 1"), "E_NOT_FOUND")
    assert status(root) == ""
    # The id is free again: a new dataset, and a second prune keeps both payloads.
    assert_ok(vine.plant(counter("A new counter.", 7)))
    again = assert_ok(vine.prune("kb/data"))
    assert again["payload_moved"] == "_derived/graveyard/kb/data/data-2.db"
    assert (root / out["payload_moved"]).read_bytes() == data


def test_an_asset_moves_and_a_remote_payload_stays(vine: Vine, root: Path) -> None:
    asset = root / "kb/_assets/ab12cd34-photo.png"
    asset.parent.mkdir()
    asset.write_bytes(b"\x89PNG fake")
    assert_ok(
        vine.plant(
            node(
                "kb/photo",
                "kb",
                "Photo",
                "A photograph of the kb.",
                type="media",
                payload="_assets/ab12cd34-photo.png",
                payload_type="image",
            )
        )
    )
    assert_ok(
        vine.plant(
            node(
                "kb/remote",
                "kb",
                "Remote",
                "Rows kept in a bucket.",
                payload="s3://bucket/rows.db",
                payload_type="sqlite",
            )
        )
    )
    out = assert_ok(vine.prune("kb/photo"))
    assert out["payload_moved"] == "_derived/graveyard/kb/photo/ab12cd34-photo.png"
    assert not asset.exists() and (root / out["payload_moved"]).read_bytes() == b"\x89PNG fake"
    assert assert_ok(vine.prune("kb/remote"))["payload_moved"] is None


def test_a_shared_payload_stays_for_the_other_node(vine: Vine, root: Path) -> None:
    assert_ok(
        vine.plant(
            node(
                "kb/twin",
                "kb",
                "Twin",
                "The same rows, described again.",
                payload="data.db",
                payload_type="sqlite",
            )
        )
    )
    assert assert_ok(vine.prune("kb/twin"))["payload_moved"] is None
    assert (root / "kb/data.db").exists()
    assert assert_ok(vine.query("kb/data", "SELECT v FROM t"))["rows"] == [[0]]


def test_a_branch_goes_only_once_empty(vine: Vine, root: Path) -> None:
    before, files = head(root), files_of(root)
    for force in (False, True):
        err = assert_error(vine.prune("other/_index", force=force), "E_ANCHORED")
        assert err["children"] == 1 and "one at a time" in err["hint"]
    assert head(root) == before and files_of(root) == files
    assert_ok(vine.prune("other/gamma"))
    out = assert_ok(vine.prune("other/_index"))
    assert out["id"] == "other/_index" and out["pruned"]
    master = root / "_index.md"
    assert "[[other/_index]]" not in body_of(master)
    assert meta_of(master)["coverage"] == "0 bananas, 1 sub-branches"
    assert status(root) == ""


@pytest.mark.parametrize("target", ["_index", "_meta/schema"])
def test_the_frame_is_never_pruned(vine: Vine, root: Path, target: str) -> None:
    before, files = head(root), files_of(root)
    for force in (False, True):
        assert_error(vine.prune(target, force=force), "E_SCHEMA")
    assert head(root) == before and files_of(root) == files


@pytest.mark.parametrize(
    "args, code",
    [
        ({"id": "kb/nowhere"}, "E_NOT_FOUND"),
        ({"id": "../outside"}, "E_NOT_FOUND"),
        ({"id": 7}, "E_SCHEMA"),
        ({"id": "kb/alpha", "force": "yes"}, "E_SCHEMA"),
        ({"id": "kb/alpha", "extra": 1}, "E_SCHEMA"),
    ],
)
def test_bad_arguments_change_nothing(vine: Vine, root: Path, args: dict, code: str) -> None:
    before, files = head(root), files_of(root)
    assert_error(vine.call("prune", args), code)
    assert head(root) == before and files_of(root) == files


def test_a_pruned_id_is_planted_again_as_a_new_node(vine: Vine, root: Path) -> None:
    for _ in range(8):
        vine.reinforce(["kb/beta"])
    hot = assert_ok(vine.look("kb/beta"))["stats"]["heat"]
    assert hot > 0.5
    assert_ok(vine.prune("kb/beta", force=True))
    assert_ok(vine.plant(node("kb/beta", "kb", "Beta again", "A new beta, from scratch.")))
    fresh = assert_ok(vine.look("kb/beta"))
    assert fresh["title"] == "Beta again" and fresh["summary"] == "A new beta, from scratch."
    assert fresh["stats"]["heat"] < hot / 2  # it does not inherit the old heat
    assert "links" not in meta_of(root / "kb/beta.md")
    assert assert_ok(vine.look("kb/beta"))["edges_in"] == []  # alpha's link went with it
    index = body_of(root / "kb/_index.md")
    assert index.count("[[kb/beta]]") == 1
    assert status(root) == ""


def test_a_dry_run_says_what_would_go_and_writes_nothing(vine: Vine, root: Path) -> None:
    before, files = head(root), files_of(root)
    assert_error(vine.prune("kb/alpha", dry_run=True), "E_ANCHORED")
    out = assert_ok(vine.prune("kb/alpha", force=True, dry_run=True))
    assert out["dry_run"] is True and out["pruned"] is False
    assert out["backlinks_removed"] == 3 and out["anchor_count"] == 3
    assert out["indexes"] == ["_index", "kb/_index"] and out["title"] == "Alpha"
    data = assert_ok(vine.prune("kb/data", dry_run=True))
    assert data["payload_moved"] == "_derived/graveyard/kb/data/data.db"
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert (root / "kb/data.db").exists()


def test_a_read_only_vine_refuses(root: Path) -> None:
    before, files = head(root), files_of(root)
    with Vine(root, writable=False) as reader:
        assert_error(reader.prune("kb/beta"), "E_READONLY")
        assert_error(reader.prune("kb/beta", dry_run=True), "E_READONLY")
    assert head(root) == before and files_of(root) == files


def test_a_moved_id_answers_moved(vine: Vine) -> None:
    assert_ok(vine.transplant("kb/beta", "other/beta"))
    err = assert_error(vine.prune("kb/beta"), "E_MOVED")
    assert err["moved_to"] == "other/beta"


def test_a_file_whose_frontmatter_cannot_be_parsed_still_anchors(vine: Vine, root: Path) -> None:
    """A skipped file is no node (no edge, no link a write can drop), but its text still
    points at the node: prune names it and refuses, force or not, rather than leave its
    link dangling unseen."""
    for leaf in ("stray", "lone", "quiet"):
        assert_ok(vine.plant(node(f"kb/{leaf}", "kb", leaf.title(), f"The {leaf} note.")))
    write_unparsed(root)
    before, tree = head(root), files_of(root)
    for target, path in (("kb/stray", "other/linked.md"), ("kb/lone", "other/prose.md")):
        for args in ({}, {"force": True}, {"force": True, "dry_run": True}):
            err = assert_error(vine.prune(target, **args), "E_ANCHORED")
            assert [u["path"] for u in err["unparsed"]] == [path], err
            assert err["unparsed_count"] == 1 and err["unparsed"][0]["reason"]
            assert err["anchors"] == [] and err["anchor_count"] == 0
            assert path in err["message"] and "1 file whose frontmatter" in err["message"]
            assert "vine validate" in err["hint"]
    assert head(root) == before and files_of(root) == tree and status(root) == ""
    # A bare mention in prose is no link: that node goes as usual.
    assert assert_ok(vine.prune("kb/quiet"))["pruned"] is True
    # Once the file is repaired (here: removed), the prune goes through.
    (root / "other/linked.md").unlink()
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "fix")
    assert assert_ok(vine.prune("kb/stray"))["pruned"] is True
