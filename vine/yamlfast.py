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
from functools import cache, lru_cache
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$")
_KEY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?[0-9]+\.[0-9]+$")
_DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})$")
_NULLS = frozenset({"~", "null", "Null", "NULL", ""})
_BOOLS = {v: True for v in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")}
_BOOLS.update(
    {v: False for v in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")}
)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
# Plain scalars PyYAML's implicit resolvers could still claim once nulls, booleans and
# the forms read here are ruled out start with one of these characters and use only
# those of RESOLVABLE (numbers, times, "<<", "="); every other resolver is for an
# indicator or for exactly the null and boolean words above. Tests check both against
# PyYAML's table. Only such scalars pay for importing PyYAML.
RESOLVED_FIRST = frozenset("+.0123456789<=")
RESOLVABLE = re.compile(r"[-+0-9_.:<= \tbxa-fA-FiInNtTZ]+")
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
    if text[0] in _INDICATORS or ": " in text or " #" in text or text.endswith(":") or "\t" in text:
        raise _Miss
    if text[0] in RESOLVED_FIRST and RESOLVABLE.fullmatch(text):
        for _tag, regexp in _resolvers().get(text[0], ()):
            if regexp.match(text):
                raise _Miss
    return text


@cache
def _resolvers() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """PyYAML's implicit resolvers by first character, imported on first need."""
    from yaml.resolver import Resolver

    return Resolver.yaml_implicit_resolvers


def _scalar1(text: str) -> Any:
    """A scalar (continuation lines already folded into one text)."""
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


_KEYS: dict[str, bool] = {}


def _key(raw: str) -> str:
    ok = _KEYS.get(raw)
    if ok is None:
        ok = bool(_KEY_NAME.match(raw)) and _plain(raw) == raw
        if len(_KEYS) < 10_000:
            _KEYS[raw] = ok
    if not ok:
        raise _Miss
    return raw


def _split(line: str) -> tuple[str, str]:
    """``key: value`` as (key, value); value is "" for ``key:``."""
    key, sep, rest = line.partition(":")
    if not sep or (rest and rest[0] != " "):
        raise _Miss
    return _key(key), rest.strip(" ")


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
    n = len(lines)
    lead = " " * dash + "- "
    inner = " " * (dash + 2)
    while i < n:
        line = lines[i]
        if not line.startswith(lead):
            if line == lead[:-1]:
                raise _Miss
            break
        body = line[dash + 2 :].rstrip(" ")
        i += 1
        if body and body[0] not in "'\"" and ": " in body or body.endswith(":"):
            key, rest = _split(body)
            if not rest:
                raise _Miss
            if i < n and lines[i].startswith(inner + " "):
                more, i = _continuations(lines, i, dash + 2)
                rest = " ".join([rest, *more])
            item = {key: _scalar1(rest)}
            while i < n and lines[i].startswith(inner) and lines[i][dash + 2 : dash + 3] != " ":
                key, rest = _split(lines[i][dash + 2 :].rstrip(" "))
                if not rest:
                    raise _Miss
                i += 1
                if i < n and lines[i].startswith(inner + " "):
                    more, i = _continuations(lines, i, dash + 2)
                    rest = " ".join([rest, *more])
                item[key] = _scalar1(rest)
            items.append(item)
        else:
            if not body:
                raise _Miss
            if i < n and lines[i].startswith(inner):
                more, i = _continuations(lines, i, dash)
                body = " ".join([body, *more])
            items.append(_scalar1(body))
    return items, i


def load(text: str) -> dict[str, Any] | None:
    """Frontmatter as a dict when it is in the fast subset, else None."""
    if _ODD.search(text):
        return None
    lines = text.strip("\n").split("\n")
    while lines and not lines[-1].strip(" "):
        lines.pop()
    out: dict[str, Any] = {}
    n = len(lines)
    try:
        i = 0
        while i < n:
            line = lines[i]
            if not line or line[0] in " -#":
                raise _Miss
            key, rest = _split(line.rstrip(" "))
            i += 1
            if rest:
                if i < n and lines[i][:1] == " ":
                    more, i = _continuations(lines, i, 0)
                    rest = " ".join([rest, *more])
                out[key] = _scalar1(rest)
                continue
            nxt = lines[i] if i < n else ""
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
