"""The body index behind ``sniff``: every body line's tokens, in SQLite FTS5.

Each non-blank body line is one row of a contentless FTS5 table whose rowid is
``gen << LINE_BITS | line``: ``gen`` names one version of one node's body (the
catalog row holds the live one), ``line`` is the 0-based body line. Rows of
old versions are never deleted (contentless tables cannot delete on this
SQLite); a join on the live ``gen`` hides them, and a rebuild drops them once
they outnumber the live rows.

The index is two FTS5 tables, ``body_fts`` and ``body_fts1``, each holding the rows
of its own versions: a parallel rebuild writes most bodies (by path) into ``body_fts``
here while a parsing worker writes the last ones (``bulkbuild.PART_SHARE``) into a
database of its own, which is copied in whole at the end (``bodyshard.install``), so
the two cores share FTS5's inserting and merging; every edit writes into ``body_fts1``.
A version is in one table only, and every ``gen`` in ``body_fts1`` is above every one in
``body_fts``, so a match read from one table and then the other comes out in rowid
order (:func:`match_rowids`).

Tokens are runs of letters and digits of the folded text (lowercased, accents
dropped), stored space-separated under the ``ascii`` tokenizer so the index
holds exactly the tokens Python computed. A literal term is found through the
vocabulary: a one-token term matches every line holding a token that contains
it, which is exact; a term with punctuation or spaces narrows the lines to
check, and the lines themselves decide.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from .text import TOKEN, index_text

LINE_BITS = 20
LINE_MASK = (1 << LINE_BITS) - 1
# Above this many vocabulary tokens, one OR expression is split into chunks.
OR_CHUNK = 400
# A token on at least this many index lines (at the last rebuild) is common: the
# vocabulary keeps its line count, and a term's common tokens are read apart from its
# rare ones (see :func:`expressions`).
COMMON_LINES = 4096
COMMON_CHUNK = 1
# FTS5's own default: how many segments of a level an edit merges.
AUTOMERGE = 4
RARE_CHUNK = 64


# The body index's tables, in rowid order: a rebuild's first part, then the part a
# worker built apart, which every edit writes into.
SHARDS = ("body_fts", "body_fts1")
LIVE = SHARDS[-1]
# FTS5's shadow tables of a contentless index without column sizes: all it stores.
SHADOWS = ("data", "idx", "config")


def shard_ddl(name: str) -> str:
    """The ``CREATE VIRTUAL TABLE`` of one body index table (both are alike)."""
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5("
        "text, tokenize='ascii', content='', detail='none', columnsize=0)"
    )


def create(conn: sqlite3.Connection) -> None:
    """Create the body index tables when missing."""
    for name in SHARDS:
        conn.execute(shard_ddl(name))
    conn.executescript("""
        CREATE TABLE IF NOT EXISTS body_vocab(id INTEGER PRIMARY KEY, term TEXT UNIQUE);
        CREATE TABLE IF NOT EXISTS body_vocab_blob(
            one INTEGER PRIMARY KEY CHECK (one = 1), upto INTEGER, terms TEXT,
            common TEXT);
    """)


def insert_row(name: str) -> str:
    """The INSERT of one index row into table ``name``."""
    return f"INSERT INTO {name}(rowid, text) VALUES(?, ?)"


INSERT_ROW = insert_row(SHARDS[0])
INSERT_LIVE = insert_row(LIVE)


def match_rowids(conn: sqlite3.Connection, expr: str) -> list[int]:
    """The rowids of the lines matching an FTS5 expression, ascending: each table's,
    fetched as one string (far cheaper than rows) and read by the JSON parser (twice
    as fast as splitting it)."""
    parts = []
    for name in SHARDS:
        joined = conn.execute(
            f"SELECT group_concat(rowid) FROM {name} WHERE {name} MATCH ?", (expr,)
        ).fetchone()[0]
        if joined:
            parts.append(joined)
    return json.loads("[" + ",".join(parts) + "]") if parts else []


def meta_int(conn: sqlite3.Connection, key: str) -> int:
    """An integer kept in the catalog's meta table (0 when absent)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return int(row[0]) if row else 0


def _set_meta(conn: sqlite3.Connection, key: str, value: int) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, str(value)))


def body_rows(body: str, gen: int, rows: list[tuple[int, str]]) -> int:
    """Append the index rows of one body version to ``rows``; returns how many."""
    base = gen << LINE_BITS
    count = 0
    for i, line in enumerate(index_text(body).split("\n")):
        if i > LINE_MASK:
            break
        if line and not line.isspace():
            rows.append((base | i, line))
            count += 1
    return count


