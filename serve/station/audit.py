"""The audit trail: one row per call (who, where, what, how it ended), never content."""

from __future__ import annotations

import time
from typing import Any

from .store import Store


def record(store: Store, *, principal: str | None, key_id: str | None,
           forest: str | None, call: str, outcome: str, status: int,
           commit: str | None, ms: float) -> None:
    """Append one row."""
    with store.lock:
        store.conn.execute(
            "INSERT INTO audit (ts, principal, key_id, forest, call, outcome, status, "
            "commit_sha, ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (time.time(), principal, key_id, forest, call, outcome, status, commit, ms))


def rows(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """The latest rows, newest first."""
    with store.lock:
        found = store.conn.execute(
            "SELECT * FROM audit ORDER BY rowid DESC LIMIT ?", (limit,)).fetchall()
    return [dict(r) for r in found]
