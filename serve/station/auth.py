"""How the Station says who may call it, in the words standard clients read.

A refused key answers 401 with ``WWW-Authenticate: Bearer`` naming the protected
resource metadata (RFC 9728), and that document says the Station takes bearer keys
in the ``Authorization`` header and runs no authorization server: a client that
follows the MCP authorization spec reads it and asks for the key it was configured
with, instead of starting an OAuth login that cannot succeed (it names no
authorization server: RFC 9728 makes ``authorization_servers`` optional, and keys are
minted by the operator, not by an OAuth flow). Both 401 and 403 keep
the ``E_FORBIDDEN`` code (clients tell them apart by status); their messages say
which it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import monkeyllm
from monkeyllm.errors import Forbidden

if TYPE_CHECKING:
    from starlette.requests import Request

WELL_KNOWN = "/.well-known/oauth-protected-resource"
HINT = "Send Authorization: Bearer <key> (or X-API-Key: <key>); the operator mints keys."


def unauthenticated() -> Forbidden:
    """The 401: no key, or an unknown, expired or revoked one."""
    return Forbidden(
        "not authenticated (401): no API key, or an unknown, expired or revoked one", hint=HINT
    )


def base_url(request: Request) -> str:
    """The Station's own origin as this request reached it."""
    return str(request.base_url).rstrip("/")


def metadata_url(request: Request, resource_path: str = "") -> str:
    """Where the metadata of the resource at ``resource_path`` is served (RFC 9728:
    the well-known prefix, then the resource's path)."""
    return base_url(request) + WELL_KNOWN + resource_path


def presented(request: Request) -> bool:
    """True when the request carries a key at all (``Authorization: Bearer`` or
    ``X-API-Key``), whether or not it is a valid one."""
    header = request.headers.get("authorization", "")
    return bool(header[7:].strip() if header.lower().startswith("bearer ") else "") or bool(
        request.headers.get("x-api-key")
    )


def challenge(request: Request, resource_path: str = "") -> str:
    """The ``WWW-Authenticate`` value of a 401. As RFC 6750 (section 3.1) spells it:
    no error code when no key came, ``invalid_token`` for a key that is unknown,
    expired or revoked. (A 403 carries none: the key is fine, the call is not.)"""
    error = 'error="invalid_token", ' if presented(request) else ""
    return (
        f'Bearer realm="monkeyllm-station", {error}'
        f'resource_metadata="{metadata_url(request, resource_path)}"'
    )


def metadata(request: Request, resource_path: str = "") -> dict[str, Any]:
    """The protected resource metadata document (RFC 9728) of ``resource_path``
    (``""`` for the whole Station, ``/mcp`` for its MCP endpoint)."""
    base = base_url(request)
    return {
        "resource": base + resource_path,
        "resource_name": "MonkeyLLM Station",
        "bearer_methods_supported": ["header"],
        "resource_documentation": base + "/v1/openapi.json",
        "monkeyllm_station": monkeyllm.__version__,
    }
