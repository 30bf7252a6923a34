"""The catalog: ``_derived/catalog.db``, the SQLite mirror of a forest's files.

It holds one row per node (curated metadata, derived parent and trail, outline,
body size), the typed edges, an FTS5 index of curated metadata for ``locate``,
and the body index that serves ``sniff`` (see :mod:`monkeyllm.bodyindex`).
It is a disposable cache: anything odd about it is answered by rebuilding.

A process that has not been watching learns what changed by walking the files'
stats. The digest of the last walk that matched the ``files`` table is kept with it,
beside the table's generation (which triggers move on every change to the table,
whoever makes it), so an unchanged forest costs one comparison, not one per file.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from . import bodyindex, buildlock, derived, keeper
from .catalogschema import DDL, LOCATE_RANK, SCHEMA_VERSION
from .ids import id_of
from .watch import Stat, Walk, Watcher

if TYPE_CHECKING:
    from .indexing import Writer

_COVERAGE = re.compile(r"^(\d+) bananas?, (\d+) sub-branch(?:es)?\.?$")

# The files table's generation, and the stored walk with the generation it matched.
_SNAPSHOT = (
    "SELECT (SELECT value FROM meta WHERE key='files_gen'), "
    "(SELECT value FROM meta WHERE key='walk_gen'), "
    "(SELECT value FROM meta WHERE key='walk')"
)


def damaged(exc: BaseException) -> bool:
    """True for a SQLite error that says the file is damaged (not merely busy): corrupt,
    not a database, or text that is not UTF-8."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(code, int) and code & 0xFF in (11, 26)
    ) or "Could not decode to UTF-8" in str(exc)


def parse_coverage(raw: str | None) -> dict[str, int] | str | None:
    """``"N bananas, M sub-branches"`` as ``{"notes": N, "branches": M}``."""
    if not raw:
        return None
    m = _COVERAGE.match(raw.strip())
    return {"notes": int(m.group(1)), "branches": int(m.group(2))} if m else raw


def _initialize(conn: sqlite3.Connection) -> None:
    """Settings of a new catalog: its version and locate's ranking."""
    conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('rank', ?)", (LOCATE_RANK,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
    conn.commit()


@dataclass
class Problem:
    """A node file the catalog skipped, and why."""

    path: str
    reason: str


