"""The stat walk of a forest's node files, shared with a helper process on big forests.

A process that has not been watching must see every node file's ``(mtime_ns, size)``
before it answers: an in-place edit changes neither the folder's listing nor its
mtime, so nothing short of a stat per file proves a file unchanged. On a big forest
that is one ``lstat`` per file (100,000 at 100k nodes) plus the Python loop around
each, and a lock-free split over threads gains nothing (each stat is too short for the
interpreter lock to let another thread run in the meantime). So a big walk is split
between this process and one helper interpreter (``python -I -S`` running this file,
which imports nothing but the standard library's ``os`` and ``marshal``): this process
lists the forest's first levels, hands the helper every other folder of that frontier
and walks the rest while it runs. A helper that cannot start or fails leaves its share
to this process, so the walk is the same either way.

A walk is a list of records ``(folder, [(name, mtime_ns, size), ...])``, one per
folder, and :func:`digest` names it in 32 bytes whoever walked which folder: equal
digests are equal walks.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Iterable

Record = tuple[str, list[tuple[str, int, int]]]
# A folder's record with its files marshalled.
Encoded = tuple[str, bytes]

_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
# scandir(fd) lets each stat resolve one name against the open folder, not a whole path.
_SCANDIR_FD = os.scandir in os.supports_fd

# Walks of forests with fewer node files than this stay in one process.
SPLIT_AT = 10_000
# The helper starts from a frontier of at least this many folders (every other one).
FRONTIER = 64


def is_text(name: str) -> bool:
    """True when a file name is text: one that is not valid UTF-8 on disk comes back
    from the OS with surrogate escapes, which no id, catalog row or reply can hold, so
    it is no node (``vine validate`` reports the file)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk(
    root: str,
    folders: Iterable[str],
    private: frozenset[str],
    out: list[Record],
    *,
    watch: Callable[[str, str], None] | None = None,
    depth: int | None = None,
) -> list[str]:
    """Walk ``folders`` (paths relative to ``root``) and their subfolders into ``out``.

    Each folder listed adds one record with its ``.md`` regular files (symlinks are
    not nodes); hidden folders and the ``private`` ones are skipped. ``watch(full,
    rel)`` runs before each folder is listed. With ``depth``, folders that many levels
    below ``folders`` are not listed but returned (the frontier of a split walk).
    """
    stack = [(rel, 0) for rel in reversed(list(folders))]
    frontier: list[str] = []
    scandir, close, open_ = os.scandir, os.close, os.open
    while stack:
        rel, level = stack.pop()
        if depth is not None and level >= depth:
            frontier.append(rel)
            continue
        full = root + "/" + rel if rel else root
        prefix = rel + "/" if rel else ""
        if watch is not None:
            watch(full, rel)
        files: list[tuple[str, int, int]] = []
        below: list[str] = []
        fd = -1
        try:
            if _SCANDIR_FD:
                fd = open_(full, _FOLDER)
                listing = scandir(fd)
            else:  # pragma: no cover - platforms without scandir(fd)
                listing = scandir(full)
            with listing as entries:
                for entry in entries:
                    name = entry.name
                    try:
                        if not (name.isascii() or is_text(name)):
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            if name[0] != "." and name not in private:
                                below.append(prefix + name)
                        elif name.endswith(".md") and entry.is_file(follow_symlinks=False):
                            st = entry.stat(follow_symlinks=False)
                            files.append((name, st.st_mtime_ns, st.st_size))
                    except OSError:
                        continue
        except OSError:
            continue
        finally:
            if fd >= 0:
                close(fd)
        out.append((rel, files))
        stack.extend((child, level + 1) for child in reversed(below))
    return frontier


def encode(records: Iterable[Record]) -> list[Encoded]:
    """Each folder's files marshalled apart, so that two walks of the same files compare
    equal whoever walked which folder."""
    dumps = marshal.dumps
    return [(rel, dumps(files, 2)) for rel, files in records]


def as_files(encoded: Iterable[Encoded]) -> dict[str, tuple[int, int]]:
    """An encoded walk as ``{path: (mtime_ns, size)}``."""
    found: dict[str, tuple[int, int]] = {}
    loads = marshal.loads
    for rel, data in encoded:
        prefix = rel + "/" if rel else ""
        for name, mtime, size in loads(data):
            found[prefix + name] = (mtime, size)
    return found


def digest(encoded: Iterable[Encoded]) -> bytes:
    """32 bytes naming a walk: its folders in order of their paths, each with its files
    (in the order the folder lists them)."""
    try:
        # The builtin module hashlib takes blake2b from, without loading OpenSSL.
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b

    h = blake2b(digest_size=32)
    update, fsencode = h.update, os.fsencode
    for rel, data in sorted(encoded):
        # No path holds a NUL, and a marshalled list says its own length.
        update(fsencode(rel) + b"\0")
        update(data)
    return h.digest()


class Helper:
    """The helper interpreter that walks a share of a big forest."""

    def __init__(self) -> None:
        import subprocess

        self._proc: subprocess.Popen[bytes] | None = None
        script = os.path.abspath(__file__)
        if os.name != "posix" or not sys.executable or not os.path.isfile(script):
            return
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", script],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError:
            self._proc = None

    @property
    def started(self) -> bool:
        """True when the helper process runs."""
        return self._proc is not None

    def send(self, root: str, folders: list[str], private: frozenset[str]) -> bool:
        """Give the helper its share; False when it is gone (the share stays here)."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            return False
        try:
            proc.stdin.write(marshal.dumps((root, folders, sorted(private))))
            proc.stdin.close()
            return True
        except OSError:
            self.stop()
            return False

    def result(self) -> list[Encoded] | None:
        """The helper's encoded records, or None when it failed."""
        proc = self._proc
        if proc is None or proc.stdout is None:
            return None
        try:
            data = proc.stdout.read()
            proc.stdout.close()
            code = proc.wait()
        except OSError:
            self.stop()
            return None
        self._proc = None
        if code != 0:
            return None
        try:
            records = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        return records if type(records) is list else None

    def stop(self) -> None:
        """End the helper (its share is walked here)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        proc.kill()
        proc.wait()


def split_walk(root: str, private: frozenset[str], expected: int) -> tuple[list[Encoded], bool]:
    """Walk the whole forest with a helper process: the encoded records, and whether
    the helper walked its share.

    This process lists the first levels while the helper starts, until the frontier
    holds :data:`FRONTIER` folders (or an eighth of the ``expected`` files is seen),
    then gives the helper every other frontier folder.
    """
    helper = Helper()
    mine: list[Record] = []
    theirs: list[str] = []
    try:
        frontier = walk(root, [""], private, mine, depth=1)
        while frontier and len(frontier) < FRONTIER:
            if sum(len(files) for _, files in mine) * 8 >= expected:
                break
            frontier = walk(root, frontier, private, mine, depth=1)
        if len(frontier) >= 2 and helper.send(root, frontier[1::2], private):
            theirs, frontier = frontier[1::2], frontier[0::2]
        else:
            helper.stop()
        walk(root, frontier, private, mine)
        encoded = encode(mine)
        got = helper.result() if theirs else None
    except BaseException:
        helper.stop()
        raise
    if got is None:
        rest: list[Record] = []
        walk(root, theirs, private, rest)
        return encoded + encode(rest), False
    return encoded + got, True


def _serve() -> None:
    """The helper's side: read a share from standard input, print its walk."""
    root, folders, private = marshal.loads(sys.stdin.buffer.read())
    out: list[Record] = []
    walk(root, folders, frozenset(private), out)
    sys.stdout.buffer.write(marshal.dumps(encode(out), 2))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    _serve()
