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

    def commit(self, paths: list[Path], message: str, *, also: tuple[str, ...] = ()) -> str:
        """Stage ``paths`` (``.md`` inside the forest only, plus the names in ``also``;
        deleted ones are removed) and commit them; returns the new commit's sha.

        Plumbing, one process per step rather than per file: ``update-index`` for the
        paths, ``write-tree`` (which reuses the cached trees of untouched folders),
        ``commit-tree``, then ``update-ref`` guarded by the old HEAD.
        """
        rels = []
        for path in paths:
            rel = os.path.relpath(path, self.root)
            if rel.startswith("..") or not (rel.endswith(".md") or rel in also):
                continue
            rels.append(rel)
        if not rels:
            raise SchemaError("nothing to commit")
        cmd = self.repo.git
        env = {"GIT_AUTHOR_NAME": IDENTITY.name, "GIT_AUTHOR_EMAIL": IDENTITY.email,
               "GIT_COMMITTER_NAME": IDENTITY.name, "GIT_COMMITTER_EMAIL": IDENTITY.email}
        cmd.update_index("--add", "--remove", "--", *rels)
        tree = cmd.write_tree()
        old = self.head()
        parents = ["-p", old] if old else []
        sha = cmd.commit_tree(tree, *parents, "-m", message, env=env)
        cmd.update_ref("-m", f"commit: {message.splitlines()[0]}", "HEAD", sha,
                       *([old] if old else []))
        return sha

    def reset(self, paths: list[Path]) -> None:
        """Put the index entries of ``paths`` back to HEAD (after a failed commit)."""
        rels = [os.path.relpath(p, self.root) for p in paths
                if not os.path.relpath(p, self.root).startswith("..")]
        if not rels:
            return
        try:
            if self.head() is None:
                self.repo.git.rm("--cached", "-q", "--ignore-unmatch", "--", *rels)
            else:
                self.repo.git.reset("-q", "HEAD", "--", *rels)
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
