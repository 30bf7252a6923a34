"""``.vine.lock``: the one-writer lock, a kernel ``flock`` with a card inside.

The card ``{"pid", "host", "since"}`` only informs; the flock is the lock, so
a lock left by a dead process is free again and is reclaimed silently.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from . import hints
from .errors import Locked

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".vine.lock"
_ATTEMPTS = 4


def read_card(path: Path) -> dict[str, object]:
    """The card of a lock file (a legacy bare pid reads as ``{pid}``)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return {}
    try:
        card = json.loads(text)
    except ValueError:
        return {}
    if isinstance(card, int):
        return {"pid": card}
    return card if isinstance(card, dict) else {}


def holder(root: Path) -> dict[str, object] | None:
    """The card of whoever holds ``root``'s writer lock right now, read without taking
    it (``{}`` when the card is unreadable); None when the forest is free, or when the
    card names a process that is gone on this host (a stale lock the next writer
    reclaims)."""
    import os
    import socket

    path = root / LOCK_NAME
    if not path.exists():
        return None
    card = read_card(path)
    pid = card.get("pid")
    if isinstance(pid, int) and card.get("host") in (None, socket.gethostname()):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
    return card


def _describe(card: dict[str, object]) -> str:
    if not card:
        return "forest already has a writer"
    return (f"forest already has a writer (pid {card.get('pid', '?')} on "
            f"{card.get('host', '?')} since {card.get('since', '?')})")


class ForestLock:
    """The writer lock of one forest."""

    def __init__(self, root: Path) -> None:
        self.path = root / LOCK_NAME
        self._fd: int | None = None
        self._exclusive_file = False

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise ``E_LOCKED`` quoting the holder's card."""
        if self._fd is not None:
            return
        if fcntl is None:
            self._acquire_exclusive_file()
            return
        for _ in range(_ATTEMPTS):
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.ENOLCK, errno.ENOTSUP):
                    self._acquire_exclusive_file()
                    return
                raise Locked(_describe(read_card(self.path)),
                             hint="The lock frees itself when the holder exits; "
                                  f"{hints.open_readonly()}.") from None
            # A releaser unlinks while holding: make sure we locked the live file.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                self._write_card()
                return
            os.close(fd)
        raise Locked("forest already has a writer (contended)",
                     hint="Another writer is taking the lock right now; try again.")

    def _acquire_exclusive_file(self) -> None:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
        except FileExistsError:
            raise Locked(_describe(read_card(self.path)),
                         hint="Remove the lock file if its holder is gone.") from None
        self._fd = fd
        self._exclusive_file = True
        self._write_card()

    def _write_card(self) -> None:
        assert self._fd is not None
        import socket
        from datetime import UTC, datetime

        card = {"pid": os.getpid(), "host": socket.gethostname(),
                "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(card).encode(), 0)

    def release(self) -> None:
        """Unlink while still holding, then close."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None
