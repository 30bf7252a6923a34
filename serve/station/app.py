"""The Station's ASGI application (Starlette) and its runner (uvicorn): REST under
``/v1`` and MCP at ``/mcp`` (:mod:`.mcp`), both serving a call through
:func:`~.core.serve_call` (key, forest, scoped call, audit row)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import monkeyllm
from monkeyllm.errors import NotFound, SchemaError, VineError
from monkeyllm.text import counted

from . import auth, mcp, openapi
from .core import Served, Station, serve_call
from .status import UNAUTHORIZED

WORKERS = 4
# A call's body, at most: the cap the SDK puts on /mcp (4 MiB), so that a request is
# refused alike on both (a plant of 20 nodes with long bodies fits many times over).
MAX_BODY = 4 << 20


class BodyTooLarge(SchemaError, status=413):
    """A request body over :data:`MAX_BODY`: ``E_SCHEMA``, answered with 413."""


async def read_body(request: Request, name: str) -> bytes:
    """The request's body, refused (``BodyTooLarge``) once it passes :data:`MAX_BODY`,
    by its declared length before anything is read, else as it streams in."""
    too_large = BodyTooLarge(
        f"{name}: the body is over {MAX_BODY >> 20} MiB",
        hint="Send less in one call: a plant takes up to 20 nodes, a batch look or "
        "pick a list of ids.",
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise too_large
    return bytes(raw)


def refused_route(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own refusals (no such route, a method the route does not take) as
    the error envelope, status and ``Allow`` kept, instead of plain text."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    where = f"{request.method} {request.url.path[:200]}"
    if status == 404:
        envelope = NotFound(
            f"no route {where}",
            hint="Calls are POST /v1/forests/{forest}/{call}; GET /v1/forests lists the "
            "forests, GET /v1/openapi.json describes every route.",
        ).envelope()
    elif status == 405:
        allow = (getattr(exc, "headers", None) or {}).get("Allow", "")
        envelope = SchemaError(
            f"{where} is not served: this route takes {allow or 'another method'}",
            hint="GET /v1/openapi.json lists every route with its method; each call is "
            "POST /v1/forests/{forest}/{call} with a JSON object body.",
        ).envelope()
    else:
        detail = exc.detail if isinstance(exc, HTTPException) else "refused"
        envelope = SchemaError(f"{where}: {detail}").envelope()
    headers = getattr(exc, "headers", None)
    return JSONResponse(envelope, status_code=status, headers=dict(headers or {}))


def timing(served: Served) -> str:
    """The ``Server-Timing`` header: the model's share (answer), then the whole call."""
    model_ms = served.result.get("model_ms")
    parts = (
        [f"model;dur={model_ms}"]
        if isinstance(model_ms, int | float) and not served.result.get("cached")
        else []
    )
    return ", ".join([*parts, f"host;dur={served.ms}"])


def _json(body: dict[str, Any], status: int, request: Request | None = None) -> JSONResponse:
    """A JSON answer; a 401 says how to authenticate (``WWW-Authenticate``)."""
    headers = (
        {"WWW-Authenticate": auth.challenge(request)}
        if status == UNAUTHORIZED and request is not None
        else None
    )
    return JSONResponse(body, status_code=status, headers=headers)


def build(
    station: Station, port: int | None = None, allow_hosts: list[str] | None = None
) -> Starlette:
    """The ASGI application for a Station: REST under ``/v1``, MCP at ``/mcp``.

    Args:
        station: The Station to serve.
        port: The port served, for the MCP Host check (loopback names on it); None
            accepts the loopback names on any port.
        allow_hosts: More Host values ``/mcp`` answers (``vine station serve
            --allow-host``): ``name`` on any port, or ``name:port``.
    """
    limiter = anyio.CapacityLimiter(WORKERS)
    endpoint = mcp.Endpoint(station, limiter, port, list(allow_hosts or []))

    async def call_route(request: Request) -> JSONResponse:
        name = request.path_params["call"]

        async def args_of() -> Any:
            raw = await read_body(request, name)
            try:
                return json.loads(raw) if raw.strip() else {}
            except (ValueError, UnicodeDecodeError):
                raise SchemaError(
                    f"{name}: the body is not valid JSON",
                    hint="Send the arguments as one JSON object with Content-Type: "
                    "application/json (GET /v1/openapi.json has an example of each call).",
                ) from None

        served = await serve_call(
            station,
            limiter,
            request.path_params["forest"],
            name,
            lambda: station.principal(request),
            args_of,
        )
        response = _json(served.result, served.status, request)
        response.headers["Server-Timing"] = timing(served)
        return response

    async def forests_route(request: Request) -> JSONResponse:
        try:
            who = station.principal(request)
        except VineError as exc:
            return _json(exc.envelope(), UNAUTHORIZED, request)
        return _json(
            {"forests": station.visible(who), "mode": "registry", "station": monkeyllm.__version__},
            200,
        )

    async def health_route(request: Request) -> JSONResponse:
        ids = station.forests.ids()
        return _json(
            {
                "status": "ok",
                "mode": "registry",
                "writable": True,
                "version": monkeyllm.__version__,
                "forests": {"served": len(ids)},
            },
            200,
        )

    async def openapi_route(request: Request) -> JSONResponse:
        return _json(openapi.document(monkeyllm.__version__), 200)

    async def resource_route(request: Request) -> JSONResponse:
        path = request.url.path[len(auth.WELL_KNOWN) :]
        return _json(auth.metadata(request, path), 200)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            async with endpoint.manager.run():
                yield
        finally:
            station.close()

    return Starlette(
        routes=[
            Route("/v1/health", health_route, methods=["GET"]),
            Route("/v1/openapi.json", openapi_route, methods=["GET"]),
            Route("/v1/forests", forests_route, methods=["GET"]),
            Route("/v1/forests/{forest}/{call}", call_route, methods=["POST"]),
            Route(mcp.PATH, endpoint=endpoint),
            Route(auth.WELL_KNOWN, resource_route, methods=["GET"]),
            Route(auth.WELL_KNOWN + mcp.PATH, resource_route, methods=["GET"]),
        ],
        lifespan=lifespan,
        exception_handlers={HTTPException: refused_route},
    )


def run(root: Path, host: str, port: int, allow_hosts: list[str] | None = None) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    from ..http import listen, url_host, uvicorn_server

    sock = listen(host, port, "station")
    station = Station(root)
    extra = list(allow_hosts or [])
    server = uvicorn_server(build(station, port, extra), host, port, "station")
    sys.stderr.write(
        f"vine station: REST at http://{url_host(host)}:{port}/v1, MCP over streamable "
        f"HTTP at http://{url_host(host)}:{port}{mcp.PATH} "
        f"({counted(len(station.forests.ids()), 'forest')} under {station.root})\n"
    )
    if not extra:
        sys.stderr.write(
            f"vine station: {mcp.PATH} answers only Host 127.0.0.1, localhost "
            f"and [::1] on port {port}; add --allow-host for other names\n"
        )
    sys.stderr.flush()
    server.run(sockets=[sock])
