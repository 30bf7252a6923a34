"""All-or-nothing writes: snapshot, write, commit, or put everything back.

Before the first file changes, a journal (``_derived/journal.json``) records
the HEAD it started from, the old bytes of every file it will touch and every file it
will move (a payload carried beside a transplanted node, or into the graveyard by a
prune). If the process dies mid-write, the next writer finds the journal once it holds
the writer lock, in whichever process (or a writable open does, when the lock is free):
when HEAD has not moved, the files are put back and the moves undone; when it has, the
commit landed and only the journal goes. Either way the working tree ends clean.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..gitops import Repository
from . import JOURNAL

# Tests set this to a function raising at a named step, to prove every step rolls back.
FAULT: Callable[[str], None] | None = None


def fault(step: str) -> None:
    """A named point inside a write where tests inject failures."""
    if FAULT is not None:
        FAULT(step)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def atomic_write(path: Path, data: bytes, scratch: Path | None = None) -> None:
    """Replace ``path`` with ``data`` in one rename (readers see old or new, never half).

    The temporary file is made in ``scratch`` (the forest's ``_derived/``, so a writer
    killed mid-write leaves nothing in the tree) or beside the file; the result keeps
    the old file's permissions, or the usual ones for a new file. No fsync: a killed
    process loses nothing the kernel already holds, and git itself does not sync loose
    objects.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = _FILE_MODE
    folder = scratch if scratch is not None else path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".vine-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class Transaction:
    """One write: the files it touches, in one commit, or none of it."""

    def __init__(
        self, root: Path, repo: Repository, trailers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.root = root
        self.repo = repo
        self.trailers = trailers
        self._old: dict[Path, bytes | None] = {}
        self._extra: list[Path] = []  # created beside the markdown (a newborn payload)
        self._payloads: list[Path] = []  # written in place (tend)
        self._moves: list[tuple[Path, Path]] = []  # (from, to), done in this order
        self._journal = root / "_derived" / JOURNAL
        self._scratch = root / "_derived" / "tmp"
        self._started = False
        self._committed = False

    def _begin(self) -> None:
        if self._started:
            return
        # While git itself holds its locks the commit would be refused: refuse before
        # any file changes (the commit checks again).
        self.repo.refuse_locked()
        self._started = True
        self._head = self.repo.head()

    @property
    def touched(self) -> list[Path]:
        """Every file this write changed (or created)."""
        return list(self._old)

    def touch(self, *paths: Path) -> None:
        """Record these files' current bytes (or absence) before they change; naming
        every file of a write at once writes the journal once."""
        self._begin()
        new = [p for p in paths if p not in self._old]
        if not new:
            return
        for path in new:
            try:
                self._old[path] = path.read_bytes()
            except FileNotFoundError:
                self._old[path] = None
        self._save_journal()

    def created(self, *paths: Path) -> None:
        """Files beside the markdown that a rollback must delete (newborn payloads);
        naming them all at once writes the journal once."""
        self._begin()
        self._extra.extend(paths)
        self._save_journal()

    def write(self, path: Path, text: str) -> None:
        """Write a node file inside the transaction."""
        self.touch(path)
        atomic_write(path, text.encode("utf-8"), self._scratch)

    def remove(self, path: Path) -> None:
        """Delete a node file inside the transaction (the commit removes it from git)."""
        self.touch(path)
        path.unlink(missing_ok=True)

    def move(self, source: Path, target: Path) -> None:
        """Move a file that is not in git (a payload) inside the transaction: journaled
        before it happens, moved back by a rollback or a recovery."""
        self._begin()
        self._moves.append((source, target))
        self._save_journal()
        target.parent.mkdir(parents=True, exist_ok=True)
        _rename(source, target)

    def _save_journal(self) -> None:
        entry: dict[str, Any] = {
            "head": self._head,
            "files": {
                os.path.relpath(p, self.root): (
                    None if b is None else base64.b64encode(b).decode("ascii")
                )
                for p, b in self._old.items()
            },
            "extra": [os.path.relpath(p, self.root) for p in self._extra],
            "payloads": [os.path.relpath(p, self.root) for p in self._payloads],
            "moves": [
                [os.path.relpath(a, self.root), os.path.relpath(b, self.root)]
                for a, b in self._moves
            ],
        }
        self._journal.parent.mkdir(exist_ok=True)
        atomic_write(self._journal, json.dumps(entry).encode("utf-8"))

    def payload(self, path: Path) -> None:
        """A SQLite payload about to be written in place: recovery must roll back a hot
        journal a killed writer leaves in it."""
        self._begin()
        self._payloads.append(path)
        self._save_journal()

    def commit(self, message: str) -> str:
        """Commit every touched markdown file; returns the sha.

        If git fails after the branch already moved (a reflog or index step), the
        commit has landed: the write counts as done and the index is re-synced.
        """
        fault("before-commit")
        self._begin()
        if self.trailers:
            message = (
                message.rstrip("\n")
                + "\n\n"
                + "\n".join(f"{key}: {value}" for key, value in self.trailers)
            )
        try:
            sha = self.repo.commit(list(self._old), message, defer_index=True)
        except Exception:
            now = self.repo.head()
            if now is None or now == self._head:
                raise
            sha = now
            self.repo.reset(list(self._old))
        self._committed = True
        fault("after-commit")
        return sha

    def finish(self) -> None:
        """The write is complete: forget the journal."""
        try:
            self._journal.unlink()
        except FileNotFoundError:
            pass

    def rollback(self) -> None:
        """Put every touched file back, delete what was created, unstage.

        Once the commit has landed there is nothing to undo: the files are what HEAD
        holds, and only the index is brought in line with it.
        """
        if not self._committed:
            unmove(self._moves)
            restore(self.root, dict(self._old), self._extra)
        if self._old:
            self.repo.reset(list(self._old))
        self.finish()


def restore(root: Path, old: dict[Path, bytes | None], extra: list[Path]) -> None:
    """Write back old bytes, remove files that did not exist before."""
    for path, data in old.items():
        if data is None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
        else:
            atomic_write(path, data, root / "_derived" / "tmp")
    for path in extra:
        # A newborn payload, with whatever SQLite left beside it.
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)


