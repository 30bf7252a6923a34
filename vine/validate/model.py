"""What a validation run works on: findings, files, issues, the run."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..dialect import Dialect
from ..nodes import BOUNDARY, Node
from ..writes import render

ERROR = "error"
WARNING = "warning"
NOTE = "note"
SCHEMA_ID = "_meta/schema"
PAYLOAD_SUFFIXES = (".db", ".sqlite", ".sqlite3")
SKIP_DIRS = frozenset({".git", "_derived"})
WIKILINK = re.compile(r"\[\[([^\]\[|#\n]+)(?:[|#][^\]\n]*)?\]\]")
ENTRY = re.compile(r"^- \[\[([^\]|#]+)(?:[|#][^\]]*)?\]\](.*)$")
COVERAGE_SUFFIX = re.compile(r" \d+ bananas?, \d+ sub-branch(?:es)?\.$")
YAML_LINE = re.compile(r"at line (\d+)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ENTRY_SECTIONS = (render.SUB_BRANCHES, render.DIRECT_BANANAS)


@dataclass(frozen=True)
class Finding:
    """One problem: where it is, how bad, and how to fix it.

    Attributes:
        severity: ``"error"``, ``"warning"`` or ``"note"`` (something ``--fix``
            records, which no reader needs and ``--strict`` lets pass).
        code: A short stable slug such as ``"index.missing-entry"``.
        id: The node id, or None for a file that is not a node (an orphan payload).
        path: The file, relative to the forest root, POSIX separators.
        line: The 1-based line in that file, when known.
        message: What is wrong.
        fix: How to fix it.
        fixable: True when ``vine validate --fix`` repairs it.
    """

    severity: str
    code: str
    id: str | None
    path: str
    line: int | None
    message: str
    fix: str
    fixable: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The finding as a JSON-ready dict."""
        return asdict(self)


@dataclass
class NodeFile:
    """One node file as read: its text and parsed node, or why it does not parse."""

    path: str
    id: str
    text: str = ""
    node: Node | None = None
    error: str | None = None
    _body_start: int | None = None

    def key_line(self, key: str) -> int | None:
        """The file line of a top-level frontmatter key."""
        return self.find_line(re.compile(rf"^{re.escape(key)}\s*:"), front=True)

    def find_line(self, pattern: re.Pattern[str], *, front: bool = False) -> int | None:
        """The first file line matching ``pattern`` (within the frontmatter if asked)."""
        end = self.body_line(0) if front and self.node is not None else None
        for number, line in enumerate(self.text.split("\n"), start=1):
            if end is not None and number >= end:
                return None
            if pattern.search(line):
                return number
        return None

    def body_line(self, index: int) -> int | None:
        """The file line of body line ``index`` (0-based)."""
        if self._body_start is None:
            self._body_start = _body_start(self.text)
        return None if self._body_start is None else self._body_start + index


def _body_start(text: str) -> int | None:
    """The 1-based file line where the parsed body begins."""
    bounds = BOUNDARY.finditer(text)
    closing = next(bounds, None) and next(bounds, None)
    if closing is None:
        return None
    pos = closing.end()
    while pos < len(text) and text[pos] == "\n":
        pos += 1
    if pos < len(text) and text[pos - 1] != "\n":
        pos = text.find("\n", pos) + 1 or len(text)
    return text.count("\n", 0, pos) + 1


@dataclass
class EntryIssue:
    """An index entry problem of one branch, as both validate and fix need it."""

    kind: str  # extra | duplicate | misplaced | stale | missing
    child: str
    section: str  # where an entry for the child belongs
    line: int | None  # body line of the offending entry
    new: str | None  # the entry line to write (stale, misplaced, missing)
    exists: bool = True


@dataclass
class ValidationRun:
    """One validation pass over a forest."""

    root: Path
    payloads: bool = True
    files: dict[str, NodeFile] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)
    dialect: Dialect = field(default_factory=Dialect)
    moves: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    referenced: set[str] = field(default_factory=set)
    hashes: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def add(
        self,
        f: NodeFile,
        severity: str,
        code: str,
        message: str,
        fix: str,
        *,
        line: int | None = None,
        fixable: bool = False,
    ) -> None:
        """Record a finding on file ``f``."""
        self.findings.append(Finding(severity, code, f.id, f.path, line, message, fix, fixable))


def is_private(node_id: str) -> bool:
    """Ids inside a folder whose name starts with ``_`` (``_meta/...``)."""
    return any(part.startswith("_") for part in node_id.split("/")[:-1])
