"""The keeper: one long-lived process that keeps a forest's catalog fresh, so that
one-shot processes (``vine look x`` in a shell loop) need not walk the forest.

Every call starts by bringing the catalog in line with the files. A long-lived
process does that cheaply with inotify; a one-shot process would have to stat every
file (60-80 ms on 10,000 nodes). While ``vine watch`` runs, a one-shot process asks it
instead, over a Unix socket: the keeper drains its inotify queue, applies what changed
to the catalog file they share, and answers ``ok``. The kernel queues an event before
the writer's system call returns, so every edit finished before the question is in
the answer. No keeper, or one that does not answer within :data:`TIMEOUT`: the
process walks, as it always would.

The socket lives in Linux's abstract namespace (nothing on disk to go stale), named
from the forest's identity (its real path, device and inode); the question carries
that identity whole and the keeper answers only its own, and only a process of the
same user (checked with ``SO_PEERCRED``). Elsewhere there is no keeper.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

TIMEOUT = 0.5
OK = b"ok\n"
# Abstract Unix sockets and peer credentials (socket is imported when first asked).
AVAILABLE = sys.platform.startswith("linux")


def identity(root: Path) -> bytes | None:
    """What names a forest to its keeper: real path, device and inode."""
    try:
        real = os.path.realpath(root)
        st = os.stat(real)
    except OSError:
        return None
    return f"{real}\0{st.st_dev}\0{st.st_ino}".encode("utf-8", "surrogateescape")


def address(root: Path) -> str | None:
    """The keeper's socket name for the forest at ``root`` (None when unsupported).
    Two forests may share a name; the question's identity tells them apart."""
    ident = identity(root) if AVAILABLE else None
    if ident is None:
        return None
    return f"\0monkeyllm-keeper-{os.getuid()}-{zlib.crc32(ident):08x}-{len(ident)}"


# File systems whose files other machines change where this kernel's inotify cannot see.
REMOTE = (
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "afs",
    "ceph",
    "glusterfs",
    "lustre",
    "gpfs",
    "fuse",
    "fuse.sshfs",
    "fuse.rclone",
    "fuse.s3fs",
    "virtiofs",
)


def filesystem(root: Path, mounts: str | None = None) -> str | None:
    """The type of the file system holding ``root``, from ``mounts`` (the text of
    /proc/self/mounts, read when not given)."""
    real = os.path.realpath(root)
    if mounts is None:
        try:
            with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
                mounts = fh.read()
        except OSError:
            return None
    best, kind = "", None
    for fields in (line.split() for line in mounts.splitlines()):
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


def watchable(root: Path, mounts: str | None = None) -> bool:
    """True when inotify sees every change to the forest (a local file system)."""
    kind = filesystem(root, mounts)
    return kind is not None and kind not in REMOTE and not kind.startswith("fuse.")


def _question(ident: bytes, verb: bytes = b"sync") -> bytes:
    return verb + b" " + ident.hex().encode("ascii") + b"\n"


def _same_user(sock: Any) -> bool:
    import socket
    import struct

    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def ask(root: Path, verb: bytes = b"sync") -> bool:
    """True when a keeper of this forest brought the catalog up to date just now
    (with ``verb=b"stop"``: when it agreed to stop)."""
    name = address(root)
    ident = identity(root)
    if name is None or ident is None:
        return False
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(TIMEOUT)
            sock.connect(name)
            if not _same_user(sock):
                return False
            sock.sendall(_question(ident, verb))
            return sock.recv(16) == OK
    except OSError:
        return False


def stop(root: Path) -> bool:
    """Ask the keeper of this forest to stop; True when one agreed."""
    return ask(root, b"stop")


class Keeper:
    """Answers one-shot processes for a forest, running ``sync`` for each question.

    Args:
        root: The forest's root.
        sync: Brings the shared catalog in line with the files (raises on failure,
            and then the question goes unanswered, so the asker walks).
    """

    def __init__(self, root: Path, sync: Callable[[], object]) -> None:
        import socket

        name = address(root)
        ident = identity(root)
        if name is None or ident is None:
            raise OSError("a keeper needs Linux (abstract Unix sockets)")
        self._question = _question(ident)
        self._stop_question = _question(ident, b"stop")
        self.stopped = threading.Event()
        self.last_asked = time.monotonic()
        self._sync = sync
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._server.bind(name)
        except OSError:
            self._server.close()
            raise
        self._server.listen(64)
        self.answered = 0

    def serve_forever(self) -> None:
        """Answer until :meth:`close` (one thread per asker; syncs run one at a time)."""
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: Any) -> None:
        with conn:
            try:
                conn.settimeout(TIMEOUT * 4)
                if not _same_user(conn):
                    return
                question = _read_line(conn)
                if question == self._stop_question:
                    self.stopped.set()
                    conn.sendall(OK)
                    return
                if question != self._question:
                    return
                with self._lock:
                    self._sync()
                    self.answered += 1
                    self.last_asked = time.monotonic()
                conn.sendall(OK)
            except Exception:  # noqa: BLE001 - an unanswered question makes the asker walk
                return

    def close(self) -> None:
        """Stop answering (the socket's name is free at once)."""
        import socket

        try:
            self._server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._server.close()


def _read_line(conn: Any, limit: int = 65536) -> bytes:
    """One question, up to its newline (a path can be long)."""
    data = b""
    while not data.endswith(b"\n") and len(data) < limit:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def keep(root: Path, catalog: Any, closed: Callable[[], bool]) -> Keeper:
    """A keeper answering for ``catalog`` (a forest's :class:`~monkeyllm.catalog.Catalog`,
    whose owner reports ``closed()``), its inotify started; see ``Vine.keeper``."""
    from .errors import Locked, SchemaError

    if not AVAILABLE or catalog.path is None:
        raise SchemaError(
            "a keeper needs Linux and a forest whose _derived/ folder is writable",
            hint="Without one, every call walks the files, as it always does.",
        )
    if not watchable(root):
        raise SchemaError(
            f"a keeper cannot follow a forest on {filesystem(root)}:"
            " inotify does not see edits made on other machines",
            hint="Every call walks the files instead, as it always does.",
        )

    def identity() -> tuple[int, int] | None:
        try:
            st = os.stat(catalog.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    opened = identity()

    def sync() -> None:
        if closed():
            raise SchemaError("this Vine is closed")
        if identity() != opened:
            # Another process replaced the catalog file (a damaged one is rebuilt
            # anew): this keeper's connection is to the old one, so it stops and
            # callers walk until a new keeper starts.
            kept.stopped.set()
            raise SchemaError("the catalog file was replaced")
        catalog.sync()

    try:
        kept = Keeper(root, sync)  # claims the forest first
    except OSError:
        raise Locked(
            "a keeper already keeps this forest fresh", hint="One vine watch per forest is enough."
        ) from None
    try:
        # Two full walks: the second starts inotify, so a question only drains it.
        catalog.sync(full=True)
        catalog.sync(full=True)
    except BaseException:
        kept.close()
        raise
    return kept
