"""The one way into a write: the mutex, the writer lock, recovery, a fresh catalog.

Every write a :class:`~monkeyllm.Vine` makes (plant, graft, tend, prune, transplant,
ingest, validate's repairs, and any write to come) runs inside :meth:`WritePath.open`.
Threads of one process take turns on its mutex; processes take turns on the forest's
``.vine.lock``. A Vine opened with ``lock="while-open"`` holds that lock from open to
close; one opened with ``lock="per-write"`` takes it inside each write and lets go at
once, so long-lived processes (a server, the browser) share a forest with short ones
(a command, a script). Once the lock is held, a journal left by a writer that died
mid-write is settled and the catalog is brought up to date with the files, so each
write starts from the latest committed state, whichever process committed it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import SchemaError, VineError
from .lock import HOLDS, PER_WRITE, WHILE_OPEN, ForestLock, Waiting, timeout_from_env
from .writes import JOURNAL

if TYPE_CHECKING:
    from .forest import Forest
    from .gitops import Repository


def check_hold(lock: object) -> str:
    """``lock`` checked: ``"while-open"`` or ``"per-write"``.

    Raises:
        VineError: ``E_SCHEMA`` for anything else.
    """
    if lock not in HOLDS:
        raise SchemaError(
            f"lock must be {WHILE_OPEN!r} or {PER_WRITE!r}, got {lock!r}",
            hint=f"{PER_WRITE!r} takes the writer lock only while each write "
            f"runs; {WHILE_OPEN!r} (the default) holds it until close.",
        )
    return str(lock)


class WritePath:
    """How one Vine writes to its forest.

    Args:
        root: The forest's root.
        hold: ``"while-open"`` or ``"per-write"``.
        timeout: How long a write (or a ``while-open`` open) waits for a writer in
            another process to let go; None reads ``$VINE_LOCK_TIMEOUT`` (else 5 s).
        waiting: Called once per wait, with the holder's card, when a write has waited
            a moment (the command line says so on stderr).
    """

    def __init__(
        self, root: Path, hold: str, timeout: float | None = None, waiting: Waiting | None = None
    ) -> None:
        self.root = root
        self.hold = check_hold(hold)
        self.timeout = timeout_from_env(timeout)
        self.waiting = waiting
        self.lock = ForestLock(root, self.hold)
        self.mutex = threading.Lock()
        self._local = threading.local()

    @property
    def per_write(self) -> bool:
        """True when the lock is taken for each write alone."""
        return self.hold == PER_WRITE

    def take_for_life(self) -> None:
        """Take the lock for as long as the Vine stays open (``while-open``)."""
        self.lock.acquire(self.timeout, self.waiting)

    def settle_at_open(self, forest: Forest, repo: Callable[[], Repository]) -> None:
        """Finish what a writer that died mid-write left, when a journal says one did:
        at once when this Vine holds the lock, else when the lock is free right now
        (if it is not, the next write settles it)."""
        if not self._journal().exists():
            return
        if not self.per_write:
            self._recover(forest, repo())
            return
        if self.lock.try_acquire():
            try:
                self._recover(forest, repo())
            finally:
                self.lock.release()

    @contextmanager
    def open(self, forest: Forest, repo: Repository) -> Iterator[None]:
        """One write: this thread's turn on the mutex and, per write, on the lock; then
        the forest as the last writer left it. Reentrant in one thread (a write made
        inside a write shares its turn)."""
        if getattr(self._local, "inside", False):
            yield
            return
        with self.mutex:
            self._local.inside = True
            try:
                if self.per_write:
                    self.lock.acquire(self.timeout, self.waiting)
                try:
                    if self._journal().exists():
                        self._recover(forest, repo)
                    else:
                        forest.catalog.sync()
                    yield
                finally:
                    if self.per_write:
                        self.lock.release()
            finally:
                self._local.inside = False

    def close(self) -> None:
        """Let go of the lock (a ``while-open`` Vine holds it until now)."""
        self.lock.release()

    def _journal(self) -> Path:
        return self.root / "_derived" / JOURNAL

    def _recover(self, forest: Forest, repo: Repository) -> None:
        """A writer died mid-write: finish or undo what it left, then re-read every
        file (its commit may have landed without its catalog update)."""
        from .writes.transaction import recover

        try:
            recover(self.root, repo)
        except VineError:
            pass
        forest.catalog.sync(full=True)
