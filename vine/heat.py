"""Heat, the pheromone: how much a node has been used lately, in 0..1.

Stored outside git in ``_derived/trails.db`` (the upstream table shape:
``heat(scope, node_id, heat, updated)``), so it survives catalog rebuilds. A
deposit adds to the decayed value and caps at 1; the value read is decayed with
a half-life, so an old trail fades without any job having to run.

In memory each node's heat is held as ``log2(heat) + updated / half_life``: that
number does not change with time, so comparing two of them compares the heats at
any moment, and no value has to be recomputed to rank. Deposits apply to this
view at once and reach the file in the background (at most a second later, and on
close), as one atomic upsert per node that adds to whatever another process left.
The background writer starts with the first deposit.
"""

from __future__ import annotations

import atexit
import bisect
import math
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from . import derived

READ_DEPOSIT = 0.02  # a node read by look, pick or query
LIST_DEPOSIT = 0.005  # a node returned in a list (locate, sniff, scan, move)
STRONG_DEPOSIT = 0.1  # fortification, a successful hunt
FLOOR = 0.00005  # rounds to 0.0 at 4 decimals
FLUSH_SECONDS = 1.0
PARTIAL_MAX = 64  # ids read on their own before the whole table is loaded


class HeatStore:
    """Persistent heat with lazy evaporation; safe across threads and processes."""

    def __init__(
        self,
        derived: Path | None,
        *,
        half_life_days: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.half_life = max(half_life_days, 1e-9) * 86400.0
        self.clock = clock
        self._lock = threading.RLock()
        self._keys: dict[str, float] = {}
        # (-key, id), ascending: hottest first; sorted when first needed (None till then).
        self._order: list[tuple[float, str]] | None = []
        self._pending: dict[str, float] = {}
        self._version: int | None = None
        # Until something needs every key (ranking), a few ids are read on their own: a
        # one-shot process (`vine look x`) never loads the whole table.
        self._full = False
        self._conn = self._open(derived)
        self._closed = False
        self._wake = threading.Event()
        self._atexit: Callable[[], None] | None = None
        self._flusher: threading.Thread | None = None

    def _start_flusher(self) -> None:
        """Deposits reach the file from a background thread, off every call's path (and
        at exit); started with the first deposit, so a store never deposited into
        runs no thread."""
        ref = weakref.WeakMethod(self.flush)
        self._atexit = lambda: (ref() or (lambda: None))()
        atexit.register(self._atexit)
        self._flusher = threading.Thread(
            target=_flush_loop, args=(weakref.ref(self), self._wake), name="heat-flush", daemon=True
        )
        self._flusher.start()

    def _open(self, folder: Path | None) -> sqlite3.Connection:
        path = folder / "trails.db" if folder is not None else None
        try:
            return self._setup(derived.connect(path, "trails"))
        except sqlite3.DatabaseError:
            # A damaged heat file is only a lost pheromone: start it again.
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            return self._setup(derived.connect(path, "trails"))

    def _setup(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS heat(scope TEXT DEFAULT '', node_id TEXT, "
            "heat REAL, updated REAL, PRIMARY KEY(scope, node_id))"
        )
        conn.create_function("decayed", 3, self._decay, deterministic=True)
        conn.create_function("heat_key", 2, self._key, deterministic=True)
        conn.commit()
        return conn

    def _decay(self, heat: float | None, updated: float, now: float) -> float:
        if heat is None:
            return 0.0
        return heat * 0.5 ** (max(now - updated, 0.0) / self.half_life)

    def _key(self, heat: float, at: float) -> float:
        return math.log2(heat) + at / self.half_life if heat > 0 else -math.inf

    def _value(self, key: float, now: float) -> float:
        return min(1.0, 2.0 ** (key - now / self.half_life)) if key != -math.inf else 0.0

    def close(self) -> None:
        """Write pending deposits and close the store."""
        with self._lock:
            if self._closed:
                return
            self.flush()
            self._closed = True
            self._wake.set()
            self._conn.close()
            if self._atexit is not None:
                atexit.unregister(self._atexit)

    def _load(self) -> None:
        """Re-read the file when another connection changed it."""
        try:
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error:
            return
        if version == self._version and self._full:
            return
        now = self.clock()
        # Reading the table in storage order beats walking the primary key's index
        # (every row has scope ''), which costs a lookup per row.
        keys = dict(
            self._conn.execute(
                "SELECT node_id, heat_key(heat, updated) FROM heat NOT INDEXED "
                "WHERE scope='' AND heat > 0"
            )
        )
        for nid, pending in self._pending.items():
            keys[nid] = self._key(
                min(1.0, self._value(keys.get(nid, -math.inf), now) + self._value(pending, now)),
                now,
            )
        self._keys = keys
        self._order = None
        self._version = version
        self._full = True

    def _few(self, ids: list[str], now: float) -> dict[str, float] | None:
        """The keys of a few ids straight from the file plus pending deposits, while
        the whole table has not been loaded; None when it has (or for many ids)."""
        if self._full or len(ids) > PARTIAL_MAX:
            return None
        marks = ",".join("?" * len(ids))
        try:
            keys = dict(
                self._conn.execute(
                    "SELECT node_id, heat_key(heat, updated) FROM heat "
                    f"WHERE scope='' AND heat > 0 AND node_id IN ({marks})",
                    ids,
                )
            )
        except sqlite3.Error:
            keys = {}
        for nid in ids:
            pending = self._pending.get(nid)
            if pending is not None:
                keys[nid] = self._key(
                    min(
                        1.0, self._value(keys.get(nid, -math.inf), now) + self._value(pending, now)
                    ),
                    now,
                )
        return keys

    def _ordered(self) -> list[tuple[float, str]]:
        """The keys as ``(-key, id)``, hottest first (sorted on first need after a load)."""
        if self._order is None:
            self._order = sorted((-k, nid) for nid, k in self._keys.items())
        return self._order

    def get(self, node_id: str) -> float:
        """The heat of one node now, rounded to 4 decimals."""
        return self.many([node_id]).get(node_id, 0.0)

    def many(self, ids: Iterable[str]) -> dict[str, float]:
        """Heat of several nodes (absent ones read 0.0)."""
        now = self.clock()
        wanted = list(ids)
        with self._lock:
            keys = self._few(wanted, now)
            if keys is None:
                self._load()
                keys = self._keys
            return {
                nid: round(self._value(keys[nid], now), 4) if nid in keys else 0.0 for nid in wanted
            }

    def hot(self) -> dict[str, float]:
        """Every node whose heat rounds above zero."""
        now = self.clock()
        with self._lock:
            self._load()
            threshold = math.log2(FLOOR) + now / self.half_life
            return {
                nid: round(self._value(k, now), 4)
                for nid, k in self._keys.items()
                if k >= threshold
            }

    def hottest(self, chunk: int = 256) -> Iterator[list[str]]:
        """Ids of heated nodes, hottest first (ties by id), ``chunk`` at a time."""
        with self._lock:
            self._load()
            limit = -(math.log2(FLOOR) + self.clock() / self.half_life)
            order = self._ordered()
            end = bisect.bisect_right(order, (limit, "\U0010ffff"))
            snapshot = order[:end]
        for i in range(0, len(snapshot), chunk):
            yield [nid for _, nid in snapshot[i : i + chunk]]

    def rank_keys(self) -> tuple[dict[str, float], float]:
        """The raw ranking keys and the threshold below which heat reads 0.0.

        Sorting by key (descending) sorts by heat, at any moment; use :meth:`many`
        for the values of the few nodes actually returned.
        """
        with self._lock:
            self._load()
            return self._keys, math.log2(FLOOR) + self.clock() / self.half_life

    def deposit(self, ids: Iterable[str], amount: float) -> None:
        """Add ``amount`` to the decayed heat of each id, capped at 1."""
        unique = list(dict.fromkeys(ids))
        if not unique or amount <= 0:
            return
        now = self.clock()
        with self._lock:
            if self._flusher is None and not self._closed:
                self._start_flusher()
            if not self._full and len(unique) <= PARTIAL_MAX:
                for nid in unique:
                    self._pend(nid, amount, now)
                return
            self._load()
            order = self._order
            for nid in unique:
                old = self._keys.get(nid)
                if old is not None and order is not None:
                    at = bisect.bisect_left(order, (-old, nid))
                    if at < len(order) and order[at] == (-old, nid):
                        del order[at]
                current = self._value(old if old is not None else -math.inf, now)
                key = self._key(min(1.0, current + amount), now)
                self._keys[nid] = key
                if order is not None:
                    bisect.insort(order, (-key, nid))
                self._pend(nid, amount, now)

    def move(self, old: str, new: str) -> None:
        """Carry ``old``'s heat to ``new`` (a transplant), keeping the larger of the two;
        best effort: a busy or read-only store keeps the heat where it was."""
        self._rekey([old], new)

    def forget(self, ids: Iterable[str]) -> None:
        """Drop the heat of nodes that are gone (a prune: an id planted again later is
        a new node and starts cold); best effort."""
        self._rekey(list(ids), None)

    def _rekey(self, old: list[str], new: str | None) -> None:
        with self._lock:
            if self._closed or not old:
                return
            self.flush()
            now = self.clock()
            marks = ",".join("?" * len(old))
            try:
                if new is not None:
                    rows = self._conn.execute(
                        "SELECT decayed(heat, updated, ?) FROM heat WHERE scope='' AND "
                        f"node_id IN ({marks}, ?)",
                        (now, *old, new),
                    ).fetchall()
                    best = max((r[0] for r in rows), default=0.0)
                    if best > 0:
                        self._conn.execute(
                            "INSERT OR REPLACE INTO heat(scope, node_id, heat, updated) "
                            "VALUES('', ?, ?, ?)",
                            (new, min(best, 1.0), now),
                        )
                self._conn.execute(f"DELETE FROM heat WHERE scope='' AND node_id IN ({marks})", old)
                self._conn.commit()
            except sqlite3.Error:
                self._conn.rollback()
                return
            for nid in old:
                self._keys.pop(nid, None)
            if new is not None:
                self._keys.pop(new, None)
            # Read the table again on next use (our own commit does not move its version).
            self._version = None
            self._full = False
            self._order = None

    def _pend(self, nid: str, amount: float, now: float) -> None:
        """Add to a deposit not yet written, held as a key so that it decays from the
        moment it was made, not from the moment it reaches the file."""
        pending = self._pending.get(nid, -math.inf)
        self._pending[nid] = self._key(min(1.0, self._value(pending, now) + amount), now)

    def flush(self) -> None:
        """Write pending deposits: each adds to the stored, decayed value."""
        with self._lock:
            if not self._pending or self._closed:
                return
            now = self.clock()
            try:
                self._conn.executemany(
                    "INSERT INTO heat(scope, node_id, heat, updated) "
                    "VALUES('', ?, min(1.0, ?), ?) ON CONFLICT(scope, node_id) DO UPDATE SET "
                    "heat = min(1.0, decayed(heat, updated, excluded.updated) + ?), "
                    "updated = excluded.updated",
                    [
                        (nid, amount, now, amount)
                        for nid, amount in (
                            (nid, self._value(key, now)) for nid, key in self._pending.items()
                        )
                    ],
                )
                self._conn.commit()
            except sqlite3.Error:
                # A busy or read-only store keeps the deposits for the next flush.
                self._conn.rollback()
                return
            self._pending.clear()
            if self._full:
                # Our own commit does not move data_version; what we wrote is in view.
                self._version = self._conn.execute("PRAGMA data_version").fetchone()[0]


def _flush_loop(store_ref: Callable[[], HeatStore | None], wake: threading.Event) -> None:
    """Write pending deposits about once a second until the store closes or goes away."""
    while not wake.wait(FLUSH_SECONDS):
        store = store_ref()
        if store is None:
            return
        try:
            store.flush()
        except Exception:  # noqa: BLE001 - a lost flush is retried by the next one
            pass
        del store
