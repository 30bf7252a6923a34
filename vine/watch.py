"""Noticing edits made outside the engine: a stat walk, and inotify on Linux.

The walk gives every node file with its ``(mtime_ns, size)``. Where inotify is
available, the walk also watches every folder, and :meth:`Watcher.poll` drains
the kernel's queue without blocking: the kernel queues an event before the
writer's syscall returns, so the next call sees every finished edit. Elsewhere
``poll`` answers None and the caller re-walks.
"""

from __future__ import annotations

import os
from pathlib import Path

from .ids import PRIVATE_DIRS

try:  # Linux only; everything works without it, by walking.
    from inotify_simple import INotify
    from inotify_simple import flags as _flags
except ImportError:  # pragma: no cover - exercised on non-Linux systems
    INotify = None

Stat = tuple[int, int]

if INotify is not None:
    _MASK = (_flags.CREATE | _flags.DELETE | _flags.MODIFY | _flags.CLOSE_WRITE
             | _flags.MOVED_FROM | _flags.MOVED_TO | _flags.ATTRIB
             | _flags.DELETE_SELF | _flags.MOVE_SELF)


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


class Watcher:
    """Walks a forest and, where it can, watches it for changes."""

    def __init__(self, root: Path, *, use_inotify: bool = True) -> None:
        self.root = root
        self._wd: dict[int, str] = {}
        self._ino = None
        if use_inotify and INotify is not None:
            try:
                self._ino = INotify(nonblocking=True)
            except OSError:
                self._ino = None

    @property
    def live(self) -> bool:
        """True while inotify watches the forest."""
        return self._ino is not None

    def close(self) -> None:
        """Stop watching."""
        if self._ino is not None:
            self._ino.close()
            self._ino = None

    def walk(self, rel_dir: str = "") -> dict[str, Stat]:
        """Every ``.md`` under ``rel_dir`` with its stat; watches each folder first."""
        found: dict[str, Stat] = {}
        stack = [rel_dir]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.root, rel) if rel else str(self.root)
            self._watch(full, rel)
            try:
                entries = list(os.scandir(full))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                child = f"{rel}/{name}" if rel else name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not skip_dir(name):
                            stack.append(child)
                    elif name.endswith(".md") and entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        found[child] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
        return found

    def _watch(self, full: str, rel: str) -> None:
        if self._ino is None:
            return
        try:
            wd = self._ino.add_watch(full, _MASK)
        except OSError:
            # Out of watches (or an odd filesystem): fall back to walking.
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
        changes = Changes()
        for event in events:
            if event.mask & _flags.Q_OVERFLOW:
                return None
            if event.mask & _flags.IGNORED:
                self._wd.pop(event.wd, None)
                continue
            rel_dir = self._wd.get(event.wd)
            if rel_dir is None:
                continue
            if event.mask & (_flags.DELETE_SELF | _flags.MOVE_SELF):
                changes.folders.add(rel_dir)
                continue
            name = event.name
            child = f"{rel_dir}/{name}" if rel_dir else name
            if event.mask & _flags.ISDIR:
                if not skip_dir(name):
                    changes.folders.add(child)
            elif name.endswith(".md"):
                changes.files.add(child)
        return changes
