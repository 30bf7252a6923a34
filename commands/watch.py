"""``vine watch``: keep a forest's catalog fresh, so one-shot commands skip their walk."""

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated

import typer

from . import common, options

POLL_S = 1.0


def watch(
    forest_argument: options.ForestArgument = None,
    forest: options.Forest = None,
    idle: Annotated[
        float,
        typer.Option(
            "--idle", help="Stop after this many seconds without a question (0: never).", min=0
        ),
    ] = 0,
    stop: Annotated[
        bool,
        typer.Option(
            "--stop",
            help="Stop the keeper of this forest (started by hand or by vine itself) and exit.",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Say nothing on stderr.")] = False,
) -> None:
    """Keep the forest's catalog fresh until interrupted, so that every other `vine`
    command on it starts without walking the files (Linux).

    Each call first brings the catalog in line with the files; a one-shot command
    would stat every file for it. While this runs, it asks this process instead, which
    follows the files with inotify. It takes no lock and writes only the catalog; it
    stops on Ctrl-C, on `vine watch --stop`, after --idle seconds without a question,
    or when the forest's folder goes away. A read that had to walk starts one itself
    (with --idle 600), unless VINE_WATCH=0.

    \b
    Example: vine watch ./brain
    """
    from monkeyllm import keeper as keepers
    from monkeyllm.errors import VineError

    forest = common.forest_of(forest_argument, forest)
    if stop:
        root = common.find_forest(forest)
        stopped = keepers.stop(root)
        if not quiet:
            sys.stderr.write(f"vine watch: {'stopped the' if stopped else 'no'} keeper of {root}\n")
        return
    vine = common.open_vine(forest, writable=False, as_json=False)
    try:
        keeper = vine.keeper()
    except VineError as exc:
        vine.close()
        if quiet:
            raise typer.Exit(common.EXIT_ERROR) from None
        common.fail(exc.envelope(), as_json=False)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    # Which folder this keeps, taken before anyone can ask it anything: a forest removed
    # right after the first answer is still seen going.
    root, origin = vine.root, _identity(vine.root)
    server = threading.Thread(target=keeper.serve_forever, name="keeper", daemon=True)
    server.start()
    if not quiet:
        sys.stderr.write(
            f"vine watch: keeping {root} fresh; other vine commands on it "
            "skip their walk while this runs (Ctrl-C to stop)\n"
        )
        sys.stderr.flush()
    why = "stopped"
    try:
        while not done.wait(POLL_S):
            if keeper.stopped.is_set():
                why = "stopped (vine watch --stop, or its catalog was rebuilt)"
                break
            if origin is None or _identity(root) != origin:
                why = f"stopped: {root} is gone or was replaced"
                break
            if idle and time.monotonic() - keeper.last_asked > idle:
                why = f"stopped: nobody asked for {idle:g} s (--idle)"
                break
    except KeyboardInterrupt:
        pass
    finally:
        keeper.close()
        server.join(5)
        vine.close()
    if not quiet:
        count = keeper.answered
        sys.stderr.write(f"vine watch: {why}, after {count} answer{'' if count == 1 else 's'}\n")


def _identity(root: Path) -> tuple[int, int] | None:
    """The forest folder's device and inode (None once it is gone)."""
    try:
        st = os.stat(root / "_index.md")
        folder = os.stat(root)
    except OSError:
        return None
    return (folder.st_dev, folder.st_ino) if st else None
