"""``vine watch``: keep a forest's catalog fresh, so one-shot commands skip their walk."""

import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from . import common


def watch(
    forest: Annotated[Path | None, typer.Option(
        "--forest", "-f", help="The forest's folder.", show_default=False)] = None,
) -> None:
    """Keep the forest's catalog fresh until interrupted, so that every other `vine`
    command on it starts without walking the files (Linux).

    Each call first brings the catalog in line with the files; a one-shot command
    would stat every file for it. While this runs, it asks this process instead, which
    follows the files with inotify. It takes no lock and writes only the catalog; stop
    it with Ctrl-C. Run it beside scripts that call `vine` in loops.

    Example: vine watch -f ./brain
    """
    from monkeyllm.errors import VineError

    vine = common.open_vine(forest, writable=False, as_json=False)
    try:
        keeper = vine.keeper()
    except VineError as exc:
        vine.close()
        common.fail(exc.envelope(), as_json=False)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = threading.Thread(target=keeper.serve_forever, name="keeper", daemon=True)
    server.start()
    sys.stderr.write(f"vine watch: keeping {vine.root} fresh; other vine commands on it "
                     "skip their walk while this runs (Ctrl-C to stop)\n")
    sys.stderr.flush()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        keeper.close()
        server.join(5)
        vine.close()
    sys.stderr.write(f"vine watch: stopped after {keeper.answered} answers\n")
