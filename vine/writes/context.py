"""What a write needs: the forest, its repository, and a way to land the result."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..forest import Forest
from ..gitops import Repository
from .transaction import Transaction


@dataclass
class WriteContext:
    """The forest and repository a write runs against."""

    forest: Forest
    repo: Repository

    @property
    def root(self) -> Path:
        """The forest's root."""
        return self.forest.root

    def transaction(self) -> Transaction:
        """A new all-or-nothing write."""
        return Transaction(self.root, self.repo)

    def landed(self, paths: list[Path]) -> None:
        """Bring the catalog up to date with files a write just committed."""
        self.forest.catalog.refresh([os.path.relpath(p, self.root) for p in paths])
