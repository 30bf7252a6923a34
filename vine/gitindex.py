"""Git's index file, updated in this process for the few paths a write commits.

The index (``.git/index``, format versions 2 and 3) is a sorted list of entries, then
optional extensions, then a SHA-1 of everything before it. A write changes one to a
few entries; spawning ``git update-index`` for that costs more than the rest of the
commit, so this module splices the entries itself:

- entries it does not touch are copied byte for byte (extended flags included);
- a new or changed entry carries the file's stat data, so ``git status`` sees it clean;
- optional extensions (cache-tree, untracked cache, fsmonitor, resolve-undo, offsets)
  are dropped, which git allows: it rebuilds them when it next needs them;
- the new index is written to ``index.lock`` (taken exclusively) and renamed over;
  its SHA-1 is worked out in a thread, from the state it had before the first chunk of
  entries a write changed when the header stays the same, or from the states hashed
  ahead under the next entry count after a write that added entries (:class:`_Ahead`);
  the old index is held open through the rename and let go by a thread after it (see
  :func:`_retire`).

A split index (``core.splitIndex``) is updated as one by :mod:`monkeyllm.gitsplit`.
Anything it does not understand (version 4's compressed paths, a sparse index, a
SHA-256 repository, a missing index) makes :func:`update` return False and the caller
falls back to ``git update-index``.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .gitsplit import Split

_HEADER = struct.Struct(">4sLL")
_STAT = struct.Struct(">10L20sH")  # ctime s/ns, mtime s/ns, dev, ino, mode, uid,
_FLAGS_AT = 60  # gid, size, sha, flags
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
        names.append(data[name_at : name_at + length])
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
        int(st.st_ctime) & _MASK32,
        st.st_ctime_ns % 1_000_000_000,
        int(st.st_mtime) & _MASK32,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev & _MASK32,
        st.st_ino & _MASK32,
        mode,
        st.st_uid & _MASK32,
        st.st_gid & _MASK32,
        st.st_size & _MASK32,
        sha,
        flags,
    )
    size = (len(head) + len(rel) + 8) & ~7
    return head + rel + b"\0" * (size - len(head) - len(rel))


# Entries per chunk of the cached index: a write rebuilds the chunks it touches and
# copies nothing else, so its cost in this process does not grow with the index (the
# file is still written whole, as git writes it).
CHUNK = 1024


class _Chunk:
    """A run of consecutive entries: their names, offsets (relative, with the end) and
    bytes."""

    __slots__ = ("names", "starts", "data")

    def __init__(self, names: list[bytes], starts: list[int], data: bytes | memoryview) -> None:
        self.names = names
        self.starts = starts
        self.data = data


class _Index:
    """A parsed index held in memory between writes: version and chunks of entries,
    and the checksum's state before each chunk as the last write left it (SHA-1 runs
    from the file's start, so a write that keeps the header hashes only from the
    first chunk it changed)."""

    __slots__ = (
        "identity",
        "version",
        "chunks",
        "firsts",
        "states",
        "hashed",
        "rehashed",
        "_ahead",
        "_grew",
    )

    def __init__(self, identity: tuple[int, int, int], version: int, chunks: list[_Chunk]) -> None:
        self.identity = identity
        self.version = version
        self.chunks = chunks
        self.firsts = [c.names[0] for c in chunks]
        # states[k]: SHA-1 of the header and chunks[:k] (None: not known).
        self.states: list[Any] = [None] * (len(chunks) + 1)
        self.hashed = b""  # the header those states follow
        self.rehashed = 0  # chunks the last checksum went through
        self._ahead: _Ahead | None = None
        self._grew = False  # the last change added entries

    @classmethod
    def parse(cls, data: bytes, identity: tuple[int, int, int]) -> _Index | None:
        parsed = _parse(data)
        if parsed is None:
            return None
        names, starts = parsed
        view = memoryview(data)
        chunks = []
        for lo in range(0, len(names), CHUNK):
            hi = min(lo + CHUNK, len(names))
            base = starts[lo]
            chunks.append(
                _Chunk(
                    names[lo:hi], [s - base for s in starts[lo : hi + 1]], view[base : starts[hi]]
                )
            )
        return cls(identity, _HEADER.unpack_from(data)[1], chunks)

    def apply(self, new: dict[bytes, bytes | None]) -> None:
        """Put or remove entries (``None`` removes every stage of the path)."""
        groups: dict[int, dict[bytes, bytes | None]] = {}
        for path in new:
            at = max(0, bisect_right(self.firsts, path) - 1)
            groups.setdefault(at, {})[path] = new[path]
        before = sum(len(c.names) for c in self.chunks)
        if not self.chunks:
            self.chunks.append(_Chunk([], [0], b""))
        replaced: list[_Chunk] = []
        for at in range(len(self.chunks)):
            if at in groups:
                replaced += _split(_splice(self.chunks[at], groups[at]))
            else:
                replaced.append(self.chunks[at])
        self.chunks = [c for c in replaced if c.names]
        self.firsts = [c.names[0] for c in self.chunks]
        self._grew = sum(len(c.names) for c in self.chunks) > before
        # The chunks before the first one changed are as they were: so is the state
        # the checksum had when it reached it.
        kept = min(groups, default=0) + 1
        self.states = self.states[:kept] + [None] * (len(self.chunks) + 1 - kept)

    def header(self) -> bytes:
        """The file's first 12 bytes: signature, version, number of entries."""
        return _HEADER.pack(b"DIRC", self.version, sum(len(c.names) for c in self.chunks))

    def pieces(self) -> list[bytes | memoryview]:
        """The file's bytes before its checksum: the header, then each chunk."""
        return [self.header(), *(c.data for c in self.chunks)]

    def digest(self, pieces: list[bytes | memoryview]) -> bytes:
        return self.checksum(bytes(pieces[0]))

    def crowded(self) -> bool:
        return False

    def written(self) -> None:
        """After a write that added entries (writes that add come in runs: a batch of
        plants, an import): hash the index ahead, in a thread, under the header the
        next one adding one entry will give it (see :class:`_Ahead`)."""
        if not self._grew:
            return
        count = sum(len(c.names) for c in self.chunks)
        self._ahead = _Ahead(_HEADER.pack(b"DIRC", self.version, count + 1), self.chunks)

    def checksum(self, header: bytes) -> bytes:
        """The SHA-1 of the file's bytes, from the first chunk whose state is unknown
        (the whole file when the header changed, unless it was hashed ahead under this
        header); keeps the states for the next."""
        states, chunks = self.states, self.chunks
        ahead, self._ahead = self._ahead, None
        start = 0
        if header == self.hashed:
            known = next((k for k, state in enumerate(states) if state is None), len(states))
            start = max(0, known - 1)
        elif ahead is not None:
            prefix = ahead.take(header, chunks)
            if prefix:
                # The states before the first chunk changed, under the new header.
                start = len(prefix) - 1
                states[: len(prefix)] = prefix
        if ahead is not None:
            ahead.stop()
        if start == 0 or states[start] is None:
            start = 0
            h = hashlib.sha1(header)
            states[0] = h.copy()
        else:
            h = states[start].copy()
        for k in range(start, len(chunks)):
            h.update(chunks[k].data)
            states[k + 1] = h.copy()
        self.hashed = header
        self.rehashed = len(chunks) - start
        return h.digest()


