"""Parsing a node file: frontmatter, body, headers, outline and sections."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from . import yamlfast

# python-frontmatter's YAML boundary line (a test keeps the two the same). Splitting a
# file here means python-frontmatter and PyYAML load only for a frontmatter outside
# yamlfast's subset, not for every node read.
BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)
_HEADER = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# An H2 or H3 header line, matched where a line starts (``match(body, start, end)``).
_OUTLINE = re.compile(r"#{2,3}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_CANDIDATE = re.compile(r"^(?:#| {0,3}(?:```|~~~)).*$", re.MULTILINE)
REQUIRED = ("id", "type", "title", "summary", "created", "updated")


class ParseError(ValueError):
    """A file that is not a well-formed node; the message says why."""


@dataclass(frozen=True)
class Header:
    """One markdown header of a body: level, text and 0-based body line."""

    level: int
    text: str
    line: int


@dataclass
class Node:
    """A parsed node file: its frontmatter mapping and its body text."""

    id: str
    meta: dict[str, Any]
    body: str
    _lines: list[str] | None = field(default=None, repr=False)
    # The 1-based line of the file where the body's first line is (a body not read
    # from a node file, such as a cached copy, starts at its own line 1).
    body_line: int = 1

    def file_line(self, index: int) -> int:
        """The file line of 0-based body line ``index``: what an editor's ``+N`` opens
        (and what ``vine validate`` reports)."""
        return self.body_line + index

    @property
    def lines(self) -> list[str]:
        """Body lines (without newlines)."""
        if self._lines is None:
            self._lines = self.body.split("\n")
        return self._lines

    @cached_property
    def headers(self) -> list[Header]:
        """Every real header, skipping ``#`` lines inside fenced code blocks."""
        return headers_of(self.body)

    @property
    def outline(self) -> list[str]:
        """The text of every H2 and H3 header, in body order."""
        body = self.body
        # One character first: a search for three runs ten times slower in a body that is
        # not all ASCII or Latin-1.
        if ("`" in body and "```" in body) or ("~" in body and "~~~" in body):
            return [h.text for h in self.headers if h.level in (2, 3)]
        # No fences: only lines starting with "##" can be H2 or H3 headers. They are found
        # by searching for "#" alone (as above: a build reads the outline of every node).
        found: list[str] = []
        at = body.find("#")
        while at != -1:
            if (at == 0 or body[at - 1] == "\n") and body.startswith("##", at):
                end = body.find("\n", at)
                if end == -1:
                    end = len(body)
                m = _OUTLINE.match(body, at, end)
                if m and m.group(1):
                    found.append(m.group(1))
                at = body.find("#", end)
            else:
                at = body.find("#", at + 1)
        return found

    @property
    def title(self) -> str:
        """Frontmatter title, else the first H1, else the id."""
        title = self.meta.get("title")
        if isinstance(title, str) and title.strip():
            return title
        for h in self.headers:
            if h.level == 1:
                return h.text
        return self.id

    @property
    def summary(self) -> str:
        """Frontmatter summary, else the first ``>`` line of the body, else ``""``."""
        summary = self.meta.get("summary")
        if isinstance(summary, str) and summary.strip():
            return summary
        return blockquote_summary(self.lines)

    def section(self, name: str) -> tuple[Header, str] | None:
        """The section matching ``name`` and its text (header line included).

        Matching is case-insensitive over all levels: an exact match wins, else
        the first header that starts with ``name``.
        """
        wanted = name.strip().lstrip("#").strip().casefold()
        if not wanted:
            return None
        exact = [h for h in self.headers if h.text.casefold() == wanted]
        starts = [h for h in self.headers if h.text.casefold().startswith(wanted)]
        if not (exact or starts):
            return None
        chosen = (exact or starts)[0]
        return chosen, section_text(self.lines, self.headers, chosen)

    def section_of_line(self, index: int) -> str | None:
        """The most recent H2/H3 header text above body line ``index`` (0-based)."""
        current = None
        for h in self.headers:
            if h.line > index:
                break
            if h.level in (2, 3):
                current = h.text
        return current


