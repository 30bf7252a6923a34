"""``vine browse``: the forest in a terminal app (Textual, imported only here)."""

from pathlib import Path
from typing import Annotated

import typer

from . import common


def browse(
    forest: Annotated[Path | None, typer.Argument(
        metavar="FOREST", help="The forest's folder (default: --forest, $VINE_FOREST, "
        "else the nearest forest at or above the current folder).", show_default=False)] = None,
    forest_option: Annotated[Path | None, typer.Option(
        "--forest", "-f", help="The forest's folder.", show_default=False)] = None,
) -> None:
    """Browse and curate a forest in a terminal app: tree, digests, reader, search, SQL.

    Moves are look, move and pick; heat colours what is well trodden; edits are grafts
    and plants that each show their commit, taking the lock only while saving.

    Example: vine browse ./brain
    """
    root = common.find_forest(forest or forest_option)
    from monkeyllm.errors import VineError
    from monkeyllm.tui.app import BrowseApp

    try:
        app = BrowseApp(root)
    except VineError as exc:
        common.fail(exc.envelope(), as_json=False)
    app.run()
