"""Turning node files into catalog rows: one file at a time (:class:`Writer`) or a
whole forest at once (:class:`BulkBuilder`)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, get_args

from . import bodyindex
from .argtypes import ScanField
from .budget import tokens
from .ids import id_of, is_index, parent_of, trail_of
from .kinds import kind_of
from .nodes import Node, ParseError, meta_str, parse_bytes
from .reads import topk
from .stems import node_languages, stem_text
from .watch import Stat


class Catalog(Protocol):
    """What the writers need of a catalog (:class:`monkeyllm.catalog.Catalog`): its open
    connection and the forest's root. Named here, so this module never imports the
    catalog that imports it."""

    root: Path

    @property
    def conn(self) -> sqlite3.Connection: ...


# How much of a body tells its language (with its title and summary).
LANGUAGE_SAMPLE = 400
# A node's row in the catalog: every field scan answers (heat lives apart, in the heat
# table), then what only the engine keeps.
NODE_COLUMNS: tuple[str, ...] = (
    *(field for field in get_args(ScanField) if field != "heat"),
    "payload",
    "payload_hash",
    "body_hash",
    "body_gen",
    "body_lines",
    "stale",
)


# ``json.dumps(value, ensure_ascii=False)`` without making an encoder per call (a build
# encodes three lists per node).
_json = json.JSONEncoder(ensure_ascii=False).encode


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | int | float):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and not isinstance(v, dict | list)]
    return []


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 1.0
    return float(value)


def clean_target(value: Any) -> str | None:
    """A link target as an id (``.md`` and slashes trimmed), or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    target = value.strip().strip("/")
    return target[:-3] if target.endswith(".md") else target


@dataclass
class Record:
    """Everything the catalog stores about one parsed node, ready for SQL."""

    values: dict[str, Any]
    fts: tuple[Any, ...]
    edges: list[tuple[str, str, str, float, int]]
    moves: list[tuple[str, str]]
    listings: list[tuple[str, str]]


def record(node: Node, gen: int, lines: int, body_hash: str) -> Record:
    """The rows of one node (``fts`` lacks its leading rowid)."""
    meta = node.meta
    node_id = node.id
    ntype = meta_str(meta.get("type")) or ("branch" if is_index(node_id) else "note")
    tags = _str_list(meta.get("tags"))
    aliases = _str_list(meta.get("aliases"))
    outline = node.outline
    values = {
        "id": node_id,
        "kind": kind_of(ntype),
        "type": ntype,
        "title": node.title,
        "summary": node.summary,
        "tags": _json(tags),
        "aliases": _json(aliases),
        "created": meta_str(meta.get("created")),
        "updated": meta_str(meta.get("updated")),
        "confidence": _confidence(meta.get("confidence", 1.0)),
        "source": meta_str(meta.get("source")),
        "entity_kind": meta_str(meta.get("entity_kind")),
        "payload": meta_str(meta.get("payload")),
        "payload_type": meta_str(meta.get("payload_type")),
        "payload_hash": meta_str(meta.get("payload_hash")),
        "parent": parent_of(node_id),
        "trail": json.dumps(trail_of(node_id)),
        "coverage": meta_str(meta.get("coverage")),
        "body_tokens": tokens(node.body),
        "outline": _json(outline),
        "body_hash": body_hash,
        "origin": meta_str(meta.get("origin")),
        "body_gen": gen,
        "body_lines": lines,
        # Every upsert asks the Canopy to look at the node again (it re-embeds only
        # when the text it embeds changed).
        "stale": 1,
    }
    headers = " ; ".join(outline)
    langs = node_languages(
        f"{values['title']} {values['summary']}", lambda: node.body[:LANGUAGE_SAMPLE]
    )
    fts = (
        node_id,
        values["title"],
        " ".join(aliases),
        " ".join(tags),
        values["summary"],
        headers,
        stem_text(str(values["title"] or ""), langs),
        stem_text(" ".join(aliases + tags), langs),
        stem_text(str(values["summary"] or ""), langs),
        stem_text(headers, langs),
    )
    moves = [
        (old_id, node_id) for old_id in _str_list(meta.get("moved_from")) if clean_target(old_id)
    ]
    listings = []
    if values["kind"] == "branch":
        listings = [(node_id, listed) for listed in dict.fromkeys(_ENTRY.findall(node.body))]
    return Record(values, fts, list(_edges(node_id, meta.get("links"))), moves, listings)


