"""Opening the SQLite files under ``_derived/`` the way the format asks."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

BUSY_MS = 5000  # how long a statement waits for another connection's write lock


def connect(path: Path | None, name: str) -> sqlite3.Connection:
    """A connection to ``path`` (or, without one, a fresh shared in-memory database
    named after ``name``), in WAL mode with ``synchronous=NORMAL`` and a 5 s busy wait.

    WAL is best effort: a filesystem without it keeps the current journal mode.
    """
    if path is None:
        return connect_uri(memory_uri(name))
    return _tune(sqlite3.connect(path, check_same_thread=False))


def memory_uri(name: str) -> str:
    """A new shared in-memory database's URI (for a forest whose ``_derived`` is not
    writable); every connection to it sees the same data."""
    return f"file:{name}-{os.urandom(16).hex()}?mode=memory&cache=shared"


def connect_uri(uri: str) -> sqlite3.Connection:
    """A connection to a database URI, tuned like :func:`connect`."""
    return _tune(sqlite3.connect(uri, uri=True, check_same_thread=False))


def _tune(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError:
        pass
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn
