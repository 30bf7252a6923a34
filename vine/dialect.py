"""The forest's dialect: node types and edge rels declared in ``_meta/schema.md``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEFAULT_TYPES = ("branch", "note", "document", "dataset", "entity", "concept", "event", "media")
DEFAULT_RELS: dict[str, str | None] = {
    "part-of": "contains",
    "related-to": "related-to",
    "mentioned-in": "mentions",
    "author": "author-of",
    "compared-with": "compared-with",
    "derived-from": "origin-of",
    "same-as": "same-as",
    "discovered-shortcut": None,
    "succeeds": "precedes",
    "supersedes": "superseded-by",
}
_ROW = re.compile(r"^\s*\|\s*`([^`]+)`\s*\|(.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_NONE = {"—", "-", "–", "", "none", "(none)"}


@dataclass
class Dialect:
    """Declared types and rels; ``rels`` maps a rel to its inverse (None: no inverse)."""

    types: tuple[str, ...] = DEFAULT_TYPES
    rels: dict[str, str | None] = field(default_factory=lambda: dict(DEFAULT_RELS))

    def inverse(self, rel: str) -> str:
        """The name an incoming edge is shown under (the rel itself when none)."""
        return self.rels.get(rel) or rel

    def matches_rel(self, stored: str, wanted: str) -> bool:
        """True when ``wanted`` names ``stored`` or its inverse."""
        return wanted in (stored, self.rels.get(stored))


def parse_dialect(body: str) -> Dialect:
    """Read the type and rel tables of a ``_meta/schema.md`` body.

    Tables under a heading mentioning edges or rels declare rels (inverse in
    the second cell); other backticked tables declare types. Anything that
    does not parse leaves the defaults in place.
    """
    types: list[str] = []
    rels: dict[str, str | None] = {}
    in_rels = False
    for line in body.split("\n"):
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).lower()
            in_rels = "edge" in title or "rel" in title
            continue
        row = _ROW.match(line)
        if not row:
            continue
        token = row.group(1).strip()
        if in_rels:
            cells = [c.strip() for c in row.group(2).split("|")]
            inverse = cells[0].strip("`").strip() if cells else ""
            rels[token] = None if inverse.lower() in _NONE else inverse.split()[0]
        else:
            types.append(token)
    dialect = Dialect()
    if types:
        dialect.types = tuple(dict.fromkeys(["branch", *types]))
    if rels:
        dialect.rels = rels
    return dialect
