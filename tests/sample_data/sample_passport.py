"""The text ``build_datasets.py`` generates for a dataset's passport: the payload's
sha256, and the ``## Query manual`` map of its tables, columns and sample rows."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from monkeyllm.datasets import tables_of

# Limits of the generated sample map.
SAMPLE_ROWS = 3
SAMPLE_MAX_TABLES = 20
SAMPLE_MAX_COLUMNS = 12
SAMPLE_CELL_CHARS = 120


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows_label(n: int) -> str:
    return "1 row" if n == 1 else f"{n} rows"


def sample_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<blob {len(bytes(value))} bytes>"
    text = re.sub(r"\s+", " ", str(value)).strip()
    if len(text) > SAMPLE_CELL_CHARS:
        text = text[:SAMPLE_CELL_CHARS].rstrip() + "…"
    return text.replace("|", "\\|")


def render_map(db: Path) -> str:
    """The generated `## Query manual` and `## Sample rows` sections, read back
    from the payload itself: tables in sqlite_master order."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = tables_of(conn)
        tables = {
            t: [(r[1], (r[2] or "").upper()) for r in conn.execute(f"PRAGMA table_info({t})")]
            for t in names
        }
        lines = ["## Query manual", "", "Tables:"]
        for t, cols in tables.items():
            spec = ", ".join(f"{c} {ty}" if ty else c for c, ty in cols)
            lines.append(f"- `{t}({spec})`")
        lines += ["", "Example queries:"]
        for t, cols in tables.items():
            if len(cols) > SAMPLE_MAX_COLUMNS:
                lines.append(f"- `SELECT COUNT(*) FROM {t}`")
                lines.append(
                    f"- {t} is {len(cols)} columns wide: rows of every column "
                    "overflow the query budget, so select the columns you need "
                    "by name."
                )
            else:
                lines.append(f"- `SELECT * FROM {t} LIMIT 5`")
                lines.append(f"- `SELECT COUNT(*) FROM {t}`")
        lines += ["", "## Sample rows", ""]
        shown = list(tables)[:SAMPLE_MAX_TABLES]
        for t in shown:
            cols = [c for c, _ in tables[t]][:SAMPLE_MAX_COLUMNS]
            count = conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            lines += [f"### {t} — {rows_label(count)}", ""]
            rows = conn.execute(f"SELECT * FROM {t} LIMIT {SAMPLE_ROWS}").fetchall()
            if not rows:
                lines += ["_No rows._", ""]
                continue
            lines.append("| " + " | ".join(sample_cell(c) for c in cols) + " |")
            lines.append("|" + " --- |" * len(cols))
            for row in rows:
                lines.append(
                    "| " + " | ".join(sample_cell(row[i]) for i in range(len(cols))) + " |"
                )
            cut = len(tables[t]) - len(cols)
            if cut > 0:
                lines.append(
                    f"_{cut} more column(s) not shown; the query manual lists every column._"
                )
            lines.append("")
        omitted = len(tables) - len(shown)
        if omitted > 0:
            lines.append(
                f"_{omitted} more table(s) not sampled; the query manual lists every table._"
            )
        return "\n".join(lines).rstrip()
    finally:
        conn.close()


FM_RE = re.compile(r"\A---\n(.*?)\n---\n", re.S)
H2_RE = re.compile(r"^## (.+?)\s*$", re.M)
