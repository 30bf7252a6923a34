"""The audit trail: one row per call (who, where, what, how it ended), never content.

Rows are committed before :func:`record` returns (a reader on another connection sees
a call's row once its response is out), but calls that finish together share one
commit: each row joins a queue, and whoever takes the state file's lock writes every
row queued so far in one transaction. Under load that is one commit for many rows
instead of one each.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

from .store import Store

_COLUMNS = ("ts", "principal", "key_id", "forest", "call", "outcome", "status", "commit_sha", "ms")
_INSERT = f"INSERT INTO audit ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
_QUEUES: weakref.WeakKeyDictionary[Store, list[tuple[Any, ...]]] = weakref.WeakKeyDictionary()
_QUEUE_LOCK = threading.Lock()


def record(
    store: Store,
    *,
    principal: str | None,
    key_id: str | None,
    forest: str | None,
    call: str,
    outcome: str,
    status: int,
    commit: str | None,
    ms: float,
) -> None:
    """Append one row (committed, with any other rows queued meanwhile, on return)."""
    row = (time.time(), principal, key_id, forest, call, outcome, status, commit, ms)
    with _QUEUE_LOCK:
        _QUEUES.setdefault(store, []).append(row)
    with store.lock:
        with _QUEUE_LOCK:
            batch = _QUEUES.pop(store, [])
        if not batch:
            return  # a caller before us committed our row with its own
        if len(batch) == 1:
            store.conn.execute(_INSERT, batch[0])
            return
        store.conn.execute("BEGIN")
        try:
            store.conn.executemany(_INSERT, batch)
        except BaseException:
            store.conn.execute("ROLLBACK")
            with _QUEUE_LOCK:  # the others' rows wait for the next writer
                _QUEUES.setdefault(store, [])[:0] = [r for r in batch if r is not row]
            raise
        store.conn.execute("COMMIT")


def rows(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """The latest rows, newest first."""
    with store.lock:
        found = store.conn.execute(
            "SELECT * FROM audit ORDER BY rowid DESC LIMIT ?", (limit,)
        ).fetchall()
    return [dict(r) for r in found]
