"""The index spliced in-process: git itself must agree with every entry it writes,
keep what it does not touch, and fall back to ``git update-index`` where the format is
not ours to rewrite."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from monkeyllm import Vine, gitindex
from monkeyllm.writes import JOURNAL

from .forestkit import assert_error, assert_ok, copy_sample, git, head, node, status


def note(node_id: str, parent: str = "clients/_index") -> dict:
    return node(
        node_id,
        parent,
        node_id.split("/")[-1],
        "A note for the index tests.",
        body="# Note\n\n## Body\n\nText.",
    )


def index_version(root: Path) -> int:
    return int.from_bytes((root / ".git" / "index").read_bytes()[4:8], "big")


def assert_in_sync(root: Path) -> None:
    """The index matches HEAD and the work tree by stat data alone (no refresh)."""
    assert git(root, "diff-files", "--name-status") == ""
    assert git(root, "diff-index", "--cached", "--name-status", "HEAD") == ""
    assert git(root, "write-tree").strip() == git(root, "rev-parse", "HEAD^{tree}").strip()
    assert status(root) == ""
    subprocess.run(
        ["git", "fsck", "--strict", "--no-progress"], cwd=root, check=True, capture_output=True
    )


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "brain", git=True)


def test_writes_leave_the_index_in_sync_by_stat(forest: Path) -> None:
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        assert_in_sync(forest)
        assert_ok(vine.graft("clients/alpha", {"set_frontmatter": {"summary": "Changed."}}))
        assert_in_sync(forest)
        # a name that sorts first and one that sorts last in the whole index
        assert_ok(vine.plant(note("0first", "_index")))
        assert_ok(vine.plant(note("zzz-last", "_index")))
        assert_in_sync(forest)
    assert index_version(forest) == 2
    listed = git(forest, "ls-files").split()
    assert {"0first.md", "zzz-last.md", "clients/alpha.md"} <= set(listed)
    assert listed == sorted(listed)


def test_the_index_is_spliced_not_rewritten_by_git(forest: Path) -> None:
    """No git process updates the index: its cache-tree extension, which git would
    keep, is dropped by the splice (git rebuilds it on demand)."""
    git(forest, "write-tree")  # gives the index a cache-tree (TREE) extension
    assert b"TREE" in (forest / ".git" / "index").read_bytes()
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
    assert b"TREE" not in (forest / ".git" / "index").read_bytes()
    assert_in_sync(forest)


def test_entries_it_does_not_touch_are_kept_byte_for_byte(forest: Path) -> None:
    """A staged change, an intent-to-add file and a skip-worktree flag (extended flags,
    index version 3) all survive a write."""
    (forest / "scratch.txt").write_text("staged by a person\n")
    (forest / "later.txt").write_text("intent to add\n")
    git(forest, "add", "scratch.txt")
    git(forest, "add", "-N", "later.txt")
    git(forest, "update-index", "--skip-worktree", "acme-trading.md")
    before = git(
        forest, "ls-files", "-s", "-v", "--debug", "scratch.txt", "later.txt", "acme-trading.md"
    )
    assert index_version(forest) == 3
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        assert_ok(vine.plant(note("clients/beta")))
    assert index_version(forest) == 3
    after = git(
        forest, "ls-files", "-s", "-v", "--debug", "scratch.txt", "later.txt", "acme-trading.md"
    )
    assert after == before
    assert git(forest, "diff", "--cached", "--name-only", "HEAD") == "scratch.txt\n"
    assert git(forest, "show", "--name-only", "--format=", "HEAD").split() == [
        "clients/_index.md",
        "clients/beta.md",
    ]


def test_a_change_staged_between_writes_is_kept(forest: Path) -> None:
    """The parsed index is cached between writes; git touching the index in between
    must invalidate it."""
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        (forest / "notes.txt").write_text("x\n")
        git(forest, "add", "notes.txt")
        assert_ok(vine.plant(note("clients/beta")))
        git(forest, "rm", "-q", "--cached", "notes.txt")
        assert_ok(vine.plant(note("clients/gamma")))
    assert "notes.txt" not in git(forest, "ls-files")
    assert git(forest, "diff", "--cached", "--name-only", "HEAD") == ""
    (forest / "notes.txt").unlink()
    assert_in_sync(forest)


def test_indexes_it_cannot_splice_go_through_git(forest: Path) -> None:
    """Version 4's compressed paths (a split index: tests/test_gitsplit.py)."""
    git(forest, "update-index", "--index-version", "4")
    raw = (forest / ".git" / "index").read_bytes()
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        assert_ok(vine.graft("clients/alpha", {"set_frontmatter": {"summary": "Changed."}}))
    assert (forest / ".git" / "index").read_bytes() != raw
    assert index_version(forest) == 4
    assert_in_sync(forest)


