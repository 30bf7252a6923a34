"""The Station's MCP endpoint: ``/mcp``, streamable HTTP (stateless, JSON responses),
beside the REST routes and behind the same keys.

Tools: ``forests`` (the forests this key may use) and one per Station call, each taking
``forest`` first. Every HTTP request is checked before the SDK sees it: its Host and
Origin (DNS-rebinding protection, ``421 E_HOST_NOT_ALLOWED``), then its key
(``Authorization: Bearer`` or ``X-API-Key``; a missing, unknown or revoked key answers
``401 E_FORBIDDEN`` like REST, with ``WWW-Authenticate`` naming the protected resource
metadata). The verified principal travels in the ASGI scope to the
tool handler, which runs the call through :func:`~.core.serve_call` exactly as REST
does: same scoping, same envelopes, one audit row per call.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp.types as types
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse

import monkeyllm
from monkeyllm.errors import Forbidden, SchemaError, VineError, is_error
from monkeyllm.registry import Call

from ..http import LOCAL_HOSTS, allowed, refusals_as_envelopes
from ..server import plain
from ..tools import FOREST_PARAM, HINTS, READ, Hints, describe, output_schema
from . import auth
from .calls import STATION_CALLS
from .core import FORESTS_RESULT, Station, audit_call, serve_call
from .keys import Principal
from .policy import NEEDS
from .status import UNAUTHORIZED

PATH = "/mcp"
# Where the endpoint leaves the verified principal for the tool handler.
SCOPE_KEY = "monkeyllm.principal"
# answer reads only, but asks a model: the same question may answer differently, and
# the model is outside the forest.
ANSWER_HINTS = Hints(read_only=True, destructive=False, idempotent=False, open_world=True)
# A write call the table below does not know yet: assume the worst.
UNKNOWN_WRITE = Hints(read_only=False, destructive=True, idempotent=False)

FORESTS_DOC = (
    "The forests this key may use: each one's id, the capabilities the key holds "
    "there (caps), the index ids it starts from (roots) and whether another process "
    "holds the forest open for writing, so writes answer E_LOCKED (locked); station is "
    "the server's version.\n\n"
    "Reach for it first: every other tool takes one of these ids as forest."
)
FORESTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "required": [],
    "additionalProperties": False,
}


def hints(name: str, call: Call) -> Hints:
    """A Station call's annotations: the local server's, plus answer's own."""
    if name == "answer":
        return ANSWER_HINTS
    if name in HINTS:
        return HINTS[name]
    return READ if call.read_only else UNKNOWN_WRITE


def with_forest(schema: dict[str, Any]) -> dict[str, Any]:
    """A call's input schema with ``forest`` as its first, required property."""
    return {
        **schema,
        "properties": {"forest": FOREST_PARAM, **schema["properties"]},
        "required": ["forest", *[r for r in schema.get("required", []) if r != "forest"]],
    }


def tools() -> list[types.Tool]:
    """Every tool, in a stable order: forests, then the Station calls."""
    listed = [
        types.Tool(
            name="forests",
            title="Forests",
            description=FORESTS_DOC,
            input_schema=FORESTS_SCHEMA,
            output_schema=output_schema(FORESTS_RESULT),
            annotations=types.ToolAnnotations(title="Forests", **READ.as_dict()),
        )
    ]
    for name, call in STATION_CALLS.items():
        title = name.capitalize()
        listed.append(
            types.Tool(
                name=name,
                title=title,
                description=describe(call.doc),
                input_schema=with_forest(call.input_schema()),
                output_schema=output_schema(call.output_schema()),
                annotations=types.ToolAnnotations(title=title, **hints(name, call).as_dict()),
            )
        )
    return listed


def instructions(names: list[str]) -> str:
    """What the server tells a client at initialization (naming every tool)."""
    return (
        "A MonkeyLLM Station: forests of markdown knowledge behind API keys. "
        f"Tools: {', '.join(names)}. Call forests first; every other tool takes "
        "forest. Start with locate (a question) or sniff (an exact string), look at "
        "candidates before pick, use harvest for evidence in one round trip and "
        "answer for a prose answer from the forest's model. Errors come back as "
        '{"error": {code, message, hint}} with isError set.'
    )


