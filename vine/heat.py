"""Heat, the pheromone: how much a node has been used lately, in 0..1.

Stored outside git in ``_derived/trails.db`` (the upstream table shape), so it
survives catalog rebuilds. A deposit adds to the decayed value and caps at 1;
the value read is decayed with a half-life, so an old trail fades without any
job having to run.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

READ_DEPOSIT = 0.02     # a node read by look, pick or query
LIST_DEPOSIT = 0.005    # a node returned in a list (locate, sniff, scan, move)
STRONG_DEPOSIT = 0.1    # fortification, a successful hunt
FLOOR = 0.00005         # rounds to 0.0 at 4 decimals


class HeatStore:
    """Persistent heat with lazy evaporation; safe across threads and processes."""

    def __init__(self, derived: Path | None, *, half_life_days: float = 30.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.half_life = max(half_life_days, 1e-9) * 86400.0
        self.clock = clock
        self._lock = threading.Lock()
        if derived is not None:
            try:
                self._conn = sqlite3.connect(derived / "trails.db", check_same_thread=False)
                self._setup()
            except sqlite3.DatabaseError:
                (derived / "trails.db").unlink(missing_ok=True)
                self._conn = sqlite3.connect(derived / "trails.db", check_same_thread=False)
                self._setup()
        else:
            uri = f"file:trails-{uuid.uuid4().hex}?mode=memory&cache=shared"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._setup()
        self._cache: dict[str, tuple[float, float]] = {}
        self._version: int | None = None

    def _setup(self) -> None:
        conn = self._conn
        conn.execute("PRAGMA busy_timeout=5000")
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError:
            pass
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS heat(scope TEXT DEFAULT '', node_id TEXT, "
                     "heat REAL, updated REAL, PRIMARY KEY(scope, node_id))")
        conn.create_function("decayed", 3, self._decay, deterministic=True)
        conn.commit()

    def _decay(self, heat: float, updated: float, now: float) -> float:
        if heat is None:
            return 0.0
        return heat * 0.5 ** (max(now - updated, 0.0) / self.half_life)

    def close(self) -> None:
        """Close the store."""
        with self._lock:
            self._conn.close()

    def _load(self) -> None:
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            self._cache = {nid: (h, u) for nid, h, u in self._conn.execute(
                "SELECT node_id, heat, updated FROM heat WHERE scope=''")}
            self._version = version

    def get(self, node_id: str) -> float:
        """The heat of one node now, rounded to 4 decimals."""
        return self.many([node_id]).get(node_id, 0.0)

    def many(self, ids: Iterable[str]) -> dict[str, float]:
        """Heat of several nodes (absent ones read 0.0)."""
        now = self.clock()
        with self._lock:
            self._load()
            cache = self._cache
            out = {}
            for nid in ids:
                row = cache.get(nid)
                out[nid] = round(min(1.0, self._decay(row[0], row[1], now)), 4) if row else 0.0
            return out

    def hot(self) -> dict[str, float]:
        """Every node whose heat rounds above zero."""
        now = self.clock()
        with self._lock:
            self._load()
            out = {}
            for nid, (h, u) in self._cache.items():
                value = round(min(1.0, self._decay(h, u, now)), 4)
                if value > 0:
                    out[nid] = value
            return out

    def deposit(self, ids: Iterable[str], amount: float) -> None:
        """Add ``amount`` to the decayed heat of each id, capped at 1."""
        unique = list(dict.fromkeys(ids))
        if not unique or amount <= 0:
            return
        now = self.clock()
        with self._lock:
            self._load()
            try:
                self._conn.executemany(
                    "INSERT INTO heat(scope, node_id, heat, updated) VALUES('', ?, min(1.0, ?), ?) "
                    "ON CONFLICT(scope, node_id) DO UPDATE SET "
                    "heat = min(1.0, decayed(heat, updated, excluded.updated) + ?), "
                    "updated = excluded.updated",
                    [(nid, amount, now, amount) for nid in unique])
                self._conn.commit()
            except sqlite3.OperationalError:
                # A busy or read-only store loses a deposit, never a read.
                self._conn.rollback()
                return
            marks = ",".join("?" * len(unique))
            for nid, h, u in self._conn.execute(
                    f"SELECT node_id, heat, updated FROM heat WHERE scope='' "
                    f"AND node_id IN ({marks})", unique):
                self._cache[nid] = (h, u)
