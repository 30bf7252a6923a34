"""The shapes of the calls' results, as JSON Schema: the keys the contract promises
(each call's documented return keys), their types, and the keys that appear only sometimes.

Used as each MCP tool's ``outputSchema`` and as the Station's OpenAPI response
schemas. A shape names what is always there as required and leaves room for more
(``additionalProperties`` stays open): a later key is an addition, not a break.
:data:`ENVELOPE` is the shape of every expected failure.
"""

from __future__ import annotations

from typing import Any

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
NUM: dict[str, Any] = {"type": "number"}
BOOL: dict[str, Any] = {"type": "boolean"}
ANY: dict[str, Any] = {}
OBJ: dict[str, Any] = {"type": "object"}


def maybe(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def array(items: dict[str, Any]) -> dict[str, Any]:
    """A list of ``items``."""
    return {"type": "array", "items": items}


def obj(
    required: dict[str, Any], optional: dict[str, Any] | None = None, description: str = ""
) -> dict[str, Any]:
    """An object with these keys always present and those perhaps."""
    out: dict[str, Any] = {
        "type": "object",
        "required": list(required),
        "properties": {**required, **(optional or {})},
    }
    if description:
        out["description"] = description
    return out


STRS = array(STR)
TEXT = maybe(STR)
WINDOW = obj({"since": TEXT, "until": TEXT, "date_field": STR}, {"empty": BOOL})
CUT = {"truncated": BOOL, "hint": STR}
MATCH = obj({"section": TEXT, "line": INT, "snippet": STR})

ENVELOPE = obj(
    {
        "error": obj(
            {"code": STR, "message": STR},
            {"hint": STR, "holder": OBJ, "revision": STR},
            "What failed: a stable code, what happened, what to do.",
        )
    },
    description="The error envelope every expected failure answers.",
)

# Whether a locate or harvest fused the Canopy's vector ranking, and why not.
HYBRID = obj({"ran": BOOL}, {"model": STR, "stale": INT, "reason": STR, "note": STR})

LOCATE = obj(
    {
        "results": array(
            obj(
                {
                    "id": STR,
                    "kind": STR,
                    "type": TEXT,
                    "title": TEXT,
                    "summary": TEXT,
                    "trail": STRS,
                    "score": NUM,
                    "heat": NUM,
                },
                {"body_tokens": maybe(INT), "coverage": STR, "outline": STRS},
            )
        ),
        "truncated": BOOL,
        "hybrid": HYBRID,
    },
    {"hint": STR, "window": WINDOW, "searched": INT},
)

EDGE_OUT = obj({"rel": STR, "target": STR}, {"target_summary": STR})
EDGE_IN = obj({"rel": STR, "source": STR})
DIGEST = obj(
    {"id": STR},
    {
        "type": TEXT,
        "title": TEXT,
        "summary": TEXT,
        "tags": STRS,
        "confidence": maybe(NUM),
        "created": TEXT,
        "updated": TEXT,
        "source": TEXT,
        "aliases": STRS,
        "origin": STR,
        "edges_out": array(EDGE_OUT),
        "edges_in": array(EDGE_IN),
        "children": array(obj({"id": STR}, {"summary": STR})),
        "cross_trails": STRS,
        "coverage": STR,
        "outline": STRS,
        "query_manual": obj({"tables": OBJ, "example_queries": STRS}, {"problem": STR}),
        "sample_rows": OBJ,
        "notes": STR,
        "stats": obj({"body_tokens": maybe(INT), "degree": INT, "heat": NUM}),
        "truncated": BOOL,
        "truncated_fields": STRS,
        "revision": STR,
    },
)
LOOK = {
    "anyOf": [
        DIGEST,
        obj({"nodes": array(DIGEST), "missing": STRS, "dropped": STRS, "truncated": BOOL}),
    ]
}

MOVE = obj(
    {
        "neighbors": array(
            obj(
                {"id": STR, "rel": STR, "direction": STR, "type": TEXT, "summary": TEXT},
                {"heat": NUM},
            )
        ),
        "truncated": BOOL,
    },
    {"hint": STR},
)

PICK_ONE = obj(
    {"id": STR, "title": TEXT, "truncated": BOOL},
    {
        "body_tokens": INT,
        "section": STR,
        "body": STR,
        "outline": STRS,
        "hint": STR,
        "sections": array(obj({"section": STR, "body": STR, "body_tokens": INT}, {"header": STR})),
        "missing": STRS,
        "dropped": STRS,
        "total": INT,
        "returned": INT,
        "cut": BOOL,
        "next": STR,
        "revision": STR,
    },
)
PICK = {
    "anyOf": [
        PICK_ONE,
        obj(
            {"nodes": array(PICK_ONE), "missing": STRS, "dropped": STRS, "truncated": BOOL},
            {"hint": STR},
        ),
    ]
}

SCAN = obj(
    {"nodes": array(obj({"id": STR})), "truncated": BOOL, "total": INT, "returned": INT},
    {"next": STR, "hint": STR, "window": WINDOW},
)

SNIFF = obj(
    {
        "results": array(
            obj(
                {
                    "id": STR,
                    "type": TEXT,
                    "title": TEXT,
                    "trail": STRS,
                    "score": NUM,
                    "heat": NUM,
                    "match_count": INT,
                    "truncated_matches": BOOL,
                    "matches": array(MATCH),
                },
                {"body_tokens": maybe(INT)},
            )
        ),
        "scanned_nodes": INT,
        "truncated": BOOL,
    },
    {"hint": STR, "window": WINDOW},
)

QUERY = obj(
    {
        "columns": STRS,
        "rows": array(array(ANY)),
        "row_count": INT,
        "limited": BOOL,
        "elapsed_ms": NUM,
    },
    CUT,
)

CONTENT = obj({"section": TEXT}, {"body": STR, "body_tokens": INT, "outline": STRS, "header": STR})
HARVEST = obj(
    {
        "query": STR,
        "terms": STRS,
        "results": array(
            obj(
                {
                    "id": STR,
                    "title": TEXT,
                    "type": TEXT,
                    "trail": STRS,
                    "summary": TEXT,
                    "score": NUM,
                    "found_by": STRS,
                    "matches": array(MATCH),
                    "content": array(CONTENT),
                },
                {"notes": STR, "replaces": STR},
            )
        ),
        "truncated": BOOL,
        "hybrid": HYBRID,
    },
    {
        "hint": STR,
        "window": WINDOW,
        "searched": OBJ,
        "superseded_excluded": array(ANY),
        "trace": OBJ,
    },
)

PLANT = {
    "anyOf": [
        obj(
            {"id": STR, "trail": STRS},
            {"created": BOOL, "commit": TEXT, "dangling": STRS, "hint": STR},
        ),
        obj({"id": STR, "valid": BOOL, "dry_run": BOOL}),
        obj(
            {"count": INT},
            {
                "created": STRS,
                "commit": TEXT,
                "valid": BOOL,
                "dry_run": BOOL,
                "existing": STRS,
                "dangling": STRS,
                "hint": STR,
            },
        ),
    ]
}

GRAFT = obj(
    {
        "id": STR,
        "commit": TEXT,
        "fortified": array(obj({"rel": STR, "target": STR})),
        "trail": STRS,
    },
    {
        "summary_stale": BOOL,
        "revision": STR,
        "hint": STR,
        "sections_replaced": STRS,
        "sections_removed": STRS,
        "dangling": STRS,
    },
)

TEND = obj(
    {"id": STR, "rows_affected": INT, "payload_hash": TEXT, "commit": TEXT, "elapsed_ms": NUM}
)

HISTORY = obj(
    {
        "id": STR,
        "entries": array(
            obj({"commit": STR, "at": STR, "action": STR, "message": STR}, {"by": STR})
        ),
        "truncated": BOOL,
    },
    {"hint": STR},
)

CALENDAR = obj(
    {
        "date_field": STR,
        "granularity": STR,
        "buckets": array(obj({"period": STR, "since": STR, "until": STR, "nodes": INT})),
        "undated": INT,
        "truncated": BOOL,
    },
    {
        "range": obj({"first": TEXT, "last": TEXT, "nodes": INT}),
        "scope": STR,
        "window": WINDOW,
        "hint": STR,
    },
)

COVERAGE = obj(
    {
        "roots": array(
            obj(
                {"id": STR, "nodes": INT, "branches": INT},
                {"title": TEXT, "first": TEXT, "last": TEXT, "origin": TEXT, "without_origin": INT},
            )
        ),
        "truncated": BOOL,
    },
    {
        "total": INT,
        "types": OBJ,
        "sources": OBJ,
        "undated": INT,
        "system": INT,
        "date_field": STR,
        "scope": STR,
        "hint": STR,
    },
)

ANCHOR = obj({"source": STR, "rel": STR})
PRUNE = obj(
    {"id": STR, "pruned": BOOL},
    {
        "dry_run": BOOL,
        "commit": TEXT,
        "backlinks_removed": INT,
        "type": TEXT,
        "title": TEXT,
        "anchors": array(ANCHOR),
        "anchor_count": INT,
        "indexes": STRS,
        "payload_moved": TEXT,
    },
)

TRANSPLANT = obj(
    {"id": STR, "new_id": STR, "backlinks_rewritten": INT, "trail": STRS},
    {"commit": TEXT, "dry_run": BOOL, "sources": STRS, "source_count": INT},
)

RESULTS: dict[str, dict[str, Any]] = {
    "locate": LOCATE,
    "look": LOOK,
    "move": MOVE,
    "pick": PICK,
    "scan": SCAN,
    "sniff": SNIFF,
    "query": QUERY,
    "harvest": HARVEST,
    "plant": PLANT,
    "graft": GRAFT,
    "tend": TEND,
    "history": HISTORY,
    "calendar": CALENDAR,
    "coverage": COVERAGE,
    "prune": PRUNE,
    "transplant": TRANSPLANT,
}
"""Each engine call's result."""


def object_root(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``"type": "object"`` at its root (what MCP asks of an output
    schema), its alternatives kept."""
    return schema if schema.get("type") == "object" else {"type": "object", **schema}


def or_envelope(schema: dict[str, Any]) -> dict[str, Any]:
    """A result or the error envelope: what a tool's structured content can be."""
    return {"type": "object", "anyOf": [schema, ENVELOPE]}
