"""The Station and one call's whole path, shared by REST (:mod:`.app`) and MCP
(:mod:`.mcp`): the key, the forest, the scoped call in a worker thread, one audit row.

Every engine call runs in a worker thread, so the event loop never blocks; each
forest is one writable Vine shared by those threads (its writes serialize inside, and
take the forest's writer lock for each write alone, so other processes write between).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import anyio.to_thread

from monkeyllm import shapes
from monkeyllm.errors import NotFound, SchemaError, VineError, is_error
from monkeyllm.registry import internal

from ..dispatch import Dispatcher
from ..forests import Forests
from . import audit, auth, keys, scope
from .calls import STATION_CALLS
from .keys import Principal
from .status import UNAUTHORIZED, status_of
from .store import Store

if TYPE_CHECKING:
    from starlette.requests import Request

TRAILER = "station-principal"

FORESTS_RESULT = shapes.obj(
    {
        "forests": shapes.array(
            shapes.obj(
                {"id": shapes.STR, "caps": shapes.STRS, "roots": shapes.STRS, "locked": shapes.BOOL}
            )
        ),
        "station": shapes.STR,
    },
    {"mode": shapes.STR},
)
HEALTH_RESULT = shapes.obj(
    {
        "status": shapes.STR,
        "mode": shapes.STR,
        "writable": shapes.BOOL,
        "version": shapes.STR,
        "forests": shapes.obj({"served": shapes.INT}),
    }
)


# The calls whose ranking may fuse the forest's Canopy (answer harvests).
HYBRID_CALLS = ("locate", "harvest", "answer")


def no_call(name: str) -> NotFound:
    """The error for a call name the Station does not have."""
    return NotFound(f"no call {name!r}", hint="Calls: " + ", ".join(sorted(STATION_CALLS)) + ".")


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
            raise SchemaError(
                f"{name}: unknown parameter 'forest'",
                hint="The forest is in the path, never in the body.",
            )
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
        seen = (
            vine.visibility(policy.allow, policy.deny)
            if policy.restricted
            else contextlib.nullcontext()
        )
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
            raise NotFound(
                f"no forest {forest!r} here",
                hint="GET /v1/forests lists the forests this key may use.",
            )

    def visible(self, who: Principal) -> list[dict[str, Any]]:
        """The forests this key may use, with its caps and roots (REST and MCP)."""
        policy = who.policy
        if policy.forest not in self.forests.ids():
            return []
        return [
            {
                "id": policy.forest,
                "caps": sorted(policy.caps),
                "roots": policy.roots,
                "locked": self.forests.locked(policy.forest),
            }
        ]


class Served(NamedTuple):
    """One call as served: the result or envelope, its HTTP status, milliseconds."""

    result: dict[str, Any]
    status: int
    ms: float


async def serve_call(
    station: Station,
    limiter: anyio.CapacityLimiter,
    forest: str | None,
    name: str,
    who_of: Callable[[], Principal],
    args_of: Callable[[], Awaitable[Any]],
) -> Served:
    """One call's whole path, shared by REST and MCP: the key (``who_of``), the forest,
    the arguments (``args_of``), the call in a worker thread, then one audit row.

    Never raises: a refused key answers 401 ``E_FORBIDDEN``, every other failure its
    envelope (an unexpected exception ``E_INTERNAL``, never a traceback).
    """
    started = time.perf_counter()
    try:
        args: Any = await args_of()
        refused: Exception | None = None
    except Exception as exc:  # a body that is not JSON: said after the key is checked
        args, refused = None, exc

    def work() -> Served:
        # One worker-thread hop for the key, the call and its audit row: none of them
        # blocks the event loop, and a request pays for one hop, not three.
        who: Principal | None = None
        status: int | None = None
        try:
            who = who_of()
            if not isinstance(forest, str) or not forest:  # only over MCP: REST has a path
                if name not in STATION_CALLS:
                    raise no_call(name)
                raise SchemaError(
                    f"{name}: forest is required (a string)",
                    hint="The forests tool lists the forests this key may use.",
                )
            station.granted(who, forest)
            if refused is not None:
                raise refused
            result = station.call(who, forest, name, args)
        except VineError as exc:
            result = exc.envelope()
            # A refused key is 401; a refused request its kind's status (a body over
            # the size limit, 413, keeps E_SCHEMA's code).
            status = UNAUTHORIZED if who is None else exc.status
        except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback
            result = internal(name, exc)
        if status is None:
            status = status_of(result)
        ms = round((time.perf_counter() - started) * 1000, 2)
        audit_call(station, who, forest, name, result, status, ms)
        return Served(result, status, ms)

    return await anyio.to_thread.run_sync(work, limiter=limiter)


def audit_call(
    station: Station,
    who: Principal | None,
    forest: str | None,
    call: str,
    result: dict[str, Any],
    status: int,
    ms: float,
) -> None:
    """The audit row of one served call (blocking: run it in a worker thread)."""
    outcome = (
        result["error"].get("code", "E_INTERNAL")
        if is_error(result)
        else ("cache" if result.get("cached") is True else "ok")
    )
    commit = result.get("commit") if not is_error(result) else None
    audit.record(
        station.store,
        principal=who.name if who else None,
        key_id=who.key_id if who else None,
        forest=forest if isinstance(forest, str) else None,
        call=call,
        outcome=outcome,
        status=status,
        commit=commit if isinstance(commit, str) else None,
        ms=ms,
    )
