"""``vine serve``: the forest over the Model Context Protocol, on stdio or streamable
HTTP. The MCP SDK (``monkeyllm.serve.server``) is imported only when a server starts."""

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import common, options
from .options import unset

if TYPE_CHECKING:
    from monkeyllm.serve.forests import Forests


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def serve(
    forest: options.Forest = None,
    root: Annotated[
        Path | None,
        unset("--root", help="Serve every forest in this folder; each tool then takes forest."),
    ] = None,
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport", help="stdio for an agent on this machine, http for streamable HTTP."
        ),
    ] = Transport.stdio,
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP: the port.")] = 8000,
    readonly: Annotated[
        bool,
        typer.Option(
            "--readonly", help="Serve reads only: no lock is taken and writes answer E_READONLY."
        ),
    ] = False,
    tool_prefix: Annotated[
        str,
        typer.Option(
            "--tool-prefix",
            help="Prefix every tool name (e.g. vine_) for clients that mix servers.",
        ),
    ] = "",
    allow_host: Annotated[
        list[str] | None,
        unset(
            "--allow-host",
            help="HTTP: also answer this Host (name or name:port; "
            "repeatable). Only localhost is answered otherwise.",
        ),
    ] = None,
) -> None:
    """Serve a forest to agents over MCP: one tool per engine call (locate, look, move,
    pick, scan, sniff, query, harvest, history, calendar, coverage, plant, graft, tend,
    prune, transplant) plus forests, view and ingest, with results as structured JSON
    and errors as the envelope with isError set. stdio writes nothing but protocol on
    standard output; HTTP logs one line per call on stderr.

    \b
    Example: vine serve --forest ./brain --transport http --port 8000
    """
    if forest is not None and root is not None:
        common.usage("give --forest or --root, not both.")
    if root is not None and not root.expanduser().is_dir():
        raise typer.BadParameter(f"{root} is not a folder", param_hint="--root")
    if tool_prefix and not tool_prefix.replace("_", "").replace("-", "").isalnum():
        raise typer.BadParameter("letters, digits, _ and - only", param_hint="--tool-prefix")
    chosen = None if root is not None else common.find_forest(forest)
    if transport is Transport.stdio and (sys.stdin is None or sys.stdout is None):
        # Python found descriptor 0 or 1 closed at start (``vine serve <&-``): whatever
        # the process opens next would be taken for the protocol.
        common.usage(
            "standard input or output is closed: over stdio, vine serve reads requests "
            "on standard input and answers on standard output.",
            "Start it from an MCP client (or give it a pipe or a file), or use --transport http.",
        )
    if transport is Transport.stdio:
        if sys.stdin.isatty():
            # Someone typed it: over stdio the server waits, silent, for an MCP client
            # speaking JSON-RPC on its standard input, which reads like a hang.
            sys.stderr.write(
                "vine serve: speaking MCP on standard input and output, for an MCP client "
                "that starts this command (an agent's config); nothing more is printed here. "
                "Ctrl-C stops it; --transport http serves it on a port instead.\n"
            )
            sys.stderr.flush()
        # Only protocol reaches the real standard output: anything else printed by
        # this process (or a child it starts) lands on stderr.
        protocol = os.dup(sys.stdout.fileno())
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from monkeyllm.errors import VineError
    from monkeyllm.serve.dispatch import Dispatcher
    from monkeyllm.serve.forests import Forests

    try:
        forests = Forests(forest=chosen, root=root, writable=not readonly)
    except VineError as exc:
        common.fail(exc.envelope(), as_json=False)
    if not readonly and not forests.registry:
        _warn_held(forests)
    try:
        dispatcher = Dispatcher(forests, tool_prefix)
        if transport is Transport.http:
            from monkeyllm.serve.http import run_http

            run_http(dispatcher, host, port, list(allow_host or []))
        else:
            _stdio(dispatcher, protocol)
    finally:
        forests.close()


def _warn_held(forests: "Forests") -> None:
    """Say on stderr, at the start, when another process holds the forest open for
    writing: the server serves reads, and its writes answer E_LOCKED until it exits."""
    from monkeyllm.lock import who

    card = forests.lock_holder(forests.single_id)
    if card is not None:
        sys.stderr.write(
            f"vine serve: {who(card)} holds the writer lock for as long as it "
            "has the forest open: reads are served, writes answer E_LOCKED "
            "until it lets go.\n"
        )
        sys.stderr.flush()


def _stdio(dispatcher: object, protocol: int) -> None:
    import anyio

    from monkeyllm.serve.server import run_stdio

    try:
        anyio.run(run_stdio, dispatcher, protocol)
    except KeyboardInterrupt:
        pass