def headers_of(body: str) -> list[Header]:
    """Headers of a body, skipping fenced code blocks.

    Only lines that could open a header or a fence are looked at, found with one
    regex scan; line numbers are counted between them.
    """
    found: list[Header] = []
    fence: str | None = None
    line_no = 0
    last = 0
    for m in _CANDIDATE.finditer(body):
        line_no += body.count("\n", last, m.start())
        last = m.start()
        line = m.group()
        marker = _FENCE.match(line)
        if fence is not None:
            if (
                marker
                and marker.group(1)[0] == fence[0]
                and len(marker.group(1)) >= len(fence)
                and not line.strip()[len(marker.group(1)) :].strip()
            ):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        h = _HEADER.match(line)
        if h and h.group(2):
            found.append(Header(len(h.group(1)), h.group(2), line_no))
    return found


def section_text(lines: list[str], headers: list[Header], header: Header) -> str:
    """From ``header``'s line to the next header of the same or a higher level."""
    end = len(lines)
    for h in headers:
        if h.line > header.line and h.level <= header.level:
            end = h.line
            break
    return "\n".join(lines[header.line : end]).rstrip()


def blockquote_summary(lines: list[str]) -> str:
    """The first ``>`` line before any other non-header text, or ``""``."""
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith(">"):
            return stripped.lstrip(">").strip()
        return ""
    return ""


def parse_text(node_id: str, text: str) -> Node:
    """Parse a node's text; raise :class:`ParseError` saying what is wrong."""
    if "\x00" in text:
        raise ParseError("binary content (NUL bytes)")
    stripped = text.lstrip("\ufeff").strip()
    if not BOUNDARY.match(stripped):
        raise ParseError("no frontmatter (the file must start with a '---' line)")
    try:
        _, fm, body = BOUNDARY.split(stripped, 2)
    except ValueError:
        raise ParseError("unterminated frontmatter (no closing '---' line)") from None
    meta = yamlfast.load(fm)
    if meta is None:
        meta = _load_yaml(fm)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ParseError("frontmatter is not a mapping")
    # Where the body starts in the file: what was stripped before the frontmatter,
    # the frontmatter, and the blank lines before the body.
    lead = len(text) - len(text.lstrip("\ufeff").lstrip())
    start = lead + len(stripped) - len(body) + (len(body) - len(body.lstrip("\n")))
    return Node(
        node_id,
        meta,
        body.strip("\n").rstrip() if body.strip() else "",
        body_line=text.count("\n", 0, start) + 1,
    )


def body_of_bytes(data: bytes) -> str | None:
    """The body in a node file exactly as :func:`parse_bytes` gives it, without parsing
    the frontmatter; None when only a full parse can tell (bad bytes, no frontmatter)."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    stripped = text.lstrip("\ufeff").strip()
    if not BOUNDARY.match(stripped):
        return None
    try:
        _, fm, body = BOUNDARY.split(stripped, 2)
    except ValueError:
        return None
    return body.strip("\n").rstrip() if body.strip() else ""


@cache
def _handler() -> Any:
    """python-frontmatter's YAML handler (PyYAML's safe loader), imported on first use."""
    from frontmatter.default_handlers import YAMLHandler

    return YAMLHandler()


def _load_yaml(fm: str) -> Any:
    """A frontmatter read by PyYAML, the authority; :class:`ParseError` when it is bad."""
    import yaml

    try:
        return _handler().load(fm)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        # The frontmatter text starts with the rest of the opening '---' line.
        at = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParseError(f"bad YAML{at}: {problem}") from None


def parse_bytes(node_id: str, data: bytes) -> Node:
    """Parse raw file bytes, refusing binary and non-UTF-8 content."""
    if b"\x00" in data:
        raise ParseError("binary content (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text (byte {exc.start})") from None
    return parse_text(node_id, text)


def meta_str(value: Any) -> str | None:
    """A frontmatter scalar as catalog text (dates as ISO strings)."""
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)
