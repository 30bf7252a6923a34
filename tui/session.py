"""The TUI's one door into the engine.

Hints come in the command line's words, as ``vine browse`` was started from it.
Reads go through a read-only ``Vine`` kept open for the session, so browsing never
takes the writer lock and keeps working beside another writer. A save opens a
writable ``Vine`` for that one call and closes it at once: the lock is held only
while saving, and a forest locked by someone else answers ``E_LOCKED`` as data.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from monkeyllm import Vine, VineError
from monkeyllm.commands.spelling import CLI
from monkeyllm.hints import spelled
from monkeyllm.lock import holder
from monkeyllm.writes import authored

Response = dict[str, Any]


def error_of(response: Response) -> dict[str, Any] | None:
    """The error body of an envelope, or None for a result."""
    err = response.get("error") if isinstance(response, dict) else None
    return err if isinstance(err, dict) else None


class Session:
    """An open forest, as the browser uses it.

    Args:
        root: The forest's root folder.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        with spelled(CLI):
            self._vine = Vine(self.root, writable=False)
        self._write_lock = threading.Lock()
        # Why saves cannot work here (not the forest's own git repository), said up front.
        self.cannot_write = self._vine.cannot_write()

    def close(self) -> None:
        """Close the read-only Vine (flushing its heat)."""
        self._vine.close()

    def read(self, name: str, **args: Any) -> Response:
        """Run a read call; the result or its error envelope (never raises)."""
        with spelled(CLI):
            return self._vine.call(name, args)

    def write(self, name: str, **args: Any) -> Response:
        """Run one write call in a writable Vine opened for it alone.

        ``E_LOCKED`` (another writer holds the forest) comes back as an envelope,
        like every other failure.
        """
        with self._write_lock, spelled(CLI):
            try:
                vine = Vine(self.root)
            except VineError as exc:
                return exc.envelope()
            try:
                # A person wrote this in the browser: source manual.
                return vine.call(name, authored(name, args))
            finally:
                vine.close()

    def copy(self, dest: str) -> Response:
        """Copy this forest to ``dest`` as a forest of its own (``Vine.copy``):
        ``{"forest": path}``, or the error envelope."""
        with spelled(CLI):
            try:
                Vine.copy(self.root, dest, writable=False).close()
            except VineError as exc:
                return exc.envelope()
            except OSError as exc:
                return {"error": {"code": "E_READONLY", "message": f"cannot copy to {dest}: "
                                  f"{exc.strerror or exc}"}}
        return {"forest": str(Path(dest).expanduser().resolve())}

    def writer(self) -> str | None:
        """Who else holds the writer lock right now (a short description), or None.

        Reads the lock's card without taking the lock: a card whose process is gone
        on this host is a stale lock, which the next writer reclaims.
        """
        card = holder(self.root)
        if card is None:
            return None
        if not card:
            return "another writer"
        return f"pid {card.get('pid', '?')} on {card.get('host', '?')}"
