"""The part of the body index a build worker writes apart (:data:`bodyindex.LIVE`).

A rebuild's worker process inserts the body lines of the last batches it parses into
an FTS5 table of its own, in a database file beside the catalog, merges it and counts
its vocabulary there, while the building process writes the rest of the catalog; the
building process then copies that table's shadow tables into the catalog's
(:func:`install`), inside the build's one transaction. Both tables are declared alike
(:func:`bodyindex.shard_ddl`) by the same SQLite library, so the copied rows are the
index FTS5 itself wrote: its data, its term index and its configuration.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from . import bodyindex

# The worker's database, beside the catalog (removed once copied in, or by the next build).
NAME = "catalog.part.db"
# FTS5's own default: how many segments of a level make an edit merge them at once.
CRISISMERGE = 16
# A build's body index: no merge at all until its one merge at the end (FTS5 takes
# values up to 2,000; a rebuild of 100,000 nodes writes about fifteen segments).
BUILD_CRISISMERGE = 1999
# Bytes of body index terms held in memory before FTS5 writes them out as a segment.
HASHSIZE = 16 << 20


def prepare(conn: sqlite3.Connection, name: str, hashsize: int = HASHSIZE) -> None:
    """Set a body index table up for a build: a large hash, and no merging until the
    build merges it once (:func:`settle`)."""
    conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('hashsize', ?)", (hashsize,))
    conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('automerge', 0)")
    # Nor when a level fills up: by default the sixteenth segment of a level has an
    # insert merge the level's sixteen into one at the next level, then again at the
    # next, so the rows of a 100k build were written three times and its one merge at
    # the end left 230 MB of free pages behind.
    conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('crisismerge', ?)", (BUILD_CRISISMERGE,))


def settle(conn: sqlite3.Connection, name: str) -> None:
    """After a build: merge the table into one segment and let edits merge it as FTS5
    does by default again."""
    conn.execute(f"INSERT INTO {name}({name}) VALUES('optimize')")
    conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('automerge', ?)", (bodyindex.AUTOMERGE,))
    conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('crisismerge', ?)", (CRISISMERGE,))


def remove(path: str | Path) -> None:
    """Delete a worker's database (and what SQLite may have left beside it), as far as
    it can be: what cannot be removed cannot be written either, and the worker that
    fails to write there leaves its lines to the building process."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except OSError:
            pass


class Writer:
    """The worker's side: the table :data:`bodyindex.LIVE` in a database of its own,
    written without a journal in one transaction (a file left by a worker that died is
    never read: the build that started it copies only what :meth:`finish` closed).

    While the worker parses, its lines wait in a plain table (:meth:`add`: a quarter of
    what indexing them costs, and no memory held); :meth:`finish` indexes them once every
    batch is answered, while the building process merges its own part."""

    def __init__(self, path: str, hashsize: int = HASHSIZE) -> None:
        remove(path)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        conn = self.conn
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA cache_size=-32768")
        conn.execute(bodyindex.shard_ddl(bodyindex.LIVE))
        conn.execute("CREATE TABLE waiting(rowid INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("BEGIN")
        prepare(conn, bodyindex.LIVE, hashsize)

    def add(self, payload: tuple[bytes, str]) -> None:
        """Keep one batch's rows (:func:`bodyindex.bulk_payload`) for :meth:`finish`."""
        bodyindex.bulk_insert(self.conn, payload, "INSERT INTO waiting VALUES(?, ?)")

    def finish(self) -> list[tuple[str, int]]:
        """Index the rows, merge the table, commit and close; returns its vocabulary with
        each token's row count (what :func:`bodyindex.finish_bulk` needs of it)."""
        conn = self.conn
        name = bodyindex.LIVE
        conn.execute(f"INSERT INTO {name}(rowid, text) SELECT rowid, text FROM waiting")
        conn.execute("DROP TABLE waiting")
        settle(conn, name)
        counts = bodyindex.vocabulary_counts(conn, name)
        conn.execute("COMMIT")
        conn.close()
        return counts


def install(conn: sqlite3.Connection, path: str | Path) -> None:
    """Replace the catalog's :data:`bodyindex.LIVE` table by the one a worker wrote at
    ``path``, inside the caller's transaction.

    The table is dropped and declared again first, so this connection's FTS5 object for
    it is a new one that has read nothing yet (FTS5 keeps a table's structure in memory
    between statements); other connections read the new rows after the commit, as after
    any write by another connection.
    """
    name = bodyindex.LIVE
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute(bodyindex.shard_ddl(name))
        for shadow in bodyindex.SHADOWS:
            table = f"{name}_{shadow}"
            rows = source.execute(f"SELECT * FROM {table}")
            marks = ", ".join("?" for _ in rows.description)
            conn.execute(f"DELETE FROM {table}")
            conn.executemany(f"INSERT INTO {table} VALUES({marks})", rows)
    finally:
        source.close()
