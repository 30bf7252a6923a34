"""The MCP server: the SDK's low-level ``Server`` (2.x) with the tool list and one handler
that runs a call off the event loop and renders its outcome. Imports the SDK.

The SDK serves both protocol eras on one server: the ``initialize`` handshake
(2025-era clients) and the per-request envelope with ``server/discover``
(2026-07-28); the client's first request decides, on stdio and HTTP alike.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
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
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=types.ToolAnnotations(title=spec.title, **spec.hints.as_dict()),
    )


def as_result(result: dict[str, Any], error: bool, image: Any = None) -> types.CallToolResult:
    """The engine's object as structured content and as one compact JSON text block;
    an error envelope sets ``isError``; ``view``'s image goes first."""
    text = types.TextContent(
        type="text", text=json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str)
    )
    content: list[types.ContentBlock] = [text]
    if image is not None:
        content.insert(
            0,
            types.ImageContent(
                type="image",
                data=base64.b64encode(image.data).decode("ascii"),
                mime_type=image.mime_type,
            ),
        )
    return types.CallToolResult(content=content, structured_content=result, is_error=error)


def instructions(dispatcher: Dispatcher) -> str:
    """What the server tells a client when it connects."""
    names = ", ".join(s.name for s in dispatcher.listed)
    where = (
        "several forests: every tool takes forest (list them with forests)"
        if dispatcher.forests.registry
        else "one forest"
    )
    mode = "writable" if dispatcher.forests.serves_writes else "read-only"
    return (
        f"A MonkeyLLM forest of markdown knowledge ({where}, {mode}). Tools: {names}. "
        "Start with locate (a question) or sniff (an exact string), look at "
        "candidates before pick, and use harvest for evidence in one round trip. "
        'Errors come back as {"error": {code, message, hint}} with isError set.'
    )


def say_read_only(dispatcher: Dispatcher, who: str = "vine serve") -> None:
    """Say on stderr, at the start, that a writable server serves its one forest for
    reading only because the forest is not its own git repository (and how to get
    one that can be written)."""
    import sys

    forests = dispatcher.forests
    reason = None if forests.registry else forests.cannot_write(forests.single_id)
    if reason is not None:
        sys.stderr.write(
            f"{who}: {forests.root} is served read-only: {reason}; no write tools are "
            "listed (vine browse FOREST --copy DIR makes a writable copy).\n"
        )
        sys.stderr.flush()


def plain(
    name: str,
    version: str,
    text: str,
    tools: list[types.Tool],
    on_call_tool: Any,
    on_list_tools: Any = None,
) -> Server[Any]:
    """A low-level SDK server offering ``tools`` and running calls with
    ``on_call_tool``, without the SDK's tracing middleware: nothing here exports spans,
    and a span per message costs every call. Every client is listed the same ``tools``
    unless ``on_list_tools`` answers each one its own (a subset of them)."""
    listing = types.ListToolsResult(tools=tools)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    server: Server[Any] = Server(
        name,
        version=version,
        instructions=text,
        on_list_tools=on_list_tools or list_tools,
        on_call_tool=on_call_tool,
        # The 2026-07-28 HTTP path checks Mcp-Param headers against a tool's input
        # schema: from the listed tools, instead of running tools/list for every call.
        get_tool_input_schema={t.name: t.input_schema for t in tools}.get,
    )
    server.middleware = []
    return server


def build(dispatcher: Dispatcher, on_call: Callable[[Outcome], None] | None = None) -> Server[Any]:
    """The SDK server for a dispatcher; ``on_call`` sees every outcome (for logs)."""
    limiter = anyio.CapacityLimiter(WORKERS)

    # The engine checks arguments itself and answers E_SCHEMA envelopes.
    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        outcome = await anyio.to_thread.run_sync(
            dispatcher.run, params.name, params.arguments, limiter=limiter
        )
        if on_call is not None:
            on_call(outcome)
        return as_result(outcome.result, outcome.error_code is not None, outcome.image)

    return plain(
        "monkeyllm",
        monkeyllm.__version__,
        instructions(dispatcher),
        [as_tool(spec) for spec in dispatcher.listed],
        call_tool,
    )


async def run_stdio(dispatcher: Dispatcher, protocol_out: int) -> None:
    """Serve on standard input and the descriptor ``protocol_out`` (the real standard
    output): through the event loop's own pipes when both are pipes, else through the
    SDK's threads."""
    import logging
    import sys
    from io import TextIOWrapper

    from mcp.server.stdio import stdio_server

    from .pipes import CountedWriter, HeldLines, Ledger, open_pipes, standard_input_apart

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="vine serve: %(levelname)s %(name)s: %(message)s",
    )
    server = build(dispatcher)
    say_read_only(dispatcher)
    # Every request read is answered, even when the input ends right after it.
    ledger = Ledger()
    async with open_pipes(protocol_out) as pipes, contextlib.AsyncExitStack() as stack:
        if pipes is not None:
            lines, writer = pipes
            out = CountedWriter(writer, ledger)
            ends: dict[str, Any] = {"stdin": HeldLines(lines, ledger, out), "stdout": out}
        else:
            # A file or a terminal: the SDK's threads read and write. A worker thread may
            # still block on the input after the transport ends, so it is never closed.
            wire = stack.enter_context(standard_input_apart())
            text_in = TextIOWrapper(
                os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace"
            )
            text_out = TextIOWrapper(os.fdopen(protocol_out, "wb"), encoding="utf-8")
            out = CountedWriter(anyio.wrap_file(text_out), ledger)
            ends = {"stdin": HeldLines(anyio.wrap_file(text_in), ledger, out), "stdout": out}
        async with stdio_server(**ends) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
