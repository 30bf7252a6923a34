"""The best bm25 matches of ``locate`` without scoring every row of its common words.

bm25 is a sum over the query's phrases, and what a phrase adds to a row is less than
``idf * (k1 + 1)`` however often the row holds it. So when a query has common phrases
(``notes``, ``working``: tens of thousands of rows at 100k nodes) beside rarer ones, the
rows that hold only common phrases score below a known bound. When the rarer phrases
alone already give ``pool`` rows above that bound, none of those rows can enter the
top ``pool``, and only the rows of the rarer phrases need a score:

- rows holding a rarer and a common phrase: the query ``(common) AND (rarer)``, whose
  phrases are the full query's in the same order, so FTS5 computes each row's rank
  with exactly the operations of the full query;
- rows holding rarer phrases only: the query of the rarer phrases, whose rank equals
  the full query's (the common phrases add exact zeros there); its best ``pool`` rows
  are enough, since the rows after them score no better in the full query.

The full query lists the common phrases first for the same reason. How many rows hold
a word comes from the catalog's last rebuild (:func:`common_terms`), lowered by every
node indexed since, so the bound only ever errs on the high side.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from typing import Any

# FTS5's bm25 parameters (fixed in its source).
K1 = 1.2
# A word on at least this many catalog rows (at the last rebuild) has its count kept;
# it is a common one when it is also on at least one row in COMMON_SHARE.
COMMON_DOCS = 200
COMMON_SHARE = 50
# The bounded top is tried only when the common phrases hold at least this many rows
# together: scoring fewer costs less than its extra queries, and than the full query
# run after them when the rarer phrases fall short (on the generated 10k forest, three
# queries in four with fewer common rows fell short; from about 2,500 it paid).
SKIPPED_MIN = 2500
_TOKEN = re.compile(r'"([a-z0-9]+)"')
_PHRASE = re.compile(r'"(?:[^"]|"")*"')
_STATS = (
    "SELECT (SELECT value FROM meta WHERE key='locate_common'), "
    "(SELECT value FROM meta WHERE key='locate_rows'), "
    "(SELECT value FROM meta WHERE key='locate_edits')"
)


def common_terms(conn: sqlite3.Connection) -> None:
    """After a rebuild: the metadata index's common words and how many rows hold each,
    the row count, and no edits since (a catalog row's words are counted there)."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.locate_terms "
        "USING fts5vocab(main, nodes_fts, 'row')"
    )
    common = dict(
        conn.execute("SELECT term, doc FROM temp.locate_terms WHERE doc >= ?", (COMMON_DOCS,))
    )
    conn.execute("DROP TABLE temp.locate_terms")
    rows = conn.execute("SELECT count(*) FROM nodes_fts").fetchone()[0]
    conn.executemany(
        "INSERT OR REPLACE INTO meta VALUES(?, ?)",
        (
            ("locate_common", json.dumps(common, separators=(",", ":"))),
            ("locate_rows", str(rows)),
            ("locate_edits", "0"),
        ),
    )


def count_edits(conn: sqlite3.Connection, edits: int) -> None:
    """Count ``edits`` rows of the metadata index written or removed since the rebuild."""
    conn.execute(
        "INSERT INTO meta VALUES('locate_edits', ?) ON CONFLICT(key) DO UPDATE "
        "SET value = CAST(value AS INTEGER) + excluded.value",
        (edits,),
    )


class Stats:
    """The rebuild's word counts, read once per change of the stored text."""

    def __init__(self) -> None:
        self._raw: str | None = None
        self._common: dict[str, int] = {}

    def read(self, conn: sqlite3.Connection) -> tuple[dict[str, int], int, int] | None:
        """``(word -> rows, rows, edits since)``, or None when the catalog has none."""
        raw, rows, edits = conn.execute(_STATS).fetchone()
        if raw is None or rows is None:
            return None
        if raw != self._raw:
            self._common, self._raw = json.loads(raw), raw
        return self._common, int(rows), int(edits or 0)


def _idf_bound(rows_up: int, hits_low: int) -> float:
    """The largest idf FTS5 can give a phrase on at least ``hits_low`` of at most
    ``rows_up`` rows."""
    idf = math.log((rows_up - hits_low + 0.5) / (hits_low + 0.5))
    return idf if idf > 0 else 1e-6


def split(
    phrases: list[str], stats: tuple[dict[str, int], int, int] | None
) -> tuple[list[str], list[str], float]:
    """The query's phrases as (common, rarer) and the most the common ones can add;
    no common ones when together they hold fewer than ``SKIPPED_MIN`` rows."""
    if stats is None or not all(_PHRASE.fullmatch(p) for p in phrases):
        return [], phrases, 0.0
    common_docs, rows, edits = stats
    least = max(COMMON_DOCS, rows // COMMON_SHARE)
    common, rarer, bound, skipped = [], [], 0.0, 0
    for phrase in phrases:
        m = _TOKEN.fullmatch(phrase)
        hits = common_docs.get(m.group(1), 0) - edits if m else 0
        if hits >= least:
            common.append(phrase)
            bound += _idf_bound(rows + edits, hits) * (K1 + 1)
            skipped += hits
        else:
            rarer.append(phrase)
    if skipped < SKIPPED_MIN:
        return [], phrases, 0.0
    return common, rarer, bound


def rare(phrases: list[str], stats: tuple[dict[str, int], int, int] | None) -> list[str]:
    """Those of ``phrases`` on fewer than ``COMMON_DOCS`` rows at the last rebuild (as
    far as the counts kept can tell: all of them when there are none)."""
    if stats is None:
        return phrases
    common_docs, _, edits = stats
    out = []
    for phrase in phrases:
        m = _TOKEN.fullmatch(phrase)
        if not m or common_docs.get(m.group(1), 0) - edits < COMMON_DOCS:
            out.append(phrase)
    return out


_RANKED = "SELECT rowid, rank FROM nodes_fts WHERE nodes_fts MATCH ?"


def ranked(
    conn: sqlite3.Connection, common: list[str], rarer: list[str], bound: float, pool: int
) -> list[tuple[int, float]] | None:
    """The best ``pool`` ``(rowid, rank)`` of ``common OR rarer``, best first and ties
    by rowid, scoring the rows of ``rarer`` alone; None when the rarer phrases do not
    give ``pool`` rows above ``bound`` (the full query is needed)."""
    if not common or not rarer:
        return None
    # Only the best pool rows of the rarer phrases alone can be needed (ties by rowid, as
    # below): a row after them scores there what it scores in the full query (it holds
    # no common phrase) or is among the rows of both.
    alone = conn.execute(
        _RANKED + " ORDER BY rank, rowid LIMIT ?", (" OR ".join(rarer), pool)
    ).fetchall()
    if len(alone) < pool or -alone[pool - 1][1] <= bound:
        return None
    both = conn.execute(_RANKED, (f"({' OR '.join(common)}) AND ({' OR '.join(rarer)})",))
    score: dict[int, Any] = dict(alone)
    score.update(both.fetchall())
    return sorted(score.items(), key=lambda r: (r[1], r[0]))[:pool]
