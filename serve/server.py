"""The MCP server: the SDK's low-level ``Server`` with the tool list and one handler
that runs a call off the event loop and renders its outcome. Imports the SDK."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server

import monkeyllm

from .dispatch import Dispatcher, Outcome

# Engine calls running at once; more wait (the event loop itself never blocks).
WORKERS = 4


def as_tool(spec: Any) -> types.Tool:
    """An MCP tool from a tool spec."""
    return types.Tool(name=spec.name, title=spec.title, description=spec.description,
                      inputSchema=spec.input_schema,
                      annotations=types.ToolAnnotations(title=spec.title,
                                                        **spec.hints.as_dict()))


def as_result(outcome: Outcome) -> types.CallToolResult:
    """The engine's object as structured content and as one compact JSON text block;
    an error envelope sets ``isError``."""
    text = types.TextContent(type="text", text=json.dumps(
        outcome.result, ensure_ascii=False, separators=(",", ":"), default=str))
    content: list[types.ContentBlock] = [text]
    if outcome.image is not None:
        content.insert(0, types.ImageContent(
            type="image", data=base64.b64encode(outcome.image.data).decode("ascii"),
            mimeType=outcome.image.mime_type))
    return types.CallToolResult(content=content, structuredContent=outcome.result,
                                isError=outcome.error_code is not None)


def instructions(dispatcher: Dispatcher) -> str:
    """What the server tells a client at initialization."""
    names = ", ".join(s.name for s in dispatcher.specs)
    where = ("several forests: every tool takes forest (list them with forests)"
             if dispatcher.forests.registry else "one forest")
    mode = "read-only" if not dispatcher.forests.writable else "writable"
    return (f"A MonkeyLLM forest of markdown knowledge ({where}, {mode}). Tools: {names}. "
            "Start with locate (a question) or sniff (an exact string), look at "
            "candidates before pick, and use harvest for evidence in one round trip. "
            "Errors come back as {\"error\": {code, message, hint}} with isError set.")


def build(dispatcher: Dispatcher,
          on_call: Callable[[Outcome], None] | None = None) -> Server[Any, Any]:
    """The SDK server for a dispatcher; ``on_call`` sees every outcome (for logs)."""
    server: Server[Any, Any] = Server("monkeyllm", version=monkeyllm.__version__,
                                      instructions=instructions(dispatcher))
    tools = [as_tool(spec) for spec in dispatcher.specs]
    limiter = anyio.CapacityLimiter(WORKERS)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools

    # The engine checks arguments itself and answers E_SCHEMA envelopes; the SDK's
    # own check would answer plain text instead.
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        outcome = await anyio.to_thread.run_sync(dispatcher.run, name, arguments,
                                                 limiter=limiter)
        if on_call is not None:
            on_call(outcome)
        return as_result(outcome)

    return server


async def run_stdio(dispatcher: Dispatcher, protocol_out: Any) -> None:
    """Serve on standard input and ``protocol_out`` (the real standard output)."""
    import logging
    import sys

    from mcp.server.stdio import stdio_server

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="vine serve: %(levelname)s %(name)s: %(message)s")
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)
    server = build(dispatcher)
    async with stdio_server(stdout=protocol_out) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
