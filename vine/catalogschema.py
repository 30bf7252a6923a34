"""The catalog's SQLite schema: its version, its tables and triggers, the secondary
indexes a full rebuild drops and makes again, and locate's bm25 weights. The catalog
(:mod:`monkeyllm.catalog`) creates it and the builders (:mod:`monkeyllm.indexing`) fill
it; neither imports the other for it."""

from __future__ import annotations

import re

SCHEMA_VERSION = "8"
# bm25 weights per column: id (unindexed), title 4, aliases 3, tags 2, summary 1, section
# headers 0.5, then the stems of the title, of the aliases and tags, of the summary and of
# the headers at half their field's weight. A word matches its own field and its stem
# column, another form of it only the stem column: the exact form ranks above it.
LOCATE_RANK = "bm25(0, 4, 3, 2, 1, 0.5, 2, 1.25, 0.5, 0.25)"

INDEXES = """
CREATE INDEX IF NOT EXISTS nodes_parent ON nodes(parent);
CREATE INDEX IF NOT EXISTS nodes_type ON nodes(type, id);
CREATE INDEX IF NOT EXISTS nodes_created ON nodes(created);
CREATE INDEX IF NOT EXISTS nodes_updated ON nodes(updated);
CREATE INDEX IF NOT EXISTS nodes_gen ON nodes(body_gen, id);
CREATE INDEX IF NOT EXISTS nodes_census ON nodes(id, kind, type, source, created, updated,
    origin);
CREATE INDEX IF NOT EXISTS nodes_source ON nodes(source, id);
CREATE INDEX IF NOT EXISTS nodes_stale ON nodes(stale) WHERE stale = 1;
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE INDEX IF NOT EXISTS edges_succession ON edges(dst, rel, src)
    WHERE rel IN ('supersedes', 'succeeds');
CREATE INDEX IF NOT EXISTS listings_listed ON listings(listed);
"""
# The secondary indexes by name: a full rebuild drops them and makes them again once the
# rows are in (one sort each, instead of a tree insert per row).
INDEX_NAMES = tuple(re.findall(r"CREATE INDEX IF NOT EXISTS (\w+)", INDEXES))

DDL = (
    """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,
    error TEXT);
CREATE TABLE IF NOT EXISTS nodes(
    id TEXT PRIMARY KEY, kind TEXT, type TEXT, title TEXT, summary TEXT,
    tags TEXT DEFAULT '[]', aliases TEXT DEFAULT '[]', created TEXT, updated TEXT,
    confidence REAL DEFAULT 1.0, source TEXT, entity_kind TEXT, payload TEXT,
    payload_type TEXT, payload_hash TEXT, parent TEXT, trail TEXT, coverage TEXT,
    body_tokens INTEGER, outline TEXT, stale INTEGER DEFAULT 0, body_hash TEXT DEFAULT '',
    origin TEXT, body_gen INTEGER, body_lines INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS edges(src TEXT, rel TEXT, dst TEXT, confidence REAL DEFAULT 1.0,
    ord INTEGER, PRIMARY KEY(src, rel, dst));
CREATE TABLE IF NOT EXISTS moves(old_id TEXT PRIMARY KEY, new_id TEXT);
CREATE TABLE IF NOT EXISTS listings(branch TEXT, listed TEXT, PRIMARY KEY(branch, listed));
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
    id UNINDEXED, title, aliases, tags, summary, headers, title_stems, label_stems,
    summary_stems, header_stems, tokenize="unicode61 remove_diacritics 2");
"""
    + INDEXES
    + "".join(
        f"""
CREATE TRIGGER IF NOT EXISTS files_{verb.lower()} AFTER {verb} ON files BEGIN
    INSERT INTO meta VALUES('files_gen', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1;
END;"""
        for verb in ("INSERT", "UPDATE", "DELETE")
    )
)


def index_statements() -> list[str]:
    """The ``CREATE INDEX`` statements of the catalog's secondary indexes."""
    return [stmt.strip() + ";" for stmt in INDEXES.split(";") if stmt.strip()]