class _Ahead:
    """The checksum's states worked out ahead of the next write, in a thread, under
    the header that write will give the index if it adds one entry (a plant's new
    node): a new entry count changes the header, and SHA-1 runs from the file's
    start, so without them such a write hashes all 12 MB of a 100,000-node index
    again. The write takes the state before the first chunk it changed, as far as the
    thread got, and stops it."""

    def __init__(self, header: bytes, chunks: list[_Chunk]) -> None:
        self.header = header
        self.chunks = chunks
        self.states: list[Any] = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="index-ahead", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        h = hashlib.sha1(self.header)
        self.states.append(h.copy())
        for chunk in self.chunks:
            if self._stop:
                return
            h.update(chunk.data)
            self.states.append(h.copy())

    def stop(self) -> None:
        self._stop = True
        self._thread.join()

    def take(self, header: bytes, chunks: list[_Chunk]) -> list[Any]:
        """The states after the header and ``chunks[:k]`` for ``k`` = 0 to the largest
        the thread reached over chunks that are still the same objects (none when the
        header is not the one hashed ahead). Each is only ever copied, never updated."""
        self.stop()
        if header != self.header:
            return []
        same = 0
        limit = min(len(chunks), len(self.chunks), len(self.states) - 1)
        while same < limit and chunks[same] is self.chunks[same]:
            same += 1
        return self.states[: same + 1]


