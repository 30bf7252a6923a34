"""A full rebuild of the catalog: the files parsed in batches (on worker processes when
there are many) while this process inserts their rows, the secondary indexes dropped
and made again once the rows are in."""

from __future__ import annotations

import collections
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from . import bodyindex, bodyshard, derived
from .buildlock import JOURNALED, UNJOURNALED, BuildLock
from .catalogschema import INDEX_NAMES, index_statements
from .indexing import BULK, BULK_JSON, PARALLEL_FILES, Catalog, parse_batch
from .reads import topk
from .watch import Stat

# FTS5's own default: how many segments of a level an edit merges.
FTS5_AUTOMERGE = 4
# The share of a parallel build's batches (the last ones, by path) whose body lines the
# last worker indexes itself, in a table of its own (:mod:`monkeyllm.bodyshard`): the
# building process merges its own part of the body index and counts its vocabulary
# while the worker parses those batches and indexes their lines. At 100,000 nodes on 2
# cores, 0.15 had both done at about the same time (0.20 and 0.25 kept the building
# process waiting 1.5 and 2.7 s for the worker).
PART_SHARE = 0.15


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
    (``executemany``), and the last worker indexes the body lines of the last batches
    itself, which this process copies in at the end (:class:`_Pool`). Without, this
    process parses while a thread inserts each batch as one JSON text, which SQLite
    reads without the GIL, so the two overlap (row tuples would hold the GIL for every
    row: 10 % more time for 3,000 files). Either way the connection is used by one
    thread at a time.
    """

    BATCH = 400
    # The phases of the last rebuild in this process, in seconds (what bench.scale prints).
    last: dict[str, float] = {}
    # How the last rebuild in this process wrote: "off" (no journal) or "wal".
    last_journal = ""
    # Bytes of body index terms held in memory before FTS5 writes them out as a segment.
    HASHSIZE = bodyshard.HASHSIZE

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.conn = catalog.conn
        self._queue: queue.Queue[list[tuple[str, Any]] | None] = queue.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="catalog-build", daemon=True)
        self.inserting = 0.0
        # Vocabulary counts of body index tables taken before the build's end.
        self._counted: dict[str, list[tuple[str, int]]] = {}

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
        # No merging of the body index's segments while it is written from nothing, one
        # merge of them all at the end instead (a seventh of a rebuild's time less at
        # 100k nodes); a rebuild never leaves a level of segments for an edit to merge
        # at once, and edits merge as usual again.
        bodyshard.prepare(conn, bodyindex.SHARDS[0], self.HASHSIZE)
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
        pool = None
        if workers:
            pool = _Pool(str(self.catalog.root), first_gen, chunks, workers, self._part_path())
        try:
            if pool is not None:
                self._parallel(pool)
            else:
                self._serial(chunks, first_gen)
            phase("files")
            BulkBuilder.last["... inserting"] = round(self.inserting, 3)
            for statement in index_statements():
                conn.execute(statement)
            phase("indexes")
            counted = self._counted
            if bodyindex.SHARDS[0] not in counted:
                bodyshard.settle(conn, bodyindex.SHARDS[0])
            conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES('optimize')")
            conn.execute(
                "INSERT INTO nodes_fts(nodes_fts, rank) VALUES('automerge', ?)", (FTS5_AUTOMERGE,)
            )
            phase("merge")
            if pool is not None:
                counted.update(self._take_part(pool))
            phase("part")
            topk.common_terms(conn)
            bodyindex.finish_bulk(conn, first_gen + len(items), counted)
            phase("vocabulary")
        finally:
            if pool is not None:
                pool.close()
        conn.commit()
        phase("commit")

    def _part_path(self) -> str | None:
        """Where a worker may write its part of the body index: beside a catalog file
        (a catalog in memory takes every line itself)."""
        path = getattr(self.catalog, "path", None)
        return str(Path(path).parent / bodyshard.NAME) if path is not None else None

    def _take_part(self, pool: _Pool) -> dict[str, list[tuple[str, int]]]:
        """The worker's part of the body index copied into the catalog, and its
        vocabulary; when the worker could not finish it, its lines indexed here."""
        if not pool.part_from_worker:
            return {}
        counts = pool.part()
        if counts is not None:
            assert pool.path is not None
            bodyshard.install(self.conn, pool.path)
            return {bodyindex.LIVE: counts}
        self._index_lines_here(pool)
        bodyshard.settle(self.conn, bodyindex.SHARDS[0])
        return {}

    def _settle_first(self) -> None:
        """Merge the first part of the body index and count its vocabulary."""
        start = time.perf_counter()
        first = bodyindex.SHARDS[0]
        bodyshard.settle(self.conn, first)
        self._counted[first] = bodyindex.vocabulary_counts(self.conn, first)
        BulkBuilder.last["... merging and counting the first part early"] = round(
            time.perf_counter() - start, 3
        )

    def _index_lines_here(self, pool: _Pool) -> None:
        """The body lines of the batches whose rows came from the worker while their
        lines went to its table (which is not coming): parsed again, lines only (the
        first part is merged and counted again at the end)."""
        self._counted.pop(bodyindex.SHARDS[0], None)
        for i in pool.lines_in_part:
            for table, payload in parse_batch(pool.root, pool.first_gen, pool.chunks[i]):
                if table == "lines":
                    self._insert([(table, payload)])
        pool.lines_in_part = []
        pool.part_from_worker = False

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

    def _parallel(self, pool: _Pool) -> None:
        """Batches parsed by the pool's processes, inserted here in file order (FTS5
        appends ascending rowids without flushing). Batches a worker could not give (it
        failed, or never started) are parsed here, and with them the body lines its
        part of the index would have held."""
        for i, chunk in enumerate(pool.chunks):
            if i == pool.split and pool.part_from_worker and not pool.failed:
                # This process's part of the body index is whole: merge it and count its
                # vocabulary while the worker parses the last batches and indexes theirs.
                self._settle_first()
            batch = pool.batch(i)
            if batch is None:
                if pool.lines_in_part:
                    self._index_lines_here(pool)
                if i >= pool.split:
                    # Lines of the part come into the first table: merged and counted
                    # again at the end.
                    self._counted.pop(bodyindex.SHARDS[0], None)
                batch = parse_batch(pool.root, pool.first_gen, chunk)
            self._insert(batch)
        if pool.failed:
            # Every line after the failure was indexed here, and those before it too.
            pool.part_from_worker = False


class _Pool:
    """A build's worker processes, each given its whole task at once.

    Batch ``i`` goes to worker ``i % workers``, but for the last :data:`PART_SHARE` of
    the batches, which all go to the last worker, which indexes their body lines in a
    table of its own at ``path`` (when there is a path and such batches). A thread per
    worker drains its pipe into a queue bounded by bytes (:class:`_Answers`), so a
    worker parses on while the building thread inserts.
    """

    def __init__(
        self,
        root: str,
        first_gen: int,
        chunks: list[list[tuple[int, str, int, int]]],
        workers: int,
        path: str | None,
    ) -> None:
        import subprocess
        import sys

        self.root, self.first_gen, self.chunks, self.path = root, first_gen, chunks, path
        n = len(chunks)
        self.split = n - int(n * PART_SHARE) if path is not None else n
        self.owner = [i % workers if i < self.split else workers - 1 for i in range(n)]
        # Whether the last worker is to give the part of the body index past ``split``,
        # and the batches whose lines it holds there so far.
        self.part_from_worker = self.split < n
        self.lines_in_part: list[int] = []
        self.failed = False
        self.procs: list[subprocess.Popen[bytes]] = []
        if path is not None:
            bodyshard.remove(path)
        try:
            for w in range(workers):
                proc = subprocess.Popen(
                    [sys.executable, "-m", "monkeyllm.buildworker"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                self.procs.append(proc)
                mine = [chunks[i] for i in range(n) if self.owner[i] == w]
                part = None
                if w == workers - 1 and self.part_from_worker:
                    part = (path, sum(1 for i in range(self.split) if self.owner[i] == w))
                _send_task(proc, (root, first_gen, mine, part))
        except OSError:
            pass
        if len(self.procs) < workers:
            self.part_from_worker = False
        self.stop = threading.Event()
        self.answers = [_drain_worker(proc, self.stop) for proc in self.procs]

    def batch(self, i: int) -> list[tuple[str, Any]] | None:
        """Batch ``i``'s rows from its worker, or None for this process to parse it."""
        if self.failed or not 0 <= self.owner[i] < len(self.procs):
            return None
        status, batch = _answer(self.answers[self.owner[i]].get())
        if status != "ok":
            self.failed = True
            return None
        if i >= self.split and self.part_from_worker:
            self.lines_in_part.append(i)
        return batch

    def part(self) -> list[tuple[str, int]] | None:
        """The vocabulary of the worker's part of the body index once it is merged and
        closed at :attr:`path`; None when it failed."""
        if self.failed:
            return None
        status, counts = _answer(self.answers[-1].get())
        if status != "part":
            self.failed = True
            return None
        return list(counts)

    def close(self) -> None:
        """Stop the workers and remove the part of the body index (copied by now)."""
        self.stop.set()
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if self.path is not None:
            bodyshard.remove(self.path)


