"""The options several commands take, declared once as ``Annotated`` types: the same
spelling and help wherever they appear (spellings and help from :mod:`.flags`); and
``unset``, the form of an option whose default the command works out."""

from pathlib import Path
from typing import Annotated, Any

import typer

from .flags import FOREST, JSON

Forest = Annotated[Path | None, typer.Option(*FOREST.names, help=FOREST.help, show_default=False)]
# The forest as a command's only positional argument, beside --forest, for commands
# that act on a whole forest (`vine browse sample-brain`, `vine validate ./brain`).
ForestArgument = Annotated[
    Path | None,
    typer.Argument(
        metavar="FOREST",
        help="The forest's folder (default: --forest, $VINE_FOREST, "
        "else the nearest forest at or above the current folder).",
        show_default=False,
    ),
]
Json = Annotated[bool, typer.Option(*JSON.names, help=JSON.help)]


def unset(*names: str, help: str) -> Any:
    """An option whose absence leaves the command to work out its value: its help says
    what that is, so no default is shown."""
    return typer.Option(*names, help=help, show_default=False)
