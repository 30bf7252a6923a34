"""The first walk of a process that has not been watching: on a big forest a helper
process walks half of it. Whoever walks, the files found are the same, and an edit made
outside (in place, added, removed) is seen by the next fresh ``Vine``."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from monkeyllm import Vine, statwalk
from monkeyllm.ids import PRIVATE_DIRS
from monkeyllm.watch import Watcher

from .forestkit import assert_error, assert_ok, copy_sample, node_meta, write_node


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every full walk of a forest not watched is split, from a frontier of 2 folders."""
    monkeypatch.setattr(statwalk, "SPLIT_AT", 0)
    monkeypatch.setattr(statwalk, "FRONTIER", 2)


def _odd_forest(tmp_path: Path) -> Path:
    """sample-brain with what a walk must skip: hidden and private folders, a symlinked
    node file, a folder named like a node file, files that are not markdown."""
    root = copy_sample(tmp_path / "brain")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "ghost.md").write_text("# ghost\n", encoding="utf-8")
    (root / "_assets").mkdir()
    (root / "_assets" / "asset.md").write_text("# asset\n", encoding="utf-8")
    (root / "sales" / "folder.md").mkdir()
    (root / "sales" / "folder.md" / "inside.md").write_text("# inside\n", encoding="utf-8")
    (root / "sales" / "notes.txt").write_text("not a node\n", encoding="utf-8")
    os.symlink(root / "sales" / "exchange-policy.md", root / "clients" / "linked.md")
    return root


def _single(root: Path) -> list[statwalk.Encoded]:
    records: list[statwalk.Record] = []
    statwalk.walk(str(root), [""], PRIVATE_DIRS, records)
    return statwalk.encode(records)


def _stat_of_every_node(root: Path) -> dict[str, tuple[int, int]]:
    """What a walk must find, read another way (os.walk and lstat)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in PRIVATE_DIRS]
        for name in files:
            path = Path(folder) / name
            if name.endswith(".md") and not path.is_symlink():
                st = path.lstat()
                found[path.relative_to(root).as_posix()] = (st.st_mtime_ns, st.st_size)
    return found


@pytest.mark.usefixtures("split")
def test_a_split_walk_finds_what_one_process_finds(tmp_path: Path) -> None:
    root = _odd_forest(tmp_path)
    expected = _stat_of_every_node(root)
    assert "sales/folder.md/inside.md" in expected and "clients/linked.md" not in expected
    single = _single(root)
    assert statwalk.as_files(single) == expected
    encoded, split = statwalk.split_walk(str(root), PRIVATE_DIRS, 10**9)
    assert split, "the helper walked no share"
    assert sorted(encoded) == sorted(single), "each folder once, with the same files"
    assert encoded != single, "the split walk lists its folders in another order"
    assert statwalk.digest(encoded) == statwalk.digest(single)


@pytest.mark.usefixtures("split")
def test_a_walk_whose_helper_fails_is_walked_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _odd_forest(tmp_path)
    expected = _stat_of_every_node(root)
    for interpreter in ("/bin/false", "/bin/echo", str(tmp_path / "missing-python")):
        monkeypatch.setattr(sys, "executable", interpreter)
        encoded, split = statwalk.split_walk(str(root), PRIVATE_DIRS, 10**9)
        assert not split, interpreter
        assert statwalk.as_files(encoded) == expected, interpreter
        assert statwalk.digest(encoded) == statwalk.digest(_single(root))


@pytest.mark.usefixtures("split")
def test_the_watcher_splits_a_big_walk_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _odd_forest(tmp_path)
    watcher = Watcher(root, use_inotify=False)
    walk = watcher.walk_all(expected=10**6)
    assert walk.split
    assert walk.files == _stat_of_every_node(root)
    again = watcher.walk_all(expected=10**6)
    assert again.digest == walk.digest and len(walk.digest) == 32
    monkeypatch.setattr(statwalk, "SPLIT_AT", 1)
    alone = watcher.walk_all(expected=0)
    assert alone.split is False and alone.digest == walk.digest
    path = root / "sales" / "exchange-policy.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    assert watcher.walk_all(expected=10**6).digest != walk.digest


def _bump(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def _stored_walk(root: Path) -> bytes | None:
    with sqlite3.connect(root / "_derived" / "catalog.db") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key='walk'").fetchone()
    conn.close()
    return row[0] if row else None


@pytest.mark.usefixtures("split")
def test_outside_edits_are_seen_by_the_next_fresh_vine_with_a_split_walk(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    with Vine(root, writable=False) as vine:
        assert_ok(vine.look("sales/exchange-policy"))
    stored = _stored_walk(root)
    with Vine(root, writable=False) as vine:
        assert_ok(vine.look("sales/exchange-policy"))
        assert vine._forest.catalog.last_sync == "walk"
    assert _stored_walk(root) == stored, "an unchanged forest's walk is stored once"
    # In place: the same size and the folder's mtime untouched.
    path = root / "sales" / "exchange-policy.md"
    text = path.read_text(encoding="utf-8")
    assert "Exchange" in text
    folder = (root / "sales").stat()
    with path.open("r+", encoding="utf-8") as handle:
        handle.write(text.replace("Exchange", "Xylophon", 1))
    _bump(path)
    assert (root / "sales").stat().st_mtime_ns == folder.st_mtime_ns
    write_node(
        root,
        "engineering/incidents/quokka",
        node_meta("engineering/incidents/quokka", summary="Quokka outage."),
        "# Quokka\n",
    )
    (root / "people" / os.listdir(root / "people")[0]).unlink()
    gone = [p for p in sorted(os.listdir(root / "clients")) if p != "_index.md"][0]
    (root / "clients" / gone).unlink()
    with Vine(root, writable=False) as vine:
        assert vine.locate("xylophon")["results"][0]["id"] == "sales/exchange-policy"
        assert vine.locate("quokka")["results"][0]["id"] == "engineering/incidents/quokka"
        assert_error(vine.look("clients/" + gone[:-3]), "E_NOT_FOUND")
    assert _stored_walk(root) != stored


def _live(root: Path) -> tuple[int, int]:
    """The live body lines as the catalog keeps them, and counted from the nodes."""
    with sqlite3.connect(root / "_derived" / "catalog.db") as conn:
        kept = conn.execute("SELECT value FROM meta WHERE key='body_live'").fetchone()
        counted = conn.execute("SELECT coalesce(sum(body_lines), 0) FROM nodes").fetchone()
    conn.close()
    return (int(kept[0]) if kept else -1), int(counted[0])


def test_the_live_body_lines_are_kept_by_every_write(tmp_path: Path) -> None:
    """A fresh process decides whether the body index needs compacting from two kept
    counts, not by adding up every node: the writers keep the live count exact."""
    root = copy_sample(tmp_path / "brain", git=True)
    with Vine(root) as vine:
        assert_ok(vine.look("_index"))
        kept, counted = _live(root)
        assert kept == counted > 0
        assert_ok(
            vine.plant(
                {
                    "id": "sales/live-count",
                    "type": "note",
                    "parent": "sales/_index",
                    "title": "Live count",
                    "summary": "A note whose body lines count.",
                    "body": "# Live\n\nOne line.\n\nAnother line.\n",
                }
            )
        )
        assert _live(root)[0] == _live(root)[1] == counted + 2 + 1 + 1  # note and listing
        assert_ok(
            vine.graft(
                "sales/live-count", {"append_section": {"header": "Log", "body": "A third."}}
            )
        )
        assert_ok(vine.transplant("sales/live-count", "clients/live-count"))
        assert_ok(vine.prune("clients/live-count"))
        (root / "people" / "ana-ribeiro.md").unlink()  # outside the engine
        assert_error(vine.look("people/ana-ribeiro"), "E_NOT_FOUND")
        kept, counted = _live(root)
        assert kept == counted
        vine.reindex()
        assert _live(root)[0] == _live(root)[1] == counted


def test_compaction_is_decided_from_the_kept_counts(tmp_path: Path) -> None:
    from monkeyllm import bodyindex

    root = copy_sample(tmp_path / "brain")
    Vine(root, writable=False).close()
    with sqlite3.connect(root / "_derived" / "catalog.db") as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES('body_garbage', '25000')")
        assert bodyindex.needs_compaction(conn)
        conn.execute("INSERT OR REPLACE INTO meta VALUES('body_live', '30000')")
        assert not bodyindex.needs_compaction(conn)
        conn.execute("DELETE FROM meta WHERE key='body_live'")
        assert bodyindex.needs_compaction(conn)  # counted from the nodes where not kept
    conn.close()
