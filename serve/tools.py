"""The tool list: one tool per engine call, generated from the registry, plus the three
that exist only over MCP (``forests``, ``view``, ``ingest``).

A tool's description is its call's docstring without the ``Args:`` block (the
parameters are described in the schema), its input schema is the call's own, and its
annotations are set explicitly:

- reads and ``harvest`` are read-only, idempotent and closed-world (heat they deposit
  is ranking state, not content);
- ``plant`` and ``ingest`` only add (ingest refreshes nodes it created itself from the
  same upload), so they are not destructive; a repeat answers differently (an
  existing id, an unchanged file), so they are not idempotent;
- ``graft`` can replace a body or a section and remove links, ``tend`` runs
  ``UPDATE`` and ``DELETE`` on payloads that live outside git, ``prune`` removes a
  node (and, forced, the links to it) and ``transplant`` rewrites every node that
  links to the one it moves: all four are destructive, whatever git history keeps,
  so a host asks before running them;
- nothing reaches outside the forest (``openWorldHint`` is false everywhere).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from monkeyllm import shapes
from monkeyllm.registry import CALLS, Call

# Every engine call but ``answer`` (which needs a model and lives on the Station).
ENGINE_TOOLS = (
    "locate",
    "look",
    "move",
    "pick",
    "scan",
    "sniff",
    "query",
    "harvest",
    "history",
    "calendar",
    "coverage",
    "plant",
    "graft",
    "tend",
    "prune",
    "transplant",
)
EXTRA_TOOLS = ("forests", "view", "ingest")

# Uploads through the ingest tool (the HTTP transport also caps a request at 4 MiB).
MAX_UPLOAD_FILES = 200
MAX_UPLOAD_BYTES = 4 << 20


@dataclass(frozen=True)
class Hints:
    """MCP tool annotations, every one set."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False

    def as_dict(self) -> dict[str, bool]:
        """The annotation object as MCP spells it."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


READ = Hints(read_only=True, destructive=False, idempotent=True)
HINTS: dict[str, Hints] = {
    "plant": Hints(read_only=False, destructive=False, idempotent=False),
    "graft": Hints(read_only=False, destructive=True, idempotent=False),
    "tend": Hints(read_only=False, destructive=True, idempotent=False),
    "prune": Hints(read_only=False, destructive=True, idempotent=False),
    "transplant": Hints(read_only=False, destructive=True, idempotent=False),
    "ingest": Hints(read_only=False, destructive=False, idempotent=False),
}


@dataclass(frozen=True)
class ToolSpec:
    """One tool as served: its wire name, the call it runs, and what a client sees."""

    name: str
    call: str
    title: str
    description: str
    input_schema: dict[str, Any]
    hints: Hints
    writes: bool = field(default=False)
    result_schema: dict[str, Any] = field(default_factory=dict)

    @property
    def output_schema(self) -> dict[str, Any]:
        """What the tool's structured content is: its result or the error envelope."""
        return output_schema(self.result_schema)


