"""The forests a server serves: one (``--forest``) or every forest under a folder
(``--root``), each opened once, lazily, and kept for the server's life; each takes
the writer lock only while it writes."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from monkeyllm import Vine
from monkeyllm.errors import NotFound, ReadOnly, SchemaError
from monkeyllm.lock import holder, holds_open


def is_forest(folder: Path) -> bool:
    """A forest's root holds its master index and its dialect."""
    return (folder / "_index.md").is_file() and (folder / "_meta" / "schema.md").is_file()


class Forests:
    """Open forests by id.

    In single mode the one forest is opened at once and ``forest`` is optional, but
    must name it when given. In registry mode every direct subfolder of the root that
    is a forest is served under its folder name, opened on first use; ``forest`` is
    required. A writable server takes each forest's writer lock for each write alone
    (``lock="per-write"``) and lets go at once, so people and other programs write the
    same forest between its writes; a write that finds another one in progress waits
    its turn, and only a process that holds the lock while it stays open makes writes
    here answer E_LOCKED (naming it).

    Args:
        forest: The one forest (single mode).
        root: The folder holding the forests (registry mode).
        writable: Serve writes; otherwise they answer E_READONLY.
        lock_timeout: How long a write waits for another writer (None: the default,
            ``$VINE_LOCK_TIMEOUT`` or 5 s).
    """

    def __init__(
        self,
        *,
        forest: Path | None = None,
        root: Path | None = None,
        writable: bool = True,
        lock_timeout: float | None = None,
    ) -> None:
        if (forest is None) == (root is None):
            raise ValueError("give exactly one of forest and root")
        self.writable = writable
        self.lock_timeout = lock_timeout
        self.registry = root is not None
        self.root = (root or forest or Path()).expanduser().resolve()
        self._open: dict[str, Vine] = {}
        self._guard = threading.Lock()
        # One ingest at a time per forest: its uploads share a staging folder.
        self.upload_locks: dict[str, threading.Lock] = {}
        if not self.registry:
            self.single_id = self.root.name
            self._open[self.single_id] = self._vine(self.root)
            self.upload_locks[self.single_id] = threading.Lock()

    def _vine(self, folder: Path) -> Vine:
        return Vine(
            folder, writable=self.writable, lock="per-write", lock_timeout=self.lock_timeout
        )

    @property
    def mode(self) -> str:
        """``single`` or ``registry``."""
        return "registry" if self.registry else "single"

    def ids(self) -> list[str]:
        """The forests served, sorted."""
        if not self.registry:
            return [self.single_id]
        try:
            return sorted(
                p.name
                for p in self.root.iterdir()
                if p.is_dir() and not p.name.startswith(".") and is_forest(p)
            )
        except OSError:
            return []

    def known(self, forest: str) -> bool:
        """True for a forest served here: open already, or a forest folder under the
        root (without listing the root, as :meth:`ids` does)."""
        if forest in self._open:
            return True
        if (
            not self.registry
            or not forest
            or "/" in forest
            or "\\" in forest
            or forest.startswith(".")
        ):
            return False
        return is_forest(self.root / forest)

    def get(self, forest: Any, write: bool = False) -> tuple[str, Vine]:
        """The forest a call names (or the only one): its id and open Vine (``write``
        is accepted for callers that say what they will do; every Vine here writes
        through the same per-write lock).

        Raises:
            VineError: ``E_SCHEMA`` for a missing or mistyped ``forest``, or a name
                that is not this server's forest; ``E_NOT_FOUND`` for an unknown id.
        """
        if forest is not None and not isinstance(forest, str):
            raise SchemaError(f"forest must be a string, got {type(forest).__name__}")
        if not self.registry:
            if forest not in (None, self.single_id):
                raise SchemaError(
                    f"this server serves the forest {self.single_id!r}, not {forest!r}",
                    hint="Leave forest out.",
                )
            return self.single_id, self._open[self.single_id]
        if forest is None:
            raise SchemaError(
                "forest is required: this server serves several forests",
                hint="Forests: " + (", ".join(self.ids()) or "(none)") + ".",
            )
        with self._guard:
            vine = self._open.get(forest)
            if vine is None:
                folder = self.root / forest
                if (
                    "/" in forest
                    or "\\" in forest
                    or forest.startswith(".")
                    or not forest
                    or not is_forest(folder)
                ):
                    raise NotFound(
                        f"no forest {forest!r} here",
                        hint="Forests: " + (", ".join(self.ids()) or "(none)") + ".",
                    )
                vine = self._vine(folder)
                self._open[forest] = vine
                self.upload_locks[forest] = threading.Lock()
            return forest, vine

    def cannot_write(self, forest: str) -> str | None:
        """Why a server that serves writes cannot write ``forest``, or None: every
        write is a commit in the forest's own git repository, so a folder that is not
        one (a copied folder, or ``sample-brain/`` inside the monkeyllm repository) is
        served for reading only. Looks at the folders alone, at each call: a forest
        that becomes its own repository is written from then on."""
        if not self.writable:
            return None
        from monkeyllm.gitops import ownership

        return ownership(self.root if not self.registry else self.root / forest)

    def refuse_write(self, forest: str) -> ReadOnly | None:
        """The ``E_READONLY`` for a write to a forest this server cannot write, or
        None when it can."""
        reason = self.cannot_write(forest)
        if reason is None:
            return None
        return ReadOnly(
            f"the forest {forest!r} is served read-only: {reason}",
            hint="Serve a writable copy: `vine browse FOREST --copy DIR` (or "
            "Vine.copy(path, dest)) makes one, its own git repository.",
        )

    @property
    def serves_writes(self) -> bool:
        """True when writes can run: a writable server, and (with one forest) a forest
        that is its own git repository."""
        return self.writable and (self.registry or self.cannot_write(self.single_id) is None)

    def describe(self) -> dict[str, Any]:
        """What the forests tool answers."""
        with self._guard:
            opened = set(self._open)
        return {
            "forests": [
                {
                    "id": fid,
                    "active": fid in opened,
                    "writable": self.writable and self.cannot_write(fid) is None,
                    "locked": self.locked(fid),
                }
                for fid in self.ids()
            ],
            "mode": self.mode,
        }

    def locked(self, forest: str) -> bool:
        """True when another process holds the forest's writer lock for as long as it
        stays open (the reference's ``locked``): writes here answer E_LOCKED until it
        lets go. A write in progress elsewhere does not count: writes here wait for it."""
        return self.lock_holder(forest) is not None

    def lock_holder(self, forest: str) -> dict[str, object] | None:
        """The card of a process that holds ``forest`` open for writing (so writes here
        answer E_LOCKED), or None."""
        folder = self.root if self.mode == "single" else self.root / forest
        card = holder(folder)
        return (
            card
            if holds_open(card) and card is not None and card.get("pid") != os.getpid()
            else None
        )

    def close(self) -> None:
        """Close every open forest."""
        with self._guard:
            vines, self._open = list(self._open.values()), {}
        for vine in vines:
            vine.close()
