"""``vine station``: the REST Station over a folder of forests, and its API keys.
Starlette and uvicorn are imported only when ``serve`` starts."""

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from .options import unset

station_app = typer.Typer(
    help="The Station: serve a folder of forests over REST and MCP "
    "behind API keys; manage the keys and the models that answer.\n\n\b\n"
    "Example: vine station serve --root ./forests --port 8080",
    no_args_is_help=True,
)
key_app = typer.Typer(
    help="API keys: add (shown once), list, revoke.\n\n\b\n"
    "Example: vine station key add ana --root ./forests --forest acme",
    no_args_is_help=True,
)
station_app.add_typer(key_app, name="key")

Root = Annotated[
    Path,
    typer.Option(
        "--root", help="The folder of forests (the Station keeps its state in ROOT/.station/)."
    ),
]
ForestName = Annotated[str, typer.Argument(help="The forest (a folder name under ROOT).")]
ApiKeyEnv = Annotated[
    str | None,
    unset(
        "--api-key-env",
        help="The environment variable holding the API key, read at call time "
        "(the key itself is never stored).",
    ),
]


def _store(root: Path):  # noqa: ANN202 - the Station's Store, imported lazily
    from monkeyllm.serve.station.store import Store

    if not root.expanduser().is_dir():
        raise typer.BadParameter(f"{root} is not a folder", param_hint="--root")
    return Store(root.expanduser().resolve())


def _remove(
    root: Path,
    remove: Callable[[Any, str], bool],
    name: str,
    missing: str,
    answer: dict[str, object],
) -> None:
    """Run a revoke or unbind (``remove(store, name)``) on the Station's store: print what
    it did, or say what was missing and exit 1."""
    with _store(root) as store:
        done = remove(store, name)
    if not done:
        sys.stderr.write(f"vine station: {missing}\n")
        raise typer.Exit(1)
    sys.stdout.write(json.dumps(answer) + "\n")


