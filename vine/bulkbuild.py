"""A full rebuild of the catalog: the files parsed in batches (on worker processes when
there are many) while this process inserts their rows, the secondary indexes dropped
and made again once the rows are in."""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
import time
from typing import Any

from . import bodyindex, derived
from .buildlock import JOURNALED, UNJOURNALED, BuildLock
from .catalogschema import INDEX_NAMES, index_statements
from .indexing import BULK, BULK_JSON, PARALLEL_FILES, Catalog, parse_batch
from .reads import topk
from .watch import Stat

# FTS5's own defaults: how many segments of a level an edit merges, and how many of a
# level make an edit merge them at once.
FTS5_AUTOMERGE = 4
FTS5_CRISISMERGE = 16
# A build's body index: no merge at all until its one merge at the end (FTS5 takes
# values up to 2,000; a rebuild of 100,000 nodes writes about fifteen segments).
BUILD_CRISISMERGE = 1999


def build_workers(files: int) -> int:
    """How many processes parse a rebuild of ``files`` files (0: this process alone).

    ``VINE_BUILD_WORKERS`` sets it (0 turns them off); by default a forest of at
    least :data:`PARALLEL_FILES` files is parsed by one process per core but one, which
    this process keeps to insert (on 2 cores, one worker built the 10k forest in
    0.86-0.94 of the time two took, and the 100k forest in the same time).
    """
    raw = os.environ.get("VINE_BUILD_WORKERS", "").strip()
    if raw.isdigit():
        return int(raw)
    if files < PARALLEL_FILES:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return cores - 1 if cores > 1 else 0


