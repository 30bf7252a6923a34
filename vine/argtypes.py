"""The parameter types of the calls, limits included: what the call signatures in
:mod:`monkeyllm.vine` are written with, so that every bound and closed set lives in
one place and every surface (the engine's checks, MCP schemas, OpenAPI, CLI help)
reads it from there.

Annotations here are evaluated as the module loads (no ``from __future__ import
annotations``): a ``TypedDict`` of strings costs milliseconds at every ``vine`` start.
"""

import re
from typing import Annotated, Any, Literal, TypedDict

from . import budget
from .limits import Apart, Described, MaxLen, MinLen, Open, Pattern, Range, Shape

# Whitespace as str.strip() sees it, spelled out: ``\s`` differs between Python's
# regular expressions and JSON Schema's (ECMAScript's) at a few code points.
SPACE = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
INK = f"[^{SPACE}]"
"""One character that is not whitespace."""
NO_NUL = Pattern("^[^\\x00]*$", "free of NUL characters")

# -- ids and words ---------------------------------------------------------------------

Id = str
"""A node id (``sales/exchange-policy``; ``.md`` and slashes around it are ignored; an
id that is not there, the empty one included, is not found)."""
NewId = Annotated[str, MinLen(1)]
"""The id of a node to create."""
Text = Annotated[str, MinLen(1)]
"""A string with at least one character."""
Term = Annotated[
    str,
    Pattern(f"{INK}[\\s\\S]*{INK}", "at least 2 characters besides spaces"),
    MaxLen(budget.HARVEST_TERM_CHARS_MAX),
]
"""A literal substring searched in bodies."""
Terms = Term | Annotated[list[Term], MinLen(1), MaxLen(budget.SNIFF_TERMS_MAX)]
Question = Annotated[str, Pattern(INK, "non-blank"), MaxLen(budget.HARVEST_QUERY_CHARS_MAX)]
Query = Annotated[str, MaxLen(budget.LOCATE_QUERY_CHARS_MAX)]
"""locate's query (one of only function words or punctuation answers empty, with a hint)."""
Words = Annotated[str, Pattern(INK, "non-blank")]
"""A string with something in it besides spaces."""
Title = Annotated[str, Pattern(INK, "non-blank"), NO_NUL]
"""A node's title (it heads its body)."""
Summary = Annotated[str, Pattern(INK, "non-blank"), NO_NUL, MaxLen(4 * budget.SUMMARY_MAX)]
"""A node's scent: 1 to 3 sentences (at most 60 tokens)."""
Body = Annotated[str, NO_NUL]
"""Markdown: text, so no NUL (a file holding one is binary)."""
Alias = Annotated[str, Pattern(INK, "non-blank"), MaxLen(80)]
Aliases = Annotated[list[Alias], MaxLen(16)]
Uri = Annotated[str, Pattern(r"^[^\x00-\x20\x7f]+$", "one URI, without spaces"), MaxLen(2048)]

# -- closed sets -------------------------------------------------------------------------

Scope = Literal["all", "branches", "notes", "bananas"]
"""locate's scope: the keys of :data:`monkeyllm.kinds.SCOPES` (notes: every leaf)."""
Direction = Literal["out", "in", "both"]
DateField = Literal["created", "updated"]
LocateInclude = Literal["outline"]
Hybrid = bool | Literal["auto"]
"""Whether locate and harvest fuse the Canopy's vector ranking: "auto", true or false."""
LookField = Literal[
    "id",
    "type",
    "title",
    "summary",
    "tags",
    "confidence",
    "created",
    "updated",
    "source",
    "aliases",
    "origin",
    "edges_out",
    "edges_in",
    "children",
    "cross_trails",
    "coverage",
    "outline",
    "query_manual",
    "sample_rows",
    "notes",
    "stats",
    "revision",
]
ScanField = Literal[
    "id",
    "kind",
    "type",
    "title",
    "summary",
    "tags",
    "aliases",
    "created",
    "updated",
    "confidence",
    "source",
    "entity_kind",
    "payload_type",
    "parent",
    "trail",
    "coverage",
    "body_tokens",
    "outline",
    "heat",
    "origin",
]

# -- dates ---------------------------------------------------------------------------------

_YEAR = "(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_MONTH = "(0[1-9]|1[0-2])"


def _is_bound(value: str) -> bool:
    if re.fullmatch(f"{_YEAR}(-{_MONTH})?", value):
        return True
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        return False
    from datetime import date

    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