def _rename(source: Path, target: Path) -> None:
    """Move one file (across file systems when it must)."""
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        import shutil

        shutil.move(str(source), str(target))


def unmove(moves: list[tuple[Path, Path]]) -> None:
    """Undo file moves, last first: each file goes back when it reached its target and
    its old place is free."""
    for source, target in reversed(moves):
        if target.exists() and not source.exists():
            source.parent.mkdir(parents=True, exist_ok=True)
            _rename(target, source)


def _settle_payload(path: Path) -> None:
    """Undo what a writer killed inside SQLite left in a payload.

    Taking the write lock makes SQLite roll back a hot journal; a journal still there
    once the lock is held was never hot (killed before its header was written) and
    nobody else can be using it, so it goes.
    """
    if not path.exists():
        return
    journal = Path(str(path) + "-journal")
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=5)
        try:
            conn.execute("BEGIN IMMEDIATE")
            journal.unlink(missing_ok=True)
            conn.execute("ROLLBACK")
        finally:
            conn.close()
    except sqlite3.Error:
        pass


def clear_git_locks(repo: Repository) -> None:
    """Remove the lock files a killed writer of ours left inside ``.git``.

    Only called when a journal proves such a writer died mid-write; we hold
    ``.vine.lock``, so no other writer of ours is running.
    """
    try:
        git_dir = Path(repo.repo.git_dir)
    except Exception:  # noqa: BLE001 - no repository: nothing to clear
        return
    names = ["index.lock", "HEAD.lock", "logs/HEAD.lock", "packed-refs.lock"]
    for folder in ("refs/heads", "logs/refs/heads"):
        names += [str(p.relative_to(git_dir)) for p in (git_dir / folder).glob("*.lock")]
    for name in names:
        (git_dir / name).unlink(missing_ok=True)


def recover(root: Path, repo: Repository) -> bool:
    """Finish what a dead writer left: roll back unless its commit landed.

    Returns True when a journal was found.
    """
    journal = root / "_derived" / JOURNAL
    for stray in (root / "_derived" / "tmp").glob(".vine-*.tmp"):
        stray.unlink(missing_ok=True)
    try:
        entry = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except ValueError:
        # A torn journal was being written before any file changed.
        journal.unlink(missing_ok=True)
        return True
    files = {
        root / rel: (None if data is None else base64.b64decode(data))
        for rel, data in entry.get("files", {}).items()
    }
    extra = [root / rel for rel in entry.get("extra", [])]
    moves = [(root / a, root / b) for a, b in entry.get("moves", [])]
    for rel in entry.get("payloads", []):
        _settle_payload(root / rel)
    clear_git_locks(repo)
    if repo.head() == entry.get("head"):
        unmove(moves)
        restore(root, files, extra)
    if files:
        # Whether the commit landed or not, the index follows HEAD for these files.
        repo.reset(list(files))
    journal.unlink(missing_ok=True)
    return True