def body_hash(node: Node) -> str:
    """The hash that tells whether a body changed (and needs re-indexing)."""
    return hashlib.sha256(node.body.encode("utf-8", "surrogatepass")).hexdigest()


def read_bytes(path: str, size: int = 0) -> bytes:
    """A whole file's bytes, read in one call when it has at most ``size`` bytes (the
    size a walk saw): a quarter of what ``open`` and ``read`` cost, which a build pays
    once per file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(fd, size + 1 if size > 0 else 65536)]
        while chunks[-1]:
            chunks.append(os.read(fd, 65536))
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_node(root: Path | str, path: str, size: int = 0) -> Node | str:
    """Parse one file (of ``size`` bytes, if known), or say why it is not a node."""
    node_id = id_of(path)
    try:
        return parse_bytes(node_id, read_bytes(os.path.join(root, path), size))
    except ParseError as exc:
        return str(exc)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


_NODE_INSERT_COLS = ("rowid", *NODE_COLUMNS)
_UPSERT_NODE = (
    f"INSERT INTO nodes({', '.join(NODE_COLUMNS)}) "
    f"VALUES({', '.join('?' for _ in NODE_COLUMNS)}) ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{c}=excluded.{c}" for c in NODE_COLUMNS[1:])
)
FTS_COLUMNS = (
    "rowid",
    "id",
    "title",
    "aliases",
    "tags",
    "summary",
    "headers",
    "title_stems",
    "label_stems",
    "summary_stems",
    "header_stems",
)
_INSERT_FTS = (
    f"INSERT INTO nodes_fts({', '.join(FTS_COLUMNS)}) VALUES({', '.join('?' for _ in FTS_COLUMNS)})"
)
_INSERT_EDGE = "INSERT OR IGNORE INTO edges(src, rel, dst, confidence, ord) VALUES(?,?,?,?,?)"
_INSERT_MOVE = "INSERT OR REPLACE INTO moves VALUES(?,?)"
_INSERT_LISTING = "INSERT OR IGNORE INTO listings VALUES(?,?)"


# An index entry line, "- [[id]] ..." or "- [[id|text]] ...": the id it lists.
_ENTRY = re.compile(r"^- \[\[([^\]|#]+)", re.MULTILINE)
_INSERT_FILE = "INSERT OR REPLACE INTO files VALUES(?,?,?,?)"


# A rebuild's tables: the INSERT verb and the columns of each.
_BULK_TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "nodes": ("INSERT INTO nodes", _NODE_INSERT_COLS),
    "fts": ("INSERT INTO nodes_fts", FTS_COLUMNS),
    "edges": ("INSERT OR IGNORE INTO edges", ("src", "rel", "dst", "confidence", "ord")),
    "moves": ("INSERT OR REPLACE INTO moves", ("old_id", "new_id")),
    "files": ("INSERT OR REPLACE INTO files", ("path", "mtime_ns", "size", "error")),
    "listings": ("INSERT OR IGNORE INTO listings", ("branch", "listed")),
}


def _one_row(verb_table: str, columns: tuple[str, ...]) -> str:
    """An INSERT of one row, run by ``executemany`` over a batch of row tuples (pickled
    from the parsing processes). Reading rows back from JSON in SQLite parses a row once
    per column (``value ->> i``): a node's 23 columns cost 85 µs a row."""
    return f"{verb_table}({', '.join(columns)}) VALUES({', '.join('?' for _ in columns)})"


