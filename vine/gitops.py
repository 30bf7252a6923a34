"""The forest's own git repository: init, and one commit per write, through GitPython.

Commits are written in this process (loose objects, the trees along the changed
paths, the ref and its reflog, the index entries), with the format's identity
``vine <vine@monkeyllm.local>``; only ``.md`` files inside the forest are ever staged.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
import zlib
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import gitindex, hints
from .errors import Locked, SchemaError

if TYPE_CHECKING:
    import git

# Trees kept in memory per repository (immutable: a tree's sha names its content).
TREE_CACHE = 512

# How long a write waits for a git command (git status, a commit) to let go of its locks.
GIT_LOCK_WAIT_S = 1.0

# The format's identity for every commit the engine makes.
IDENTITY = SimpleNamespace(name="vine", email="vine@monkeyllm.local")


@lru_cache(maxsize=1)
def _git() -> Any:
    """GitPython, imported when a forest is first written (reads never need it)."""
    import git

    return git


class Repository:
    """The git repository whose work tree is exactly the forest's root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._repo: git.Repo | None = None
        self._loose: Any = None
        self._trees: dict[bytes, dict[str, tuple[bytes, int]]] = {}
        self._pending: _IndexWrite | None = None

    def _store(self, kind: bytes, data: bytes) -> bytes:
        """Write one object as a loose file, as git does (zlib, a temporary file renamed
        into place, read-only); returns its binary sha."""
        raw = kind + b" " + str(len(data)).encode("ascii") + b"\0" + data
        binsha = hashlib.sha1(raw).digest()
        hexsha = binsha.hex()
        folder = os.path.join(self._objects(), hexsha[:2])
        path = os.path.join(folder, hexsha[2:])
        if os.path.exists(path):
            return binsha
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(zlib.compress(raw, 1))
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return binsha

    def _objects(self) -> str:
        if self._loose is None:
            self._loose = os.path.join(self.repo.git_dir, "objects")
        return self._loose

    def _read(self, binsha: bytes) -> bytes:
        """An object's content: a loose file read here, else through GitPython (packs)."""
        hexsha = binsha.hex()
        try:
            with open(os.path.join(self._objects(), hexsha[:2], hexsha[2:]), "rb") as fh:
                raw = zlib.decompress(fh.read())
        except FileNotFoundError:
            return self.repo.odb.stream(binsha).read()
        return raw[raw.index(b"\0") + 1 :]

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
                    f"the forest with {hints.create_forest()}), then commit its "
                    "files.",
                ) from None
            if Path(repo.working_tree_dir or "").resolve() != self.root:
                raise SchemaError(
                    f"{self.root} is inside another repository, not its own",
                    hint="Run `git init` in the forest's folder.",
                )
            self._repo = repo
        return self._repo

    def warm(self) -> None:
        """Open the repository now (GitPython loads), so a write does not pay for it
        later; a forest that is not its own repository says so when a write needs it."""
        with contextlib.suppress(SchemaError):
            _ = self.repo

    def head(self) -> str | None:
        """The current commit, or None before the first."""
        git_dir = Path(self.repo.git_dir)
        try:
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
            if head.startswith("ref: "):
                value = (git_dir / head[5:]).read_text(encoding="utf-8").strip()
            else:
                value = head
            if len(value) == 40 and all(c in "0123456789abcdef" for c in value):
                return value
        except (FileNotFoundError, NotADirectoryError):
            pass
        # A packed ref, an unborn branch or anything unusual: ask GitPython.
        try:
            return self.repo.head.commit.hexsha
        except ValueError:
            return None

    def commit(
        self,
        paths: list[Path],
        message: str,
        *,
        also: tuple[str, ...] = (),
        defer_index: bool = False,
    ) -> str:
        """Commit ``paths`` as they are on disk (``.md`` inside the forest only, plus the
        names in ``also``; a missing file is removed); returns the new commit's sha.

        Blobs, the trees along the changed paths and the commit are written as loose
        objects (trees are immutable, so the ones read or written are kept), the branch
        moves by a locked ref update with its reflog, and the index is spliced in this
        process (:mod:`monkeyllm.gitindex`; one ``git update-index`` where its format
        needs git). No process per file, and none that rewrites every tree.

        With ``defer_index``, the spliced index is written by a thread while the caller
        goes on (a write's catalog update), until :meth:`settle`; every other use of
        the repository settles it first.
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
        self.settle()
        self.refuse_locked()
        changes: dict[str, bytes | None] = {}
        for rel in rels:
            full = self.root / rel
            if full.exists():
                data = full.read_bytes()
                changes[rel] = self._store(b"blob", data)
            else:
                changes[rel] = None
        # The new index is spliced now and checksummed while the commit is written.
        staged = gitindex.prepare(Path(repo.git_dir), self.root, changes)
        parent = self.head()
        root_entries = self._tree(self._commit_tree(parent)) if parent is not None else {}
        tree_sha = self._write_tree(root_entries, changes)
        sha = self._store(b"commit", _commit_bytes(tree_sha, parent, message)).hex()
        subject = message.splitlines()[0] if message else ""
        if parent is None:
            # An unborn branch: let git create the ref (the first commit only).
            repo.git.update_ref("-m", f"commit (initial): {subject}", "HEAD", sha)
        else:
            self._advance(parent, sha, f"commit: {subject}")
        if defer_index and staged is not None:
            self._pending = _IndexWrite(staged, [self.root / rel for rel in changes])
        else:
            self._stage(changes, staged)
        return sha

    def settle(self) -> None:
        """Wait for the index write a commit left running. Where it failed (another git
        command took the index lock, the disk filled), the commit stands and the index
        entries of its paths are put back in line with HEAD, as after any commit whose
        index step fails."""
        pending, self._pending = self._pending, None
        if pending is not None and pending.wait() is not None:
            self.reset(pending.paths)

    def committed(self, rel: str) -> bytes | None:
        """The blob sha (binary) of path ``rel`` in HEAD, or None when HEAD does not
        hold it (or there is no commit yet)."""
        parent = self.head()
        if parent is None:
            return None
        entries = self._tree(self._commit_tree(parent))
        *folders, name = rel.split("/")
        for folder in folders:
            entry = entries.get(folder)
            if entry is None or entry[1] != 0o040000:
                return None
            entries = self._tree(entry[0])
        entry = entries.get(name)
        return entry[0] if entry is not None and entry[1] != 0o040000 else None

    def uncommitted(self, rel: str) -> str | None:
        """How the working file ``rel`` differs from HEAD, in a few words (``"is not
        committed"``, ``"has uncommitted changes"``, ``"is deleted, but not in a
        commit"``), or None when it is exactly what HEAD holds (or both lack it)."""
        blob = self.committed(rel)
        try:
            data = (self.root / rel).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None if blob is None else "is deleted, but not in a commit"
        if blob is None:
            return "is not committed"
        if hashlib.sha1(b"blob %d\0" % len(data) + data).digest() != blob:
            return "has uncommitted changes"
        return None

    def _stage(self, changes: dict[str, bytes | None], staged: gitindex.Staged | None) -> None:
        """Bring the index along: spliced in this process when its format allows, else
        by one ``git update-index``."""
        try:
            if staged is not None:
                staged.write()
                return
        except gitindex.IndexBusy as busy:
            raise Locked(
                str(busy),
                hint="Another git command is running in this forest; "
                "if none is, remove .git/index.lock.",
            ) from None
        # The files on disk are exactly what was committed: let git stage them with
        # their stat data (a missing one is removed).
        self.repo.git.update_index("--add", "--remove", "--", *changes)

    def _tree(self, binsha: bytes) -> dict[str, tuple[bytes, int]]:
        """A tree's entries (``name -> (binsha, mode)``), read straight from the database
        (do not change the dict: it is shared with the cache)."""
        entries = self._trees.get(binsha)
        if entries is None:
            entries = _parse_tree(self._read(binsha))
            self._remember(binsha, entries)
        return entries

    def _remember(self, binsha: bytes, entries: dict[str, tuple[bytes, int]]) -> None:
        if len(self._trees) >= TREE_CACHE:
            self._trees.pop(next(iter(self._trees)))
        self._trees[binsha] = entries

    def _commit_tree(self, hexsha: str) -> bytes:
        """The root tree of a commit."""
        data = self._read(bytes.fromhex(hexsha))
        if not data.startswith(b"tree "):
            raise SchemaError(f"commit {hexsha[:12]} has no tree")
        return bytes.fromhex(data[5:45].decode("ascii"))

    def _write_tree(
        self, entries: dict[str, tuple[bytes, int]], changes: dict[str, bytes | None]
    ) -> bytes:
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
        named = [
            (name.encode("utf-8", "surrogateescape"), sha, mode)
            for name, (sha, mode) in entries.items()
        ]
        # git orders a tree by name bytes, a subtree's name as if it ended in "/".
        named.sort(key=lambda e: e[0] + b"/" if e[2] == 0o040000 else e[0])
        data = b"".join(b"%o %s\0%s" % (mode, name, sha) for name, sha, mode in named)
        binsha = self._store(b"tree", data)
        self._remember(binsha, entries)
        return binsha

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
                raise Locked(
                    f"{ref} moved underneath this write ({current[:12]})",
                    hint="Another git client committed; try again.",
                )
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

    def refuse_locked(self, wait: float = GIT_LOCK_WAIT_S) -> None:
        """Refuse, before anything moves, while git's own lock files are held (a git
        command holds them for moments: they are waited for up to ``wait`` seconds)."""
        self.settle()
        git_dir = Path(self.repo.git_dir)
        try:
            branch = self.repo.head.reference.path
        except TypeError:
            branch = "HEAD"
        names = (
            "index.lock",
            "HEAD.lock",
            f"{branch}.lock",
            "logs/HEAD.lock",
            f"logs/{branch}.lock",
        )
        deadline = time.monotonic() + wait
        while True:
            held = next((name for name in names if (git_dir / name).exists()), None)
            if held is None:
                return
            if time.monotonic() >= deadline:
                raise Locked(
                    f"git is busy: .git/{held} exists",
                    hint="Another git command is running in this forest; if none "
                    f"is, remove .git/{held} and try again.",
                )
            time.sleep(0.01)

    def reset(self, paths: list[Path]) -> None:
        """Put the index entries of ``paths`` back to HEAD (after a failed commit)."""
        self.settle()
        rels = [
            os.path.relpath(p, self.root)
            for p in paths
            if not os.path.relpath(p, self.root).startswith("..")
        ]
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
        self.settle()
        if self._repo is not None:
            self._repo.close()
            self._repo = None


class _IndexWrite:
    """A spliced index being written by a thread of its own."""

    def __init__(self, staged: gitindex.Staged, paths: list[Path]) -> None:
        self.paths = paths
        self._staged = staged
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="index-write", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._staged.write()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            self._error = exc

    def wait(self) -> BaseException | None:
        """Wait for the write; what it raised, if anything."""
        self._thread.join()
        return self._error


def _parse_tree(data: bytes) -> dict[str, tuple[bytes, int]]:
    """A tree object's entries: ``mode SP name NUL sha(20)`` repeated."""
    out: dict[str, tuple[bytes, int]] = {}
    pos, size = 0, len(data)
    find = data.find
    while pos < size:
        space = find(b" ", pos)
        nul = find(b"\0", space)
        out[data[space + 1 : nul].decode("utf-8", "surrogateescape")] = (
            data[nul + 1 : nul + 21],
            int(data[pos:space], 8),
        )
        pos = nul + 21
    return out


def _commit_bytes(tree: bytes, parent: str | None, message: str) -> bytes:
    """A commit object's content, with the format's identity as author and committer."""
    stamp = f"{int(time.time())} {time.strftime('%z') or '+0000'}"
    who = f"{IDENTITY.name} <{IDENTITY.email}> {stamp}"
    lines = [f"tree {tree.hex()}"]
    if parent is not None:
        lines.append(f"parent {parent}")
    lines += [f"author {who}", f"committer {who}", "", message.rstrip("\n"), ""]
    return "\n".join(lines).encode("utf-8")


def ownership(root: Path) -> str | None:
    """Why the forest at ``root`` cannot be written, or None when it can: a forest
    owns its git repository (``root/.git``), and writes commit there. Looks at the
    folders only (no git, no GitPython), so a reader can say it before any save.
    """
    root = Path(root).resolve()
    if (root / ".git").exists():
        return None
    for folder in root.parents:
        if (folder / ".git").exists():
            return (
                f"it is inside the git repository at {folder}, not a repository of "
                "its own, and writes commit to the forest's own repository"
            )
    return "it is not a git repository, and every write is a git commit"


def init_repository(root: Path) -> Repository:
    """A repository at ``root`` itself (nested even inside another repository)."""
    if not (root / ".git").exists():
        _git().Repo.init(root, initial_branch="main")
    return Repository(root)
