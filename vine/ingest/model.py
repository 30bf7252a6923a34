"""Limits, extensions and the shapes a planned ingest is made of."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Limits: a note or document body is read whole; tables and payloads are streamed.
MAX_TEXT_BYTES = 4 << 20
MAX_FILE_BYTES = 256 << 20
BAD_ROWS_SHOWN = 5  # bad CSV rows named in a report entry
SUMMARY_CHARS = 200  # about 50 tokens: the first sentences
INGEST_CONFIDENCE = 0.7

NOTE_EXT = (".md", ".markdown", ".txt")
TABLE_EXT = {".csv": ",", ".tsv": "\t"}
SQLITE_EXT = (".db", ".sqlite", ".sqlite3")
OFFICE_EXT = (".docx", ".xlsx")
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".gif", ".webp")
AUDIO_EXT = (".mp3", ".wav", ".m4a", ".ogg", ".flac")
EXTRA_HINT = 'install the optional extra: pip install "monkeyllm[ingest]"'

Progress = Callable[[int, int], None]

# The lists of an ingest's report, in the order it gives them.
REPORT_KEYS = (
    "created",
    "updated",
    "unchanged",
    "unsupported",
    "failed",
    "stale",
    "conflict",
    "unresolved_links",
)


class FileProblem(Exception):
    """One source file cannot be ingested; the message says why."""


@dataclass
class Item:
    """One source file found by the walk."""

    path: Path  # as found (a symlink stays a symlink)
    real: Path  # what it resolves to
    rel: str  # POSIX path relative to its source root
    shown: str  # the path as the person spelled it
    folder: str  # slugged folder prefix of its node id ("" at the source root)


@dataclass
class Content:
    """What a source file becomes: everything but its id."""

    type: str
    title: str
    summary: str
    body: str
    meta: dict[str, Any] = field(default_factory=dict)
    payload: Path | None = None  # a prepared payload in the scratch folder
    payload_name: str | None = None  # its final name beside the node (or _assets/...)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """One node to write: created or updated."""

    item: Item | None
    id: str
    meta: dict[str, Any]
    body: str
    payload: Path | None = None
    payload_name: str | None = None
    old_payload: str | None = None
    created: bool = True
    warnings: list[str] = field(default_factory=list)