def _splice(chunk: _Chunk, new: dict[bytes, bytes | None]) -> _Chunk:
    """The chunk with ``new``'s entries put in (or removed), the rest copied."""
    names, starts, view = chunk.names, chunk.starts, memoryview(chunk.data)
    pieces: list[memoryview | bytes] = []
    out_names: list[bytes] = []
    out_starts: list[int] = []
    offset = 0
    at = 0  # next entry to copy
    for path in sorted(new):
        first = bisect_left(names, path, at)
        last = first
        while last < len(names) and names[last] == path:  # every stage of the path
            last += 1
        pieces.append(view[starts[at] : starts[first]])
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
    pieces.append(view[starts[at] : starts[-1]])
    out_names += names[at:]
    out_starts += _shifted(starts, at, len(starts), offset)  # the end marker included
    return _Chunk(out_names, out_starts, b"".join(pieces))


def _split(chunk: _Chunk) -> list[_Chunk]:
    """A chunk grown past twice :data:`CHUNK` entries, cut in two (else as it is)."""
    if len(chunk.names) <= 2 * CHUNK:
        return [chunk]
    mid = len(chunk.names) // 2
    cut = chunk.starts[mid]
    view = memoryview(chunk.data)
    return [
        _Chunk(chunk.names[:mid], chunk.starts[: mid + 1], view[:cut]),
        _Chunk(chunk.names[mid:], [s - cut for s in chunk.starts[mid:]], view[cut:]),
    ]


# The last index this process read or wrote, per repository (valid while the file's
# stat identity is unchanged), so a long-lived writer neither re-reads nor re-parses
# 100,000 entries per commit.
_CACHE: dict[Path, _Index | Split] = {}


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
        sig = data[pos : pos + 4]
        (size,) = struct.unpack_from(">L", data, pos + 4)
        if not (65 <= sig[0] <= 90):
            return None
        pos += 8 + size
    if pos != len(data) - 20:
        return None
    starts.append(end)
    return names, starts


def _write_all(fd: int, pieces: list[bytes | memoryview]) -> None:
    """Write every piece, in as few calls as the system takes."""
    views = [memoryview(piece).cast("B") for piece in pieces if len(piece)]
    at = 0
    while at < len(views):
        if _WRITEV is None:  # pragma: no cover - systems without writev
            done = os.write(fd, views[at])
        else:
            done = _WRITEV(fd, views[at : at + _IOV_MAX])
        while at < len(views) and done >= len(views[at]):
            done -= len(views[at])
            at += 1
        if done:
            views[at] = views[at][done:]


# writev where the system has it, with at most this many buffers per call (POSIX
# promises 16; Linux takes 1024).
_WRITEV = getattr(os, "writev", None)
try:
    _IOV_MAX = max(16, os.sysconf("SC_IOV_MAX"))
except (AttributeError, ValueError, OSError):
    _IOV_MAX = 16


def _shifted(starts: list[int], lo: int, hi: int, offset: int) -> list[int]:
    """``starts[lo:hi]`` moved so that the first lands at ``offset``."""
    shift = offset - starts[lo] if lo < len(starts) else 0
    if not shift:
        return starts[lo:hi]
    return list(map(shift.__add__, starts[lo:hi]))


def _load(git_dir: Path) -> _Index | Split | None:
    """The repository's index, from this process's copy while the file is unchanged."""
    index = git_dir / "index"
    try:
        st = os.stat(index)
    except FileNotFoundError:
        return None
    cached = _CACHE.get(git_dir)
    if cached is not None and cached.identity == _identity(st):
        return cached
    try:
        with open(index, "rb") as fh:
            key = _identity(os.fstat(fh.fileno()))
            data = fh.read()
    except FileNotFoundError:
        return None
    parsed = _Index.parse(data, key)
    if parsed is None and b"link" in data:
        from .gitsplit import Split

        return Split.parse(data, key, git_dir)
    return parsed