def bulk_rows(body: str, gen: int, rowids: array[int], texts: list[str]) -> int:
    """:func:`body_rows` for a rebuild, in two columns: the rowids (64-bit integers) and
    the lines, which hold only letters, digits and spaces (so joined by newlines they
    split back as they were: :func:`bulk_payload`)."""
    base = gen << LINE_BITS
    lines = index_text(body).split("\n")
    if len(lines) > LINE_MASK + 1:
        del lines[LINE_MASK + 1 :]
    count = 0
    for i, line in enumerate(lines):
        if line and not line.isspace():
            rowids.append(base | i)
            texts.append(line)
            count += 1
    return count


def bulk_payload(rowids: array[int], texts: list[str]) -> tuple[bytes, str]:
    """A rebuild's body rows as they travel between processes: the rowids' bytes and
    the lines joined by newlines (both cheap to pickle and to split again)."""
    return rowids.tobytes(), "\n".join(texts)


def bulk_json(rowids: array[int], texts: list[str]) -> str:
    """:func:`bulk_rows`'s rows as one JSON array of ``[rowid, "line"]`` (the lines
    need no escaping)."""
    return "[" + ",".join(f'[{r},"{t}"]' for r, t in zip(rowids, texts, strict=True)) + "]"


def bulk_insert(
    conn: sqlite3.Connection, payload: tuple[bytes, str], insert: str = INSERT_ROW
) -> None:
    """Insert the rows of :func:`bulk_payload` (by ``executemany`` over the two columns:
    at 100,000 nodes a third less time than reading each row out of JSON in SQLite)."""
    rowids: array[int] = array("q")
    rowids.frombytes(payload[0])
    # FTS5 keeps the terms in memory until its hash is full (the build sets its size),
    # then writes them out as one segment: at 100,000 nodes about fifteen segments, not
    # one per batch (a savepoint per batch made 250, and the build 3-4 s slower).
    conn.executemany(insert, zip(rowids, payload[1].split("\n"), strict=True))


def clear(conn: sqlite3.Connection) -> None:
    """Empty the index (a rebuild)."""
    for name in SHARDS:
        conn.execute(f"INSERT INTO {name}({name}) VALUES('delete-all')")
    conn.execute("DELETE FROM body_vocab")
    conn.execute("DELETE FROM body_vocab_blob")
    _set_meta(conn, "body_garbage", 0)


def vocabulary_counts(conn: sqlite3.Connection, name: str) -> list[tuple[str, int]]:
    """Every token of one body index table with the number of its rows holding it."""
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.body_terms USING fts5vocab(main, {name}, 'row')"
    )
    try:
        return conn.execute("SELECT term, doc FROM temp.body_terms").fetchall()
    finally:
        conn.execute("DROP TABLE temp.body_terms")


def finish_bulk(
    conn: sqlite3.Connection, next_gen: int, counted: dict[str, list[tuple[str, int]]] | None = None
) -> None:
    """After a rebuild: the vocabulary, read back from the index itself (from each table,
    or as ``counted`` gives a table's counts already), and counters."""
    counted = counted or {}
    conn.execute("CREATE TEMP TABLE body_parts(term TEXT, doc INTEGER)")
    for name in SHARDS:
        rows = counted[name] if name in counted else vocabulary_counts(conn, name)
        conn.executemany("INSERT INTO temp.body_parts VALUES(?, ?)", rows)
    conn.execute(
        "CREATE TEMP TABLE body_counts AS SELECT term, sum(doc) AS doc "
        "FROM temp.body_parts GROUP BY term"
    )
    conn.execute("DROP TABLE temp.body_parts")
    conn.execute(
        "INSERT OR IGNORE INTO body_vocab(term) SELECT term FROM temp.body_counts ORDER BY term"
    )
    # The whole vocabulary as one text, so a fresh reader loads it in one read, and the
    # line counts of the common tokens.
    conn.execute(
        "INSERT OR REPLACE INTO body_vocab_blob VALUES(1, "
        "(SELECT coalesce(max(id), 0) FROM body_vocab), "
        "(SELECT group_concat(term, char(10)) FROM (SELECT term FROM body_vocab "
        "ORDER BY id)), "
        "(SELECT json_group_object(term, doc) FROM temp.body_counts WHERE doc >= ?))",
        (COMMON_LINES,),
    )
    conn.execute("DROP TABLE temp.body_counts")
    _set_meta(conn, "next_gen", next_gen)
    _set_meta(conn, "body_live", _live_lines(conn))
    _set_meta(conn, "vocab_gen", meta_int(conn, "vocab_gen") + 1)