DateBound = Annotated[
    str,
    Shape(
        {
            "anyOf": [
                {"pattern": f"^{_YEAR}$"},
                {"pattern": f"^{_YEAR}-{_MONTH}$"},
                {"format": "date"},
            ]
        },
        _is_bound,
        "a year (YYYY), a month (YYYY-MM) or a day (YYYY-MM-DD)",
    ),
]
"""One end of a date window; a year or a month covers its whole period."""

# -- counts --------------------------------------------------------------------------------


def _harvest_max_k() -> int:
    from .reads.harvest import max_k

    return max_k()


LocateK = Annotated[int, Range(1, 1000)]
SniffK = Annotated[int, Range(1, budget.SNIFF_K_MAX)]
ScanLimit = Annotated[int, Range(1, budget.SCAN_LIMIT_MAX)]
HarvestK = Annotated[int, Range(1, _harvest_max_k)]
Ids = Annotated[list[Id], MinLen(1)]
PageCursor = Annotated[
    str,
    Pattern(
        "^(b[0-9]{1,12}(:[0-9]{1,12})?)?$", "'' (the first page) or a cursor like 'b7' or 'b7:120'"
    ),
]
Sections = Text | Annotated[list[Text], MinLen(1), MaxLen(budget.PICK_SECTIONS_MAX)]

# -- nested objects -------------------------------------------------------------------------

Scalar = str | Annotated[float, Range(-(2**63), 2**63 - 1)]


class ScanFilter(TypedDict, total=False):
    """scan's filter: every key given must hold (AND)."""

    tags_any: Text | Annotated[list[Text], MinLen(1)]
    updated_after: str
    updated_before: str
    created_after: str
    created_before: str
    min_confidence: float
    origin_prefix: str
    kind: Literal["note", "banana", "branch"]  # kinds.FILTER_KINDS: note is every leaf
    type: Scalar
    source: Scalar
    entity_kind: Scalar
    payload_type: Scalar
    origin: Scalar
    parent: Scalar
    title: Scalar
    summary: Scalar
    created: Scalar
    updated: Scalar
    confidence: Scalar
    coverage: Scalar
    id: Scalar


class _LinkRequired(TypedDict):
    rel: Words
    target: Words


class _Link(_LinkRequired, total=False):
    """A typed edge to another node (more keys, like a note, ride along)."""

    confidence: Annotated[float, Range(0, 1)]


Link = Annotated[_Link, Open()]


class _Unlink(TypedDict):
    """A link to remove: its rel and target (a link that is not there is no error)."""

    rel: str
    target: str


Unlink = Annotated[_Unlink, Open()]


class Section(TypedDict):
    """A section: its header and its markdown body."""

    header: Annotated[
        str,
        Pattern(f"^[^\\r\\n]*[^#{SPACE}][^\\r\\n]*$", "a one-line header with words in it"),
        NO_NUL,
    ]
    body: Body


class _NodeRequired(TypedDict):
    id: NewId
    type: Words
    parent: Words
    title: Title
    summary: Summary


class PlantNode(_NodeRequired, total=False):
    """A node to plant; keys beyond these pass into its frontmatter."""

    body: Body
    tags: list[Words]
    aliases: Aliases
    links: Annotated[list[Link], MaxLen(50)]
    confidence: Annotated[float, Range(0, 1)]
    source: Literal["manual", "ingest", "agent"]
    origin: Uri
    schema: dict[str, Any]
    rows: dict[str, Any]


Node = Annotated[PlantNode, Open(), Described()]
Nodes = Node | Annotated[list[Node], MinLen(1), MaxLen(20)]


class Frontmatter(TypedDict, total=False):
    """The frontmatter graft may set (origin null removes it)."""

    title: Title
    summary: Summary
    tags: list[Words]
    confidence: Annotated[float, Range(0, 1)]
    aliases: Aliases
    origin: Uri | None


class Patch(TypedDict, total=False):
    """What graft changes: any of these, in one commit; if_revision, the revision look
    or pick gave, refuses it (E_CONFLICT) when the node changed since."""

    set_frontmatter: Frontmatter
    add_links: list[Link]
    remove_links: list[Unlink]
    append_section: Section
    replace_section: Section
    replace_body: Body
    if_revision: Annotated[str, Pattern("^[0-9a-fA-F]{7,40}$", "7 to 40 hex digits")]


Edit = Annotated[
    Patch,
    Described(),
    MinLen(1),
    Apart(
        "replace_body", "append_section", "replace_body cannot be combined with a section operation"
    ),
    Apart(
        "replace_body",
        "replace_section",
        "replace_body cannot be combined with a section operation",
    ),
]
