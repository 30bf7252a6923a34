"""Dataset payloads: finding, opening read-only, and mapping a SQLite file."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

from .errors import NotFound, QueryForbidden, VineError
from .ids import PRIVATE_DIRS

# How a Query manual shows a statement: an inline code span (of any number of
# backticks), a fenced block, or a list item that is the bare statement itself.
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+(?:[^`:]{1,80}?(?::|\s[—–-])\s+)?"
    r"((?:SELECT|WITH)\s.*)$"
)
_STATEMENT = re.compile(r"^(?:SELECT|WITH)\b", re.IGNORECASE)


def payload_path(root: Path, node_id: str, payload: str | None) -> Path:
    """The local file of a dataset payload, checked to stay inside the forest."""
    if not payload:
        raise QueryForbidden(f"{node_id} has no payload", hint="Only datasets can be queried.")
    if "://" in payload:
        raise QueryForbidden(
            f"{node_id}: remote payloads ({payload.split('://')[0]}://) are "
            "not served by this engine"
        )
    folder = os.path.dirname(node_id)
    full = os.path.realpath(os.path.join(root, folder, payload))
    base = str(root)  # resolved when the Vine opened
    if not full.startswith(base + os.sep):
        raise NotFound(f"payload of {node_id} escapes the forest")
    first = os.path.relpath(full, base).split(os.sep)[0]
    if first in PRIVATE_DIRS:
        raise NotFound(f"payload of {node_id} is inside the engine's private {first}/")
    return Path(full)


def open_readonly(path: Path, node_id: str) -> sqlite3.Connection:
    """Open a payload read-only (SQLite enforces it), or ``E_NOT_FOUND``."""
    if not path.is_file():
        raise NotFound(
            f"payload of {node_id} is missing: {path.name}",
            hint="The dataset's .db file is not in the forest; `vine validate` "
            "reports missing payloads.",
        )
    uri = "file:" + _uri_path(path) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only=1")
    return conn


def _uri_path(path: Path) -> str:
    return str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")


def tables(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Every table (views excluded) with its columns, in sqlite_master order."""
    out: dict[str, list[str]] = {}
    for name in tables_of(conn):
        out[name] = [r[1] for r in conn.execute(f'PRAGMA table_info("{_ident(name)}")')]
    return out


def _ident(name: str) -> str:
    return name.replace('"', '""')


def cell(value: Any) -> Any:
    """A SQLite value as JSON: BLOBs become ``<blob N bytes>``."""
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<blob {len(bytes(value))} bytes>"
    return value


def sample(conn: sqlite3.Connection, table: str, n: int) -> dict[str, Any]:
    """The first ``n`` rows of a table, columnar."""
    cur = conn.execute(f'SELECT * FROM "{_ident(table)}" LIMIT {int(n)}')
    columns = [d[0] for d in cur.description]
    return {"columns": columns, "rows": [[cell(v) for v in row] for row in cur.fetchall()]}


