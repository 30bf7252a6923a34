"""The Station's ASGI application (Starlette) and its runner (uvicorn): REST under
``/v1`` and MCP at ``/mcp`` (:mod:`.mcp`), both serving a call through
:func:`serve_call` (key, forest, scoped call, audit row).

Every engine call runs in a worker thread, so the event loop never blocks; each
forest is one writable Vine shared by those threads (its writes serialize inside, and
take the forest's writer lock for each write alone, so other processes write between).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import monkeyllm
from monkeyllm import shapes
from monkeyllm.errors import NotFound, SchemaError, VineError, is_error
from monkeyllm.registry import internal

from ..dispatch import Dispatcher
from ..forests import Forests
from . import audit, auth, keys, openapi, scope
from .calls import STATION_CALLS
from .keys import Principal
from .status import UNAUTHORIZED, status_of
from .store import Store

WORKERS = 4
TRAILER = "station-principal"

FORESTS_RESULT = shapes.obj({"forests": shapes.array(shapes.obj(
    {"id": shapes.STR, "caps": shapes.STRS, "roots": shapes.STRS, "locked": shapes.BOOL})),
    "station": shapes.STR}, {"mode": shapes.STR})
HEALTH_RESULT = shapes.obj({"status": shapes.STR, "mode": shapes.STR,
                            "writable": shapes.BOOL, "version": shapes.STR,
                            "forests": shapes.obj({"served": shapes.INT})})


# The calls whose ranking may fuse the forest's Canopy (answer harvests).
HYBRID_CALLS = ("locate", "harvest", "answer")


def no_call(name: str) -> NotFound:
    """The error for a call name the Station does not have."""
    return NotFound(f"no call {name!r}",
                    hint="Calls: " + ", ".join(sorted(STATION_CALLS)) + ".")


class Station:
    """The forests under a folder, the Station's state, and one call's whole path.

    Args:
        root: The folder of forests (each subfolder holding ``_index.md``).
    """

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser().resolve()
        self.forests = Forests(root=self.root, writable=True)
        self.dispatcher = Dispatcher(self.forests)
        self.store = Store(self.root)

    def close(self) -> None:
        """Close every forest and the state file."""
        self.forests.close()
        self.store.close()

    def principal(self, request: Request) -> Principal:
        """The key's principal, or the 401 ``E_FORBIDDEN``."""
        header = request.headers.get("authorization", "")
        key = header[7:].strip() if header.lower().startswith("bearer ") else None
        found = keys.verify(self.store, key or request.headers.get("x-api-key"))
        if found is None:
            raise auth.unauthenticated()
        return found

    def call(self, who: Principal, forest: str, name: str, args: Any) -> dict[str, Any]:
        """One call on a granted forest as ``who`` sees it (runs in a worker thread)."""
        if name not in STATION_CALLS:
            raise no_call(name)
        who.policy.require(name)
        if not isinstance(args, dict):
            raise SchemaError(f"{name}: the body must be a JSON object")
        if "forest" in args:
            raise SchemaError(f"{name}: unknown parameter 'forest'",
                              hint="The forest is in the path, never in the body.")
        if name in HYBRID_CALLS:
            self.bind_embedder(forest)
        if name == "answer":
            from .answer import run as run_answer

            return run_answer(self, who, forest, args)
        if name == "harvest":
            from .answer import trace_harvest

            return trace_harvest(self, who, forest, args)
        _, vine = self.forests.get(forest, write=not STATION_CALLS[name].read_only)

        def engine(call: str, given: dict[str, Any]) -> dict[str, Any]:
            return self.dispatcher.run(call, {**given, "forest": forest}).result

        policy = who.policy
        seen = vine.visibility(policy.allow, policy.deny) if policy.restricted \
            else contextlib.nullcontext()
        with vine.trailers({TRAILER: who.name}), seen:
            return scope.run(policy, vine.root, name, args, engine, vine.near)

    def bind_embedder(self, forest: str) -> None:
        """Give the forest's Vine the query embedder bound to it (``vine station
        bind-embedder``), read at each call so a rebinding applies at once."""
        from . import embedders

        _, vine = self.forests.get(forest)
        vine.bind_embedder(embedders.get(self.store, forest))

    def granted(self, who: Principal, forest: str) -> None:
        """Refuse a forest the key is not for, exactly like an absent one."""
        if forest != who.policy.forest or not self.forests.known(forest):
            raise NotFound(f"no forest {forest!r} here",
                           hint="GET /v1/forests lists the forests this key may use.")

    def visible(self, who: Principal) -> list[dict[str, Any]]:
        """The forests this key may use, with its caps and roots (REST and MCP)."""
        policy = who.policy
        if policy.forest not in self.forests.ids():
            return []
        return [{"id": policy.forest, "caps": sorted(policy.caps), "roots": policy.roots,
                 "locked": self.forests.locked(policy.forest)}]


