"""The Station's own state: one SQLite file beside the forests it serves."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

FOLDER = ".station"
FILE = "station.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL,
    forest TEXT NOT NULL,
    allow TEXT NOT NULL,
    deny TEXT NOT NULL,
    caps TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL,
    last_used_at REAL
);
CREATE INDEX IF NOT EXISTS keys_prefix ON keys(prefix);
CREATE TABLE IF NOT EXISTS audit (
    ts REAL NOT NULL,
    principal TEXT,
    key_id TEXT,
    forest TEXT,
    call TEXT NOT NULL,
    outcome TEXT NOT NULL,
    status INTEGER NOT NULL,
    commit_sha TEXT,
    ms REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bindings (
    forest TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    api_key_env TEXT,
    price_prompt REAL,
    price_completion REAL,
    max_tokens INTEGER NOT NULL DEFAULT 600,
    timeout_s REAL NOT NULL DEFAULT 60,
    created_at REAL NOT NULL
);
"""


def path_for(root: Path) -> Path:
    """Where the state of a Station serving ``root`` lives."""
    return root / FOLDER / FILE


class Store:
    """One connection to the state file, shared by threads behind a lock.

    Args:
        root: The folder of forests the Station serves; the state goes in its
            ``.station/`` folder (a dot folder is never taken for a forest).
    """

    def __init__(self, root: Path) -> None:
        path = path_for(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.conn = sqlite3.connect(
            path, check_same_thread=False, timeout=5.0, isolation_level=None
        )
        self.conn.row_factory = sqlite3.Row
        with self.lock:
            self.conn.execute("PRAGMA journal_mode=WAL")
            # WAL with synchronous=NORMAL: a commit survives the process crashing and
            # costs no fsync (only a power loss can roll back the latest commits).
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
