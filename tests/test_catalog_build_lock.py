"""A catalog built from nothing: written without a journal when its builder is alone,
held by ``_derived/catalog.building`` so other processes wait for it, and thrown away
and built again when its builder dies half-way."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.generate import generate
from monkeyllm import Vine
from monkeyllm.buildlock import JOURNALED, UNJOURNALED, BuildLock
from monkeyllm.bulkbuild import BulkBuilder
from monkeyllm.catalog import Catalog

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the build lock is flock")

NODES = 2500
# Opens the forest read-only (no writer lock), so it builds the catalog and exits.
BUILD = "import sys; from monkeyllm import Vine; Vine(sys.argv[1], writable=False).close()"
INTERRUPTIBLE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big") / "forest"
    generate(root, NODES, seed=5, max_rows=50)
    return root


@pytest.fixture()
def forest(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "forest"
    subprocess.run(["cp", "-a", str(pristine), str(root)], check=True)
    return root


def _marker(root: Path) -> Path:
    return root / "_derived" / "catalog.building"


def _md_files(root: Path) -> int:
    return sum(
        1
        for p in root.rglob("*.md")
        if not p.relative_to(root).parts[0].startswith(("_derived", "_assets", ".git"))
    )


def _start_build(root: Path, script: str = BUILD) -> subprocess.Popen[bytes]:
    """A process building the catalog, returned once its build writes without a journal."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(root)], start_new_session=True, stderr=subprocess.PIPE
    )
    marker = _marker(root)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if marker.read_text().startswith("unjournaled"):
                return proc
        except FileNotFoundError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.002)
    proc.kill()
    pytest.fail(f"no build without a journal was seen: {proc.communicate()[1].decode()[-800:]}")


def _journal_mode(root: Path) -> str:
    conn = sqlite3.connect(root / "_derived" / "catalog.db")
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def _schema(root: Path) -> set[tuple[str, str]]:
    """The catalog's tables, indexes and triggers."""
    conn = sqlite3.connect(root / "_derived" / "catalog.db")
    try:
        return set(conn.execute("SELECT type, name FROM sqlite_master"))
    finally:
        conn.close()


def test_a_lone_build_goes_without_a_journal_and_leaves_a_wal_catalog(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert BulkBuilder.last_journal == "off"
        hits = vine.locate("budget")["results"]
        assert hits
    assert not _marker(forest).exists()
    assert _journal_mode(forest) == "wal"
    conn = sqlite3.connect(forest / "_derived" / "catalog.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == _md_files(forest)
    finally:
        conn.close()


def test_a_build_keeps_its_journal_while_another_connection_is_open(forest: Path) -> None:
    watcher = Catalog(forest, use_inotify=False)  # open, empty, not built
    try:
        builder = Catalog(forest, use_inotify=False)
        try:
            count = builder.build()
            assert BulkBuilder.last_journal == "wal"
        finally:
            builder.close()
        assert watcher.count() == count > 0
    finally:
        watcher.close()
    assert not _marker(forest).exists()


def test_a_build_killed_half_way_is_built_again_by_the_next_opener(forest: Path) -> None:
    proc = _start_build(forest)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert _marker(forest).read_text().startswith("unjournaled")
    BulkBuilder.last_journal = ""
    with Vine(forest, writable=False) as vine:
        # Thrown away and built again from nothing, not patched up from what was left.
        assert BulkBuilder.last_journal == "off"
        assert vine._forest.catalog.count() == _md_files(forest)
        assert vine.locate("budget")["results"]
    assert not _marker(forest).exists()
    assert _journal_mode(forest) == "wal"
    conn = sqlite3.connect(forest / "_derived" / "catalog.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    whole = forest.parent / "whole"
    subprocess.run(["cp", "-a", str(forest), str(whole)], check=True)
    subprocess.run(["rm", "-rf", str(whole / "_derived")], check=True)
    Vine(whole, writable=False).close()
    assert _schema(forest) == _schema(whole)


@pytest.mark.parametrize("writable", [False, True])
def test_an_opener_during_a_build_waits_for_the_built_catalog(forest: Path, writable: bool) -> None:
    proc = _start_build(forest)
    try:
        with Vine(forest, writable=writable) as vine:
            # Opened only once the other process finished its build.
            assert not _marker(forest).exists()
            assert vine._forest.catalog.count() == _md_files(forest)
            assert vine.locate("budget")["results"]
    finally:
        out = proc.communicate(timeout=120)[1].decode()
    assert proc.returncode == 0, out[-800:]


def test_a_catalog_left_by_a_builder_that_died_without_its_journal_is_thrown_away(
    forest: Path,
) -> None:
    Vine(forest, writable=False).close()
    # What such a builder leaves: a catalog file in any state, and its marker.
    conn = sqlite3.connect(forest / "_derived" / "catalog.db")
    with conn:
        conn.execute("DELETE FROM nodes WHERE rowid % 2 = 0")
    conn.close()
    _marker(forest).write_text("unjournaled 99999\n")
    with Vine(forest, writable=False) as vine:
        assert vine._forest.catalog.count() == _md_files(forest)
    assert not _marker(forest).exists()


@pytest.mark.parametrize("after", [0.0, 0.4])
def test_a_build_without_a_journal_that_is_interrupted_leaves_an_empty_catalog(
    forest: Path, after: float
) -> None:
    # Ctrl-C as a person sends it (pytest-xdist's workers ignore SIGINT, and so would
    # a process they start, unless it asks for Python's own handler).
    proc = _start_build(forest, INTERRUPTIBLE + BUILD)
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGINT)
    err = proc.communicate(timeout=60)[1].decode()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert not _marker(forest).exists(), err[-1500:]
    conn = sqlite3.connect(forest / "_derived" / "catalog.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0
    finally:
        conn.close()
    with Vine(forest, writable=False) as vine:
        assert vine._forest.catalog.count() == _md_files(forest)


OPEN = (
    "import sys, time; from monkeyllm import Vine; t = time.monotonic(); "
    "v = Vine(sys.argv[1], writable=False); print(v._forest.catalog.count()); v.close()"
)


@pytest.mark.parametrize("how", [JOURNALED, UNJOURNALED])
def test_openers_wait_for_a_build_without_a_journal_only(forest: Path, how: str) -> None:
    Vine(forest, writable=False).close()
    lock = BuildLock(forest / "_derived")
    assert lock.take()
    lock.mark(how)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", OPEN, str(forest)], stdout=subprocess.PIPE, text=True
        )
        try:
            proc.wait(timeout=1.5 if how == UNJOURNALED else 30)
        except subprocess.TimeoutExpired:
            pass
        # A build keeping the WAL leaves the catalog readable: the opener reads it now.
        assert (proc.returncode is None) == (how == UNJOURNALED)
    finally:
        lock.mark(JOURNALED)
        lock.release()
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert int(out) == _md_files(forest)


def test_an_opener_that_needs_a_build_waits_for_one_under_way(forest: Path) -> None:
    empty = Catalog(forest, use_inotify=False)  # an empty catalog, held open
    lock = BuildLock(forest / "_derived")
    assert lock.take()
    lock.mark(JOURNALED)  # as a build beside an open connection marks it
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", OPEN, str(forest)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(6)  # longer than SQLite's busy wait, which the opener used to hit
        assert proc.poll() is None
    finally:
        lock.release()
        empty.close()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-800:]
    assert int(out) == _md_files(forest)
