"""A fast path for the frontmatter engines write, with PyYAML as the authority.

Frontmatter is nearly always the same small block-YAML subset: ``key: scalar``,
block lists of scalars, and block lists of flat mappings (``links``). Reading
that subset in plain Python is some thirty times faster than PyYAML's
constructor, which matters for a cold build of a large forest. Anything
outside the subset, or any scalar whose type PyYAML would resolve in a way not
handled here, answers None, and the caller hands the text to PyYAML. A test
checks the two agree on everything the fast path accepts.
"""

from __future__ import annotations

import datetime
import re
from functools import lru_cache
from typing import Any

from yaml.resolver import Resolver

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$")
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?[0-9]+\.[0-9]+$")
_DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")
_NULLS = frozenset({"~", "null", "Null", "NULL", ""})
_BOOLS = {v: True for v in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")}
_BOOLS.update({v: False for v in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                                   "OFF")})
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_RESOLVERS = Resolver.yaml_implicit_resolvers
# Tabs, YAML's other line breaks, a BOM and control characters: PyYAML's business.
_ODD = re.compile("[\t\r\x85\u2028\u2029\ufeff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class _Miss(Exception):
    """The text is outside the subset: use PyYAML."""


_MISS = object()


def _plain(text: str) -> Any:
    """A plain scalar resolved the way PyYAML's SafeLoader resolves it."""
    if len(text) <= 40:
        value = _plain_short(text)
        if value is _MISS:
            raise _Miss
        return value
    return _resolve(text)


@lru_cache(maxsize=4096)
def _plain_short(text: str) -> Any:
    # Short scalars (dates, tags, rels, types) repeat across a forest: resolve once.
    # The sentinel keeps a refusal cacheable too.
    try:
        return _resolve(text)
    except _Miss:
        return _MISS


def _resolve(text: str) -> Any:
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    m = _DATE.match(text)
    if m:
        try:
            return datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            raise _Miss from None
    if text[0] in _INDICATORS or ": " in text or " #" in text or text.endswith(":") \
            or "\t" in text:
        raise _Miss
    for _tag, regexp in _RESOLVERS.get(text[0], ()):
        if regexp.match(text):
            raise _Miss
    return text


def _scalar(parts: list[str]) -> Any:
    """A scalar written over one or more lines (continuations already stripped)."""
    text = " ".join(parts)
    if not text:
        return None
    first = text[0]
    if first == "'":
        if len(text) < 2 or not text.endswith("'"):
            raise _Miss
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            raise _Miss
        return inner.replace("''", "'")
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or not text.endswith('"') or '"' in inner or "\\" in inner:
            raise _Miss
        return inner
    if first in "[{":
        if text in ("[]", "{}"):
            return [] if first == "[" else {}
        raise _Miss
    return _plain(text)


def _key(raw: str) -> str:
    if _plain(raw) != raw:
        raise _Miss
    return raw


def _continuations(lines: list[str], i: int, indent: int) -> tuple[list[str], int]:
    """Lines after ``i`` indented deeper than ``indent`` that continue a scalar."""
    parts: list[str] = []
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip(" ")
        depth = len(line) - len(stripped)
        if not stripped or depth <= indent:
            break
        if stripped.startswith("- ") or stripped == "-" or _KEY.match(stripped):
            raise _Miss
        parts.append(stripped.rstrip(" "))
        i += 1
    return parts, i


def _sequence(lines: list[str], i: int, dash: int) -> tuple[list[Any], int]:
    """A block sequence whose dashes sit at column ``dash``."""
    items: list[Any] = []
    while i < len(lines):
        line = lines[i]
        if not line.startswith(" " * dash + "-") or (len(line) > dash + 1
                                                        and line[dash + 1] != " "):
            break
        body = line[dash + 2:].rstrip(" ") if len(line) > dash + 1 else ""
        i += 1
        km = _KEY.match(body)
        if km and not body.startswith(("'", '"')):
            item: dict[str, Any] = {}
            key, rest = km.group(1), km.group(2) or ""
            more, i = _continuations(lines, i, dash + 2)
            if not rest:
                raise _Miss
            item[_key(key)] = _scalar([rest, *more])
            inner = " " * (dash + 2)
            while i < len(lines) and lines[i].startswith(inner) and \
                    not lines[i][dash + 2:].startswith(" "):
                km = _KEY.match(lines[i][dash + 2:].rstrip(" "))
                if not km or not km.group(2):
                    raise _Miss
                more, j = _continuations(lines, i + 1, dash + 2)
                item[_key(km.group(1))] = _scalar([km.group(2), *more])
                i = j
            items.append(item)
        else:
            if not body:
                raise _Miss
            more, i = _continuations(lines, i, dash)
            items.append(_scalar([body, *more]))
    return items, i


def load(text: str) -> dict[str, Any] | None:
    """Frontmatter as a dict when it is in the fast subset, else None."""
    if _ODD.search(text):
        return None
    lines = text.strip("\n").split("\n")
    while lines and not lines[-1].strip(" "):
        lines.pop()
    out: dict[str, Any] = {}
    try:
        i = 0
        while i < len(lines):
            line = lines[i]
            if "\t" in line or not line.strip(" "):
                raise _Miss
            m = _KEY.match(line.rstrip(" "))
            if not m:
                raise _Miss
            key, rest = _key(m.group(1)), m.group(2)
            i += 1
            if rest:
                more, i = _continuations(lines, i, 0)
                out[key] = _scalar([rest.rstrip(" "), *more])
                continue
            nxt = lines[i] if i < len(lines) else ""
            if nxt.startswith("- ") or nxt == "-":
                out[key], i = _sequence(lines, i, 0)
            elif nxt.startswith("  - ") or nxt == "  -":
                out[key], i = _sequence(lines, i, 2)
            elif nxt.startswith(" "):
                raise _Miss
            else:
                out[key] = None
    except _Miss:
        return None
    return out
