"""Who is building the catalog: ``_derived/catalog.building``.

A full build holds this file with ``flock`` for its whole length and removes it when
the catalog is whole again. The file says how the build writes: ``journaled`` (the
catalog's own WAL, which rolls a dead build back) or ``unjournaled`` (no journal, the
faster way a build from nothing goes when no other connection has the catalog open,
which leaves a half-written file when the build dies). A process about to open the
catalog waits while a build without a journal holds the file, and throws the catalog
away to be built again when it finds the file left by such a builder that died; a
process about to build waits for any build, then builds only if it still must.

Without ``flock`` (Windows) there is no build lock: builds keep the WAL, and a second
process finds the catalog busy as before.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

NAME = "catalog.building"
JOURNALED = "journaled"
UNJOURNALED = "unjournaled"
# How long a process waits for another one's build before it answers E_LOCKED (a
# 100,000-node forest builds in 25-45 s on 2 cores).
WAIT_S = 600.0
_POLL_S = 0.02


class BuildLock:
    """The build lock of one ``_derived`` folder, held by this object once taken."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / NAME
        self._fd: int | None = None
        self._how = ""
        # What the last holder left in the file when it did not finish ("" if nothing).
        self.left = ""

    @property
    def how(self) -> str:
        """What this holder last marked ("" before it marked anything)."""
        return self._how

    def take(self, timeout: float = WAIT_S) -> bool:
        """Take the lock, waiting up to ``timeout`` seconds for another builder; False
        when locks are not supported here (the caller builds without one).

        Raises:
            VineError: ``E_LOCKED`` when another process builds for longer than that.
        """
        if fcntl is None:
            return False
        deadline = time.monotonic() + timeout
        while True:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                if not _lock(fd, deadline):
                    os.close(fd)
                    return False
                if _same_file(fd, self.path):
                    break
            except BaseException:
                os.close(fd)
                raise
            # The holder removed the file as it finished: take the next one.
            os.close(fd)
        self._fd = fd
        self._how = ""
        self.left = os.pread(fd, 256, 0).decode("utf-8", "replace").split(" ")[0]
        return True

    def mark(self, how: str) -> None:
        """Say how this build writes (:data:`JOURNALED` or :data:`UNJOURNALED`)."""
        if self._fd is None:
            return
        self._how = how
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{how} {os.getpid()}\n".encode(), 0)
        os.fsync(self._fd)

    def release(self, *, keep: bool = False) -> None:
        """Let the lock go. The file goes too unless ``keep`` or it still says the
        catalog is being written without a journal (then it tells the next process
        to throw the catalog away)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if not keep and self._how != UNJOURNALED:
                try:
                    os.unlink(self.path)
                except FileNotFoundError:
                    pass
        finally:
            os.close(fd)


def pending(folder: Path) -> bool:
    """True when the catalog in ``folder`` may be unreadable: a build is writing it
    without a journal (or is about to say how it writes), or one that did died. A
    build that keeps the WAL leaves the catalog readable as it was meanwhile."""
    try:
        with open(folder / NAME, "rb") as fh:
            said = fh.read(64).decode("utf-8", "replace").split(" ")[0]
    except FileNotFoundError:
        return False
    return said != JOURNALED


def await_builder(folder: Path, discard: Callable[[], None]) -> bool:
    """Wait while another process builds the catalog in ``folder`` without a journal;
    when such a builder died, ``discard`` the half-written catalog it left. False when
    there was nothing to wait for (or no ``flock`` here)."""
    if not pending(folder):
        return False
    lock = BuildLock(folder)
    if not lock.take():
        return False
    try:
        if lock.left == UNJOURNALED:
            discard()
    except BaseException:
        lock.release(keep=True)
        raise
    lock.release()
    return True


def _lock(fd: int, deadline: float) -> bool:
    """Wait for an exclusive flock on ``fd`` until ``deadline``; False when the
    filesystem has none."""
    from .errors import Locked

    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno in (errno.ENOLCK, errno.ENOTSUP, errno.EOPNOTSUPP):
                return False
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
        if time.monotonic() >= deadline:
            holder = os.pread(fd, 256, 0).decode("utf-8", "replace").split()
            pid = holder[1] if len(holder) > 1 else "another process"
            raise Locked(
                f"the catalog is being built by process {pid}; try again when that build is done"
            )
        time.sleep(_POLL_S)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)
