"""The forest's own git repository: init, and one commit per write, through GitPython.

Commits are built with GitPython's index and object database (no ``git`` process per
file), with the format's identity ``vine <vine@monkeyllm.local>``; only ``.md`` files
inside the forest are ever staged.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from .errors import Locked, SchemaError

if TYPE_CHECKING:
    import git
    from git.objects import Commit

# The format's identity for every commit the engine makes.
IDENTITY = SimpleNamespace(name="vine", email="vine@monkeyllm.local")


@lru_cache(maxsize=1)
def _git() -> Any:
    """GitPython, imported when a forest is first written (reads never need it)."""
    import git
    from git.objects.fun import tree_entries_from_data, tree_to_stream
    from gitdb import IStream, LooseObjectDB

    git.tree_entries_from_data = tree_entries_from_data  # type: ignore[attr-defined]
    git.tree_to_stream = tree_to_stream  # type: ignore[attr-defined]
    git.IStream = IStream  # type: ignore[attr-defined]
    git.LooseObjectDB = LooseObjectDB  # type: ignore[attr-defined]
    return git


class Repository:
    """The git repository whose work tree is exactly the forest's root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._repo: git.Repo | None = None
        self._loose: Any = None

    def _store(self, kind: bytes, data: bytes) -> bytes:
        """Write one object as a loose file, in this process; returns its binary sha."""
        if self._loose is None:
            self._loose = _git().LooseObjectDB(os.path.join(self.repo.git_dir, "objects"))
        return self._loose.store(_git().IStream(kind, len(data), BytesIO(data))).binsha

    @property
    def repo(self) -> git.Repo:
        """The repository, opened on first use; a forest inside another repo is not one."""
        if self._repo is None:
            try:
                repo = _git().Repo(self.root)
            except (_git().exc.InvalidGitRepositoryError, _git().exc.NoSuchPathError):
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
        """Commit ``paths`` as they are on disk (``.md`` inside the forest only, plus the
        names in ``also``; a missing file is removed); returns the new commit's sha.

        Blobs, the trees along the changed paths and the commit are written by GitPython
        into the object database, the branch moves by a locked ref update with its
        reflog, and one ``git update-index --cacheinfo`` brings the index along. No
        process per file, and none that rewrites every tree.
        """
        rels = []
        for path in paths:
            rel = os.path.relpath(path, self.root)
            if rel.startswith("..") or not (rel.endswith(".md") or rel in also):
                continue
            rels.append(rel.replace(os.sep, "/"))
        if not rels:
            raise SchemaError("nothing to commit")
        repo = self.repo
        self._refuse_locked()
        changes: dict[str, bytes | None] = {}
        for rel in rels:
            full = self.root / rel
            if full.exists():
                data = full.read_bytes()
                changes[rel] = self._store(b"blob", data)
            else:
                changes[rel] = None
        try:
            parent = repo.head.commit
        except ValueError:
            parent = None
        root_entries = self._tree(parent.tree.binsha) if parent is not None else {}
        tree_sha = self._write_tree(root_entries, changes)
        sha = self._store(b"commit", _commit_bytes(tree_sha, parent, message)).hex()
        subject = message.splitlines()[0] if message else ""
        if parent is None:
            # An unborn branch: let git create the ref (the first commit only).
            repo.git.update_ref("-m", f"commit (initial): {subject}", "HEAD", sha)
        else:
            self._advance(parent.hexsha, sha, f"commit: {subject}")
        args: list[str] = []
        for rel, blob in changes.items():
            if blob is None:
                args += ["--force-remove", rel]
            else:
                args += ["--cacheinfo", f"100644,{blob.hex()},{rel}"]
        repo.git.update_index("--add", *args)
        return sha

    def _tree(self, binsha: bytes) -> dict[str, tuple[bytes, int]]:
        """A tree's entries (``name -> (binsha, mode)``), read straight from the database."""
        data = self.repo.odb.stream(binsha).read()
        return {name: (sha, mode) for sha, mode, name in _git().tree_entries_from_data(data)}

    def _write_tree(self, entries: dict[str, tuple[bytes, int]],
                    changes: dict[str, bytes | None]) -> bytes:
        """Write the tree ``entries`` with ``changes`` applied (paths relative to it)."""
        here: dict[str, bytes | None] = {}
        below: dict[str, dict[str, bytes | None]] = {}
        for rel, sha in changes.items():
            head, sep, rest = rel.partition("/")
            if sep:
                below.setdefault(head, {})[rest] = sha
            else:
                here[head] = sha
        entries = dict(entries)
        for name, sha in here.items():
            if sha is None:
                entries.pop(name, None)
            else:
                entries[name] = (sha, 0o100644)
        for name, sub_changes in below.items():
            sub_entries: dict[str, tuple[bytes, int]] = {}
            if name in entries and entries[name][1] == 0o040000:
                sub_entries = self._tree(entries[name][0])
            sha = self._write_tree(sub_entries, sub_changes)
            if sha is None:
                entries.pop(name, None)
            else:
                entries[name] = (sha, 0o040000)
        if not entries:
            return None  # type: ignore[return-value]
        ordered = sorted(((sha, mode, name) for name, (sha, mode) in entries.items()),
                         key=lambda e: e[2] + ("/" if e[1] == 0o040000 else ""))
        stream = BytesIO()
        _git().tree_to_stream(ordered, stream.write)
        data = stream.getvalue()
        return self._store(b"tree", data)

    def _advance(self, old: str, new: str, reason: str) -> None:
        """Move the current branch from ``old`` to ``new`` as git does: through its lock
        file, checking the old value, then one reflog line for the branch and HEAD."""
        git_dir = Path(self.repo.git_dir)
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            self.repo.git.update_ref("-m", reason, "HEAD", new, old)
            return
        ref = head[5:]
        path = git_dir / ref
        if not path.exists():
            # A packed ref: leave it to git.
            self.repo.git.update_ref("-m", reason, ref, new, old)
            return
        lock = Path(str(path) + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise Locked(f"git is busy: .git/{ref}.lock exists") from None
        try:
            current = path.read_text(encoding="utf-8").strip()
            if current != old:
                raise Locked(f"{ref} moved underneath this write ({current[:12]})",
                             hint="Another git client committed; try again.")
            os.write(fd, (new + "\n").encode("ascii"))
            os.close(fd)
            fd = -1
            os.replace(lock, path)
        finally:
            if fd != -1:
                os.close(fd)
            lock.unlink(missing_ok=True)
        stamp = f"{int(time.time())} {time.strftime('%z') or '+0000'}"
        line = f"{old} {new} {IDENTITY.name} <{IDENTITY.email}> {stamp}\t{reason}\n"
        for log in (git_dir / "logs" / ref, git_dir / "logs" / "HEAD"):
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(line)

    def _refuse_locked(self) -> None:
        """Refuse, before anything moves, while git's own lock files are held."""
        git_dir = Path(self.repo.git_dir)
        try:
            branch = self.repo.head.reference.path
        except TypeError:
            branch = "HEAD"
        for name in ("index.lock", "HEAD.lock", f"{branch}.lock", "logs/HEAD.lock",
                     f"logs/{branch}.lock"):
            if (git_dir / name).exists():
                raise Locked(f"git is busy: .git/{name} exists",
                             hint="Another git command is running in this forest; if none "
                                  f"is, remove .git/{name} and try again.")

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
        except _git().exc.GitError:
            pass

    def close(self) -> None:
        """Release the repository's handles."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None


def _commit_bytes(tree: bytes, parent: Commit | None, message: str) -> bytes:
    """A commit object's content, with the format's identity as author and committer."""
    stamp = f"{int(time.time())} {time.strftime('%z') or '+0000'}"
    who = f"{IDENTITY.name} <{IDENTITY.email}> {stamp}"
    lines = [f"tree {tree.hex()}"]
    if parent is not None:
        lines.append(f"parent {parent.hexsha}")
    lines += [f"author {who}", f"committer {who}", "", message.rstrip("\n"), ""]
    return "\n".join(lines).encode("utf-8")


def init_repository(root: Path) -> Repository:
    """A repository at ``root`` itself (nested even inside another repository)."""
    if not (root / ".git").exists():
        _git().Repo.init(root, initial_branch="main")
    return Repository(root)
