"""A split git index (``core.splitIndex``), updated in this process.

In split mode git keeps most entries in a shared index (``.git/sharedindex.<sha>``,
written once in a while) and ``.git/index`` holds only what changed since: entries that
replace shared ones (their names left empty), entries the shared index lacks, and a
``link`` extension naming the shared index with two EWAH bitmaps over its entries
(which are deleted, which are replaced). A write then writes a few kilobytes instead of
the whole index (12 MB at 100,000 nodes), which is what a large forest turns it on for.

This module reads that state, puts a write's entries in it and writes ``.git/index``
as git would; the shared index is never rewritten here. When the entries the shared
index lacks pass git's threshold for a new shared index (``splitIndex.maxPercentChange``,
20 % by default), or anything is unusual (conflict stages, an unknown extension, a
missing or broken shared index), :func:`parse` answers None and the caller lets
``git update-index`` do the write (and start a new shared index).
"""

from __future__ import annotations

import hashlib
import os
import struct
from bisect import bisect_left
from collections.abc import Iterable
from pathlib import Path

from . import gitindex

_U32 = struct.Struct(">L")
_WORD = 64
_RUN_LEN_BITS = 32
_LITERALS_MAX = (1 << 31) - 1
# git's default for splitIndex.maxPercentChange: past this share of entries not in the
# shared index, git writes a new shared index (and so does the fallback).
MAX_PERCENT_CHANGE = 20
_STAGE = 0x3000


def ewah_decode(data: bytes | memoryview, pos: int) -> tuple[list[int], int]:
    """The set bits of the EWAH bitmap serialised at ``pos`` (git's layout: bit count,
    word count, the 64-bit words, the last marker's position) and where it ends."""
    _bits, count = struct.unpack_from(">LL", data, pos)
    pos += 8
    words = struct.unpack_from(f">{count}Q", data, pos)
    pos += 8 * count + 4
    if pos > len(data):
        raise ValueError("truncated bitmap")
    out: list[int] = []
    at = 0  # in words
    i = 0
    while i < count:
        marker = words[i]
        run = (marker >> 1) & ((1 << _RUN_LEN_BITS) - 1)
        literals = marker >> (1 + _RUN_LEN_BITS)
        if marker & 1:
            out.extend(range(at * _WORD, (at + run) * _WORD))
        at += run
        for word in words[i + 1 : i + 1 + literals]:
            while word:
                low = word & -word
                out.append(at * _WORD + low.bit_length() - 1)
                word ^= low
            at += 1
        i += 1 + literals
    return out, pos


