"""Tabular sources: column types, delimiters and JSON records."""

from __future__ import annotations

import csv
import re
from typing import Any

_INT = re.compile(r"^[+-]?(0|[1-9]\d*)$")
_REAL = re.compile(r"^[+-]?((0|[1-9]\d*)(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def infer_columns(rows: list[list[str]], width: int) -> tuple[list[str], list[list[Any]]]:
    """Per column INTEGER, REAL or TEXT (dates stay TEXT; codes with leading zeros stay
    TEXT), and the rows converted: empty cells become NULL."""
    types = []
    for i in range(width):
        cells = [r[i].strip() for r in rows if r[i].strip()]
        if cells and all(_INT.match(c) and -(1 << 63) <= int(c) < (1 << 63) for c in cells):
            types.append("INTEGER")
        elif cells and all(_REAL.match(c) for c in cells):
            types.append("REAL")
        else:
            types.append("TEXT")
    convert = {"INTEGER": int, "REAL": float, "TEXT": str}
    values = [
        [convert[types[i]](r[i].strip()) if r[i].strip() else None for i in range(width)]
        for r in rows
    ]
    return types, values


def sniff_delimiter(sample: str) -> str:
    """The delimiter of a CSV sample (a comma when it cannot tell)."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def flat_records(data: Any) -> bool:
    """Whether JSON data is a non-empty list of flat objects (a table)."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(
            isinstance(rec, dict)
            and rec
            and all(v is None or isinstance(v, str | int | float | bool) for v in rec.values())
            for rec in data
        )
    )


def json_cell(value: Any) -> Any:
    """A JSON value as SQLite stores it: booleans as 0/1, huge integers and nested values
    as text."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
        return str(value)
    if value is None or isinstance(value, int | float | str):
        return value
    return str(value)


def json_type(values: list[Any]) -> str:
    """The SQLite column type for a column of JSON values."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, int) for v in present):
        return "INTEGER"
    if present and all(isinstance(v, int | float) for v in present):
        return "REAL"
    return "TEXT"
