"""``vine station``: the REST Station over a folder of forests, and its API keys.
Starlette and uvicorn are imported only when ``serve`` starts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

station_app = typer.Typer(help="The REST Station: serve a folder of forests behind API "
                          "keys, and manage the keys.\n\n"
                          "Example: vine station serve --root ./forests --port 8080",
                          no_args_is_help=True)
key_app = typer.Typer(help="API keys: add (shown once), list, revoke.", no_args_is_help=True)
station_app.add_typer(key_app, name="key")

Root = Annotated[Path, typer.Option("--root", help="The folder of forests (the Station "
                                    "keeps its state in ROOT/.station/).")]


def _store(root: Path):  # noqa: ANN202 - the Station's Store, imported lazily
    from monkeyllm.serve.station.store import Store

    if not root.expanduser().is_dir():
        raise typer.BadParameter(f"{root} is not a folder", param_hint="--root")
    return Store(root.expanduser().resolve())


@station_app.command("serve")
def serve(
    root: Root,
    host: Annotated[str, typer.Option("--host", help="The address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port.")] = 8080,
) -> None:
    """Serve every forest under ROOT over REST: POST /v1/forests/{forest}/{call}.

    Example: vine station serve --root ./forests --port 8080
    """
    if not root.expanduser().is_dir():
        raise typer.BadParameter(f"{root} is not a folder", param_hint="--root")
    from monkeyllm.serve.station.app import run

    try:
        run(root, host, port)
    except KeyboardInterrupt:
        pass


@key_app.command("add")
def key_add(
    principal: Annotated[str, typer.Argument(help="Who the key speaks for.")],
    root: Root,
    forest: Annotated[str, typer.Option("--forest", help="The one forest it may use.")],
    allow: Annotated[list[str] | None, typer.Option(
        "--allow", help="Only this subtree (repeatable); default the whole forest.",
        show_default=False)] = None,
    deny: Annotated[list[str] | None, typer.Option(
        "--deny", help="Never this subtree (repeatable).", show_default=False)] = None,
    caps: Annotated[str, typer.Option(
        "--caps", help="Comma-separated: read, query, write, tend, answer, admin.")
    ] = "read",
) -> None:
    """Mint a key and print it once (only its hash is kept).

    Example: vine station key add ana --root ./forests --forest acme --caps read,query
    """
    from monkeyllm.serve.station import keys

    try:
        wanted = keys.parse_caps(caps)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--caps") from None
    with _store(root) as store:
        try:
            key_id, key = keys.add(store, principal, forest, list(allow or []),
                                   list(deny or []), wanted)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    sys.stdout.write(json.dumps({"id": key_id, "principal": principal, "forest": forest,
                                 "key": key}) + "\n")
    sys.stderr.write("vine station: store this key now; it cannot be shown again.\n")


@key_app.command("list")
def key_list(root: Root) -> None:
    """List the keys (never their secrets), as JSON lines.

    Example: vine station key list --root ./forests
    """
    from monkeyllm.serve.station import keys

    with _store(root) as store:
        for row in keys.listing(store):
            sys.stdout.write(json.dumps(row) + "\n")


@key_app.command("revoke")
def key_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (k_...), from key list.")],
    root: Root,
) -> None:
    """Revoke a key: it answers 401 from the next request on.

    Example: vine station key revoke k_1a2b3c4d --root ./forests
    """
    from monkeyllm.serve.station import keys

    with _store(root) as store:
        if not keys.revoke(store, key_id):
            sys.stderr.write(f"vine station: no live key {key_id!r}\n")
            raise typer.Exit(1)
    sys.stdout.write(json.dumps({"id": key_id, "revoked": True}) + "\n")