def _send_task(proc: Any, task: tuple[str, int, list[Any], Any]) -> None:
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


class _Answers:
    """The answers one worker has given and the building thread not yet taken, bounded
    by their bytes (:data:`ANSWER_BYTES`) rather than their number: a batch with its
    body lines weighs several megabytes, one whose lines went to the worker's part of
    the index a tenth of that, and the worker runs on through those while the
    building thread merges its own part."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: collections.deque[tuple[str, Any] | bytes] = collections.deque()
        self._bytes = 0
        self._ready = threading.Condition()

    def put(self, answer: tuple[str, Any] | bytes, stop: threading.Event) -> bool:
        """Queue an answer, waiting while those queued weigh the limit (one always
        goes in); False once ``stop`` is set."""
        size = len(answer) if isinstance(answer, bytes) else 0
        with self._ready:
            while self._items and self._bytes + size > self.limit:
                if stop.is_set():
                    return False
                self._ready.wait(0.1)
            self._items.append(answer)
            self._bytes += size
            self._ready.notify_all()
        return True

    def get(self) -> tuple[str, Any] | bytes:
        """The oldest answer, waiting for one."""
        with self._ready:
            while not self._items:
                self._ready.wait()
            answer = self._items.popleft()
            self._bytes -= len(answer) if isinstance(answer, bytes) else 0
            self._ready.notify_all()
            return answer


# How many bytes of answers a worker may have waiting (a batch of 400 files with its
# body lines: 3-7 MB; without them: about 0.6 MB).
ANSWER_BYTES = 48 << 20


def _drain_worker(proc: Any, stop: threading.Event) -> _Answers:
    """The answers of one build worker, which a thread reads as they come, each the
    bytes of its pickle (``("error", why)`` last when the worker stops early).

    The thread only reads: unpickling a batch here held the GIL while the inserting
    thread needed it between rows (3.3 million times at 100,000 nodes), so the inserting
    thread unpickles each batch as it takes it (:func:`_answer`)."""
    from .buildworker import HEADER

    answers = _Answers(ANSWER_BYTES)

    def put(answer: tuple[str, Any] | bytes) -> bool:
        return answers.put(answer, stop)

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
