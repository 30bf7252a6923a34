"""What one ingested file becomes: the content of a note, a document, a dataset (its
SQLite payload built in the run's scratch folder) or a media node."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from ..text import counted
from ..writes import dataset
from .convert import (
    dataset_content,
    docx_content,
    json_content,
    media_content,
    note_content,
    xlsx_sheets,
)
from .files import read_text
from .model import BAD_ROWS_SHOWN, NOTE_EXT, SQLITE_EXT, TABLE_EXT, Content, FileProblem, Item
from .passport import column_names, sql_name, unique_name
from .tables import flat_records, infer_columns, json_cell, json_type, sniff_delimiter


class Contents:
    """Converts a run's files; payloads and media copies go to ``scratch``.

    Args:
        scratch: The run's scratch folder.
        text_cap: The largest text kept as a document body, in bytes.
        file_cap: The largest file read as a table, in bytes.
    """

    def __init__(self, scratch: Path, text_cap: int, file_cap: int) -> None:
        self.scratch = scratch
        self.text_cap = text_cap
        self.file_cap = file_cap
        self.made = 0  # files prepared in the scratch folder

    def of(self, item: Item, ext: str) -> Content:
        """What the file at ``item`` holds, as a node's content."""
        stem = item.real.stem
        if ext in NOTE_EXT:
            return note_content(read_text(item.real), stem)
        if ext in TABLE_EXT:
            return self._table(item, TABLE_EXT[ext])
        if ext == ".json":
            return self._json(item)
        if ext in SQLITE_EXT:
            return self._sqlite(item)
        if ext == ".docx":
            return docx_content(item.real, stem)
        if ext == ".xlsx":
            return self._xlsx(item)
        return self._media(item, ext)

    def _table(self, item: Item, delimiter: str) -> Content:
        text = read_text(item.real, limit=self.file_cap)
        if delimiter == ",":
            delimiter = sniff_delimiter(text[:8192])
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        header = next(rows, None)
        if not header or not any(h.strip() for h in header):
            raise FileProblem("no header row (the first line names the columns)")
        columns = column_names(header)
        good: list[list[str]] = []
        bad: list[int] = []
        for number, row in enumerate(rows, 2):
            if not row or not any(cell.strip() for cell in row):
                continue
            if len(row) != len(columns):
                bad.append(number)
                continue
            good.append(row)
        types, values = infer_columns(good, len(columns))
        table = sql_name(item.real.stem, "t")
        tmp = self._birth(
            {table: {"columns": dict(zip(columns, types, strict=True)), "primary_key": []}},
            {table: values},
        )
        content = dataset_content(item.real, tmp, {table: (header, columns)})
        if bad:
            shown = ", ".join(str(n) for n in bad[:BAD_ROWS_SHOWN])
            more = f" and {len(bad) - BAD_ROWS_SHOWN} more" if len(bad) > BAD_ROWS_SHOWN else ""
            content.warnings.append(
                f"{counted(len(bad), 'row')} skipped: wrong number of fields "
                f"({'line' if len(bad) == 1 else 'lines'} {shown}{more})"
            )
        return content

    def _json(self, item: Item) -> Content:
        text = read_text(item.real, limit=self.file_cap)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FileProblem(
                f"not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
            ) from None
        if flat_records(data):
            columns_raw = list(dict.fromkeys(str(k) for rec in data for k in rec))
            columns = column_names(columns_raw)
            rows = [[json_cell(rec.get(k)) for k in columns_raw] for rec in data]
            types = [json_type([r[i] for r in rows]) for i in range(len(columns))]
            table = sql_name(item.real.stem, "t")
            tmp = self._birth(
                {table: {"columns": dict(zip(columns, types, strict=True)), "primary_key": []}},
                {table: rows},
            )
            return dataset_content(item.real, tmp, {table: (columns_raw, columns)})
        if item.real.stat().st_size > self.text_cap:
            raise FileProblem(
                f"too large for a document ({item.real.stat().st_size} bytes; "
                f"the limit is {self.text_cap})"
            )
        return json_content(data, item.real.stem, item.real.name)

    def _sqlite(self, item: Item) -> Content:
        tmp = self._scratch_file(".db")
        shutil.copyfile(item.real, tmp)
        try:
            conn = sqlite3.connect(tmp)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                    conn.execute("PRAGMA journal_mode=DELETE")
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise FileProblem(f"not a SQLite database ({exc})") from None
        return dataset_content(item.real, tmp, None)

    def _xlsx(self, item: Item) -> Content:
        sheets = xlsx_sheets(item.real)
        schema: dict[str, Any] = {}
        rows: dict[str, list[list[Any]]] = {}
        names: dict[str, tuple[list[str], list[str]]] = {}
        for sheet, table_rows in sheets:
            if not table_rows or not any(str(h or "").strip() for h in table_rows[0]):
                continue
            header = [str(h) if h is not None else "" for h in table_rows[0]]
            columns = column_names(header)
            body = [
                list(r[: len(columns)]) + [None] * (len(columns) - len(r))
                for r in table_rows[1:]
                if any(c not in (None, "") for c in r)
            ]
            table = unique_name(sql_name(sheet, "sheet"), schema)
            types = [json_type([json_cell(r[i]) for r in body]) for i in range(len(columns))]
            schema[table] = {"columns": dict(zip(columns, types, strict=True)), "primary_key": []}
            rows[table] = [[json_cell(c) for c in r] for r in body]
            names[table] = (header, columns)
        if not schema:
            raise FileProblem("no sheet with a header row")
        return dataset_content(item.real, self._birth(schema, rows), names)

    def _media(self, item: Item, ext: str) -> Content:
        tmp = self._scratch_file(ext)
        shutil.copyfile(item.real, tmp)
        return media_content(tmp, item.real.name, ext)

    def _birth(self, schema: dict[str, Any], rows: dict[str, list[list[Any]]]) -> Path:
        tmp = self._scratch_file(".db")
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                # A scratch file: nothing to journal or sync until it is whole.
                conn.execute("PRAGMA journal_mode=OFF")
                conn.execute("PRAGMA synchronous=OFF")
                conn.execute("BEGIN")
                for table, spec in schema.items():
                    conn.execute(dataset.ddl(table, spec))
                    marks = ", ".join("?" for _ in spec["columns"])
                    conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
                conn.execute("COMMIT")
            finally:
                conn.close()
        except (sqlite3.Error, OverflowError) as exc:
            raise FileProblem(f"could not build its table: {exc}") from None
        return tmp

    def _scratch_file(self, ext: str) -> Path:
        self.made += 1
        return self.scratch / f"{self.made}{ext}"