class BodyWriter:
    """Adds body versions to the index inside an incremental catalog transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._next_gen: int | None = None
        self._garbage = 0
        self._added = 0
        self._vocab: set[str] = set()

    def _gen(self) -> int:
        if self._next_gen is None:
            self._next_gen = max(1, meta_int(self.conn, "next_gen"))
        gen = self._next_gen
        self._next_gen += 1
        return gen

    def add(self, body: str) -> tuple[int, int]:
        """Index one body; returns its ``gen`` and the number of rows written."""
        gen = self._gen()
        rows: list[tuple[int, str]] = []
        count = body_rows(body, gen, rows)
        self._added += count
        self.conn.executemany(INSERT_LIVE, rows)
        for _, line in rows:
            self._vocab.update(line.split())
        return gen, count

    def retire(self, rows: int) -> None:
        """Count the rows of a replaced body version as garbage."""
        self._garbage += rows

    def revive(self, rows: int) -> None:
        """A retired body version is live again (another node took it over)."""
        self._garbage -= rows

    def finish(self) -> None:
        """Write what is pending: new vocabulary and counters."""
        if self._vocab:
            self.conn.executemany(
                "INSERT OR IGNORE INTO body_vocab(term) VALUES(?)",
                ((t,) for t in sorted(self._vocab)),
            )
            self._vocab = set()
        if self._next_gen is not None:
            _set_meta(self.conn, "next_gen", self._next_gen)
        if self._garbage or self._added:
            conn = self.conn
            row = conn.execute("SELECT value FROM meta WHERE key='body_live'").fetchone()
            # Counted from the rows once (they already hold this transaction's bodies),
            # then kept up to date by each write.
            live = _live_lines(conn) if row is None else int(row[0]) + self._added - self._garbage
            _set_meta(conn, "body_live", live)
        if self._garbage:
            _set_meta(
                self.conn, "body_garbage", meta_int(self.conn, "body_garbage") + self._garbage
            )
        self._garbage = self._added = 0


def _live_lines(conn: sqlite3.Connection) -> int:
    """The index rows of every node's live body version, counted (a scan of nodes)."""
    return int(conn.execute("SELECT coalesce(sum(body_lines), 0) FROM nodes").fetchone()[0])


def _live_count(conn: sqlite3.Connection) -> int:
    """The live rows as the catalog keeps them (counted once where it does not yet)."""
    row = conn.execute("SELECT value FROM meta WHERE key='body_live'").fetchone()
    return int(row[0]) if row else _live_lines(conn)


def needs_compaction(conn: sqlite3.Connection) -> bool:
    """True when dead rows outnumber live ones (and are many): time to rebuild. Both
    counts are kept by the writers, so a fresh process asks two values, not every
    node."""
    garbage = meta_int(conn, "body_garbage")
    if garbage < 20_000:
        return False
    return garbage > _live_count(conn)