class Served(NamedTuple):
    """One call as served: the result or envelope, its HTTP status, milliseconds."""

    result: dict[str, Any]
    status: int
    ms: float


async def serve_call(station: Station, limiter: anyio.CapacityLimiter, forest: str | None,
                     name: str, who_of: Callable[[], Principal],
                     args_of: Callable[[], Awaitable[Any]]) -> Served:
    """One call's whole path, shared by REST and MCP: the key (``who_of``), the forest,
    the arguments (``args_of``), the call in a worker thread, then one audit row.

    Never raises: a refused key answers 401 ``E_FORBIDDEN``, every other failure its
    envelope (an unexpected exception ``E_INTERNAL``, never a traceback).
    """
    started = time.perf_counter()
    try:
        args: Any = await args_of()
        refused: Exception | None = None
    except Exception as exc:     # a body that is not JSON: said after the key is checked
        args, refused = None, exc

    def work() -> Served:
        # One worker-thread hop for the key, the call and its audit row: none of them
        # blocks the event loop, and a request pays for one hop, not three.
        who: Principal | None = None
        status = 200
        try:
            who = who_of()
            if not isinstance(forest, str) or not forest:  # only over MCP: REST has a path
                if name not in STATION_CALLS:
                    raise no_call(name)
                raise SchemaError(f"{name}: forest is required (a string)",
                                  hint="The forests tool lists the forests this key may "
                                       "use.")
            station.granted(who, forest)
            if refused is not None:
                raise refused
            result = station.call(who, forest, name, args)
        except VineError as exc:
            result = exc.envelope()
            if who is None:
                status = UNAUTHORIZED
        except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback
            result = internal(name, exc)
        status = status if status != 200 else status_of(result)
        ms = round((time.perf_counter() - started) * 1000, 2)
        audit_call(station, who, forest, name, result, status, ms)
        return Served(result, status, ms)

    return await anyio.to_thread.run_sync(work, limiter=limiter)


def audit_call(station: Station, who: Principal | None, forest: str | None, call: str,
               result: dict[str, Any], status: int, ms: float) -> None:
    """The audit row of one served call (blocking: run it in a worker thread)."""
    outcome = result["error"].get("code", "E_INTERNAL") if is_error(result) else (
        "cache" if result.get("cached") is True else "ok")
    commit = result.get("commit") if not is_error(result) else None
    audit.record(station.store, principal=who.name if who else None,
                 key_id=who.key_id if who else None,
                 forest=forest if isinstance(forest, str) else None, call=call,
                 outcome=outcome, status=status,
                 commit=commit if isinstance(commit, str) else None, ms=ms)


def timing(served: Served) -> str:
    """The ``Server-Timing`` header: the model's share (answer), then the whole call."""
    model_ms = served.result.get("model_ms")
    parts = [f"model;dur={model_ms}"] if isinstance(model_ms, int | float) and \
        not served.result.get("cached") else []
    return ", ".join([*parts, f"host;dur={served.ms}"])


