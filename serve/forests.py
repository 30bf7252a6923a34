"""The forests a server serves: one (``--forest``) or every forest under a folder
(``--root``), each opened once, lazily, and kept for the server's life."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from monkeyllm import Vine
from monkeyllm.errors import Locked, NotFound, SchemaError
from monkeyllm.lock import holder


def is_forest(folder: Path) -> bool:
    """A forest's root holds its master index and its dialect."""
    return (folder / "_index.md").is_file() and (folder / "_meta" / "schema.md").is_file()


class Forests:
    """Open forests by id.

    In single mode the one forest is opened at once (so a locked forest fails the
    start, not the first call) and ``forest`` is optional, but must name it when
    given. In registry mode every direct subfolder of the root that is a forest is
    served under its folder name, opened on first use; ``forest`` is required. A
    registry forest whose writer lock another process holds is served read-only
    meanwhile: reads go on, and each write tries for the lock again, answering
    E_LOCKED while the other writer keeps it.

    Args:
        forest: The one forest (single mode).
        root: The folder holding the forests (registry mode).
        writable: Take each forest's writer lock; otherwise writes answer E_READONLY.
    """

    def __init__(self, *, forest: Path | None = None, root: Path | None = None,
                 writable: bool = True) -> None:
        if (forest is None) == (root is None):
            raise ValueError("give exactly one of forest and root")
        self.writable = writable
        self.registry = root is not None
        self.root = (root or forest or Path()).expanduser().resolve()
        self._open: dict[str, Vine] = {}
        # Registry forests opened read-only because another process held the lock, and
        # the read-only Vines a later write replaced (closed with the server).
        self._borrowed: set[str] = set()
        self._retired: list[Vine] = []
        self._guard = threading.Lock()
        # One ingest at a time per forest: its uploads share a staging folder.
        self.upload_locks: dict[str, threading.Lock] = {}
        if not self.registry:
            self.single_id = self.root.name
            self._open[self.single_id] = Vine(self.root, writable=writable)
            self.upload_locks[self.single_id] = threading.Lock()

    @property
    def mode(self) -> str:
        """``single`` or ``registry``."""
        return "registry" if self.registry else "single"

    def ids(self) -> list[str]:
        """The forests served, sorted."""
        if not self.registry:
            return [self.single_id]
        try:
            return sorted(p.name for p in self.root.iterdir()
                          if p.is_dir() and not p.name.startswith(".") and is_forest(p))
        except OSError:
            return []

    def known(self, forest: str) -> bool:
        """True for a forest served here: open already, or a forest folder under the
        root (without listing the root, as :meth:`ids` does)."""
        if forest in self._open:
            return True
        if not self.registry or not forest or "/" in forest or "\\" in forest \
                or forest.startswith("."):
            return False
        return is_forest(self.root / forest)

    def get(self, forest: Any, write: bool = False) -> tuple[str, Vine]:
        """The forest a call names (or the only one): its id and open Vine; with
        ``write``, a Vine that holds the writer lock (or E_LOCKED).

        Raises:
            VineError: ``E_SCHEMA`` for a missing or mistyped ``forest``, or a name
                that is not this server's forest; ``E_NOT_FOUND`` for an unknown id.
        """
        if forest is not None and not isinstance(forest, str):
            raise SchemaError(f"forest must be a string, got {type(forest).__name__}")
        if not self.registry:
            if forest not in (None, self.single_id):
                raise SchemaError(f"this server serves the forest {self.single_id!r}, "
                                  f"not {forest!r}", hint="Leave forest out.")
            return self.single_id, self._open[self.single_id]
        if forest is None:
            raise SchemaError("forest is required: this server serves several forests",
                              hint="Forests: " + (", ".join(self.ids()) or "(none)") + ".")
        with self._guard:
            vine = self._open.get(forest)
            if vine is None:
                folder = self.root / forest
                if "/" in forest or "\\" in forest or forest.startswith(".") \
                        or not forest or not is_forest(folder):
                    raise NotFound(f"no forest {forest!r} here",
                                   hint="Forests: " + (", ".join(self.ids()) or "(none)")
                                   + ".")
                try:
                    vine = Vine(folder, writable=self.writable)
                except Locked:
                    if write:
                        raise
                    vine = Vine(folder, writable=False)
                    self._borrowed.add(forest)
                self._open[forest] = vine
                self.upload_locks[forest] = threading.Lock()
            elif write and forest in self._borrowed:
                # Raises E_LOCKED while the other writer holds the lock.
                writer = Vine(vine.root, writable=True)
                self._borrowed.discard(forest)
                self._retired.append(vine)   # reads may still be running on it
                self._open[forest] = vine = writer
            return forest, vine

    def describe(self) -> dict[str, Any]:
        """What the forests tool answers."""
        with self._guard:
            opened = set(self._open)
        return {"forests": [{"id": fid, "active": fid in opened,
                             "writable": self.writable, "locked": self._locked(fid)}
                            for fid in self.ids()],
                "mode": self.mode}

    def _locked(self, forest: str) -> bool:
        """True when another process holds the forest's writer lock (the reference's
        ``locked``): its writes here would answer E_LOCKED."""
        folder = self.root if self.mode == "single" else self.root / forest
        card = holder(folder)
        return card is not None and card.get("pid") != os.getpid()

    def close(self) -> None:
        """Close every open forest (releasing the writer locks)."""
        with self._guard:
            vines, self._open = list(self._open.values()) + self._retired, {}
            self._retired = []
        for vine in vines:
            vine.close()
