"""The options several commands take, declared once as ``Annotated`` types: the same
spelling and help wherever they appear (spellings and help from :mod:`.flags`)."""

from pathlib import Path
from typing import Annotated

import typer

from .flags import FOREST, JSON

Forest = Annotated[Path | None, typer.Option(*FOREST.names, help=FOREST.help, show_default=False)]
Json = Annotated[bool, typer.Option(*JSON.names, help=JSON.help)]
