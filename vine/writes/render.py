"""Writing node files in the forest format: frontmatter, index entry lines, coverage."""

from __future__ import annotations

import datetime
import re
from typing import Any

import yaml

from ..nodes import Node

SUB_BRANCHES = "Sub-branches"
DIRECT_BANANAS = "Direct bananas"
CROSS_TRAILS = "Cross trails"
LANDMARKS = "Landmarks"
_ENTRY = re.compile(r"^- \[\[", re.MULTILINE)
_HEADER = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")


# libyaml's emitter when PyYAML was built with it (same output, five times faster).
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def today() -> str:
    """Today's date as the format writes it."""
    return datetime.date.today().isoformat()


def _plain(value: Any) -> Any:
    """Dates as ISO strings, recursively; everything else as it is."""
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def render(meta: dict[str, Any], body: str) -> str:
    """A node file: ``---``, block YAML in insertion order, ``---``, a blank line, the body."""
    front = yaml.dump(
        _plain(meta), Dumper=_DUMPER, sort_keys=False, allow_unicode=True, default_flow_style=False
    )
    return f"---\n{front}---\n\n{body.strip(chr(10))}\n"


def entry_line(node_id: str, summary: str) -> str:
    """An index entry: ``- [[id]] — summary`` (U+2014 em dash)."""
    return f"- [[{node_id}]] — {' '.join(summary.split())}"


def entry_pattern(node_id: str) -> re.Pattern[str]:
    """Every line of an index that lists ``node_id``."""
    return re.compile(r"^- \[\[" + re.escape(node_id) + r"(\|[^\]]*)?\]\].*$", re.MULTILINE)


def _sections(lines: list[str]) -> list[tuple[int, int, str]]:
    """(level, line, text) of every header, skipping fenced code."""
    from ..nodes import headers_of

    return [(h.level, h.line, h.text) for h in headers_of("\n".join(lines))]


def section_span(body: str, name: str) -> tuple[int, int] | None:
    """Line range [start, end) of section ``name`` (its header line first), or None."""
    lines = body.split("\n")
    heads = _sections(lines)
    for i, (level, line, text) in enumerate(heads):
        if text.strip().lower() == name.lower():
            end = len(lines)
            for later_level, later_line, _ in heads[i + 1 :]:
                if later_level <= level:
                    end = later_line
                    break
            return line, end
    return None


def add_entry(body: str, section: str, line_text: str, node_id: str) -> str:
    """Put ``line_text`` at the end of ``section``'s entry lines (the old line of the id
    removed first; a missing section appended at the end of the body)."""
    body = entry_pattern(node_id).sub("", body)
    return insert_entry(re.sub(r"\n{3,}", "\n\n", body), section, line_text)


def insert_entry(body: str, section: str, line_text: str | list[str]) -> str:
    """Put ``line_text`` (one line, or several in order) after the last entry line of
    ``section`` (directly under the heading when it has none; a missing section appended
    at the end of the body)."""
    new = [line_text] if isinstance(line_text, str) else list(line_text)
    span = section_span(body, section)
    if span is None:
        body = body.rstrip("\n") + f"\n\n## {section}\n"
        span = section_span(body, section)
        assert span is not None
    lines = body.split("\n")
    start, end = span
    at = start + 1
    for i in range(start + 1, end):
        if lines[i].startswith("- [["):
            at = i + 1
    # Entries sit directly under the heading, after one blank line.
    lines[at:at] = ["", *new] if at == start + 1 else new
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text)


def coverage(body: str) -> str:
    """``"N bananas, M sub-branches"`` counted from the entry lines of the two sections."""

    def count(name: str) -> int:
        span = section_span(body, name)
        if span is None:
            return 0
        lines = body.split("\n")[span[0] + 1 : span[1]]
        return sum(1 for line in lines if line.startswith("- [["))

    return f"{count(DIRECT_BANANAS)} bananas, {count(SUB_BRANCHES)} sub-branches"


def index_body(title: str, summary: str, *, master: bool) -> str:
    """The body of a new index: title, blockquote, the empty sections."""
    parts = [
        f"# {title}",
        "",
        f"> {summary}" if summary else "",
        "",
        f"## {SUB_BRANCHES}",
        "",
        f"## {DIRECT_BANANAS}",
        "",
        f"## {CROSS_TRAILS}",
    ]
    if master:
        parts += ["", f"## {LANDMARKS}"]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(parts)) + "\n"


def replace_section(node: Node, name: str, body: str) -> str | None:
    """The node's body with section ``name``'s content replaced (header kept), or None."""
    found = node.section(name)
    if found is None:
        return None
    header, _ = found
    lines = node.body.split("\n")
    end = len(lines)
    for h in node.headers:
        if h.line > header.line and h.level <= header.level:
            end = h.line
            break
    new = [lines[header.line], "", body.strip("\n"), ""]
    out = lines[: header.line] + new + lines[end:]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).rstrip("\n")


def subsections(node: Node, name: str) -> tuple[str, list[str]]:
    """The header text that section ``name`` matches and the text of every header
    inside it (the deeper levels up to the next header of its level or higher)."""
    found = node.section(name)
    if found is None:
        return name, []
    header, _ = found
    inside = []
    for h in node.headers:
        if h.line <= header.line:
            continue
        if h.level <= header.level:
            break
        inside.append(h.text)
    return header.text, inside


def append_section(body: str, header: str, text: str) -> str:
    """``\\n\\n## <header>\\n\\n<text>\\n`` at the end of the body (always H2)."""
    return body.rstrip("\n") + f"\n\n## {header.strip()}\n\n{text.strip()}\n"
