"""The Station's OpenAPI document, generated from the registry of calls."""

from __future__ import annotations

from typing import Any

from ..tools import describe
from .calls import STATION_CALLS

_ERRORS = {"400": "Invalid request or query", "401": "No key, or a bad or revoked one",
           "403": "Capability or query forbidden", "404": "Unknown or not-granted forest, "
           "unknown call, a node absent or outside the key's scope, or one that moved "
           "(E_MOVED, with moved_to)",
           "409": "Forest locked, or a node other nodes link to (prune) or whose "
                  "links cannot all be rewritten (transplant)",
           "500": "Internal error", "504": "Timed out"}


def document(version: str) -> dict[str, Any]:
    """OpenAPI 3.1: one POST route per call, its body the call's input schema."""
    envelope = {"$ref": "#/components/schemas/Envelope"}
    paths: dict[str, Any] = {}
    for name in sorted(STATION_CALLS):
        call = STATION_CALLS[name]
        responses: dict[str, Any] = {"200": {"description": "The call's result",
                                             "content": {"application/json": {
                                                 "schema": {"type": "object"}}}}}
        for code, text in _ERRORS.items():
            responses[code] = {"description": text,
                               "content": {"application/json": {"schema": envelope}}}
        paths[f"/v1/forests/{{forest}}/{name}"] = {"post": {
            "operationId": name, "summary": call.summary,
            "description": describe(call.doc),
            "tags": ["reads" if call.kind == "read" else call.kind + "s"],
            "parameters": [{"name": "forest", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": call.input_schema()}}},
            "responses": responses,
        }}
    paths["/v1/forests"] = {"get": {"operationId": "forests",
                                    "summary": "The forests this key may use.",
                                    "responses": {"200": {"description": "Forests"}}}}
    paths["/v1/health"] = {"get": {"operationId": "health", "security": [],
                                   "summary": "Liveness, no key needed.",
                                   "responses": {"200": {"description": "ok"}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "MonkeyLLM Station", "version": version},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"},
                                "apiKey": {"type": "apiKey", "in": "header",
                                           "name": "X-API-Key"}},
            "schemas": {"Envelope": {
                "type": "object", "required": ["error"],
                "properties": {"error": {"type": "object", "required": ["code", "message"],
                                         "properties": {"code": {"type": "string"},
                                                        "message": {"type": "string"},
                                                        "hint": {"type": "string"}}}}}},
        },
        "security": [{"bearer": []}, {"apiKey": []}],
    }
