"""``history``: a node's commits newest first, across its moves, with ``by`` from the
Station's trailer; within its budget; moved and pruned ids answer their errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from monkeyllm import Vine, budget
from monkeyllm.reads.history import action_of

from .forestkit import assert_error, assert_ok, copy_sample, git
from .grove import grow, node

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return grow(tmp_path / "f")


def test_entries_newest_first_across_a_move_with_by(root: Path) -> None:
    with Vine(root) as vine:
        with vine.trailers({"station-principal": "ana"}):
            assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"title": "Alpha 2"}}))
        assert_ok(vine.transplant("kb/alpha", "other/alpha"))
        with vine.trailers({"station-principal": "bo"}):
            assert_ok(
                vine.graft(
                    "other/alpha", {"append_section": {"header": "More", "body": "After the move."}}
                )
            )
        out = assert_ok(vine.history("other/alpha"))
    assert out["id"] == "other/alpha" and out["truncated"] is False
    entries = out["entries"]
    assert [e["action"] for e in entries] == ["graft", "transplant", "graft", "graft", "plant"]
    assert [e.get("by") for e in entries] == ["bo", None, "ana", None, None]
    assert "by" not in entries[1]
    assert entries[1]["message"] == "transplant(kb/alpha -> other/alpha)"
    assert entries[-1]["message"].startswith("plant(kb/alpha): Alpha")
    shas = git(root, "log", "--format=%H").split()
    assert [e["commit"] for e in entries] == [
        s for s in shas if s in {e["commit"] for e in entries}
    ]
    for e in entries:
        assert ISO.match(e["at"]), e
        assert set(e) <= {"commit", "at", "action", "message", "by"}


def test_limit_and_the_budget(root: Path) -> None:
    with Vine(root) as vine:
        for i in range(40):
            assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"title": f"Alpha {i}"}}))
        few = assert_ok(vine.history("kb/alpha", limit=3))
        assert len(few["entries"]) == 3 and few["truncated"] is True
        every = assert_ok(vine.history("kb/alpha", limit=50))
        assert budget.cost(every) <= budget.HISTORY
        assert every["truncated"] is True and 0 < len(every["entries"]) < 42
        for bad in (0, 51, 500):
            err = assert_error(vine.history("kb/alpha", limit=bad), "E_SCHEMA")
            assert "from 1 to 50" in err["message"]
        one = assert_ok(vine.history("kb/data", limit=1))
        assert len(one["entries"]) == 1
        whole = assert_ok(vine.history("kb/data"))
        assert [e["action"] for e in whole["entries"]] == ["plant"] and not whole["truncated"]


def test_moved_and_pruned_ids(root: Path) -> None:
    with Vine(root) as vine:
        assert_ok(vine.transplant("kb/beta", "other/beta"))
        assert assert_error(vine.history("kb/beta"), "E_MOVED")["moved_to"] == "other/beta"
        assert_ok(vine.prune("other/beta", force=True))
        assert_error(vine.history("other/beta"), "E_NOT_FOUND")
        assert_error(vine.history("kb/beta"), "E_NOT_FOUND")  # the waymark went with it
        assert_error(vine.history("nowhere"), "E_NOT_FOUND")
        assert_error(vine.call("history", {"id": "kb/alpha", "limit": "3"}), "E_SCHEMA")


def test_a_read_with_heat_and_a_trace(root: Path) -> None:
    with Vine(root, writable=False) as vine:
        cold = assert_ok(vine.look("kb/data"))["stats"]["heat"]
        assert_ok(vine.history("kb/data"))
        assert assert_ok(vine.look("kb/data"))["stats"]["heat"] > cold
        session = vine.session
    trace = root / "_derived" / "traces" / f"{session}.jsonl"
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert any(t["primitive"] == "history" and t["id"] == "kb/data" for t in lines)


def test_sample_brain_history_and_a_forest_without_git(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "git", git=True)
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.history("sales/exchange-policy"))
        assert [e["action"] for e in out["entries"]] == ["plant"]
        assert out["entries"][0]["message"] == "plant(batch): 12 nodes"
    bare = copy_sample(tmp_path / "bare")
    with Vine(bare, writable=False) as vine:
        err = assert_error(vine.history("sales/exchange-policy"), "E_SCHEMA")
        assert "git" in err["message"] + err["hint"]


@pytest.mark.parametrize(
    "subject, action",
    [
        ("plant(kb/a): A [source=agent]", "plant"),
        ("graft(kb/a): set title", "graft"),
        ("tend(kb/d): INSERT 1 row(s)", "tend"),
        ("prune(kb/a)", "prune"),
        ("transplant(kb/a -> kb/b)", "transplant"),
        ("plant(batch): 4 nodes", "plant"),
        ("init: forest 'Grove' (empty A.5 skeleton)", "init"),
        ("gardener(sync): kb/a", "gardener"),
        ("validate(fix): 2 repairs", "validate"),
        ("Merge branch 'x' into main", "Merge branch 'x' into main"),
        ("landmark", "landmark"),
    ],
)
def test_the_action_is_the_subjects_prefix(subject: str, action: str) -> None:
    assert action_of(subject) == action


def test_a_node_planted_by_hand_has_history_once_committed(root: Path) -> None:
    with Vine(root) as vine:
        assert_ok(vine.plant(node("kb/new", "kb", "New", "Planted, then read back.")))
        out = assert_ok(vine.history("kb/new"))
    assert [e["message"] for e in out["entries"]] == ["plant(kb/new): New [source=agent]"]


def _rename_by_hand(root: Path, old: str, new: str, subject: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", f"{old}.md", f"{new}.md")
    git(root, "commit", "-q", "-m", subject)


def test_history_follows_renames_made_by_hand(root: Path) -> None:
    with Vine(root) as vine:
        assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"title": "Alpha 2"}}))
        before = assert_ok(vine.history("kb/alpha"))["entries"]
    # Two renames outside the engine (no waymark), then a write under the new id.
    _rename_by_hand(root, "kb/alpha", "kb/alpha-renamed", "Rename alpha by hand")
    _rename_by_hand(root, "kb/alpha-renamed", "other/alpha", "Move it again")
    with Vine(root) as vine:
        assert_ok(vine.graft("other/alpha", {"set_frontmatter": {"title": "Alpha 3"}}))
        out = assert_ok(vine.history("other/alpha"))
        few = assert_ok(vine.history("other/alpha", limit=4))
    entries = out["entries"]
    assert [e["action"] for e in entries[:3]] == ["graft", "Move it again", "Rename alpha by hand"]
    assert entries[3:] == before and before[-1]["action"] == "plant"
    assert out["truncated"] is False
    shas = git(root, "log", "--format=%H").split()
    assert [e["commit"] for e in entries] == [
        s for s in shas if s in {e["commit"] for e in entries}
    ]
    # The limit holds across the renames, and says the rest exists.
    assert few["entries"] == entries[:4] and few["truncated"] is True


def test_a_file_added_by_hand_is_not_taken_for_a_rename(root: Path) -> None:
    # A new file by hand whose text is another's copy: git would call it a copy, not a
    # rename (the original stays), so its history is its own commit alone.
    text = (root / "kb/alpha.md").read_text(encoding="utf-8")
    (root / "kb/alpha-copy.md").write_text(text.replace("Alpha", "Alpha copy"), encoding="utf-8")
    git(root, "add", "kb/alpha-copy.md")
    git(root, "commit", "-q", "-m", "Copy alpha by hand")
    with Vine(root) as vine:
        out = assert_ok(vine.history("kb/alpha-copy"))
    assert [e["message"] for e in out["entries"]] == ["Copy alpha by hand"]


@pytest.mark.parametrize("committed", [True, False])
def test_a_file_with_broken_frontmatter_still_has_its_history(root: Path, committed: bool) -> None:
    """Who broke a file, and when, is what history is for: a node whose frontmatter no
    longer parses lists its file's commits (committed or not yet), with a hint saying
    the file is not a well-formed node, instead of refusing with E_FRONTMATTER."""
    with Vine(root) as vine:
        before = [e["action"] for e in assert_ok(vine.history("kb/alpha"))["entries"]]
    path = root / "kb/alpha.md"
    path.write_text(path.read_text(encoding="utf-8").replace("title:", "title: [", 1))
    if committed:
        git(root, "commit", "-q", "-am", "Edit alpha by hand")
    with Vine(root) as vine:
        assert_error(vine.look("kb/alpha"), "E_FRONTMATTER")
        out = assert_ok(vine.history("kb/alpha"))
        assert_error(vine.history("kb/nowhere"), "E_NOT_FOUND")
    actions = [e["action"] for e in out["entries"]]
    assert actions == (["Edit alpha by hand", *before] if committed else before)
    assert out["id"] == "kb/alpha" and out["truncated"] is False
    assert "kb/alpha.md is not a well-formed node" in out["hint"]
