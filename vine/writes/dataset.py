"""Datasets declared as data: schema checks, the SQLite birth, and the generated manual."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path
from typing import Any

from ..datasets import tables_of
from ..errors import SchemaError, refused_write

NAME = re.compile(r"^[a-z_][a-z0-9_]{0,63}$")
TYPES = ("TEXT", "INTEGER", "REAL", "BLOB")
MAX_TABLES, MAX_COLUMNS = 10, 50
MANUAL_WIDE = 12  # columns past which SELECT * is not offered
SAMPLE_TABLES, SAMPLE_COLUMNS, SAMPLE_ROWS, CELL_CHARS = 20, 12, 3, 120


def check_schema(schema: Any, rows: Any) -> dict[str, dict[str, Any]]:
    """Validate a declared schema (and initial rows); every failure is ``E_SCHEMA``."""
    if not isinstance(schema, dict) or not 1 <= len(schema) <= MAX_TABLES:
        raise SchemaError(f"schema: 1 to {MAX_TABLES} tables are required")
    clean: dict[str, dict[str, Any]] = {}
    for table, spec in schema.items():
        if not isinstance(table, str) or not NAME.match(table):
            raise SchemaError(
                f"schema: table name {table!r} must match ^[a-z_][a-z0-9_]*$ "
                "(at most 64 characters)"
            )
        if not isinstance(spec, dict) or not isinstance(spec.get("columns"), dict):
            raise SchemaError(f"schema: table {table} needs columns as {{name: TYPE}}")
        columns = spec["columns"]
        if not 1 <= len(columns) <= MAX_COLUMNS:
            raise SchemaError(f"schema: table {table} needs 1 to {MAX_COLUMNS} columns")
        typed = {}
        for column, ctype in columns.items():
            if not isinstance(column, str) or not NAME.match(column):
                raise SchemaError(
                    f"schema: column name {column!r} in {table} must match "
                    "^[a-z_][a-z0-9_]*$ (at most 64 characters)"
                )
            if not isinstance(ctype, str) or ctype.upper() not in TYPES:
                raise SchemaError(
                    f"schema: column {table}.{column} has type {ctype!r}; "
                    "types are TEXT, INTEGER, REAL, BLOB"
                )
            typed[column] = ctype.upper()
        key = spec.get("primary_key", [])
        if not isinstance(key, list) or any(k not in typed for k in key):
            raise SchemaError(f"schema: primary_key of {table} may only name its columns")
        unknown = set(spec) - {"columns", "primary_key"}
        if unknown:
            raise SchemaError(f"schema: table {table} has unknown keys {sorted(unknown)}")
        clean[table] = {"columns": typed, "primary_key": list(key)}
    if rows is not None:
        if not isinstance(rows, dict):
            raise SchemaError("rows: {table: [[value, ...], ...]} is required")
        for table, values in rows.items():
            if table not in clean:
                raise SchemaError(f"rows: table {table!r} is not declared in schema")
            width = len(clean[table]["columns"])
            if not isinstance(values, list) or any(
                not isinstance(r, list) or len(r) != width for r in values
            ):
                raise SchemaError(f"rows: every row of {table} needs exactly {width} values")
    return clean


def ddl(table: str, spec: dict[str, Any]) -> str:
    """The CREATE TABLE statement of one declared table."""
    cols = [f"{c} {t}" for c, t in spec["columns"].items()]
    if spec["primary_key"]:
        cols.append(f"PRIMARY KEY ({', '.join(spec['primary_key'])})")
    return f"CREATE TABLE {table} ({', '.join(cols)})"


def birth(path: Path, schema: dict[str, dict[str, Any]], rows: dict[str, list[Any]] | None) -> str:
    """Create the payload, load the rows with placeholders; returns its sha256.

    The file must not exist; on any SQLite error it is deleted and ``E_SCHEMA`` raised.
    """
    try:
        fd = path.open("xb")
    except FileExistsError:
        raise SchemaError(
            f"payload {path.name} already exists; a newborn dataset never overwrites a payload"
        ) from None
    fd.close()
    try:
        conn = sqlite3.connect(path)
        try:
            with conn:
                for table, spec in schema.items():
                    conn.execute(ddl(table, spec))
                for table, values in (rows or {}).items():
                    marks = ", ".join("?" for _ in schema[table]["columns"])
                    conn.executemany(f"INSERT INTO {table} VALUES ({marks})", values)
        finally:
            conn.close()
    except (sqlite3.Error, OverflowError, TypeError, ValueError) as exc:
        path.unlink(missing_ok=True)
        raise refused_write(exc) or SchemaError(f"could not create the dataset: {exc}") from None
    return sha256_of(path)


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<blob {len(bytes(value))} bytes>"
    text = " ".join(str(value).split())
    if len(text) > CELL_CHARS:
        text = text[:CELL_CHARS] + "…"
    return text.replace("|", "\\|")


def manual(path: Path, *, with_samples: bool) -> str:
    """The generated ``## Query manual`` (and ``## Sample rows``) of a payload."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = tables_of(conn)
        columns = {
            t: [(r[1], r[2]) for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in tables
        }
        lines = ["## Query manual", "", "Tables:"]
        for t in tables:
            lines.append(f"- `{t}({', '.join(f'{c} {ty}'.strip() for c, ty in columns[t])})`")
        lines += ["", "Example queries:"]
        for t in tables:
            if len(columns[t]) > MANUAL_WIDE:
                lines.append(f"- `SELECT COUNT(*) FROM {t}`")
                lines.append(
                    f"- {t} is {len(columns[t])} columns wide: rows of every column "
                    "overflow the query budget, so select the columns you need "
                    "by name."
                )
            else:
                lines.append(f"- `SELECT * FROM {t} LIMIT 5`")
                lines.append(f"- `SELECT COUNT(*) FROM {t}`")
        if with_samples:
            lines += ["", "## Sample rows", ""]
            for t in tables[:SAMPLE_TABLES]:
                count = conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
                label = "1 row" if count == 1 else f"{count} rows"
                lines += [f"### {t} — {label}", ""]
                shown = [c for c, _ in columns[t]][:SAMPLE_COLUMNS]
                sample = conn.execute(f'SELECT * FROM "{t}" LIMIT {SAMPLE_ROWS}').fetchall()
                if not sample:
                    lines += ["_No rows._", ""]
                    continue
                lines.append("| " + " | ".join(shown) + " |")
                lines.append("|" + " --- |" * len(shown))
                for row in sample:
                    lines.append("| " + " | ".join(_cell(row[i]) for i in range(len(shown))) + " |")
                cut = len(columns[t]) - len(shown)
                if cut > 0:
                    lines.append(
                        f"_{cut} more column(s) not shown; the query manual lists every column._"
                    )
                lines.append("")
            if len(tables) > SAMPLE_TABLES:
                lines.append(
                    f"_{len(tables) - SAMPLE_TABLES} more table(s) not sampled; the "
                    "query manual lists every table._"
                )
        return "\n".join(lines).rstrip()
    finally:
        conn.close()
