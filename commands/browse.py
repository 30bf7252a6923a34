"""``vine browse``: the forest in a terminal app (Textual, imported only here)."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from . import common, options
from .options import unset


def browse(
    forest: options.ForestArgument = None,
    forest_option: options.Forest = None,
    copy: Annotated[
        Path | None,
        unset(
            "--copy",
            help="First copy the forest to this new folder, as a forest with a git "
            "repository of its own, and browse the copy (to try edits on a forest that cannot "
            "be written, such as sample-brain/).",
        ),
    ] = None,
) -> None:
    """Browse and curate a forest in a terminal app: tree, digests, reader, search, SQL.

    Moves are look, move and pick; heat colours what is well trodden; edits are grafts
    and plants that each show their commit, taking the lock only while saving. A forest
    that is not its own git repository is browsed read-only (w makes a writable copy).

    \b
    Example: vine browse sample-brain --copy ~/brain
    """
    root = common.forest_of(forest, forest_option)
    from monkeyllm.errors import VineError
    from monkeyllm.tui.app import BrowseApp

    if copy is not None:
        from monkeyllm import Vine

        try:
            with common.cli_words():
                Vine.copy(root, copy, writable=False).close()
        except VineError as exc:
            common.fail(exc.envelope(), as_json=False)
        sys.stderr.write(
            f"vine browse: copied {root} to {copy.expanduser()}, a forest of "
            "its own: edits save there.\n"
        )
        root = copy.expanduser()
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # A terminal app with no terminal would draw into a pipe and wait for keys that
        # never come (an agent's shell, a script, a CI step).
        sys.stderr.write(
            "vine browse: a terminal app, and this is not a terminal (standard input and "
            "output must both be one); from a script, the calls print JSON: "
            f"vine look _index -f {root}, vine locate QUERY -f {root}\n"
        )
        raise typer.Exit(0 if copy is not None else common.EXIT_USAGE)
    try:
        app = BrowseApp(root)
    except VineError as exc:
        common.fail(exc.envelope(), as_json=False)
    app.run()
