"""Streamable HTTP: the MCP endpoint at ``/mcp`` on uvicorn, answering only the hosts
it is told to (DNS-rebinding protection), one log line per call on stderr."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

from .dispatch import Dispatcher, Outcome
from .server import build, say_read_only

PATH = "/mcp"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def allowed(port: int, extra: list[str]) -> tuple[list[str], list[str]]:
    """The Host and Origin values to accept: the loopback names on this port, plus each
    ``--allow-host`` value (``name`` allows any port, ``name:port`` just that one)."""
    hosts = [f"{h}:{port}" for h in LOCAL_HOSTS]
    for value in extra:
        value = value.strip()
        if not value:
            continue
        has_port = value.rsplit(":", 1)[-1].isdigit() and not value.endswith("]")
        hosts += [value] if has_port else [value, f"{value}:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return hosts, origins


def log_call(outcome: Outcome) -> None:
    """One line per call on stderr: tool, forest, milliseconds, ok or the error code."""
    status = outcome.error_code or "ok"
    forest = outcome.forest or "-"
    sys.stderr.write(f"vine serve: {outcome.tool} forest={forest} {outcome.ms:.1f}ms {status}\n")
    sys.stderr.flush()


def app(dispatcher: Dispatcher, port: int, allow_hosts: list[str]) -> Any:
    """The ASGI application serving ``/mcp``."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    hosts, origins = allowed(port, allow_hosts)
    manager = StreamableHTTPSessionManager(
        app=build(dispatcher, on_call=log_call),
        json_response=True,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        ),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    class Endpoint:
        # A class instance, so that Starlette routes the raw ASGI call to it.
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    return Starlette(routes=[Route(PATH, endpoint=Endpoint())], lifespan=lifespan)


class _QuietDisconnects(logging.Filter):
    """Drop the SDK's traceback for a client that closed its event stream: a normal
    end of session, not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (
            record.getMessage().startswith("Error in standalone SSE writer")
            and type(exc).__name__ == "ClosedResourceError"
        )


def uvicorn_server(application: Any, host: str, port: int, who: str) -> Any:
    """uvicorn serving ``application``, its logs on stderr as ``vine WHO: ...`` at
    warning level and without what is noise here: the SDK's traceback for a client that
    closed its event stream, and its warning for an unknown tool name (answered with an
    envelope)."""
    import uvicorn

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format=f"vine {who}: %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("mcp.server.streamable_http").addFilter(_QuietDisconnects())
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)
    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    return uvicorn.Server(config)


def run_http(dispatcher: Dispatcher, host: str, port: int, allow_hosts: list[str]) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    server = uvicorn_server(app(dispatcher, port, allow_hosts), host, port, "serve")
    sys.stderr.write(
        f"vine serve: MCP over streamable HTTP at http://{host}:{port}{PATH} "
        f"({dispatcher.forests.mode}, "
        f"{'writable' if dispatcher.forests.serves_writes else 'read-only'})\n"
    )
    sys.stderr.flush()
    say_read_only(dispatcher)
    server.run()