class Catalog:
    """One forest's catalog: connections (one per thread), build and sync."""

    def __init__(self, root: Path, *, use_inotify: bool = True) -> None:
        self.root = root
        self._local = threading.local()
        self._sync_lock = threading.RLock()
        self.watcher = Watcher(root, use_inotify=use_inotify)
        self.on_change: list[Any] = []
        self._walked = False
        # The files table's generation as this process last left or saw it: when it
        # moves without this process, another one changed the catalog.
        self._gen: str | None = None
        # How the last sync learned what changed: "walk", "inotify" or "keeper".
        self.last_sync = ""

        # The build lock while this process builds the catalog from nothing.
        self._build_lock: buildlock.BuildLock | None = None

        self.path, self._uri = self._locate_file()
        self._connect_when_built()
        self._open_checked()

    # -- connections ---------------------------------------------------------------

    def _locate_file(self) -> tuple[Path | None, str | None]:
        folder = self.root / "_derived"
        try:
            folder.mkdir(exist_ok=True)
            probe = folder / f".probe-{os.getpid()}"
            probe.touch()
            probe.unlink()
            return folder / "catalog.db", None
        except OSError:
            # A read-only forest still gets a catalog, in memory.
            return None, derived.memory_uri("catalog")

    def _connect(self) -> sqlite3.Connection:
        if self._uri:
            return derived.connect_uri(self._uri)
        return derived.connect(self.path, "catalog")

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            self._all_conns().append(conn)
        return conn

    def _all_conns(self) -> list[sqlite3.Connection]:
        if not hasattr(self, "_conns"):
            self._conns: list[sqlite3.Connection] = []
        return self._conns

    def close(self) -> None:
        """Close every connection and stop watching."""
        self.watcher.close()
        self._close_conns()

    def _close_conns(self) -> None:
        for conn in self._all_conns():
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._conns = []
        self._local = threading.local()

    def _connect_when_built(self) -> None:
        """Connect once no other process is building the catalog without a journal
        (nothing of it is readable until that build ends), throwing away what a
        builder that died that way left. A build that keeps the WAL is not waited for
        here: the catalog reads as it was until it commits."""
        if self.path is None:
            return
        folder = self.path.parent
        attempt = 0
        while True:
            took = buildlock.await_builder(folder, self._discard_file)
            try:
                _ = self.conn  # connected: from now on a build keeps its journal
            except sqlite3.DatabaseError:
                return  # an unreadable file: opening starts over (under the lock)
            if not buildlock.pending(folder) or (not took and attempt):
                return
            # A build without a journal began between the wait and the connection:
            # wait for it too (unless there is no lock to wait on).
            self._close_conns()
            attempt += 1

    @contextmanager
    def building(self) -> Iterator[buildlock.BuildLock | None]:
        """The build lock for a build of this catalog (taken once however deep the
        calls go; None for a catalog in memory or without ``flock``). Taking it waits
        for another process's build, and a catalog a dead builder left half-written
        is thrown away first."""
        if self._build_lock is not None or self.path is None:
            yield self._build_lock
            return
        lock = buildlock.BuildLock(self.path.parent)
        if not lock.take():
            yield None
            return
        self._build_lock = lock
        try:
            if lock.left == buildlock.UNJOURNALED:
                self._start_over()
            lock.mark(buildlock.JOURNALED)
            yield lock
        finally:
            self._build_lock = None
            lock.release()

    def _open_checked(self) -> None:
        """Open the catalog, throwing away anything unreadable or of another version."""
        try:
            conn = self.conn
            conn.executescript(DDL)
            bodyindex.create(conn)
            version = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if version is None:
                _initialize(conn)
            elif version[0] != SCHEMA_VERSION:
                raise sqlite3.DatabaseError("catalog of another version")
            conn.execute("SELECT count(*) FROM nodes").fetchone()
        except sqlite3.DatabaseError:
            with self.building():
                self._start_over()

    def _start_over(self) -> None:
        """Throw the catalog file away and make an empty one."""
        self._close_conns()
        self._discard_file()
        conn = self.conn
        conn.executescript(DDL)
        bodyindex.create(conn)
        _initialize(conn)

    def _discard_file(self) -> None:
        if self.path is None:
            return
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    # -- sync ----------------------------------------------------------------------

    def ensure_built(self) -> None:
        """Build the catalog now when it holds nothing (a new or discarded file).

        A catalog that exists is brought up to date by the first :meth:`sync`, which
        every call makes, so opening does not walk the files only to walk them again.
        """
        if self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
            self.sync()

    def sync(self, *, full: bool = False) -> int:
        """Bring the catalog in line with the files; returns how many nodes changed.

        A catalog found damaged on the way (pages of garbage that opening did not read)
        is thrown away and built again from the files.
        """
        with self._sync_lock:
            try:
                return self._sync(full)
            except sqlite3.DatabaseError as exc:
                if not damaged(exc):
                    raise
                with self.building():
                    self._start_over()
                    self._walked = True
                    self.last_sync = "walk"
                    return self.build()

    def _files_gen(self) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key='files_gen'").fetchone()
        return None if row is None else str(row[0])

    def _notice_others(self) -> None:
        """Tell the listeners everything may have changed when another process changed
        the catalog since this one last looked (its rows are current, but what this
        process derived from them is not)."""
        gen = self._files_gen()
        if self._gen is not None and gen != self._gen:
            for callback in self.on_change:
                callback(None)
        self._gen = gen

    def _sync(self, full: bool) -> int:
        with self._sync_lock:
            self._notice_others()
            if not full and not self._walked and self.path is not None and keeper.ask(self.root):
                # A keeper (`vine watch`) brought the shared catalog up to date.
                self.last_sync = "keeper"
                return 0
            changes = None if full or not self._walked else self.watcher.poll()
            if changes is None:
                first = not self._walked
                self._walked = True
                self.last_sync = "walk"
                found = self.watcher.walk_all(self._expected())
                if first and bodyindex.needs_compaction(self.conn):
                    built = self._build_unless(
                        found.files, lambda: not bodyindex.needs_compaction(self.conn)
                    )
                    if built is not None:
                        return built
                return self._sync_walk(found)
            self.last_sync = "inotify"
            if not changes:
                return 0
            return self._sync_changes(changes)

    def refresh(self, rel_paths: list[str]) -> int:
        """Re-index these files now (after a write), whatever the watcher says."""
        seen: dict[str, Stat | None] = {}
        for path in rel_paths:
            try:
                st = os.stat(self.root / path, follow_symlinks=False)
                seen[path] = (st.st_mtime_ns, st.st_size)
            except OSError:
                seen[path] = None
        with self._sync_lock:
            return self._apply(seen)

    def _sync_changes(self, changes: Any) -> int:
        conn = self.conn
        seen: dict[str, Stat | None] = {}
        for folder in changes.folders:
            prefix = folder + "/"
            for (path,) in conn.execute(
                "SELECT path FROM files WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
            ):
                seen[path] = None
            if (self.root / folder).is_dir():
                seen.update(self.watcher.walk(folder))
        for path in changes.files:
            try:
                st = os.stat(self.root / path, follow_symlinks=False)
                seen[path] = (st.st_mtime_ns, st.st_size)
            except OSError:
                seen[path] = None
        return self._apply(seen)

    def _expected(self) -> int:
        """About how many node files the catalog holds (the files table's last rowid)."""
        row = self.conn.execute("SELECT max(rowid) FROM files").fetchone()
        return int(row[0] or 0)

    def _sync_walk(self, walk: Walk) -> int:
        """Apply a full walk: nothing to do when it equals the stored walk of the
        table's current generation, else compare it with the table row by row."""
        conn = self.conn
        snapshot = walk.digest
        gen, walk_gen, stored = conn.execute(_SNAPSHOT).fetchone()
        if stored == snapshot and walk_gen == gen:
            return 0
        found = walk.files
        known = {
            path: (mtime, size)
            for path, mtime, size in conn.execute("SELECT path, mtime_ns, size FROM files")
        }
        if not known:
            built = self._build_unless(found, self._holds_files)
            if built is not None:
                return built
            # Another process built it while this one waited: compare with that.
            return self._sync_walk(walk)
        if known == found:
            # Still the generation read before the rows: they are that generation's.
            if conn.execute(_SNAPSHOT).fetchone()[0] == gen:
                self._remember(gen, snapshot)
            return 0
        seen: dict[str, Stat | None] = {
            path: stat for path, stat in found.items() if known.get(path) != stat
        }
        for path in known.keys() - found.keys():
            seen[path] = None
        return self._apply(seen)

    def _remember(self, gen: str | None, snapshot: bytes) -> None:
        """Keep the walk that matches the files table at generation ``gen`` (skipped
        when a writer holds the file: the next process keeps it)."""
        conn = self.conn
        conn.execute("PRAGMA busy_timeout=0")
        try:
            with conn:
                conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES('walk_gen', ?), ('walk', ?)",
                    (gen, snapshot),
                )
        except sqlite3.OperationalError:
            pass
        finally:
            conn.execute(f"PRAGMA busy_timeout={derived.BUSY_MS}")

    def _apply(self, seen: dict[str, Stat | None]) -> int:
        """Upsert or drop each path whose stat differs from what was indexed."""
        conn = self.conn
        stale: list[tuple[str, Stat | None]] = []
        for path, stat in seen.items():
            row = conn.execute("SELECT mtime_ns, size FROM files WHERE path=?", (path,)).fetchone()
            if stat is None and row is None:
                continue
            if stat is not None and row is not None and (row[0], row[1]) == stat:
                continue
            stale.append((path, stat))
        if not stale:
            return 0
        changed_ids: list[str] = []
        with self.transaction() as tx:
            others = self._gen is not None and self._files_gen() != self._gen
            # Another process may have indexed a path between this process's look at
            # the files and this transaction (which serializes catalog writers): decide
            # again from the file as it is now and the row as it is now, so a node a
            # writer just added is never dropped on the strength of an older walk.
            for path, _ in stale:
                stat = self._stat_now(path)
                row = conn.execute(
                    "SELECT mtime_ns, size FROM files WHERE path=?", (path,)
                ).fetchone()
                if stat is None and row is None:
                    continue
                if stat is not None and row is not None and (row[0], row[1]) == stat:
                    continue
                node_id = id_of(path)
                if stat is None:
                    tx.drop(path, node_id)
                else:
                    tx.upsert_path(path, stat)
                changed_ids.append(node_id)
            self._gen = self._files_gen()
        if others:
            for callback in self.on_change:
                callback(None)
        if not changed_ids:
            return 0
        for callback in self.on_change:
            callback(changed_ids)
        return len(changed_ids)

    def _stat_now(self, path: str) -> Stat | None:
        """A node file's stat now, or None when it is gone or not a regular file."""
        try:
            st = os.stat(self.root / path, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size) if S_ISREG(st.st_mode) else None

    def build(self, found: dict[str, Stat] | None = None) -> int:
        """Index every node file from scratch; returns the number of nodes."""
        built = self._build_unless(found, None)
        assert built is not None
        return built

    def _holds_files(self) -> bool:
        return self.conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None

    def _build_unless(self, found: dict[str, Stat] | None, done: Any) -> int | None:
        """Build the catalog, unless ``done()`` says (once the build lock is held,
        after another process's build) that it needs none now: then None."""
        with self._sync_lock, self.building() as lock:
            if done is not None and done():
                return None
            if found is None:
                found = self.watcher.walk()
            from .bulkbuild import BulkBuilder

            try:
                BulkBuilder(self).run(found, lock)
            except BaseException:
                if lock is not None and lock.how == buildlock.UNJOURNALED:
                    self._start_over()  # half-written, with no journal to roll it back
                    lock.mark(buildlock.JOURNALED)
                raise
            conn = self.conn
            self._gen = self._files_gen()
            for callback in self.on_change:
                callback(None)
            return conn.execute("SELECT count(*) FROM nodes").fetchone()[0]

    def transaction(self) -> Writer:
        """An incremental write transaction on this thread's connection."""
        from .indexing import Writer

        return Writer(self)

    # -- queries -------------------------------------------------------------------

    def row(self, node_id: str) -> sqlite3.Row | None:
        """The catalog row of a node, or None."""
        cur = self.conn.execute("SELECT rowid AS ord, * FROM nodes WHERE id=?", (node_id,))
        cur.row_factory = sqlite3.Row
        return cur.fetchone()

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Rows of a query, addressable by column name."""
        cur = self.conn.execute(sql, tuple(params))
        cur.row_factory = sqlite3.Row
        return cur.fetchall()

    def problems(self) -> list[Problem]:
        """Files skipped because they are not well-formed nodes."""
        return [
            Problem(p, e)
            for p, e in self.conn.execute(
                "SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path"
            )
        ]

    def problem(self, node_id: str) -> str | None:
        """Why the file of ``node_id`` was skipped, if it was."""
        row = self.conn.execute(
            "SELECT error FROM files WHERE path=?", (node_id + ".md",)
        ).fetchone()
        return row[0] if row else None

    def moved_to(self, node_id: str) -> str | None:
        """Where a transplanted id lives now, if it moved."""
        row = self.conn.execute("SELECT new_id FROM moves WHERE old_id=?", (node_id,)).fetchone()
        return row[0] if row else None

    def listing_branches(self, node_id: str) -> list[str]:
        """The branches whose index has an entry line for ``node_id``."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT branch FROM listings WHERE listed = ? ORDER BY branch", (node_id,)
            )
        ]

    def count(self) -> int:
        """Number of nodes."""
        return self.conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