def ewah_encode(positions: Iterable[int]) -> bytes:
    """The EWAH bitmap of ``positions`` as git serialises it (runs of clean words are
    only ever zeros here: a write sets a few bits)."""
    groups: dict[int, int] = {}
    for p in positions:
        groups[p // _WORD] = groups.get(p // _WORD, 0) | (1 << (p % _WORD))
    words: list[int] = []
    marker = -1
    literals = 0
    nxt = 0  # the next word the bitmap reaches
    for index in sorted(groups):
        if marker < 0 or index > nxt or literals == _LITERALS_MAX:
            if marker >= 0:
                words[marker] |= literals << (1 + _RUN_LEN_BITS)
            marker, literals = len(words), 0
            words.append((index - nxt) << 1)
        words.append(groups[index])
        literals += 1
        nxt = index + 1
    if marker < 0:
        words, marker = [0], 0
    else:
        words[marker] |= literals << (1 + _RUN_LEN_BITS)
    bits = max(groups) * _WORD + groups[max(groups)].bit_length() if groups else 0
    return (
        struct.pack(">LL", bits, len(words))
        + struct.pack(f">{len(words)}Q", *words)
        + _U32.pack(marker)
    )


class _Shared:
    """The names of a shared index's entries (sorted), for positions."""

    __slots__ = ("identity", "names")

    def __init__(self, identity: tuple[int, int, int], names: list[bytes]) -> None:
        self.identity = identity
        self.names = names


_SHARED: dict[Path, _Shared] = {}


def _shared(path: Path) -> _Shared | None:
    try:
        with open(path, "rb") as fh:
            identity = gitindex._identity(os.fstat(fh.fileno()))
            cached = _SHARED.get(path)
            if cached is not None and cached.identity == identity:
                return cached
            data = fh.read()
    except OSError:
        return None
    parsed = gitindex._parse(data)
    if parsed is None or data[-20:].hex() != path.name.removeprefix("sharedindex."):
        return None
    names = parsed[0]
    if any(a >= b for a, b in zip(names, names[1:], strict=False)):  # conflict stages: not ours
        return None
    shared = _Shared(identity, names)
    _SHARED[path] = shared
    return shared


def _stripped(entry: bytes) -> bytes:
    """``entry`` as a replacement is stored: its name left empty."""
    flags = struct.unpack_from(">H", entry, gitindex._FLAGS_AT)[0] & ~gitindex._NAME_MASK
    return entry[: gitindex._FLAGS_AT] + struct.pack(">H", flags) + b"\0\0"


class Split:
    """A split index in memory: the shared index's names, which of its entries are
    replaced (by position) or deleted, and the entries it lacks (by name)."""

    def __init__(
        self,
        identity: tuple[int, int, int],
        version: int,
        base: bytes,
        shared_path: Path,
        shared: _Shared,
        replaced: dict[int, bytes],
        deleted: set[int],
        added: dict[bytes, bytes],
    ) -> None:
        self.identity = identity
        self.version = version
        self.base = base
        self.shared_path = shared_path
        self.shared = shared
        self.replaced = replaced
        self.deleted = deleted
        self.added = added

    @classmethod
    def parse(cls, data: bytes, identity: tuple[int, int, int], git_dir: Path) -> Split | None:
        """The split index in ``data``, or None when it is not one this module updates."""
        if len(data) < 32 or hashlib.sha1(data[:-20]).digest() != data[-20:]:
            return None
        signature, version, count = gitindex._HEADER.unpack_from(data)
        if signature != b"DIRC" or version not in (2, 3):
            return None
        walked = gitindex._entries(data, version, count)
        if walked is None:
            return None
        names, starts, end = walked
        starts.append(end)
        link = None
        pos = end
        while pos < len(data) - 20:
            sig = data[pos : pos + 4]
            (size,) = _U32.unpack_from(data, pos + 4)
            if sig == b"link":
                link = (pos + 8, pos + 8 + size)
            elif not (65 <= sig[0] <= 90):
                return None
            pos += 8 + size
        if link is None or pos != len(data) - 20 or link[1] - link[0] < 20:
            return None
        base = data[link[0] : link[0] + 20]
        if base == b"\0" * 20:
            return None
        try:
            if link[1] - link[0] == 20:
                deletes: list[int] = []
                replaces: list[int] = []
            else:
                deletes, at = ewah_decode(data[: link[1]], link[0] + 20)
                replaces, at = ewah_decode(data[: link[1]], at)
                if at != link[1]:
                    return None
        except (struct.error, ValueError):
            return None
        shared_path = git_dir / f"sharedindex.{base.hex()}"
        shared = _shared(shared_path)
        if shared is None or len(replaces) > len(names):
            return None
        total = len(shared.names)
        if any(p >= total for p in deletes) or any(p >= total for p in replaces):
            return None
        if set(deletes) & set(replaces):
            return None
        entries = [bytes(data[starts[i] : starts[i + 1]]) for i in range(len(names))]
        if any(struct.unpack_from(">H", e, gitindex._FLAGS_AT)[0] & _STAGE for e in entries):
            return None
        head = len(replaces)
        if any(names[:head]) or not all(names[head:]):
            return None
        replaced = dict(zip(replaces, entries[:head], strict=True))
        added: dict[bytes, bytes] = {}
        for name, entry in zip(names[head:], entries[head:], strict=True):
            if name in added:
                return None
            added[name] = entry
        split = cls(identity, version, base, shared_path, shared, replaced, set(deletes), added)
        # An added entry named like a shared one replaces it (as git merges them).
        for name in list(added):
            shared_at = split._position(name)
            if shared_at is not None and shared_at not in split.deleted:
                split.replaced[shared_at] = _stripped(added.pop(name))
        return split

    def _position(self, name: bytes) -> int | None:
        names = self.shared.names
        at = bisect_left(names, name)
        return at if at < len(names) and names[at] == name else None

    def apply(self, new: dict[bytes, bytes | None]) -> None:
        """Put or remove entries (``None`` removes the path)."""
        for name, entry in new.items():
            at = self._position(name)
            if at is None:
                if entry is None:
                    self.added.pop(name, None)
                else:
                    self.added[name] = entry
            elif entry is None:
                self.replaced.pop(at, None)
                self.deleted.add(at)
            else:
                self.deleted.discard(at)
                self.replaced[at] = _stripped(entry)

    def crowded(self) -> bool:
        """Whether git would start a new shared index on its next write."""
        total = len(self.shared.names) - len(self.deleted) + len(self.added)
        return total * MAX_PERCENT_CHANGE < len(self.added) * 100

    def pieces(self) -> list[bytes | memoryview]:
        """The file's bytes before its checksum: the header, the replacing entries in
        the shared index's order, the added ones by name, the link extension."""
        replaced = [self.replaced[at] for at in sorted(self.replaced)]
        added = [self.added[name] for name in sorted(self.added)]
        link = self.base + ewah_encode(self.deleted) + ewah_encode(self.replaced)
        header = gitindex._HEADER.pack(b"DIRC", self.version, len(replaced) + len(added))
        return [header, *replaced, *added, b"link", _U32.pack(len(link)), link]

    def digest(self, pieces: list[bytes | memoryview]) -> bytes:
        h = hashlib.sha1()
        for piece in pieces:
            h.update(piece)
        return h.digest()

    def written(self) -> None:
        """After the write: keep the shared index from expiring, as git does."""
        try:
            os.utime(self.shared_path)
        except OSError:
            pass