def output_schema(result: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``outputSchema``: the call's result or the error envelope, in draft-07.

    The schema names its dialect: it uses nothing a later draft adds, every JSON Schema
    library reads draft-07, and a client that checks each schema before using it (the
    1.x SDK does so on every call) checks it five times faster than against the 2020-12
    meta-schema that an unnamed dialect means.
    """
    return {"$schema": DRAFT_07, **shapes.or_envelope(result)}


def describe(doc: str) -> str:
    """A docstring without its ``Args:`` block: what the call does and when to use it."""
    lines = []
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Returns:", "Raises:"):
            break
        lines.append(line)
    return "\n".join(lines).strip()


DRAFT_07 = "http://json-schema.org/draft-07/schema#"

FOREST_PARAM = {
    "type": "string",
    "minLength": 1,
    "description": "The forest to use (see the forests tool).",
}

_EXTRA_DOCS = {
    "forests": (
        "The forests this server serves: their ids, whether each is open and writable, "
        "whether another process holds it open for writing (locked: writes answer "
        "E_LOCKED until it lets go), and the mode (single forest, or a registry where "
        "every tool takes forest).\n\n"
        "Reach for it first when a tool asks for forest, or to learn whether writes "
        "are allowed here."
    ),
    "view": (
        "A media node's image as MCP image content, beside a small JSON header "
        "(id, media_type, size, payload_hash).\n\n"
        "Reach for it when a digest says a node is an image and you need to see it. "
        "Local images only, at most 6 MiB; anything else answers E_SCHEMA, a missing "
        "original E_NOT_FOUND."
    ),
    "ingest": (
        "Turn text and files sent by the client into nodes, in one commit: notes "
        "(.md, .txt), tables (.csv, .tsv, flat .json arrays), JSON documents and "
        "images; folders in the names become branches under into.\n\n"
        "Reach for it to add material a person gave you as files; plant is the call "
        "for one node you composed yourself. Re-sending the same name and content "
        "changes nothing; changed content refreshes the node it made."
    ),
}

_EXTRA_SCHEMAS: dict[str, dict[str, Any]] = {
    "forests": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    "view": {
        "type": "object",
        "properties": {"id": {"type": "string", "minLength": 1, "description": "A media node id."}},
        "required": ["id"],
        "additionalProperties": False,
    },
    "ingest": {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_UPLOAD_FILES,
                "description": "The files: a relative name (folders become branches) and "
                "either content (UTF-8 text) or b64 (bytes, base64).",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "e.g. notes/a.md"},
                        "content": {"type": "string", "description": "The text."},
                        "b64": {"type": "string", "description": "The bytes, base64."},
                    },
                    "required": ["name"],
                    "additionalProperties": False,
                },
            },
            "into": {
                "type": "string",
                "default": "_index",
                "description": "The destination branch; missing ones are planted.",
            },
        },
        "required": ["files"],
        "additionalProperties": False,
    },
}


_ENTRY = shapes.obj({"path": shapes.STR}, {"id": shapes.STR, "reason": shapes.STR})
_EXTRA_RESULTS: dict[str, dict[str, Any]] = {
    "forests": shapes.obj(
        {
            "forests": shapes.array(
                shapes.obj(
                    {
                        "id": shapes.STR,
                        "active": shapes.BOOL,
                        "writable": shapes.BOOL,
                        "locked": shapes.BOOL,
                    }
                )
            ),
            "mode": {"type": "string", "enum": ["single", "registry"]},
        }
    ),
    "view": shapes.obj(
        {
            "id": shapes.STR,
            "media_type": shapes.STR,
            "size": shapes.INT,
            "payload_hash": shapes.TEXT,
        }
    ),
    "ingest": shapes.obj(
        {
            "into": shapes.STR,
            "commit": shapes.TEXT,
            "counts": {"type": "object", "additionalProperties": shapes.INT},
        },
        {
            bucket: shapes.array(_ENTRY)
            for bucket in ("created", "updated", "unchanged", "unsupported", "failed", "stale")
        }
        | {"branches": shapes.array(shapes.ANY), "elapsed_ms": shapes.NUM},
    ),
}


def _title(name: str) -> str:
    return name.capitalize()


def _engine_tool(call: Call, prefix: str, registry: bool) -> ToolSpec:
    schema = call.input_schema()
    if registry:
        schema = _with_forest(schema)
    hints = READ if call.read_only else HINTS[call.name]
    return ToolSpec(
        prefix + call.name,
        call.name,
        _title(call.name),
        describe(call.doc),
        schema,
        hints,
        writes=not call.read_only,
        result_schema=call.output_schema(),
    )


def _with_forest(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        **schema,
        "properties": {"forest": FOREST_PARAM, **schema["properties"]},
        "required": ["forest", *schema["required"]],
    }


def tool_specs(prefix: str = "", registry: bool = False) -> list[ToolSpec]:
    """Every tool this server offers, in a stable order (forests first)."""
    specs = [
        ToolSpec(
            prefix + "forests",
            "forests",
            "Forests",
            _EXTRA_DOCS["forests"],
            _EXTRA_SCHEMAS["forests"],
            READ,
            result_schema=_EXTRA_RESULTS["forests"],
        )
    ]
    specs += [_engine_tool(CALLS[name], prefix, registry) for name in ENGINE_TOOLS]
    for name in ("view", "ingest"):
        schema = _EXTRA_SCHEMAS[name]
        specs.append(
            ToolSpec(
                prefix + name,
                name,
                _title(name),
                _EXTRA_DOCS[name],
                _with_forest(schema) if registry else schema,
                HINTS.get(name, READ),
                writes=name == "ingest",
                result_schema=_EXTRA_RESULTS[name],
            )
        )
    return specs
