"""The TUI's one door into the engine.

Hints come in the command line's words, as ``vine browse`` was started from it.
One ``Vine`` serves the session with ``lock="per-write"``: reads never take the
writer lock, and a save takes it for that one write and lets go at once, so an agent
served by ``vine serve`` and a person at the command line write the same forest
between the browser's saves. A save that finds another write in progress waits its
turn; one that finds a process holding the forest open for writing answers
``E_LOCKED`` as data, naming it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monkeyllm import Vine, VineError
from monkeyllm.commands.spelling import CLI
from monkeyllm.hints import spelled
from monkeyllm.lock import holder, holds_open, who
from monkeyllm.writes import authored

Response = dict[str, Any]


class Session:
    """An open forest, as the browser uses it.

    Args:
        root: The forest's root folder.
        on_lock_wait: Called (from the saving thread) with the holder's card when a
            save has waited a moment for another writer.
    """

    def __init__(
        self, root: Path, on_lock_wait: Callable[[dict[str, object]], None] | None = None
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        with spelled(CLI):
            self._vine = Vine(self.root, lock="per-write", on_lock_wait=on_lock_wait)
        self._write_lock = threading.Lock()
        # Why saves cannot work here (not the forest's own git repository), said up front.
        self.cannot_write = self._vine.cannot_write()

    def close(self) -> None:
        """Close the session's Vine (flushing its heat)."""
        self._vine.close()

    def read(self, name: str, **args: Any) -> Response:
        """Run a read call; the result or its error envelope (never raises)."""
        with spelled(CLI):
            return self._vine.call(name, args)

    def write(self, name: str, **args: Any) -> Response:
        """Run one write call; the lock is taken for it alone. ``E_LOCKED`` (a process
        holds the forest open for writing), like every other failure, comes back as an
        envelope."""
        with self._write_lock, spelled(CLI):
            # A person wrote this in the browser: source manual.
            return self._vine.call(name, authored(name, args))

    def copy(self, dest: str) -> Response:
        """Copy this forest to ``dest`` as a forest of its own (``Vine.copy``):
        ``{"forest": path}``, or the error envelope."""
        with spelled(CLI):
            try:
                Vine.copy(self.root, dest, writable=False).close()
            except VineError as exc:
                return exc.envelope()
            except OSError as exc:
                return {
                    "error": {
                        "code": "E_READONLY",
                        "message": f"cannot copy to {dest}: {exc.strerror or exc}",
                    }
                }
        return {"forest": str(Path(dest).expanduser().resolve())}

    def writer(self) -> str | None:
        """Who else holds the forest open for writing right now (a short description),
        or None. A write in progress elsewhere does not count: a save waits for it.

        Reads the lock's card without taking the lock: a card whose process is gone
        on this host is a stale lock, which the next writer reclaims.
        """
        card = holder(self.root)
        if card is None or not holds_open(card):
            return None
        return who(card)
