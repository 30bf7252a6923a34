"""Helpers for the MCP tests: real `vine serve` processes and the SDK's real client.

A session speaks one protocol era: ``"handshake"`` (the ``initialize`` handshake of
the 2025 versions) or ``"modern"`` (2026-07-28: ``server/discover`` and a per-request
envelope). Every session made here checks every tool result it receives against the
tool's ``outputSchema`` (errors included: an envelope is part of it), so each tool
call in the suite proves its structured content has the declared shape.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

_BESIDE = Path(sys.executable).parent / "vine"
VINE = str(_BESIDE) if _BESIDE.exists() else shutil.which("vine") or "vine"
TIMEOUT = 30


ERAS = ("handshake", "modern")
# A raw ``initialize`` request of the handshake era, and the headers streamable HTTP
# asks of a POST: for the tests that speak to a server without the SDK.
PING: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def host_probes(port: str) -> tuple[str, ...]:
    """Host headers for a server on 127.0.0.1:``port`` that allows brain.internal: the two
    it must refuse (evil.example, bare and with the port), then four it must answer."""
    return (
        "evil.example",
        f"evil.example:{port}",
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        "brain.internal",
        f"brain.internal:{port}",
    )


def ping(url: str, **headers: str) -> httpx.Response:
    """POST the raw ``initialize`` to ``url`` with the streamable HTTP headers and
    ``headers``."""
    return httpx.post(url, json=PING, timeout=TIMEOUT, headers={**ACCEPT, **headers})


class CheckedSession(ClientSession):
    """The SDK's client session, validating each tool result's structured content
    against the tool's declared ``outputSchema`` (listing the tools first if need
    be); a result that does not fit fails the test that made the call."""

    schemas: dict[str, dict[str, Any]]

    async def open(self, era: str) -> Any:
        """Connect in ``era``: the handshake, or discover."""
        self.schemas = {}
        if era == "modern":
            return await self.discover()
        if era != "handshake":
            raise ValueError(era)
        return await self.initialize()

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        listed = await super().list_tools(*args, **kwargs)
        for tool in listed.tools:
            if tool.output_schema is not None:
                self.schemas[tool.name] = tool.output_schema
        return listed

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        result = await super().call_tool(name, arguments, *args, **kwargs)
        if name not in self.schemas:
            await self.list_tools()
        schema = self.schemas.get(name)
        if schema is not None:
            assert result.structured_content is not None, name
            jsonschema.validate(
                result.structured_content, schema, format_checker=jsonschema.FormatChecker()
            )
        return result


class PlainSession(CheckedSession):
    """The SDK's client session as any client uses it (the SDK's own output-schema
    check included, this kit's not): what a benchmark times."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        return await ClientSession.call_tool(self, name, arguments, *args, **kwargs)


@contextlib.asynccontextmanager
async def stdio_session(
    *args: str, errlog: Path | None = None, era: str = "handshake", checked: bool = True
) -> AsyncIterator[CheckedSession]:
    """A client session with ``vine serve ARGS`` spawned over stdio."""
    params = StdioServerParameters(command=VINE, args=["serve", *args])
    kind = CheckedSession if checked else PlainSession
    with open(errlog or "/dev/null", "w", encoding="utf-8") as err:  # noqa: SIM117
        async with stdio_client(params, errlog=err) as (read, write):
            async with kind(read, write) as session:
                session.info = await session.open(era)  # type: ignore[attr-defined]
                yield session


@contextlib.asynccontextmanager
async def http_session(
    url: str, era: str = "handshake", headers: dict[str, str] | None = None, checked: bool = True
) -> AsyncIterator[CheckedSession]:
    """A client session over streamable HTTP (``headers`` on every request)."""
    kind = CheckedSession if checked else PlainSession
    async with (
        httpx2.AsyncClient(
            headers=headers or {}, timeout=httpx2.Timeout(TIMEOUT, read=TIMEOUT * 2)
        ) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        kind(read, write) as session,
    ):
        session.info = await session.open(era)  # type: ignore[attr-defined]
        yield session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(*args: str, stderr: Path) -> Iterator[str]:
    """``vine serve --transport http ARGS`` on a free port; yields the endpoint URL and
    stops the process (by its id) afterwards."""
    port = free_port()
    with open(stderr, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [VINE, "serve", "--transport", "http", "--port", str(port), *args],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            deadline = time.monotonic() + TIMEOUT
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"vine serve exited: {stderr.read_text()}")
                with (
                    contextlib.suppress(OSError),
                    socket.create_connection(("127.0.0.1", port), timeout=0.2),
                ):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("vine serve did not answer")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(proc)


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a server process: SIGTERM, then SIGKILL after 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def payload(result: Any) -> dict[str, Any]:
    """The structured content of a tool result, checked against its JSON text block."""
    assert result.structured_content is not None
    texts = [c.text for c in result.content if c.type == "text"]
    assert len(texts) == 1
    assert json.loads(texts[0]) == result.structured_content
    assert result.is_error == ("error" in result.structured_content)
    return result.structured_content


def stable(obj: Any) -> Any:
    """A result without what heat changes: heat and score dropped, lists of nodes in id
    order (reads deposit heat, so two reads of one forest rank alike only by set)."""
    if isinstance(obj, dict):
        return {k: stable(v) for k, v in obj.items() if k not in ("heat", "score")}
    if isinstance(obj, list):
        items = [stable(v) for v in obj]
        if items and all(isinstance(v, dict) for v in items):
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return obj