class BulkBuilder:
    """A full rebuild: parsing on worker processes (or here), SQLite on its own.

    With workers, they parse while this process inserts their row tuples
    (``executemany``). Without, this process parses while a thread inserts each batch
    as one JSON text, which SQLite reads without the GIL, so the two overlap (row
    tuples would hold the GIL for every row: 10 % more time for 3,000 files). Either
    way the connection is used by one thread at a time.
    """

    BATCH = 400
    # The phases of the last rebuild in this process, in seconds (what bench.scale prints).
    last: dict[str, float] = {}
    # How the last rebuild in this process wrote: "off" (no journal) or "wal".
    last_journal = ""
    # Bytes of body index terms held in memory before FTS5 writes them out as a segment.
    HASHSIZE = 16 << 20

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.conn = catalog.conn
        self._queue: queue.Queue[list[tuple[str, Any]] | None] = queue.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="catalog-build", daemon=True)
        self.inserting = 0.0

    def _insert(self, batch: list[tuple[str, Any]]) -> None:
        start = time.perf_counter()
        for table, payload in batch:
            if isinstance(payload, str):
                self.conn.execute(BULK_JSON[table], (payload,))
            elif table == "lines":
                bodyindex.bulk_insert(self.conn, payload)
            else:
                self.conn.executemany(BULK[table], payload)
        self.inserting += time.perf_counter() - start

    def _drain(self) -> None:
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            if self._error is not None:
                continue
            try:
                self._insert(batch)
            except BaseException as exc:  # noqa: BLE001 - re-raised by run()
                self._error = exc

    def run(self, found: dict[str, Stat], lock: BuildLock | None = None) -> None:
        """Rebuild every table from the files in ``found``.

        A catalog built from nothing while this connection is its only one (and this
        process holds the build lock, which makes others wait) is written without a
        journal: the WAL would take every page once and the commit copy them all
        again (at 100,000 nodes, 540 MB and 1.8 s of a 27 s build). A build that fails
        then cannot roll back: it raises with ``lock.how`` still ``unjournaled``, and
        the catalog throws its file away.
        """
        conn = self.conn
        phase = self._phase()
        unjournaled = False
        try:
            unjournaled = lock is not None and self._unjournal(lock)
            BulkBuilder.last_journal = "off" if unjournaled else "wal"
            phase("journal")
            conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA cache_size=-32768")
            self._fill(found, phase)
        except BaseException:
            # Without a journal there is nothing to roll back: the caller throws the
            # file away (the lock still says so).
            if lock is None or lock.how != UNJOURNALED:
                conn.rollback()
                self._settle(conn)
            raise
        self._settle(conn)
        if unjournaled:
            assert lock is not None
            conn.execute("PRAGMA journal_mode=WAL")
            lock.mark(JOURNALED)
        else:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        phase("checkpoint")

    @staticmethod
    def _settle(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-2000")

    def _unjournal(self, lock: BuildLock) -> bool:
        """Switch an empty catalog's connection to no journal for its build: True when
        it switched, False when the catalog holds rows or another connection has it
        open (SQLite keeps the WAL then, and so does the build)."""
        conn = self.conn
        if conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:
            return False
        lock.mark(UNJOURNALED)
        conn.execute("PRAGMA busy_timeout=0")
        try:
            mode = str(conn.execute("PRAGMA journal_mode=OFF").fetchone()[0])
        except sqlite3.OperationalError:
            mode = ""
        finally:
            conn.execute(f"PRAGMA busy_timeout={derived.BUSY_MS}")
        if mode.lower() == "off":
            return True
        lock.mark(JOURNALED)
        return False

    def _fill(self, found: dict[str, Stat], phase: Any) -> None:
        """The build's one transaction, committed."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO body_fts(body_fts, rank) VALUES('hashsize', ?)", (self.HASHSIZE,))
        # No merging of the body index's segments while it is written from nothing, one
        # merge of them all at the end instead (a seventh of a rebuild's time less at
        # 100k nodes); a rebuild never leaves a level of segments for an edit to merge
        # at once, and edits merge as usual again.
        conn.execute("INSERT INTO body_fts(body_fts, rank) VALUES('automerge', 0)")
        # Nor when a level fills up: by default the sixteenth segment of a level has an
        # insert merge the level's sixteen into one at the next level, then again at
        # the next, so the rows of a 100k build were written three times and its one
        # merge at the end left 230 MB of free pages behind.
        conn.execute(
            "INSERT INTO body_fts(body_fts, rank) VALUES('crisismerge', ?)", (BUILD_CRISISMERGE,)
        )
        # The same for the metadata index: locate then reads each word from one
        # segment, not from each of a rebuild's eight or so (a fifth less per query).
        conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('automerge', 0)")
        for name in INDEX_NAMES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        for table in ("files", "nodes", "edges", "moves", "listings", "nodes_fts"):
            conn.execute(f"DELETE FROM {table}")
        bodyindex.clear(conn)
        first_gen = max(1, bodyindex.meta_int(conn, "next_gen"))
        items = [(rowid, path, *found[path]) for rowid, path in enumerate(sorted(found), start=1)]
        chunks = [items[i : i + self.BATCH] for i in range(0, len(items), self.BATCH)]
        workers = build_workers(len(items))
        BulkBuilder.last["workers"] = workers
        if workers:
            self._parallel(chunks, first_gen, workers)
        else:
            self._serial(chunks, first_gen)
        phase("files")
        BulkBuilder.last["... inserting"] = round(self.inserting, 3)
        for statement in index_statements():
            conn.execute(statement)
        phase("indexes")
        for table, automerge in (("body_fts", bodyindex.AUTOMERGE), ("nodes_fts", FTS5_AUTOMERGE)):
            conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', ?)", (automerge,))
        conn.execute(
            "INSERT INTO body_fts(body_fts, rank) VALUES('crisismerge', ?)", (FTS5_CRISISMERGE,)
        )
        phase("merge")
        topk.common_terms(conn)
        bodyindex.finish_bulk(conn, first_gen + len(items))
        phase("vocabulary")
        conn.commit()
        phase("commit")

    def _phase(self) -> Any:
        """A clock for the phases of this build, kept in :attr:`last` (seconds)."""
        BulkBuilder.last = {}
        start = [time.perf_counter()]

        def done(name: str) -> None:
            now = time.perf_counter()
            BulkBuilder.last[name] = round(now - start[0], 3)
            start[0] = now

        return done

    def _serial(self, chunks: list[list[tuple[int, str, int, int]]], first_gen: int) -> None:
        root = str(self.catalog.root)
        self._thread.start()
        try:
            for chunk in chunks:
                if self._error is not None:
                    break
                self._queue.put(parse_batch(root, first_gen, chunk, as_json=True))
        finally:
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error

    def _parallel(
        self, chunks: list[list[tuple[int, str, int, int]]], first_gen: int, workers: int
    ) -> None:
        """Batches parsed by ``workers`` processes, inserted here in file order (FTS5
        appends ascending rowids without flushing). Batch ``i`` goes to worker
        ``i % workers``; a thread per worker drains its pipe into a short queue, so a
        worker parses on while this thread inserts, and stops once two of its batches
        wait. Batches a worker could not give (it failed, or never started) are parsed
        here."""
        import subprocess
        import sys

        root = str(self.catalog.root)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for w in range(workers):
                proc = subprocess.Popen(
                    [sys.executable, "-m", "monkeyllm.buildworker"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                procs.append(proc)
                _send_task(proc, (root, first_gen, chunks[w::workers]))
        except OSError:
            pass
        stop = threading.Event()
        answers = [_drain_worker(proc, stop) for proc in procs]
        failed = not procs
        try:
            for i, chunk in enumerate(chunks):
                batch = None
                if not failed and i % workers < len(procs):
                    status, batch = _answer(answers[i % workers].get())
                    if status != "ok":
                        failed, batch = True, None
                self._insert(batch if batch is not None else parse_batch(root, first_gen, chunk))
        finally:
            stop.set()
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()


def _send_task(proc: Any, task: tuple[str, int, list[Any]]) -> None:
    """Give a build worker its whole task at once (it reads it all before it answers);
    a worker that is gone already is found out when its answers are read."""
    import pickle

    try:
        pickle.dump(task, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        pass
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass


def _answer(got: tuple[str, Any] | bytes) -> tuple[str, Any]:
    """A worker's answer as :func:`_drain_worker` queued it, unpickled."""
    if isinstance(got, tuple):
        return got
    import pickle

    try:
        answer = pickle.loads(got)
    except Exception as exc:  # noqa: BLE001 - the batch is parsed here instead
        return ("error", f"the worker's answer did not unpickle: {exc!r}")
    return answer if isinstance(answer, tuple) and len(answer) == 2 else ("error", "bad answer")


def _drain_worker(proc: Any, stop: threading.Event) -> queue.Queue[tuple[str, Any] | bytes]:
    """A queue that a thread fills with the answers of one build worker as they come,
    each the bytes of its pickle (``("error", why)`` last when the worker stops early).

    The thread only reads: unpickling a batch here held the GIL while the inserting
    thread needed it between rows (3.3 million times at 100,000 nodes), so the inserting
    thread unpickles each batch as it takes it (:func:`_answer`)."""
    from .buildworker import HEADER

    answers: queue.Queue[tuple[str, Any] | bytes] = queue.Queue(maxsize=2)

    def put(answer: tuple[str, Any] | bytes) -> bool:
        while not stop.is_set():
            try:
                answers.put(answer, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def drain() -> None:
        with proc.stdout:
            while True:
                try:
                    head = proc.stdout.read(HEADER)
                    data = proc.stdout.read(int.from_bytes(head, "little")) if head else b""
                except OSError as exc:
                    put(("error", f"the worker stopped: {exc!r}"))
                    return
                if len(head) < HEADER or len(data) < int.from_bytes(head, "little"):
                    put(("error", "the worker stopped"))
                    return
                if not put(data):
                    return

    threading.Thread(target=drain, name="catalog-build-worker", daemon=True).start()
    return answers