class Vocabulary:
    """The index's distinct tokens, held as one newline-joined string.

    Loaded incrementally (the table only grows between rebuilds), so a sniff
    after an edit reads just the new tokens.
    """

    def __init__(self) -> None:
        self._text = "\n"
        self._last = 0
        self._gen = -1
        self._common: dict[str, int] = {}

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Read tokens added since the last refresh (all of them after a rebuild)."""
        gen = meta_int(conn, "vocab_gen")
        if gen != self._gen:
            row = conn.execute("SELECT upto, terms, common FROM body_vocab_blob").fetchone()
            self._text = "\n" + (row[1] + "\n" if row and row[1] else "")
            self._last = row[0] if row else 0
            self._common = json.loads(row[2]) if row and row[2] else {}
            self._gen = gen
        new = conn.execute(
            "SELECT id, term FROM body_vocab WHERE id > ? ORDER BY id", (self._last,)
        ).fetchall()
        if new:
            self._text += "\n".join(t for _, t in new) + "\n"
            self._last = new[-1][0]

    def lines(self, token: str) -> int:
        """How many index lines held a common token at the last rebuild (0 for the rest,
        and for a token that became common since)."""
        return self._common.get(token, 0)

    def containing_all(self, tokens: Sequence[str]) -> list[str]:
        """Those of ``tokens`` that are in the vocabulary, as whole tokens."""
        return [t for t in tokens if "\n" + t + "\n" in self._text]

    def containing(self, part: str, *, prefix: bool = False, suffix: bool = False) -> list[str]:
        """Tokens containing ``part`` (starting with it, or ending with it, if asked)."""
        text = self._text
        out: list[str] = []
        if prefix and not suffix:
            # Only tokens starting with part: find it right after a newline.
            pos = text.find("\n" + part)
            while pos != -1:
                end = text.find("\n", pos + 1)
                out.append(text[pos + 1 : end])
                pos = text.find("\n" + part, end)
            return out
        pos = text.find(part)
        while pos != -1:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            ok = (not prefix or start == pos) and (not suffix or end == pos + len(part))
            if ok:
                out.append(text[start:end])
                pos = text.find(part, end)
            else:
                pos = text.find(part, pos + 1)
        return out


@dataclass
class TermPlan:
    """How the index answers one folded term.

    ``groups`` are lists of tokens: a line is a candidate when it holds a
    token of every group. ``exact`` means the candidates are the answer;
    otherwise each candidate line is checked against the literal term.
    """

    groups: list[list[str]]
    exact: bool


def plan(term: str, vocab: Vocabulary) -> TermPlan | None:
    """Plan a folded term; None when the index cannot answer it (non-ASCII, no tokens)."""
    if not term.isascii():
        return None
    runs = TOKEN.findall(term)
    if not runs:
        return None
    if len(runs) == 1 and runs[0] == term:
        return TermPlan([vocab.containing(term)], exact=True)
    starts_inside = term[0].isalnum()
    ends_inside = term[-1].isalnum()
    groups: list[list[str]] = []
    for i, run in enumerate(runs):
        first, last = i == 0, i == len(runs) - 1
        # A run bounded by punctuation inside the term is a whole token on that side.
        groups.append(
            vocab.containing(
                run, prefix=not first or not starts_inside, suffix=not last or not ends_inside
            )
        )
    return TermPlan(groups, exact=False)


def plan_forms(term: str, forms: Sequence[str], vocab: Vocabulary) -> TermPlan | None:
    """Plan a term searched with its word forms: a line holding the term (as a substring,
    as :func:`plan` does) or one of ``forms`` (whole tokens) is a hit."""
    tp = plan(term, vocab)
    if not forms or tp is None or not tp.exact:
        return tp
    known = set(vocab.containing_all(forms))
    return TermPlan([sorted(set(tp.groups[0]) | known)], exact=True)


def _quote(token: str) -> str:
    return '"' + token + '"'


def expressions(tp: TermPlan, vocab: Vocabulary | None = None) -> list[str]:
    """FTS5 MATCH expressions whose union is the term's candidate lines. With ``vocab``,
    a one-group term's common tokens are ORed apart from its rare ones (FTS5 steps every
    branch of an OR for each row it yields, so fifty rare tokens beside a common one
    would cost fifty times its rows)."""
    if any(not g for g in tp.groups):
        return []
    if len(tp.groups) == 1:
        toks = tp.groups[0]
        common = [t for t in toks if vocab.lines(t)] if vocab is not None else []
        if common and len(toks) > len(common):
            rare = [t for t in toks if not vocab.lines(t)]  # type: ignore[union-attr]
            return [
                " OR ".join(map(_quote, part))
                for part in (
                    *(common[i : i + COMMON_CHUNK] for i in range(0, len(common), COMMON_CHUNK)),
                    *(rare[i : i + RARE_CHUNK] for i in range(0, len(rare), RARE_CHUNK)),
                )
            ]
        return [
            " OR ".join(map(_quote, toks[i : i + OR_CHUNK])) for i in range(0, len(toks), OR_CHUNK)
        ]
    # Multi-run terms: AND of the groups, each group an OR (chunking the largest).
    groups = sorted(tp.groups, key=len)
    head, rest = groups[-1], groups[:-1]
    tail = " AND ".join("(" + " OR ".join(map(_quote, g[: OR_CHUNK * 4])) + ")" for g in rest)
    return [
        "(" + " OR ".join(map(_quote, head[i : i + OR_CHUNK])) + ") AND " + tail
        for i in range(0, len(head), OR_CHUNK)
    ]
