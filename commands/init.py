"""``vine init PATH --title TITLE``: create a forest."""

from pathlib import Path
from typing import Annotated

import typer

from . import common, options
from .flags import FOREST
from .options import unset


def init(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="The folder to create the forest in (default: --forest, else here).",
            show_default=False,
        ),
    ] = None,
    title: Annotated[
        str | None, unset("--title", "-t", help="The forest's title (default: the folder's name).")
    ] = None,
    summary: Annotated[
        str | None, unset("--summary", "-s", help="One or two sentences on what the forest holds.")
    ] = None,
    forest: Annotated[Path | None, unset(*FOREST.names, help="The same as PATH.")] = None,
    json: options.Json = False,
) -> None:
    """Create a forest: master index, default dialect, .gitignore, and its own git
    repository with a first commit. Refuses a folder that already holds a forest.

    \b
    Example: vine init ./brain --title "Acme brain"
    """
    from monkeyllm import Vine
    from monkeyllm.errors import SchemaError, VineError

    as_json = common.json_mode(json)
    if path is not None and forest is not None and path != forest:
        common.usage(f"two folders given: {path} and --forest {forest}.")
    folder = (path or forest or common.Settings.forest or Path(".")).expanduser().resolve()
    name = title or folder.name.replace("-", " ").replace("_", " ").strip() or "Forest"
    try:
        with common.cli_words():
            vine = Vine.init(folder, title=name, summary=summary)
    except VineError as exc:
        common.fail(exc.envelope(), as_json)
    except OSError as exc:
        common.fail(
            SchemaError(f"cannot create a forest at {folder}: {exc.strerror or exc}").envelope(),
            as_json,
        )
    try:
        count = vine.scan("_index", fields=["id"], recursive=True).get("total")
        head = vine.head()
    finally:
        vine.close()
    common.emit(
        "init", {"forest": str(folder), "title": name, "commit": head, "nodes": count}, as_json
    )