def render(result: dict[str, Any]) -> types.CallToolResult:
    """A result as structured content and one compact JSON text block; an envelope
    sets ``isError``."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=result,
        is_error=is_error(result),
    )


def build_server(station: Station, limiter: anyio.CapacityLimiter) -> Any:
    """The SDK server: the tool list and one handler that serves a call as REST does."""
    listed = tools()

    def principal(ctx: Any) -> Principal:
        request = ctx.request
        who = request.scope.get(SCOPE_KEY) if isinstance(request, Request) else None
        if not isinstance(who, Principal):  # the endpoint always sets it; never trust
            raise auth.unauthenticated()
        return who

    # A key is listed the tools its capabilities let it call (forests always), as a
    # --readonly vine serve lists no writes: an agent is not offered plant, tend or
    # answer only to be refused. Named anyway, they answer E_FORBIDDEN (403).
    listings: dict[frozenset[str], types.ListToolsResult] = {}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        policy = principal(ctx).policy
        listing = listings.get(policy.caps)
        if listing is None:
            listing = types.ListToolsResult(
                tools=[
                    t
                    for t in listed
                    if t.name == "forests" or policy.may(NEEDS.get(t.name, "admin"))
                ]
            )
            listings[policy.caps] = listing
        return listing

    # Station.call checks arguments itself and answers E_SCHEMA envelopes.
    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        args = dict(params.arguments or {})
        if name == "forests":
            try:
                who = principal(ctx)
                if args:
                    raise SchemaError(
                        f"forests: unknown parameter {sorted(args)[0]!r}",
                        hint="forests takes no parameters.",
                    )
            except VineError as exc:
                return render(exc.envelope())
            return render({"forests": station.visible(who), "station": monkeyllm.__version__})
        forest = args.pop("forest", None)

        async def args_of() -> Any:
            return args

        served = await serve_call(station, limiter, forest, name, lambda: principal(ctx), args_of)
        return render(served.result)

    return plain(
        "monkeyllm-station",
        monkeyllm.__version__,
        instructions([t.name for t in listed]),
        listed,
        call_tool,
        list_tools,
    )


def hosts_for(port: int | None, extra: list[str]) -> tuple[list[str], list[str]]:
    """The Host and Origin values ``/mcp`` answers: :func:`~..http.allowed`'s (the
    loopback names on ``port``, plus ``--allow-host`` values); with no port known, the
    loopback names on any port."""
    if port is None:
        return allowed(0, [*LOCAL_HOSTS, *extra])
    return allowed(port, extra)


class Endpoint:
    """The ASGI endpoint at ``/mcp``: the Host check, then the key, then the SDK.

    A class instance, so that Starlette routes the raw ASGI call to it.
    """

    def __init__(
        self,
        station: Station,
        limiter: anyio.CapacityLimiter,
        port: int | None,
        allow_hosts: list[str],
    ) -> None:
        self.station = station
        hosts, origins = hosts_for(port, allow_hosts)
        settings = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )
        self.guard = TransportSecurityMiddleware(settings)
        self.manager = StreamableHTTPSessionManager(
            app=build_server(station, limiter),
            json_response=True,
            stateless=True,
            security_settings=settings,
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope)
        refused = await self.guard.validate_request(request, is_post=False)
        if refused is not None:
            await JSONResponse(
                _refusal(refused.status_code, request), status_code=refused.status_code
            )(scope, receive, send)
            return
        try:
            who = self.station.principal(request)
        except VineError as exc:
            envelope = exc.envelope()
            await anyio.to_thread.run_sync(
                lambda: audit_call(self.station, None, None, "mcp", envelope, UNAUTHORIZED, 0.0)
            )
            await JSONResponse(
                envelope,
                status_code=UNAUTHORIZED,
                headers={"WWW-Authenticate": auth.challenge(request, PATH)},
            )(scope, receive, send)
            return
        if scope.get("method") != "POST":
            # Stateless, JSON answers: no event stream to open with GET, no session to
            # end with DELETE.
            await JSONResponse(
                SchemaError(
                    f"{scope.get('method')} /mcp is not served: this Station answers each "
                    "POST of JSON-RPC with JSON",
                    hint="POST JSON-RPC messages to /mcp.",
                ).envelope(),
                status_code=405,
                headers={"Allow": "POST"},
            )(scope, receive, send)
            return
        scope[SCOPE_KEY] = who
        await self.manager.handle_request(scope, receive, refusals_as_envelopes(send))


def _refusal(status: int, request: Request) -> dict[str, Any]:
    if status == 421:
        host = request.headers.get("host", "")
        return {
            "error": {
                "code": "E_HOST_NOT_ALLOWED",
                "message": f"this Station does not answer MCP for Host {host[:200]!r}",
                "hint": "Start it with --allow-host NAME to answer that name.",
            }
        }
    return Forbidden(
        "this Station does not answer MCP for that Origin",
        hint="Browsers on other sites may not call it; --allow-host adds a name.",
    ).envelope()
