"""What a write needs: the forest, its repository, and a way to land the result."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..forest import Forest
from ..gitops import Repository
from ..visibility import EVERYTHING, Visibility
from .transaction import Transaction


@dataclass
class WriteContext:
    """The forest and repository a write runs against."""

    forest: Forest
    repo: Repository
    # Git trailers appended to every commit message (e.g. who wrote, on a server).
    trailers: tuple[tuple[str, str], ...] = ()
    # What the caller may see (a host's scoped key): nodes a write may touch beyond
    # its argument must be inside it.
    visibility: Visibility = EVERYTHING

    @property
    def root(self) -> Path:
        """The forest's root."""
        return self.forest.root

    def check_repository(self) -> None:
        """What the commit will need, checked for a dry run too: the forest is its own
        git repository (``E_SCHEMA`` saying how to make it one, otherwise)."""
        self.repo.repo  # noqa: B018 - opening it is the check

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """An all-or-nothing write: on any exception every touched file is put back and
        the exception goes on; on success the catalog takes in the committed files."""
        txn = Transaction(self.root, self.repo, self.trailers)
        try:
            yield txn
        except BaseException:
            txn.rollback()
            raise
        try:
            # The catalog takes the files in while the commit's index is written.
            self.forest.catalog.refresh([os.path.relpath(p, self.root) for p in txn.touched])
        finally:
            # The journal goes once the index is in place: a writer killed before then
            # leaves it, and recovery brings the index in line with HEAD.
            self.repo.settle()
            txn.finish()