def _retire(git_dir: Path) -> int | None:
    """The current index, held open just before the new one is renamed over it (None
    where there is none, or off POSIX, where a file held open cannot be replaced).

    Renaming over the last name of a file frees its blocks inside the rename: for the
    12 MB index of 100,000 nodes, 8-10 ms of a write's 20-30 here (ext4 mounted with
    ``discard``). While the old file is held open, the rename frees nothing; it is
    freed when :func:`_reap` closes it on a thread, after the new index is in place
    (or by the kernel, should this process end first). The rename itself is unchanged:
    ext4 still starts writing the new index's blocks there, which is what lets a power
    cut find the old index or the new one.
    """
    if os.name != "posix":
        return None
    try:
        return os.open(git_dir / "index", os.O_RDONLY)
    except OSError:
        return None


def _reap(fd: int) -> None:
    """Close a retired index on a thread of its own: the freeing of its blocks is not
    the write's to wait for."""
    threading.Thread(target=os.close, args=(fd,), name="index-retire", daemon=True).start()


class Staged:
    """A spliced index on its way to the file: its checksum is worked out in a thread
    from the moment it is prepared (SHA-1 releases the interpreter lock), so the rest
    of a commit runs meanwhile; :meth:`write` puts it in place."""

    def __init__(self, git_dir: Path, index: _Index | Split) -> None:
        self.git_dir = git_dir
        self.index = index
        self.pieces = index.pieces()
        self._digest = b""
        self._hasher = threading.Thread(target=self._checksum, name="index-checksum", daemon=True)
        self._hasher.start()

    def _checksum(self) -> None:
        self._digest = self.index.digest(self.pieces)

    def write(self) -> None:
        """Write the index to ``index.lock`` (taken exclusively) and rename it over the
        index; raises :class:`IndexBusy` while another git command holds the lock.

        The file's blocks are left to the filesystem, as git leaves them: renaming over
        the old index makes ext4 allocate and start writing them inside the rename,
        which is what lets a power cut find the old index or the new one. Blocks
        allocated up front would save that and risk an index of zeros after a power
        cut. What the rename does not do is free the old index's blocks: the old file
        is held open until a thread lets it go (:func:`_retire`).
        """
        git_dir = self.git_dir
        lock = git_dir / "index.lock"
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            self._hasher.join()
            raise IndexBusy("git is busy: .git/index.lock exists") from None
        try:
            try:
                _write_all(fd, self.pieces)
                self._hasher.join()
                if len(self._digest) != 20:
                    raise OSError("the index checksum was not worked out")
                _write_all(fd, [self._digest])
                written = _identity(os.fstat(fd))  # after the last byte: the cache key
            finally:
                os.close(fd)
            retired = _retire(git_dir)
            try:
                os.replace(lock, git_dir / "index")
            finally:
                if retired is not None:
                    _reap(retired)
        except BaseException:
            lock.unlink(missing_ok=True)
            raise
        self.index.identity = written
        _CACHE[git_dir] = self.index
        self.index.written()


def prepare(git_dir: Path, root: Path, changes: dict[str, bytes | None]) -> Staged | None:
    """The index with each path in ``changes`` set to its blob (a regular file, mode
    100644, with the file's stat data) or removed (``None``), ready to write; None,
    touching nothing, when this index needs git itself."""
    current = _load(git_dir)
    if current is None:
        return None
    new: dict[bytes, bytes | None] = {}
    for rel, sha in changes.items():
        path = rel.encode("utf-8")
        new[path] = None if sha is None else _entry(path, sha, 0o100644, os.stat(root / rel))
    # The copy in memory changes now; it is kept again only once the file says the same.
    _CACHE.pop(git_dir, None)
    current.apply(new)
    if current.crowded():  # git starts a new shared index
        return None
    return Staged(git_dir, current)


def update(git_dir: Path, root: Path, changes: dict[str, bytes | None]) -> bool:
    """Set each path in ``changes`` to its blob or remove it (``None``), now. Returns
    False, touching nothing, when this index needs git itself."""
    staged = prepare(git_dir, root, changes)
    if staged is None:
        return False
    staged.write()
    return True
