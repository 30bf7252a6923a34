"""The Station's OpenAPI document, generated from the registry of calls: each call's
body is its input schema (limits, closed sets and null as the signature declares
them), its 200 the call's result shape, and every other status it can answer the
error envelope."""

from __future__ import annotations

from typing import Any

from monkeyllm import shapes

from ..tools import describe
from . import auth
from .calls import STATION_CALLS
from .core import FORESTS_RESULT, HEALTH_RESULT

ENVELOPE = {"$ref": "#/components/schemas/Envelope"}
_TEXT = {
    "400": "Invalid request (E_SCHEMA, E_FRONTMATTER, E_QUERY_INVALID)",
    "401": "Not authenticated: no key, or an unknown, expired or revoked one (E_FORBIDDEN)",
    "403": "Forbidden: a capability the key lacks, a statement refused "
    "(E_FORBIDDEN, E_QUERY_FORBIDDEN, E_READONLY)",
    "404": "Unknown or not-granted forest, unknown call, a node absent or outside the "
    "key's scope (E_NOT_FOUND), or one that moved (E_MOVED, with moved_to)",
    "409": "The forest's writer lock or git is busy (E_LOCKED), a node other nodes "
    "link to (prune) or whose links cannot all be rewritten (transplant) "
    "(E_ANCHORED), or a node changed since the revision a graft names "
    "(E_CONFLICT)",
    "413": "The body is over 4 MiB (E_SCHEMA)",
    "500": "A bug (E_INTERNAL)",
    "502": "The model provider failed (E_PROVIDER)",
    "504": "Timed out (E_TIMEOUT)",
}
# Every call can answer these; the table adds what only some can.
_ALWAYS = ("400", "401", "403", "404", "413", "500")
_MORE = {
    "query": ("504",),
    "tend": ("409", "504"),
    "plant": ("409",),
    "graft": ("409",),
    "prune": ("409",),
    "transplant": ("409",),
    "answer": ("502", "504"),
}
_CHALLENGE = {
    "WWW-Authenticate": {
        "description": "Bearer, with resource_metadata naming the protected resource "
        'metadata (RFC 9728), and error="invalid_token" when the key sent is unknown, '
        "expired or revoked.",
        "schema": {"type": "string"},
    }
}


# One request per call, on ids of the sample forest: what a
# reader copies, and the first thing a schema-driven client sends.
EXAMPLES: dict[str, dict[str, Any]] = {
    "locate": {"query": "exchange policy deadlines", "k": 3},
    "look": {"id": "sales/exchange-policy"},
    "move": {"id": "sales/_index", "rel": "children"},
    "pick": {"id": "sales/exchange-policy", "section": "Deadlines"},
    "scan": {
        "parent_id": "sales",
        "filter": {"type": "dataset"},
        "recursive": True,
        "fields": ["id", "summary", "payload_type"],
    },
    "sniff": {"terms": ["NF-4412", "exchange"], "k": 5},
    "query": {
        "id": "sales/orders-2026",
        "sql": "SELECT region, COUNT(*) AS orders FROM orders GROUP BY region",
    },
    "harvest": {"query": "what is the deadline to exchange a retail order?", "k": 3},
    "answer": {"question": "what is the deadline to exchange a retail order?", "k": 3},
    "plant": {
        "node": {
            "id": "sales/exchange-policy-2027",
            "type": "note",
            "parent": "sales/_index",
            "title": "Exchange policy 2027",
            "summary": "Return and exchange windows for 2027, per channel.",
            "body": "# Exchange policy 2027\n\n## Deadlines\n\nThirty days.\n",
        },
        "dry_run": True,
    },
    "graft": {
        "id": "sales/exchange-policy",
        "patch": {"add_links": [{"rel": "related-to", "target": "sales/orders-2026"}]},
    },
    "tend": {
        "id": "sales/orders-2026",
        "sql": "UPDATE orders SET region = 'South' WHERE id = '1001'",
    },
    "history": {"id": "sales/exchange-policy", "limit": 5},
    "calendar": {"scope": "sales", "granularity": "year"},
    "coverage": {},
    "prune": {"id": "sales/discount-ladder", "force": True, "dry_run": True},
    "transplant": {
        "id": "sales/price-list",
        "new_id": "sales/pipeline/price-list",
        "dry_run": True,
    },
}


def statuses(name: str) -> list[str]:
    """The error statuses a call's route can answer, in order."""
    return sorted({*_ALWAYS, *_MORE.get(name, ())})


def _error(code: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": _TEXT[code],
        "content": {"application/json": {"schema": ENVELOPE}},
    }
    if code == "401":
        out["headers"] = _CHALLENGE
    return out


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def document(version: str) -> dict[str, Any]:
    """OpenAPI 3.1: one POST route per call, plus the Station's GET routes."""
    paths: dict[str, Any] = {}
    for name in sorted(STATION_CALLS):
        call = STATION_CALLS[name]
        responses = {"200": _ok("The call's result", call.output_schema())}
        responses |= {code: _error(code) for code in statuses(name)}
        paths[f"/v1/forests/{{forest}}/{name}"] = {
            "post": {
                "operationId": name,
                "summary": call.summary,
                "description": describe(call.doc),
                "tags": ["reads" if call.kind == "read" else call.kind + "s"],
                "parameters": [
                    {
                        "name": "forest",
                        "in": "path",
                        "required": True,
                        "description": "A forest this key may use (GET /v1/forests).",
                        "schema": {"type": "string", "minLength": 1},
                    }
                ],
                # A call whose parameters are all optional takes no body as {}.
                "requestBody": {
                    "required": any(p.required for p in call.params),
                    "content": {
                        "application/json": {
                            "schema": call.input_schema(),
                            **({"example": EXAMPLES[name]} if name in EXAMPLES else {}),
                        }
                    },
                },
                "responses": responses,
            }
        }
    paths["/v1/forests"] = {
        "get": {
            "operationId": "forests",
            "summary": "The forests this key may use.",
            "responses": {
                "200": _ok("The forests, each with the key's caps and roots", FORESTS_RESULT),
                "401": _error("401"),
                "500": _error("500"),
            },
        }
    }
    paths["/v1/health"] = {
        "get": {
            "operationId": "health",
            "security": [],
            "summary": "Liveness, no key needed.",
            "responses": {"200": _ok("The Station is up", HEALTH_RESULT), "500": _error("500")},
        }
    }
    metadata = shapes.obj(
        {"resource": shapes.STR, "bearer_methods_supported": shapes.STRS},
        {"resource_name": shapes.STR, "resource_documentation": shapes.STR},
    )
    for path, what in (("", "the Station"), ("/mcp", "the MCP endpoint")):
        paths[auth.WELL_KNOWN + path] = {
            "get": {
                "operationId": "resource_metadata" + path.replace("/", "_"),
                "security": [],
                "summary": f"Protected resource metadata (RFC 9728) of {what}: bearer keys.",
                "responses": {"200": _ok("The metadata document", metadata), "500": _error("500")},
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": "MonkeyLLM Station", "version": version},
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
            "schemas": {"Envelope": shapes.ENVELOPE},
        },
        "security": [{"bearer": []}, {"apiKey": []}],
    }