def test_a_removed_file_leaves_the_index(forest: Path) -> None:
    """A commit of a missing path removes its entry (every stage of it)."""
    from monkeyllm.gitops import Repository

    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
    (forest / "clients" / "alpha.md").unlink()
    repo = Repository(forest.resolve())
    repo.commit([forest.resolve() / "clients" / "alpha.md"], "remove alpha")
    repo.close()
    assert "clients/alpha.md" not in git(forest, "ls-files")
    assert git(forest, "show", "--name-status", "--format=", "HEAD").split() == [
        "D",
        "clients/alpha.md",
    ]
    assert_in_sync(forest)


def test_a_held_index_lock_refuses_and_changes_nothing(forest: Path) -> None:
    lock = forest / ".git" / "index.lock"
    lock.write_text("")
    before = head(forest)
    parent = forest / "clients" / "_index.md"
    stamp = parent.stat().st_mtime_ns
    with Vine(forest) as vine:
        assert_error(vine.plant(note("clients/alpha")), "E_LOCKED")
    assert head(forest) == before
    assert not (forest / "clients" / "alpha.md").exists()
    # Refused before any file changed: the parent index was not even rewritten (a
    # rewrite would leave git's index stale by stat data, whatever the bytes).
    assert parent.stat().st_mtime_ns == stamp
    lock.unlink()
    assert_in_sync(forest)


def test_a_corrupt_index_is_left_to_git(tmp_path: Path) -> None:
    """An index whose checksum does not match is not spliced (git reports it)."""
    index = tmp_path / "index"
    index.write_bytes(b"DIRC" + (2).to_bytes(4, "big") + (0).to_bytes(4, "big") + b"\1" * 20)
    assert gitindex.update(tmp_path, tmp_path, {"a.md": None}) is False
    index.write_bytes(b"not an index at all, just text")
    assert gitindex.update(tmp_path, tmp_path, {"a.md": None}) is False
    index.unlink()
    assert gitindex.update(tmp_path, tmp_path, {"a.md": None}) is False


