"""The forest's own git repository: init, and one commit per write, through GitPython.

Commits are built with GitPython's index and object database (no ``git`` process per
file), with the format's identity ``vine <vine@monkeyllm.local>``; only ``.md`` files
inside the forest are ever staged.
"""

from __future__ import annotations

import os
from pathlib import Path

import git
from git.exc import GitError, InvalidGitRepositoryError, NoSuchPathError

from .errors import SchemaError

IDENTITY = git.Actor("vine", "vine@monkeyllm.local")


class Repository:
    """The git repository whose work tree is exactly the forest's root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._repo: git.Repo | None = None

    @property
    def repo(self) -> git.Repo:
        """The repository, opened on first use; a forest inside another repo is not one."""
        if self._repo is None:
            try:
                repo = git.Repo(self.root)
            except (InvalidGitRepositoryError, NoSuchPathError):
                raise SchemaError(
                    f"{self.root} is not a git repository of its own",
                    hint="A forest owns its repository: run `git init` in it (or create "
                         "the forest with Vine.init), then commit its files.") from None
            if Path(repo.working_tree_dir or "").resolve() != self.root:
                raise SchemaError(f"{self.root} is inside another repository, not its own",
                                  hint="Run `git init` in the forest's folder.")
            self._repo = repo
        return self._repo

    def head(self) -> str | None:
        """The current commit, or None before the first."""
        try:
            return self.repo.head.commit.hexsha
        except ValueError:
            return None

    def commit(self, paths: list[Path], message: str) -> str:
        """Stage ``paths`` (``.md`` inside the forest only; deleted ones are removed) and
        commit them; returns the new commit's sha."""
        rels = []
        for path in paths:
            rel = os.path.relpath(path, self.root)
            if rel.startswith("..") or not rel.endswith(".md"):
                continue
            rels.append(rel)
        if not rels:
            raise SchemaError("nothing to commit")
        index = self.repo.index
        present = [r for r in rels if (self.root / r).exists()]
        gone = [r for r in rels if not (self.root / r).exists()]
        if present:
            index.add(present)
        if gone:
            index.remove(gone, ignore_unmatch=True)
        commit = index.commit(message, author=IDENTITY, committer=IDENTITY,
                              skip_hooks=True)
        return commit.hexsha

    def reset(self, paths: list[Path]) -> None:
        """Put the index entries of ``paths`` back to HEAD (after a failed commit)."""
        rels = [os.path.relpath(p, self.root) for p in paths]
        try:
            if self.head() is None:
                self.repo.index.remove(rels, ignore_unmatch=True)
                self.repo.index.write()
            else:
                self.repo.index.reset(commit="HEAD", paths=rels)
        except GitError:
            pass

    def close(self) -> None:
        """Release the repository's handles."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None


def init_repository(root: Path) -> Repository:
    """A repository at ``root`` itself (nested even inside another repository)."""
    if not (root / ".git").exists():
        git.Repo.init(root, initial_branch="main")
    return Repository(root)