@station_app.command("serve")
def serve(
    root: Root,
    host: Annotated[str, typer.Option("--host", help="The address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port.")] = 8080,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            envvar="MONKEYLLM_STATION_ALLOWED_HOSTS",
            help="MCP: also answer this Host (name or name:port; repeatable, or "
            "space-separated in $MONKEYLLM_STATION_ALLOWED_HOSTS). Only localhost is "
            "answered otherwise.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve every forest under ROOT over REST (POST /v1/forests/{forest}/{call}) and
    MCP over streamable HTTP at /mcp (every tool takes forest), behind API keys.

    \b
    Example: vine station serve --root ./forests --port 8080
    """
    if not root.expanduser().is_dir():
        raise typer.BadParameter(f"{root} is not a folder", param_hint="--root")
    from monkeyllm.serve.station.app import run

    try:
        run(root, host, port, list(allow_host or []))
    except KeyboardInterrupt:
        pass


@key_app.command("add")
def key_add(
    principal: Annotated[str, typer.Argument(help="Who the key speaks for.")],
    root: Root,
    forest: Annotated[str, typer.Option("--forest", help="The one forest it may use.")],
    allow: Annotated[
        list[str] | None,
        unset("--allow", help="Only this subtree (repeatable); default the whole forest."),
    ] = None,
    deny: Annotated[
        list[str] | None, unset("--deny", help="Never this subtree (repeatable).")
    ] = None,
    caps: Annotated[
        str,
        typer.Option("--caps", help="Comma-separated: read, query, write, tend, answer, admin."),
    ] = "read",
) -> None:
    """Mint a key and print it once (only its hash is kept).

    \b
    Example: vine station key add ana --root ./forests --forest acme --caps read,query
    """
    from monkeyllm.serve.station import keys

    try:
        wanted = keys.parse_caps(caps)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--caps") from None
    with _store(root) as store:
        try:
            key_id, key = keys.add(
                store, principal, forest, list(allow or []), list(deny or []), wanted
            )
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    sys.stdout.write(
        json.dumps({"id": key_id, "principal": principal, "forest": forest, "key": key}) + "\n"
    )
    sys.stderr.write("vine station: store this key now; it cannot be shown again.\n")
    _say_if_no_forest(root, forest)


def _say_if_no_forest(root: Path, forest: str) -> None:
    """A key or binding for a name no forest under ROOT has (a typo, or one to come)
    is kept, and said so: otherwise it only shows as a 404 at the first request."""
    from .common import is_forest

    if not is_forest(root.expanduser() / forest):
        found = sorted(p.name for p in root.expanduser().iterdir() if p.is_dir() and is_forest(p))
        here = ", ".join(found[:10]) if found else "none yet"
        sys.stderr.write(
            f"vine station: no forest {forest!r} under {root} (forests there: {here}); "
            "the Station serves it once the folder holds it.\n"
        )


@key_app.command("list")
def key_list(root: Root) -> None:
    """List the keys (never their secrets): a table on a terminal, JSON lines when piped.

    \b
    Example: vine station key list --root ./forests
    """
    from monkeyllm.serve.station import keys

    from .common import json_mode

    with _store(root) as store:
        rows = list(keys.listing(store))
    if rows and not json_mode(False):
        _keys_table(rows)
        return
    for row in rows:
        sys.stdout.write(json.dumps(row) + "\n")
    if not rows:
        sys.stderr.write(
            "vine station: no keys yet (vine station key add PRINCIPAL --root ROOT "
            "--forest FOREST makes one).\n"
        )


def _when(epoch: Any) -> str:
    """A stored time as a person reads it (local time, to the minute)."""
    import datetime

    if not isinstance(epoch, int | float):
        return "never"
    return datetime.datetime.fromtimestamp(epoch).astimezone().strftime("%Y-%m-%d %H:%M %Z")


def _reach(row: dict[str, Any]) -> str:
    """Where a key may read: the whole forest, or its subtrees, less what it may not."""
    allow = [a for a in row.get("allow") or [] if a] or ["the whole forest"]
    deny = [d for d in row.get("deny") or [] if d]
    return ", ".join(allow) + (f" (not {', '.join(deny)})" if deny else "")


def _keys_table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console

    from .render.pieces import columns_table, fit

    table = columns_table("id", "principal", "forest", "reach", "caps", "created", "last used")
    for row in rows:
        revoked = row.get("revoked_at")
        table.add_row(
            row["id"] + (" (revoked)" if revoked else ""),
            row["principal"],
            row["forest"],
            _reach(row),
            ", ".join(row.get("caps") or []),
            _when(row.get("created_at")),
            _when(row.get("last_used_at")),
            style="dim" if revoked else None,
        )
    console = Console()
    console.print(fit(console, table))


@key_app.command("revoke")
def key_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (k_...), from key list.")], root: Root
) -> None:
    """Revoke a key: it answers 401 from the next request on.

    \b
    Example: vine station key revoke k_1a2b3c4d --root ./forests
    """
    from monkeyllm.serve.station import keys

    _remove(root, keys.revoke, key_id, f"no live key {key_id!r}", {"id": key_id, "revoked": True})


@station_app.command("bind")
def bind(
    forest: ForestName,
    root: Root,
    endpoint: Annotated[
        str,
        typer.Option(
            "--endpoint",
            help="The OpenAI-compatible API base, e.g. http://localhost:11434/v1 "
            "(answer POSTs to ENDPOINT/chat/completions).",
        ),
    ],
    model: Annotated[str, typer.Option("--model", help="The model's name at the endpoint.")],
    api_key_env: ApiKeyEnv = None,
    price_prompt: Annotated[
        float | None,
        unset("--price-prompt", help="USD per million prompt tokens (with --price-completion)."),
    ] = None,
    price_completion: Annotated[
        float | None, unset("--price-completion", help="USD per million completion tokens.")
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", help="The reply bound when a call gives no reply_tokens.")
    ] = 600,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds the provider has for one reply.")
    ] = 60.0,
) -> None:
    """Bind the model that answers on a forest (POST .../answer); rebinding replaces it.

    \b
    Example: vine station bind acme --root ./forests --endpoint http://gpu:11434/v1 --model qwen3
    """
    from monkeyllm.serve.station.answer import bindings

    with _store(root) as store:
        try:
            made = bindings.put(
                store,
                bindings.Binding(
                    forest=forest,
                    endpoint=endpoint,
                    model=model,
                    api_key_env=api_key_env,
                    price_prompt=price_prompt,
                    price_completion=price_completion,
                    max_tokens=max_tokens,
                    timeout_s=timeout,
                ),
            )
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    sys.stdout.write(json.dumps(made.public()) + "\n")
    _say_if_no_forest(root, forest)


@station_app.command("unbind")
def unbind(forest: Annotated[str, typer.Argument(help="The forest.")], root: Root) -> None:
    """Remove a forest's model: answer then refuses until it is bound again.

    \b
    Example: vine station unbind acme --root ./forests
    """
    from monkeyllm.serve.station.answer import bindings

    missing = f"no model is bound to {forest!r}"
    _remove(root, bindings.remove, forest, missing, {"forest": forest, "unbound": True})


@station_app.command("bind-embedder")
def bind_embedder(
    forest: ForestName,
    root: Root,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="The embedding model: the endpoint's, or a local one (multilingual-e5-small).",
        ),
    ],
    endpoint: Annotated[
        str | None,
        unset(
            "--endpoint",
            help="The OpenAI-compatible API base, e.g. http://localhost:11434/v1 "
            "(POSTs go to ENDPOINT/embeddings); none: the local model.",
        ),
    ] = None,
    api_key_env: ApiKeyEnv = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds a read waits for its query's vector.")
    ] = 3.0,
) -> None:
    """Bind the query embedder of a forest's hybrid locate and harvest; rebinding
    replaces it. The forest's Canopy must be built with the same model (vine canopy
    build --url ENDPOINT --model MODEL); otherwise reads rank lexically and say so.

    \b
    Example: vine station bind-embedder acme --root ./forests \\
      --endpoint http://gpu:11434/v1 --model nomic-embed-text
    """
    from monkeyllm.serve.station import embedders

    with _store(root) as store:
        try:
            made = embedders.put(store, forest, model, endpoint, api_key_env, timeout)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    sys.stdout.write(json.dumps(made) + "\n")
    _say_if_no_forest(root, forest)


@station_app.command("unbind-embedder")
def unbind_embedder(forest: Annotated[str, typer.Argument(help="The forest.")], root: Root) -> None:
    """Remove a forest's query embedder: its reads then use the embedder its Canopy was
    built with.

    \b
    Example: vine station unbind-embedder acme --root ./forests
    """
    from monkeyllm.serve.station import embedders

    missing = f"no embedder is bound to {forest!r}"
    answer = {"forest": forest, "role": "embed", "unbound": True}
    _remove(root, embedders.remove, forest, missing, answer)


@station_app.command("bindings")
def bindings_list(root: Root) -> None:
    """List the forests' models and embedders (never a secret), as JSON lines.

    \b
    Example: vine station bindings --root ./forests
    """
    from monkeyllm.serve.station import embedders
    from monkeyllm.serve.station.answer import bindings

    with _store(root) as store:
        for made in bindings.listing(store):
            sys.stdout.write(json.dumps(made.public()) + "\n")
        for line in embedders.listing(store):
            sys.stdout.write(json.dumps(line) + "\n")
