"""Streamable HTTP: the MCP endpoint at ``/mcp`` on uvicorn, answering only the hosts
it is told to (DNS-rebinding protection), one log line per call on stderr."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

from monkeyllm.errors import Forbidden, NotFound, SchemaError

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
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            await manager.handle_request(scope, receive, refusals_as_envelopes(send, host))

    return Starlette(
        routes=[Route(PATH, endpoint=Endpoint())],
        lifespan=lifespan,
        exception_handlers={404: _no_route},
    )


async def _no_route(request: Any, exc: Exception) -> Any:
    from starlette.responses import JSONResponse

    envelope = NotFound(
        f"no route {request.method} {request.url.path[:200]}",
        hint=f"This server speaks MCP over streamable HTTP at {PATH} only.",
    ).envelope()
    return JSONResponse(envelope, status_code=404)


def _refusal(status: int, text: str, host: str) -> dict[str, Any]:
    """The envelope for one of the SDK's plain-text refusals."""
    if status == 421:
        return {
            "error": {
                "code": "E_HOST_NOT_ALLOWED",
                "message": f"this server does not answer MCP for Host {host[:200]!r}",
                "hint": "Connect to 127.0.0.1 or localhost, or start it with "
                "--allow-host NAME to answer that name.",
            }
        }
    if status == 403:
        return Forbidden(
            "this server does not answer MCP for that Origin",
            hint="Browsers on other sites may not call it; --allow-host adds a name.",
        ).envelope()
    return SchemaError(
        f"{PATH}: {text[0].lower() + text[1:] if text else 'refused'}",
        hint="POST JSON-RPC with Content-Type: application/json and Accept: "
        "application/json, text/event-stream, at most 4 MiB.",
    ).envelope()


def refusals_as_envelopes(send: Any, host: str = "") -> Any:
    """``send`` with the SDK's plain-text refusals (a Host or Origin it does not answer,
    a wrong Content-Type or Accept, a body over its size limit) turned into the error
    envelope, status kept; ``host`` is the request's Host, for the 421's message."""
    held: dict[str, Any] = {}
    body = bytearray()

    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = {k.lower(): v for k, v in message.get("headers", [])}
            plain = not headers.get(b"content-type", b"").startswith(b"application/json")
            if message["status"] >= 400 and plain:
                held["start"] = message
                return
            await send(message)
            return
        if message["type"] == "http.response.body" and "start" in held:
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            start = held.pop("start")
            text = bytes(body).decode("utf-8", "replace").strip()[:300]
            payload = json.dumps(_refusal(start["status"], text, host)).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": start["status"],
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(payload)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        await send(message)

    return wrapped


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


def url_host(host: str) -> str:
    """``host`` as a URL spells it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def listen(host: str, port: int, who: str) -> Any:
    """A socket bound to ``host:port``, before the server says where it serves (so it
    never announces an address it cannot have); one taken, or a name that does not
    resolve, says so on stderr in one line and exits with status 3 (uvicorn's own for
    a server that could not start)."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
        except OSError:
            sock.close()
            raise
    except OSError as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        sys.stderr.write(f"vine {who}: cannot listen on {host}:{port}: {reason}\n")
        sys.stderr.flush()
        raise SystemExit(3) from None
    return sock


def run_http(dispatcher: Dispatcher, host: str, port: int, allow_hosts: list[str]) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM)."""
    server = uvicorn_server(app(dispatcher, port, allow_hosts), host, port, "serve")
    sock = listen(host, port, "serve")
    sys.stderr.write(
        f"vine serve: MCP over streamable HTTP at http://{url_host(host)}:{port}{PATH} "
        f"({dispatcher.forests.mode}, "
        f"{'writable' if dispatcher.forests.serves_writes else 'read-only'})\n"
    )
    sys.stderr.flush()
    say_read_only(dispatcher)
    server.run(sockets=[sock])