def test_an_index_write_that_fails_after_the_commit_leaves_the_index_in_line(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is written while the catalog takes the files in; when that write
    fails (here another git command takes the index lock in the meantime), the commit
    stands, the call succeeds, and the entries of its paths follow HEAD."""
    lock = forest / ".git" / "index.lock"
    written = gitindex.Staged.write

    def busy_then_free(self: gitindex.Staged) -> None:
        lock.write_text("")
        try:
            written(self)
        finally:
            lock.unlink()

    with Vine(forest) as vine:
        before = head(forest)
        monkeypatch.setattr(gitindex.Staged, "write", busy_then_free)
        out = assert_ok(vine.plant(note("clients/alpha")))
        assert head(forest) == out["commit"] != before
        assert_in_sync(forest)
        monkeypatch.setattr(gitindex.Staged, "write", written)
        assert_ok(vine.graft("clients/alpha", {"set_frontmatter": {"summary": "Again."}}))
        assert_in_sync(forest)


KILLED = """
import os, sqlite3, sys, time
from monkeyllm import Vine, gitindex

def killed(self):
    # Dies once the catalog took the new node in (and a moment later): the index
    # write is the last step of the write.
    db = os.path.join(sys.argv[1], "_derived", "catalog.db")
    while True:
        with sqlite3.connect(db) as conn:
            if conn.execute("SELECT 1 FROM nodes WHERE id = 'clients/alpha'").fetchone():
                break
        time.sleep(0.01)
    time.sleep(0.3)
    os._exit(9)

gitindex.Staged.write = killed
vine = Vine(sys.argv[1])
vine.plant({"id": "clients/alpha", "type": "note", "parent": "clients/_index",
            "title": "alpha", "summary": "Planted by a writer killed before its index."})
"""


def test_a_writer_killed_before_its_index_lands_is_recovered(forest: Path) -> None:
    """Killed once the branch moved and the catalog took the files in, but before the
    index is written: the journal is still there, and the next writer brings the index
    in line with HEAD."""
    before = head(forest)
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(forest)], capture_output=True, text=True
    )
    assert done.returncode == 9, done.stderr
    assert head(forest) != before
    assert (forest / "_derived" / JOURNAL).exists()
    assert git(forest, "diff-index", "--cached", "--name-only", "HEAD") != ""
    with Vine(forest) as vine:
        assert_ok(vine.graft("clients/alpha", {"set_frontmatter": {"summary": "Next."}}))
    assert not (forest / "_derived" / JOURNAL).exists()
    assert_in_sync(forest)


def test_a_write_that_keeps_the_count_hashes_from_the_chunk_it_changed(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SHA-1 runs from the file's start: a write that adds or removes no entry (the
    header stays) hashes from the first chunk it changed on, and the file stays what
    git checks; one that adds an entry hashes it all."""
    monkeypatch.setattr(gitindex, "CHUNK", 4)
    gitindex._CACHE.clear()
    git_dir = forest / ".git"

    def rehashed() -> tuple[int, int]:
        """Chunks the last write hashed, and chunks in all, once the file's checksum
        is checked here (git itself is asked at the end: a git status may rewrite the
        index, and the next write would start over from the file)."""
        data = (git_dir / "index").read_bytes()
        assert hashlib.sha1(data[:-20]).digest() == data[-20:]
        index = gitindex._CACHE[git_dir]  # present: the write was spliced here
        return index.rehashed, len(index.chunks)

    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        done, chunks = rehashed()
        assert chunks > 8 and done == chunks, "a new entry changes the header"
        # The leaf and its parent's index sort last in the index.
        assert_ok(
            vine.graft("sales/pipeline/2026/q2-forecast", {"set_frontmatter": {"summary": "Q2."}})
        )
        assert rehashed()[0] <= 3
        # The leaf and its parent's index sort in the middle.
        assert_ok(vine.graft("operations/stock-levels", {"set_frontmatter": {"summary": "S."}}))
        done, chunks = rehashed()
        assert 2 < done < chunks - 2
        # Twice in a row: the states the last write left are used.
        assert_ok(vine.graft("operations/stock-levels", {"set_frontmatter": {"summary": "T."}}))
        assert rehashed()[0] == done
        assert_in_sync(forest)
    gitindex._CACHE.clear()


def test_a_write_that_adds_an_entry_starts_from_the_states_hashed_ahead(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a write that added an entry, a thread hashes the index under the header
    one more entry gives it: a plant then hashes only from the first chunk it changed,
    and the file is what git checks whether the thread finished, was cut short, or
    hashed the wrong header."""
    monkeypatch.setattr(gitindex, "CHUNK", 4)
    gitindex._CACHE.clear()
    git_dir = forest / ".git"

    def rehashed() -> tuple[int, int]:
        data = (git_dir / "index").read_bytes()
        assert hashlib.sha1(data[:-20]).digest() == data[-20:]
        index = gitindex._CACHE[git_dir]
        return index.rehashed, len(index.chunks)

    def settled() -> None:
        ahead = gitindex._CACHE[git_dir]._ahead
        assert ahead is not None
        ahead._thread.join()

    late = "sales/pipeline/2026"
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        done, chunks = rehashed()
        assert done == chunks, "nothing hashed ahead of the first write"
        settled()
        # The new leaf and its parent's index sort last: only their chunks are hashed.
        assert_ok(vine.plant(note(f"{late}/zz-late", f"{late}/_index")))
        done, chunks = rehashed()
        assert chunks > 8 and done <= 3
        # Right away, the thread still running: the write takes what it reached.
        assert_ok(vine.plant(note(f"{late}/zz-later", f"{late}/_index")))
        rehashed()
        # One entry fewer is not the header hashed ahead: all of it, and right.
        settled()
        assert_ok(vine.prune(f"{late}/zz-late"))
        done, chunks = rehashed()
        assert done == chunks
        # Nor is anything hashed ahead after a write that added no entry.
        assert gitindex._CACHE[git_dir]._ahead is None
        assert_ok(vine.plant(note("0first", "_index")))
        done, chunks = rehashed()
        assert done == chunks
        settled()
        assert_ok(vine.graft(f"{late}/zz-later", {"set_frontmatter": {"summary": "G."}}))
        rehashed()
        assert_in_sync(forest)
    gitindex._CACHE.clear()


def _deleted_indexes_held() -> list[str]:
    """The files this process holds open that were an index and are gone."""
    fds = Path("/proc/self/fd")
    held = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if "/.git/index" in target and target.endswith("(deleted)"):
            held.append(target)
    return held


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_the_old_index_is_held_open_through_the_rename_and_let_go_after(forest: Path) -> None:
    index = forest / ".git" / "index"
    before = os.stat(index).st_ino
    fd = gitindex._retire(forest / ".git")
    assert fd is not None
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
    # The new index replaced the old one, whose blocks are still held (not freed by
    # the rename), readable, with no name left.
    assert os.stat(index).st_ino != before
    old = os.fstat(fd)
    assert (old.st_ino, old.st_nlink) == (before, 0)
    gitindex._reap(fd)
    for thread in threading.enumerate():
        if thread.name == "index-retire":
            thread.join(5)
    with pytest.raises(OSError):
        os.fstat(fd)
    assert_in_sync(forest)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_writes_let_go_of_every_old_index(forest: Path) -> None:
    with Vine(forest) as vine:
        for i in range(6):
            assert_ok(vine.plant(note(f"clients/held-{i}")))
        for thread in threading.enumerate():
            if thread.name == "index-retire":
                thread.join(5)
        assert _deleted_indexes_held() == []
        assert_in_sync(forest)
