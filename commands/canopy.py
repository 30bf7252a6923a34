"""``vine canopy build | status | drop``: the forest's vector index (hybrid locate and
harvest). JSON when piped (or with --json); a progress bar and a summary on a terminal.
"""

import sys
from typing import Annotated, Any

import typer

from . import common, options
from .options import unset

canopy_app = typer.Typer(
    help="The Canopy: the forest's vector index under _derived/canopy/ (never in git). "
    "With it, locate and harvest fuse lexical and vector ranks, so a question "
    "worded unlike a node (a paraphrase, another language) still finds it.\n\n\b\n"
    "Example: vine canopy build -f ./brain",
    no_args_is_help=True,
)

Forest = options.Forest
Json = options.Json


@canopy_app.command("build")
def build(
    forest: Forest = None,
    json: Json = False,
    url: Annotated[
        str | None,
        unset(
            "--url",
            help="An OpenAI-compatible embeddings endpoint (its base, e.g. "
            "http://127.0.0.1:11434/v1); default: the local model.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        unset(
            "--model",
            help="The model: what the endpoint serves, or a local one "
            "(multilingual-e5-small, multilingual-e5-small-enpt).",
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        unset(
            "--api-key-env",
            help="The environment variable holding the endpoint's API key "
            "(its name is kept, never the key).",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        unset("--timeout", help="Seconds a read waits for its query's vector (default 3)."),
    ] = None,
    batch: Annotated[
        int | None, unset("--batch", help="Documents per request to the endpoint (default 64).")
    ] = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Re-embed every node, not only the changed ones.")
    ] = False,
) -> None:
    """Embed every node whose vector is missing or out of date (title, aliases, tags and
    summary); the embedder given here is kept in the index (never committed) and used
    by later reads. Another embedder than the index's rebuilds it.

    \b
    Example: vine canopy build --url http://127.0.0.1:11434/v1 --model nomic-embed-text
    """
    as_json = common.json_mode(json)
    config = _config(url, model, api_key_env, timeout, batch, as_json)
    vine = common.open_vine(forest, writable=False, as_json=as_json)
    from monkeyllm.errors import VineError

    try:
        if sys.stderr.isatty():
            result = _with_bar(vine, config, rebuild)
        else:
            result = vine.canopy_build(config, rebuild=rebuild)
    except VineError as exc:
        common.fail(exc.envelope(), as_json)
    finally:
        vine.close()
    _print(result, as_json)


def _config(
    url: str | None,
    model: str | None,
    api_key_env: str | None,
    timeout: float | None,
    batch: int | None,
    as_json: bool,
) -> Any:
    """The embedder the options name, or None (the forest's own, else the local model)."""
    if url is None and model is None and api_key_env is None and timeout is None and batch is None:
        return None
    from monkeyllm.canopy.embedders import DEFAULT_MODEL, HTTP, LOCAL, EmbedderConfig
    from monkeyllm.errors import VineError

    if url is None and (api_key_env is not None or batch is not None):
        raise typer.BadParameter("--api-key-env and --batch need --url", param_hint="--url")
    if url is not None and model is None:
        raise typer.BadParameter(
            "--url needs --model (the model the endpoint serves)", param_hint="--model"
        )
    fields: dict[str, Any] = {
        "kind": HTTP if url else LOCAL,
        "model": model or DEFAULT_MODEL,
        "url": url,
        "api_key_env": api_key_env,
    }
    if timeout is not None:
        fields["timeout_s"] = timeout
    if batch is not None:
        fields["batch"] = batch
    try:
        return EmbedderConfig(**fields).checked()
    except VineError as exc:
        common.fail(exc.envelope(), as_json)


def _with_bar(vine: Any, config: Any, rebuild: bool) -> dict[str, Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("Embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("nodes"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, transient=True, console=_stderr()) as bar:
        task = bar.add_task("embed", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return vine.canopy_build(config, rebuild=rebuild, progress=progress)


def _stderr() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@canopy_app.command("status")
def status(forest: Forest = None, json: Json = False) -> None:
    """How many nodes are embedded and stale, with which embedder and model, the
    index's size, and whether this process's query embedder matches it.

    \b
    Example: vine canopy status -f ./brain
    """
    as_json = common.json_mode(json)
    vine = common.open_vine(forest, writable=False, as_json=as_json)
    from monkeyllm.errors import VineError

    try:
        result = vine.canopy_status()
    except VineError as exc:
        common.fail(exc.envelope(), as_json)
    finally:
        vine.close()
    _print(result, as_json)


@canopy_app.command("drop")
def drop(forest: Forest = None, json: Json = False) -> None:
    """Delete the Canopy (_derived/canopy/); locate and harvest rank lexically until the
    next build.

    \b
    Example: vine canopy drop -f ./brain
    """
    as_json = common.json_mode(json)
    vine = common.open_vine(forest, writable=False, as_json=as_json)
    try:
        result = vine.canopy_drop()
    finally:
        vine.close()
    if as_json:
        common.emit("canopy", result, True)
        return
    sys.stdout.write(
        ("Dropped the Canopy " if result["dropped"] else "No Canopy at ") + result["folder"] + "\n"
    )


def _print(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        common.emit("canopy", result, True)
        return
    out = common.console()
    for line in lines(result):
        out.print(line, markup=False)


def _nodes(count: Any) -> str:
    return f"{count} node" if count == 1 else f"{count} nodes"


def lines(result: dict[str, Any]) -> list[str]:
    """A status (or a build's result) in a few lines for people."""
    out: list[str] = []
    built = result.get("built")
    if built:
        text = f"Embedded {_nodes(built['embedded'])} in {built['elapsed_ms'] / 1000:.1f} s"
        if built.get("replaced"):
            text += f" (replacing the index built with {built['replaced']})"
        out.append(text + ".")
    if not result.get("index"):
        out.append(result.get("hint") or "No Canopy.")
        return out
    made = result.get("embedder") or {}
    config = made.get("config") or {}
    where = f" at {config['url']}" if config.get("url") else ""
    out.append(
        f"Canopy: {result['embedded']} of {_nodes(result['nodes'])} embedded, "
        f"{result['stale']} stale."
    )
    out.append(
        f"Embedder: {made.get('name')}:{made.get('model')}{where}, "
        f"{made.get('dim')} dimensions; built {result.get('built_at')}; "
        f"{result.get('size_bytes', 0) / 1e6:.1f} MB in {result['folder']}."
    )
    if result.get("mismatch"):
        out.append(f"Hybrid ranking is off: {result['mismatch']}.")
    elif result.get("stale"):
        out.append(
            "Hybrid reads embed a few changed nodes each; run vine canopy build to "
            "embed them all now."
        )
    return out
