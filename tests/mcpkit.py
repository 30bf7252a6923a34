"""Helpers for the MCP tests: real `vine serve` processes and the SDK's real client."""

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

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

_BESIDE = Path(sys.executable).parent / "vine"
VINE = str(_BESIDE) if _BESIDE.exists() else shutil.which("vine") or "vine"
TIMEOUT = 30


@contextlib.asynccontextmanager
async def stdio_session(*args: str, errlog: Path | None = None
                        ) -> AsyncIterator[ClientSession]:
    """A client session with ``vine serve ARGS`` spawned over stdio."""
    params = StdioServerParameters(command=VINE, args=["serve", *args])
    with open(errlog or "/dev/null", "w", encoding="utf-8") as err:  # noqa: SIM117
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    """A client session over streamable HTTP."""
    async with streamable_http_client(url) as (read, write, _):  # noqa: SIM117
        async with ClientSession(read, write) as session:
            await session.initialize()
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
        proc = subprocess.Popen([VINE, "serve", "--transport", "http", "--port", str(port),
                                 *args], stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + TIMEOUT
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"vine serve exited: {stderr.read_text()}")
                with contextlib.suppress(OSError), \
                        socket.create_connection(("127.0.0.1", port), timeout=0.2):
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
    assert result.structuredContent is not None
    texts = [c.text for c in result.content if c.type == "text"]
    assert len(texts) == 1
    assert json.loads(texts[0]) == result.structuredContent
    assert result.isError == ("error" in result.structuredContent)
    return result.structuredContent


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