def _from_json(verb_table: str, columns: tuple[str, ...]) -> str:
    """An INSERT that reads a whole batch from one JSON array of rows: one bound
    parameter, so SQLite runs the batch without the GIL while this process parses the
    next (a rebuild without worker processes)."""
    picks = ", ".join(f"value ->> {i}" for i in range(len(columns)))
    return f"{verb_table}({', '.join(columns)}) SELECT {picks} FROM json_each(?)"


class Writer:
    """An incremental catalog write transaction (a context manager)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.conn = catalog.conn
        self.body = bodyindex.BodyWriter(self.conn)
        # A body dropped in this transaction, by hash, and the nodes whose live body
        # version another node took over: a node moved to a new id (a transplant, a
        # rename by hand) keeps its body's index rows instead of indexing them again.
        self._dropped: dict[str, tuple[int, int]] = {}
        self._adopted: set[str] = set()
        # Rows of the metadata index written or removed (what locate's bounds allow for).
        self.edits = 0

    def __enter__(self) -> Writer:
        self.conn.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.conn.rollback()
            return
        self.body.finish()
        if self.edits:
            topk.count_edits(self.conn, self.edits)
        self.conn.commit()

    def upsert_path(self, path: str, stat: Stat) -> None:
        """Read, parse and index one file (or record why it cannot be)."""
        node = read_node(self.catalog.root, path)
        if isinstance(node, str):
            self.drop(path, id_of(path))
            self.conn.execute(_INSERT_FILE, (path, stat[0], stat[1], node))
            return
        self.upsert_node(node)
        self.conn.execute(_INSERT_FILE, (path, stat[0], stat[1], None))

    def drop(self, path: str, node_id: str) -> None:
        """Remove a node and its file record."""
        conn = self.conn
        row = conn.execute(
            "SELECT rowid, body_lines, body_hash, body_gen FROM nodes WHERE id=?", (node_id,)
        ).fetchone()
        if row is not None:
            conn.execute("DELETE FROM nodes_fts WHERE rowid=?", (row[0],))
            conn.execute("DELETE FROM nodes WHERE id=?", (node_id,))
            self.edits += 1
            if node_id in self._adopted:
                self._adopted.discard(node_id)
            else:
                self.body.retire(row[1] or 0)
                if row[2]:
                    self._dropped[row[2]] = (row[3], row[1] or 0)
        conn.execute("DELETE FROM edges WHERE src=?", (node_id,))
        conn.execute("DELETE FROM moves WHERE new_id=?", (node_id,))
        conn.execute("DELETE FROM listings WHERE branch=?", (node_id,))
        conn.execute("DELETE FROM files WHERE path=?", (path,))

    def upsert_node(self, node: Node) -> None:
        """Index a parsed node: its row, metadata FTS, edges, moves and body lines."""
        conn = self.conn
        digest = body_hash(node)
        old = conn.execute(
            "SELECT rowid, body_hash, body_gen, body_lines FROM nodes WHERE id=?", (node.id,)
        ).fetchone()
        if old is not None and old[1] == digest:
            gen, lines = old[2], old[3]
        elif old is None and (moved := self._moved_body(node, digest)) is not None:
            gen, lines = moved
        else:
            if old is not None:
                self.body.retire(old[3] or 0)
            gen, lines = self.body.add(node.body)
        rec = record(node, gen, lines, digest)
        conn.execute(_UPSERT_NODE, [rec.values[c] for c in NODE_COLUMNS])
        rowid = (
            old[0]
            if old is not None
            else conn.execute("SELECT rowid FROM nodes WHERE id=?", (node.id,)).fetchone()[0]
        )
        if old is not None:
            conn.execute("DELETE FROM nodes_fts WHERE rowid=?", (rowid,))
        conn.execute(_INSERT_FTS, (rowid, *rec.fts))
        self.edits += 1
        conn.execute("DELETE FROM edges WHERE src=?", (node.id,))
        conn.execute("DELETE FROM moves WHERE new_id=?", (node.id,))
        conn.execute("DELETE FROM listings WHERE branch=?", (node.id,))
        conn.executemany(_INSERT_EDGE, rec.edges)
        conn.executemany(_INSERT_MOVE, rec.moves)
        conn.executemany(_INSERT_LISTING, rec.listings)

    def _moved_body(self, node: Node, digest: str) -> tuple[int, int] | None:
        """The live body version of the node this one moved from, when its body is the
        same: dropped earlier in this transaction, or still indexed under the old id
        its waymark names (that row's drop then leaves the version live)."""
        if digest in self._dropped:
            gen, lines = self._dropped.pop(digest)
            self.body.revive(lines)
            return gen, lines
        for old_id in reversed(_str_list(node.meta.get("moved_from"))):
            row = self.conn.execute(
                "SELECT body_hash, body_gen, body_lines FROM nodes WHERE id=?", (old_id,)
            ).fetchone()
            if row is not None and row[0] == digest:
                self._adopted.add(old_id)
                return row[1], row[2] or 0
        return None


def parse_batch(
    root: str, first_gen: int, items: list[tuple[int, str, int, int]], *, as_json: bool = False
) -> list[tuple[str, Any]]:
    """The rebuild's rows of some files, as ``(table, payload)`` pairs: a list of row
    tuples for each catalog table, the two columns of :func:`bodyindex.bulk_payload`
    for the body index (``"lines"``); with ``as_json``, each payload is one JSON array
    of rows instead (for :data:`BULK_JSON`).

    ``items`` are ``(rowid, path, mtime_ns, size)``; a node's body version is
    ``first_gen + rowid - 1``, so batches parsed apart (in other processes) number
    their rows as one pass over the sorted files would. The body index's rows, nine in
    ten of a rebuild's, come back as one text and one bytes object.
    """
    nodes, fts, edges, moves, listings = [], [], [], [], []
    files: list[tuple[str, int, int, str | None]] = []
    rowids: array[int] = array("q")
    texts: list[str] = []
    for rowid, path, mtime, size in items:
        node = read_node(root, path, size)
        if isinstance(node, str):
            files.append((path, mtime, size, node))
            continue
        gen = first_gen + rowid - 1
        count = bodyindex.bulk_rows(node.body, gen, rowids, texts)
        rec = record(node, gen, count, body_hash(node))
        nodes.append((rowid, *[rec.values[c] for c in NODE_COLUMNS]))
        fts.append((rowid, *rec.fts))
        edges.extend(rec.edges)
        moves.extend(rec.moves)
        listings.extend(rec.listings)
        files.append((path, mtime, size, None))
    tables: list[tuple[str, list[Any]]] = [
        ("nodes", nodes),
        ("fts", fts),
        ("edges", edges),
        ("moves", moves),
        ("files", files),
        ("listings", listings),
    ]
    if as_json:
        batch: list[tuple[str, Any]] = [
            (table, json.dumps(rows, ensure_ascii=False)) for table, rows in tables if rows
        ]
        if texts:
            batch.append(("lines", bodyindex.bulk_json(rowids, texts)))
        return batch
    batch = [(table, rows) for table, rows in tables if rows]
    if texts:
        batch.append(("lines", bodyindex.bulk_payload(rowids, texts)))
    return batch


BULK = {table: _one_row(*spec) for table, spec in _BULK_TABLES.items()}
BULK_JSON = {table: _from_json(*spec) for table, spec in _BULK_TABLES.items()}
BULK_JSON["lines"] = _from_json("INSERT INTO body_fts", ("rowid", "text"))


# Below this many files a rebuild takes a second or two, less than starting processes.
PARALLEL_FILES = 5000


def _edges(node_id: str, links: Any) -> Iterator[tuple[str, str, str, float, int]]:
    if not isinstance(links, list):
        return
    for order, link in enumerate(links):
        if not isinstance(link, dict):
            continue
        rel = link.get("rel")
        target = clean_target(link.get("target"))
        if isinstance(rel, str) and rel.strip() and target:
            yield node_id, rel.strip(), target, _confidence(link.get("confidence", 1.0)), order