_MANUAL_TABLE = re.compile(r"^\s*[-*+]\s+`([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.MULTILINE)


def manual_tables(manual: str) -> list[str]:
    """The tables a Query manual's ``Tables:`` list names (``- `t(col TYPE, ...)` ``)."""
    return list(dict.fromkeys(m.group(1) for m in _MANUAL_TABLE.finditer(manual)))


def damage(path: Path, tables: list[str]) -> str | None:
    """Why the SQLite file at ``path`` cannot be trusted, or None when it is sound.

    Checks what a hash cannot: the file's length against the page count its header
    records (bytes appended or cut off), an unsettled write beside it (a hot journal,
    WAL frames), SQLite's ``quick_check``, and that every table the Query manual names
    is there.
    """
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
        size = os.path.getsize(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return "not a SQLite database (no SQLite header)"
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    counted = header[24:28] == header[92:96] and pages > 0
    for suffix in ("-journal", "-wal"):
        side = Path(str(path) + suffix)
        if side.is_file() and side.stat().st_size > 0:
            return (
                f"an unfinished write is beside it ({side.name}); open and close it "
                "with sqlite3 to settle it"
            )
    if page < 512 or page & (page - 1):
        return f"its header gives an impossible page size ({page})"
    if counted and size != pages * page:
        return (
            f"it is {size} bytes, but its header counts {pages} pages of {page} "
            f"({pages * page} bytes): bytes were added or cut off"
        )
    if size % page:
        return f"it is {size} bytes, not a whole number of {page}-byte pages"
    try:
        conn = open_readonly(path, path.stem)
        try:
            verdict = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
            have = set(tables_of(conn))
        finally:
            conn.close()
    except (sqlite3.Error, VineError) as exc:
        return f"SQLite cannot read it ({exc})"
    if verdict != ["ok"]:
        return "SQLite's quick_check fails: " + "; ".join(map(str, verdict))
    gone = [t for t in tables if t not in have]
    if gone:
        noun = "a table" if len(gone) == 1 else "tables"
        return f"the Query manual names {noun} it does not hold: " + ", ".join(gone)
    return None


def tables_of(conn: sqlite3.Connection) -> list[str]:
    """The names of the tables (views excluded) of a SQLite file."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid"
        )
    ]


def example_queries(manual: str, n: int = 3) -> list[str]:
    """The first ``n`` SELECT (or WITH) statements a Query manual shows, in the forms
    people and engines write: an inline code span anywhere on a line (a bare bullet,
    ``- Total by region: `SELECT ...` ``, a numbered item), a fenced code block (each
    statement of it, split at ``;``), or a list item that is the statement unquoted."""
    found: list[str] = []
    fence: str | None = None
    block: list[str] = []
    for line in manual.split("\n"):
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                found += _statements("\n".join(block))
                fence, block = None, []
            else:
                block.append(line)
            continue
        if marker:
            fence = marker.group(1)
            continue
        spans = [m.group(2).strip() for m in _SPAN.finditer(line)]
        if spans:
            found += [s for s in spans if _STATEMENT.match(s)]
            continue
        item = _ITEM.match(line)
        if item:
            found.append(item.group(1).strip().rstrip(";").rstrip())
    if fence is not None:
        found += _statements("\n".join(block))
    return list(dict.fromkeys(q for q in found if q))[:n]


def _statements(code: str) -> list[str]:
    """The SELECT/WITH statements of a code block: split at a ``;`` ending a line, or
    at a blank line between statements."""
    out = []
    for chunk in re.split(r";[ \t]*(?:\n|$)|\n[ \t]*\n", code):
        text = chunk.strip().rstrip(";").rstrip()
        lines = [ln for ln in text.split("\n") if not ln.lstrip().startswith("--")]
        text = "\n".join(lines).strip()
        if _STATEMENT.match(text):
            out.append(text)
    return out


class PayloadPool:
    """Read-only payload connections kept open, one per thread and file.

    A warm connection keeps SQLite's page cache, so a repeated aggregate costs what
    the statement costs. A file replaced under us (another inode) is reopened;
    changes written into the same file are seen, as SQLite checks on every read.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def get(self, path: Path, node_id: str) -> tuple[sqlite3.Connection, Any]:
        """A guarded read-only connection to ``path`` and its per-connection state."""
        pool: dict[str, tuple[int, sqlite3.Connection, Any]] = self._local.__dict__.setdefault(
            "conns", {}
        )
        try:
            inode = os.stat(path).st_ino
        except OSError:
            inode = -1
        key = str(path)
        held = pool.get(key)
        if held is not None and held[0] == inode:
            return held[1], held[2]
        if held is not None:
            held[1].close()
        from . import sqlguard

        conn = open_readonly(path, node_id)
        state = sqlguard.guard_connection(conn, allow_writes=False)
        pool[key] = (inode, conn, state)
        with self._lock:
            self._all.append(conn)
        return conn, state

    def close(self) -> None:
        """Close every connection of every thread."""
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all = []
        self._local = threading.local()