def _json(body: dict[str, Any], status: int, request: Request | None = None) -> JSONResponse:
    """A JSON answer; a 401 says how to authenticate (``WWW-Authenticate``)."""
    headers = {"WWW-Authenticate": auth.challenge(request)} \
        if status == UNAUTHORIZED and request is not None else None
    return JSONResponse(body, status_code=status, headers=headers)


def build(station: Station, port: int | None = None,
          allow_hosts: list[str] | None = None) -> Starlette:
    """The ASGI application for a Station: REST under ``/v1``, MCP at ``/mcp``.

    Args:
        station: The Station to serve.
        port: The port served, for the MCP Host check (loopback names on it); None
            accepts the loopback names on any port.
        allow_hosts: More Host values ``/mcp`` answers (``vine station serve
            --allow-host``): ``name`` on any port, or ``name:port``.
    """
    from . import mcp

    limiter = anyio.CapacityLimiter(WORKERS)
    endpoint = mcp.Endpoint(station, limiter, port, list(allow_hosts or []))

    async def call_route(request: Request) -> JSONResponse:
        name = request.path_params["call"]

        async def args_of() -> Any:
            raw = await request.body()
            try:
                return json.loads(raw) if raw.strip() else {}
            except (ValueError, UnicodeDecodeError):
                raise SchemaError(f"{name}: the body is not valid JSON") from None

        served = await serve_call(station, limiter, request.path_params["forest"], name,
                                  lambda: station.principal(request), args_of)
        response = _json(served.result, served.status, request)
        response.headers["Server-Timing"] = timing(served)
        return response

    async def forests_route(request: Request) -> JSONResponse:
        try:
            who = station.principal(request)
        except VineError as exc:
            return _json(exc.envelope(), UNAUTHORIZED, request)
        return _json({"forests": station.visible(who), "mode": "registry",
                      "station": monkeyllm.__version__}, 200)

    async def health_route(request: Request) -> JSONResponse:
        ids = station.forests.ids()
        return _json({"status": "ok", "mode": "registry", "writable": True,
                      "version": monkeyllm.__version__,
                      "forests": {"served": len(ids)}}, 200)

    async def openapi_route(request: Request) -> JSONResponse:
        return _json(openapi.document(monkeyllm.__version__), 200)

    async def resource_route(request: Request) -> JSONResponse:
        path = request.url.path[len(auth.WELL_KNOWN):]
        return _json(auth.metadata(request, path), 200)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            async with endpoint.manager.run():
                yield
        finally:
            station.close()

    return Starlette(routes=[
        Route("/v1/health", health_route, methods=["GET"]),
        Route("/v1/openapi.json", openapi_route, methods=["GET"]),
        Route("/v1/forests", forests_route, methods=["GET"]),
        Route("/v1/forests/{forest}/{call}", call_route, methods=["POST"]),
        Route(mcp.PATH, endpoint=endpoint),
        Route(auth.WELL_KNOWN, resource_route, methods=["GET"]),
        Route(auth.WELL_KNOWN + mcp.PATH, resource_route, methods=["GET"]),
    ], lifespan=lifespan)


def run(root: Path, host: str, port: int, allow_hosts: list[str] | None = None) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    import logging

    import uvicorn

    from .mcp import PATH, quiet_logs

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="vine station: %(levelname)s %(name)s: %(message)s")
    quiet_logs()
    station = Station(root)
    extra = list(allow_hosts or [])
    config = uvicorn.Config(build(station, port, extra), host=host, port=port,
                            log_config=None, log_level="warning", access_log=False,
                            lifespan="on")
    sys.stderr.write(f"vine station: REST at http://{host}:{port}/v1, MCP over streamable "
                     f"HTTP at http://{host}:{port}{PATH} "
                     f"({len(station.forests.ids())} forest(s) under {station.root})\n")
    if not extra:
        sys.stderr.write(f"vine station: {PATH} answers only Host 127.0.0.1, localhost "
                         f"and [::1] on port {port}; add --allow-host for other names\n")
    sys.stderr.flush()
    uvicorn.Server(config).run()
