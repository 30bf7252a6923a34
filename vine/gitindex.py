"""Git's index file, updated in this process for the few paths a write commits.

The index (``.git/index``, format versions 2 and 3) is a sorted list of entries, then
optional extensions, then a SHA-1 of everything before it. A write changes one to a
few entries; spawning ``git update-index`` for that costs more than the rest of the
commit, so this module splices the entries itself:

- entries it does not touch are copied byte for byte (extended flags included);
- a new or changed entry carries the file's stat data, so ``git status`` sees it clean;
- optional extensions (cache-tree, untracked cache, fsmonitor, resolve-undo, offsets)
  are dropped, which git allows: it rebuilds them when it next needs them;
- the new index is written to ``index.lock`` (taken exclusively) and renamed over.

Anything it does not understand (version 4's compressed paths, a split or sparse
index, a SHA-256 repository, a missing index) makes :func:`update` return False and the
caller falls back to ``git update-index``.
"""

from __future__ import annotations

import hashlib
import os
import struct
from bisect import bisect_left
from pathlib import Path

_HEADER = struct.Struct(">4sLL")
_STAT = struct.Struct(">10L20sH")        # ctime s/ns, mtime s/ns, dev, ino, mode, uid,
_FLAGS_AT = 60                           # gid, size, sha, flags
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF
_MASK32 = 0xFFFFFFFF


class IndexBusy(Exception):
    """``index.lock`` is held by another git command."""


def _entries(data: bytes, version: int, count: int) -> tuple[list[bytes], list[int], int] | None:
    """Each entry's path and start offset, and where the entries end."""
    names: list[bytes] = []
    starts: list[int] = []
    pos = _HEADER.size
    find = data.find
    unpack_flags = struct.Struct(">H").unpack_from
    for _ in range(count):
        (flags,) = unpack_flags(data, pos + _FLAGS_AT)
        head = 62
        if flags & _EXTENDED:
            if version < 3:
                return None
            head = 64
        length = flags & _NAME_MASK
        name_at = pos + head
        if length == _NAME_MASK:
            end = find(b"\0", name_at)
            if end < 0:
                return None
            length = end - name_at
        names.append(data[name_at:name_at + length])
        starts.append(pos)
        # Entries are padded with 1..8 NULs to a multiple of 8 bytes.
        pos += (head + length + 8) & ~7
    if pos > len(data) - 20:
        return None
    return names, starts, pos


def _entry(rel: bytes, sha: bytes, mode: int, st: os.stat_result) -> bytes:
    """One stage-0 entry for ``rel`` with the file's stat data."""
    flags = min(len(rel), _NAME_MASK)
    head = _STAT.pack(
        int(st.st_ctime) & _MASK32, st.st_ctime_ns % 1_000_000_000,
        int(st.st_mtime) & _MASK32, st.st_mtime_ns % 1_000_000_000,
        st.st_dev & _MASK32, st.st_ino & _MASK32, mode, st.st_uid & _MASK32,
        st.st_gid & _MASK32, st.st_size & _MASK32, sha, flags)
    size = (len(head) + len(rel) + 8) & ~7
    return head + rel + b"\0" * (size - len(head) - len(rel))


# The last index this process read or wrote, per repository: its stat identity and
# parsed entries, so a long-lived writer does not re-parse 10,000 entries per commit.
_CACHE: dict[Path, tuple[tuple[int, int, int], list[bytes], list[int]]] = {}


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _parse(data: bytes) -> tuple[list[bytes], list[int]] | None:
    """Entry names and starts (the end of the entries appended), after checking the
    header, checksum and extensions; None when the index is not ours to rewrite."""
    if len(data) < _HEADER.size + 20:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    if hashlib.sha1(data[:-20]).digest() != data[-20:] and data[-20:] != b"\0" * 20:
        return None
    parsed = _entries(data, version, count)
    if parsed is None:
        return None
    names, starts, end = parsed
    # Extensions: optional ones (an upper-case first letter) may be dropped; any other
    # (a split or sparse index) means this index is not ours to rewrite.
    pos = end
    while pos < len(data) - 20:
        if pos + 8 > len(data) - 20:
            return None
        sig = data[pos:pos + 4]
        (size,) = struct.unpack_from(">L", data, pos + 4)
        if not (65 <= sig[0] <= 90):
            return None
        pos += 8 + size
    if pos != len(data) - 20:
        return None
    starts.append(end)
    return names, starts


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _shifted(starts: list[int], lo: int, hi: int, offset: int) -> list[int]:
    """``starts[lo:hi]`` moved so that the first lands at ``offset``."""
    shift = offset - starts[lo] if lo < len(starts) else 0
    if not shift:
        return starts[lo:hi]
    return list(map(shift.__add__, starts[lo:hi]))


def update(git_dir: Path, root: Path, changes: dict[str, bytes | None]) -> bool:
    """Set each path in ``changes`` to its blob (a regular file, mode 100644) or remove it
    (``None``). Returns False, touching nothing, when this index needs git itself."""
    index = git_dir / "index"
    try:
        with open(index, "rb") as fh:
            key = _identity(os.fstat(fh.fileno()))
            data = fh.read()
    except FileNotFoundError:
        return False
    cached = _CACHE.get(git_dir)
    if cached is not None and cached[0] == key:
        names, starts = cached[1], cached[2]
    else:
        parsed = _parse(data)
        if parsed is None:
            return False
        names, starts = parsed
    version = _HEADER.unpack_from(data)[1]

    new: dict[bytes, bytes | None] = {}
    for rel, sha in changes.items():
        path = rel.encode("utf-8")
        new[path] = None if sha is None else _entry(path, sha, 0o100644, os.stat(root / rel))

    view = memoryview(data)
    pieces: list[memoryview | bytes] = []
    out_names: list[bytes] = []
    out_starts: list[int] = []
    offset = _HEADER.size
    at = 0                                  # next entry to copy
    for path in sorted(new):
        first = bisect_left(names, path, at)
        last = first
        while last < len(names) and names[last] == path:   # every stage of the path
            last += 1
        pieces.append(view[starts[at]:starts[first]])
        out_names += names[at:first]
        out_starts += _shifted(starts, at, first, offset)
        offset += starts[first] - starts[at]
        entry = new[path]
        if entry is not None:
            pieces.append(entry)
            out_names.append(path)
            out_starts.append(offset)
            offset += len(entry)
        at = last
    pieces.append(view[starts[at]:starts[-1]])
    out_names += names[at:]
    out_starts += _shifted(starts, at, len(starts), offset)   # the end marker included
    pieces.insert(0, _HEADER.pack(b"DIRC", version, len(out_names)))
    digest = hashlib.sha1()
    for piece in pieces:
        digest.update(piece)
    pieces.append(digest.digest())

    lock = git_dir / "index.lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise IndexBusy("git is busy: .git/index.lock exists") from None
    try:
        try:
            _write_all(fd, b"".join(pieces))
            written = _identity(os.fstat(fd))   # after the last byte: the cache key
        finally:
            os.close(fd)
        os.replace(lock, index)
    except BaseException:
        lock.unlink(missing_ok=True)
        _CACHE.pop(git_dir, None)
        raise
    _CACHE[git_dir] = (written, out_names, out_starts)
    return True
