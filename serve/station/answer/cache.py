"""The answer store: a repeated question answered without the model, per forest, at
``<forest>/_derived/cache/answers.db`` (rebuildable state, never in git).

The key covers everything that shapes an answer: the normalized question, terms, k,
hops, the binding, the key's scope, the reply bound, the window and, for a walk, the
forest's HEAD. A sweep entry also holds the reading's fingerprint: when the evidence
the harvest finds has changed, the entry is a miss and is replaced. 500 entries per
forest, the least recently served evicted first. Nothing unsound is ever stored.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import unicodedata
from pathlib import Path
from typing import Any

from monkeyllm.derived import connect

ENTRIES = 500
FINGERPRINT_FIELDS = (
    "id",
    "type",
    "title",
    "summary",
    "matches",
    "content",
    "notes",
    "created",
    "updated",
    "supersedes",
    "superseded_by",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL,
    served_at REAL NOT NULL
);
"""


def _sha(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize(question: str) -> str:
    """NFC, casefolded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFC", question).casefold().split())


def key(parts: dict[str, Any]) -> str:
    """The entry's key: sha256 over the sorted JSON of what shapes the answer (a part
    that is None is left out)."""
    return _sha({k: v for k, v in parts.items() if v is not None})


def fingerprint(bundle: dict[str, Any]) -> str:
    """The reading's fingerprint: results sorted by id, without score, heat or order."""
    results = sorted(
        (r for r in bundle.get("results", []) if isinstance(r, dict)),
        key=lambda r: str(r.get("id")),
    )
    return _sha(
        {
            "results": [[r.get(f) for f in FINGERPRINT_FIELDS] for r in results],
            "truncated": bool(bundle.get("truncated")),
        }
    )


def storable(response: dict[str, Any]) -> bool:
    """Never stored: an error, a truncated or empty answer, empty evidence, anything
    that committed, or a walk that exhausted itself."""
    answer = response.get("answer")
    return (
        "error" not in response
        and isinstance(answer, str)
        and bool(answer.strip())
        and bool(response.get("evidence"))
        and not response.get("truncated")
        and not response.get("exhausted")
        and not response.get("commit")
    )


class AnswerStore:
    """One forest's answer store (opened per call; the file is shared by threads and
    processes through SQLite's own locking).

    Args:
        root: The forest's folder.
    """

    def __init__(self, root: Path) -> None:
        folder = root / "_derived" / "cache"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.conn: sqlite3.Connection | None = connect(folder / "answers.db", "answers")
            self.conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error):
            self.conn = None  # an unwritable _derived: every lookup misses

    def close(self) -> None:
        """Close the file."""
        if self.conn is not None:
            self.conn.close()

    def __enter__(self) -> AnswerStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, entry: str, reading: str = "") -> dict[str, Any] | None:
        """The stored response with ``cached_at``, when the key and fingerprint match."""
        if self.conn is None:
            return None
        try:
            row = self.conn.execute(
                "SELECT fingerprint, response, created_at FROM answers WHERE key = ?", (entry,)
            ).fetchone()
            if row is None or row[0] != reading:
                return None
            with self.conn:
                self.conn.execute(
                    "UPDATE answers SET served_at = ? WHERE key = ?", (time.time(), entry)
                )
        except sqlite3.Error:
            return None
        return {**json.loads(row[1]), "cached_at": _iso(row[2])}

    def put(self, entry: str, reading: str, response: dict[str, Any]) -> bool:
        """Store (or replace) an entry when it is sound; evict beyond 500."""
        if self.conn is None or not storable(response):
            return False
        now = time.time()
        try:
            with self.conn:
                self.conn.execute(
                    "INSERT OR REPLACE INTO answers (key, fingerprint, response, "
                    "created_at, served_at) VALUES (?, ?, ?, ?, ?)",
                    (entry, reading, json.dumps(response, ensure_ascii=False), now, now),
                )
                self.conn.execute(
                    "DELETE FROM answers WHERE key IN (SELECT key FROM answers ORDER BY "
                    "served_at DESC LIMIT -1 OFFSET ?)",
                    (ENTRIES,),
                )
        except sqlite3.Error:
            return False
        return True

    def count(self) -> int:
        """How many entries are stored."""
        if self.conn is None:
            return 0
        return int(self.conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
