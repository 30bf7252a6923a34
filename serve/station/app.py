"""The Station's ASGI application (Starlette) and its runner (uvicorn).

Every engine call runs in a worker thread, so the event loop never blocks; each
forest is one writable Vine shared by those threads (its writes serialize inside).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import monkeyllm
from monkeyllm.errors import Forbidden, NotFound, SchemaError, VineError, is_error
from monkeyllm.registry import internal

from ..dispatch import Dispatcher
from ..forests import Forests
from . import audit, keys, openapi, scope
from .calls import STATION_CALLS
from .keys import Principal
from .status import UNAUTHORIZED, status_of
from .store import Store

WORKERS = 4
TRAILER = "station-principal"


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
            raise Forbidden("missing or invalid API key",
                            hint="Send Authorization: Bearer <key> or X-API-Key: <key>.")
        return found

    def call(self, who: Principal, forest: str, name: str, args: Any) -> dict[str, Any]:
        """One call on a granted forest as ``who`` sees it (runs in a worker thread)."""
        if name not in STATION_CALLS:
            raise NotFound(f"no call {name!r}",
                           hint="Calls: " + ", ".join(sorted(STATION_CALLS)) + ".")
        who.policy.require(name)
        if not isinstance(args, dict):
            raise SchemaError(f"{name}: the body must be a JSON object")
        if "forest" in args:
            raise SchemaError(f"{name}: unknown parameter 'forest'",
                              hint="The forest is in the path, never in the body.")
        if name == "answer":
            from .answer import run as run_answer

            return run_answer(self, who, forest, args)
        _, vine = self.forests.get(forest)

        def engine(call: str, given: dict[str, Any]) -> dict[str, Any]:
            return self.dispatcher.run(call, {**given, "forest": forest}).result

        with vine.trailers({TRAILER: who.name}):
            return scope.run(who.policy, vine.root, name, args, engine)

    def granted(self, who: Principal, forest: str) -> None:
        """Refuse a forest the key is not for, exactly like an absent one."""
        if forest != who.policy.forest or forest not in self.forests.ids():
            raise NotFound(f"no forest {forest!r} here",
                           hint="GET /v1/forests lists the forests this key may use.")


def _json(body: dict[str, Any], status: int) -> JSONResponse:
    return JSONResponse(body, status_code=status)


def build(station: Station) -> Starlette:
    """The ASGI application for a Station."""
    limiter = anyio.CapacityLimiter(WORKERS)

    async def call_route(request: Request) -> JSONResponse:
        started = time.perf_counter()
        forest = request.path_params["forest"]
        name = request.path_params["call"]
        who: Principal | None = None
        status = 200
        try:
            who = station.principal(request)
            station.granted(who, forest)
            raw = await request.body()
            try:
                args = json.loads(raw) if raw.strip() else {}
            except (ValueError, UnicodeDecodeError):
                raise SchemaError(f"{name}: the body is not valid JSON") from None
            result = await anyio.to_thread.run_sync(station.call, who, forest, name, args,
                                                    limiter=limiter)
        except VineError as exc:
            result = exc.envelope()
            if who is None:
                status = UNAUTHORIZED
        except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback
            result = internal(name, exc)
        status = status if status != 200 else status_of(result)
        ms = round((time.perf_counter() - started) * 1000, 2)
        outcome = result["error"].get("code", "E_INTERNAL") if is_error(result) else "ok"
        commit = result.get("commit") if not is_error(result) else None
        await anyio.to_thread.run_sync(lambda: audit.record(
            station.store, principal=who.name if who else None,
            key_id=who.key_id if who else None, forest=forest, call=name,
            outcome=outcome, status=status,
            commit=commit if isinstance(commit, str) else None, ms=ms))
        response = _json(result, status)
        response.headers["Server-Timing"] = f"host;dur={ms}"
        return response

    async def forests_route(request: Request) -> JSONResponse:
        try:
            who = station.principal(request)
        except VineError as exc:
            return _json(exc.envelope(), UNAUTHORIZED)
        policy = who.policy
        listed = [{"id": policy.forest, "caps": sorted(policy.caps), "roots": policy.roots,
                   "locked": station.forests._locked(policy.forest)}
                  ] if policy.forest in station.forests.ids() else []
        return _json({"forests": listed, "mode": "registry",
                      "station": monkeyllm.__version__}, 200)

    async def health_route(request: Request) -> JSONResponse:
        ids = station.forests.ids()
        return _json({"status": "ok", "mode": "registry", "writable": True,
                      "version": monkeyllm.__version__,
                      "forests": {"served": len(ids)}}, 200)

    async def openapi_route(request: Request) -> JSONResponse:
        return _json(openapi.document(monkeyllm.__version__), 200)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            station.close()

    return Starlette(routes=[
        Route("/v1/health", health_route, methods=["GET"]),
        Route("/v1/openapi.json", openapi_route, methods=["GET"]),
        Route("/v1/forests", forests_route, methods=["GET"]),
        Route("/v1/forests/{forest}/{call}", call_route, methods=["POST"]),
    ], lifespan=lifespan)


def run(root: Path, host: str, port: int) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    import uvicorn

    station = Station(root)
    config = uvicorn.Config(build(station), host=host, port=port, log_config=None,
                            log_level="warning", access_log=False, lifespan="on")
    sys.stderr.write(f"vine station: REST at http://{host}:{port}/v1 "
                     f"({len(station.forests.ids())} forest(s) under {station.root})\n")
    sys.stderr.flush()
    uvicorn.Server(config).run()
