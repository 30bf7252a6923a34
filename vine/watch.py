"""Noticing edits made outside the engine: a stat walk, and inotify on Linux.

The walk gives every node file with its ``(mtime_ns, size)``. Where inotify is
available, the walk also watches every folder, and :meth:`Watcher.poll` drains
the kernel's queue without blocking: the kernel queues an event before the
writer's syscall returns, so the next call sees every finished edit. Elsewhere
``poll`` answers None and the caller re-walks.

Watching starts with the second full walk: a process that makes one call (a
command in a shell loop) walks once and never pays for watches it would not
use, while a long-lived one walks twice and then only drains events.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from . import statwalk
from .ids import PRIVATE_DIRS

Stat = tuple[int, int]


@cache
def _inotify() -> Any:
    """inotify_simple (Linux only), imported when watching starts; None elsewhere."""
    try:
        import inotify_simple
    except ImportError:  # pragma: no cover - exercised on non-Linux systems
        return None
    return inotify_simple


def skip_dir(name: str) -> bool:
    """Folders that never hold nodes: private ones and hidden ones."""
    return name in PRIVATE_DIRS or name.startswith(".")


class Changes:
    """What moved since the last poll: files to re-check and folders to re-walk."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.folders: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.files or self.folders)


class Walk:
    """One full walk: its folders' encoded records, a digest naming it, and the files
    it found."""

    def __init__(self, encoded: list[statwalk.Encoded], *, split: bool = False) -> None:
        self._encoded = encoded
        self.split = split
        self._digest: bytes | None = None
        self._files: dict[str, Stat] | None = None

    @property
    def digest(self) -> bytes:
        """32 bytes that equal another walk's exactly when the walks are equal."""
        if self._digest is None:
            self._digest = statwalk.digest(self._encoded)
        return self._digest

    @property
    def files(self) -> dict[str, Stat]:
        """Every node file found, with its ``(mtime_ns, size)``."""
        if self._files is None:
            self._files = statwalk.as_files(self._encoded)
        return self._files


class Watcher:
    """Walks a forest and, where it can, watches it for changes."""

    def __init__(self, root: Path, *, use_inotify: bool = True) -> None:
        self.root = root
        self._wd: dict[int, str] = {}
        self._ino: Any = None
        self._flags: Any = None
        self._mask = 0
        self._wanted = use_inotify
        self._full_walks = 0

    @property
    def live(self) -> bool:
        """True while inotify watches the forest."""
        return self._ino is not None

    def close(self) -> None:
        """Stop watching, for good (later syncs walk)."""
        self._wanted = False
        if self._ino is not None:
            self._ino.close()
            self._ino = None

    def _start(self) -> None:
        """Start inotify from the second full walk on, when it is wanted and available."""
        self._full_walks += 1
        if self._ino is not None or not self._wanted or self._full_walks < 2:
            return
        module = _inotify()
        if module is None:
            self._wanted = False
            return
        try:
            self._ino = module.INotify(nonblocking=True)
        except OSError:
            self._wanted = False
            return
        flags = self._flags = module.flags
        self._mask = (
            flags.CREATE
            | flags.DELETE
            | flags.MODIFY
            | flags.CLOSE_WRITE
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.ATTRIB
            | flags.DELETE_SELF
            | flags.MOVE_SELF
        )

    def walk(self, rel_dir: str = "") -> dict[str, Stat]:
        """Every ``.md`` under ``rel_dir`` with its stat; once watching has started,
        watches each folder before listing it."""
        if not rel_dir:
            self._start()
        records: list[statwalk.Record] = []
        watch = self._watch if self._ino is not None else None
        statwalk.walk(str(self.root), [rel_dir], PRIVATE_DIRS, records, watch=watch)
        found: dict[str, Stat] = {}
        for rel, files in records:
            prefix = rel + "/" if rel else ""
            for name, mtime, size in files:
                found[prefix + name] = (mtime, size)
        return found

    def walk_all(self, expected: int = 0) -> Walk:
        """The whole forest's walk. Where nothing watches it and ``expected`` (the node
        files the catalog last held) reaches :data:`statwalk.SPLIT_AT`, a helper
        process walks half of it at the same time."""
        self._start()
        root = str(self.root)
        if self._ino is None and expected >= statwalk.SPLIT_AT:
            encoded, split = statwalk.split_walk(root, PRIVATE_DIRS, expected)
            return Walk(encoded, split=split)
        records: list[statwalk.Record] = []
        watch = self._watch if self._ino is not None else None
        statwalk.walk(root, [""], PRIVATE_DIRS, records, watch=watch)
        return Walk(statwalk.encode(records))

    def _watch(self, full: str, rel: str) -> None:
        if self._ino is None:
            return
        try:
            wd = self._ino.add_watch(full, self._mask)
        except OSError:
            # Out of watches (or an odd filesystem): fall back to walking, for good.
            self.close()
            return
        self._wd[wd] = rel

    def poll(self) -> Changes | None:
        """Changes since the last poll, or None when only a full walk can tell."""
        if self._ino is None:
            return None
        try:
            events = self._ino.read(timeout=0)
        except (OSError, ValueError):
            self.close()
            return None
        flags = self._flags
        changes = Changes()
        for event in events:
            if event.mask & flags.Q_OVERFLOW:
                return None
            if event.mask & flags.IGNORED:
                self._wd.pop(event.wd, None)
                continue
            rel_dir = self._wd.get(event.wd)
            if rel_dir is None:
                continue
            if event.mask & (flags.DELETE_SELF | flags.MOVE_SELF):
                changes.folders.add(rel_dir)
                continue
            name = event.name
            if not (name.isascii() or statwalk.is_text(name)):
                continue  # not valid UTF-8 on disk: no node (as the walk skips it)
            child = f"{rel_dir}/{name}" if rel_dir else name
            if event.mask & flags.ISDIR:
                if not skip_dir(name):
                    changes.folders.add(child)
            elif name.endswith(".md"):
                changes.files.add(child)
        return changes
