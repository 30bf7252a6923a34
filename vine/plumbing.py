"""What a :class:`~monkeyllm.Vine` is besides its calls: the way into a write, the
caller's scope and trailers (per thread), and the helpers surfaces use (the head, the
keeper, near ids, problems, assets, a rebuild)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from . import argcheck, hints
from .errors import ReadOnly, SchemaError, VineError
from .visibility import EVERYTHING, Visibility

if TYPE_CHECKING:
    from .forest import Forest
    from .gitops import Repository
    from .keeper import Keeper
    from .writepath import WritePath
    from .writes.context import WriteContext


# How long close waits for calls in other threads: past the default lock timeout (a
# write waiting for another writer), and bounded, so that a thread stuck elsewhere (a
# lock-wait callback waiting for the thread that closes) never hangs it.
CLOSE_WAIT = 10.0


class Gate:
    """The calls in progress on one Vine, so that ``close`` waits for those running in
    other threads instead of closing the SQLite connections under them (which crashes
    the interpreter) and refuses every call that comes after it."""

    def __init__(self) -> None:
        self._idle = threading.Condition()
        self._running = 0
        self._local = threading.local()
        self.closed = False

    def enter(self) -> bool:
        """Count a call in; False once the Vine is closed."""
        with self._idle:
            if self.closed:
                return False
            self._running += 1
        self._local.depth = getattr(self._local, "depth", 0) + 1
        return True

    def leave(self) -> None:
        self._local.depth -= 1
        with self._idle:
            self._running -= 1
            self._idle.notify_all()

    @contextmanager
    def entered(self) -> Iterator[None]:
        """A helper that is not a call, counted in like one (``E_SCHEMA`` once closed)."""
        if not self.enter():
            raise closed()
        try:
            yield
        finally:
            self.leave()

    def close(self, wait: float = CLOSE_WAIT) -> bool:
        """Refuse new calls and wait, ``wait`` seconds at most, for the other threads'
        calls to end (not for one this thread is inside: a callback may close); False
        when already closed."""
        with self._idle:
            if self.closed:
                return False
            self.closed = True
            own = getattr(self._local, "depth", 0)
            self._idle.wait_for(lambda: self._running <= own, timeout=wait)
        return True


def closed() -> SchemaError:
    """What every call on a closed Vine answers."""
    return SchemaError("this Vine is closed", hint="Open the forest again.")


class Plumbing:
    """The part of :class:`~monkeyllm.Vine` that is not a call."""

    if TYPE_CHECKING:  # Vine's own constructor, which init and copy call

        def __init__(self, path: str | os.PathLike[str], **options: Any) -> None: ...

    @classmethod
    def init(
        cls, path: str | os.PathLike[str], title: str, summary: str | None = None, **options: Any
    ) -> Self:
        """Create a forest at ``path`` and open it (writable).

        Writes the master ``_index.md``, ``_meta/schema.md`` with the default dialect and
        ``.gitignore``, makes the folder its own git repository (even inside another
        one) and commits ``init: forest '<title>'``. ``options`` are
        :class:`~monkeyllm.Vine`'s, checked before anything is written. Refuses a folder
        that already holds a forest, a path where a file stands (``path`` itself or a
        parent), or an option Vine would refuse (``VineError`` with ``E_SCHEMA``).
        """
        from .opening import as_path, check_open_options
        from .writes.init import init_forest

        check_open_options(cls, options)
        init_forest(as_path(path).expanduser().resolve(), title, summary)
        return cls(path, **options)

    @classmethod
    def copy(
        cls, path: str | os.PathLike[str], dest: str | os.PathLike[str], **options: Any
    ) -> Self:
        """Copy the forest at ``path`` to ``dest`` as a forest of its own and open the copy
        (writable unless ``writable=False`` is given).

        The markdown, dataset payloads and ``_assets/`` are copied (never ``_derived/``,
        the lock or the source's git data); ``dest`` becomes its own git repository with
        one commit, ``copy: forest '<title>' from <folder>``. It is how to try edits on a
        forest that cannot be written (one inside another repository, such as the
        shipped ``sample-brain/``). Raises ``VineError`` (``E_SCHEMA``) when ``dest`` is
        a folder that is not empty, or for an option Vine would refuse (checked before
        anything is copied).
        """
        from .opening import as_path, check_open_options
        from .writes.copy import copy_forest

        check_open_options(cls, options)
        copy_forest(as_path(path), as_path(dest, "dest"))
        return cls(dest, **options)

    root: Path
    writable: bool
    _forest: Forest
    _path: WritePath
    _repo: Repository | None
    _local: threading.local
    _closed: bool
    _gate: Gate

    def cannot_write(self) -> str | None:
        """Why writes to this forest would fail before they start, or None: a writable
        forest is its own git repository. A browser says it up front, not at a save."""
        from .gitops import ownership

        return ownership(self.root)

    def _repository(self) -> Repository:
        """The forest's git repository (its module loads on the first write)."""
        if self._repo is None:
            from .gitops import Repository

            self._repo = Repository(self.root)
        return self._repo

    @contextmanager
    def writing(self) -> Iterator[WriteContext]:
        """The one way into a write: this thread's turn, the writer lock (per write,
        when not held while open), a dead writer's journal settled, the catalog up to
        date; then the context the write runs against. Every write goes through it: the
        calls, and the engine's writes that are not calls (ingest, validate's repairs).

        Raises:
            VineError: ``E_READONLY`` on a read-only Vine; ``E_LOCKED`` when another
                writer keeps the lock past the timeout.
        """
        if not self.writable:
            raise ReadOnly("this forest is open read-only", hint=hints.open_writable())
        from .writes.context import WriteContext

        repo = self._repository()
        if self._path.per_write:
            # What a process's first write loads (GitPython, the catalog's indexer) loads
            # before it takes the lock, not while other writers wait for it.
            from . import indexing  # noqa: F401

            repo.warm()
        with self._path.open(self._forest, repo):
            yield WriteContext(
                self._forest, repo, getattr(self._local, "trailers", ()), self._visibility()
            )

    def _visibility(self) -> Visibility:
        return getattr(self._local, "visibility", EVERYTHING)

    def _steps(self) -> list[dict[str, Any]] | None:
        return getattr(self._local, "steps", None)

    @contextmanager
    def recording(self, steps: list[dict[str, Any]]) -> Iterator[None]:
        """Harvests made by this thread inside the block append one ``{step, ms,
        tokens, id?}`` to ``steps`` per inner read (locate, sniff, each pick), as they
        are measured: what a server's trace of an answer shows.

        Args:
            steps: The list the steps are appended to.
        """
        previous = self._steps()
        self._local.steps = steps
        try:
            yield
        finally:
            self._local.steps = previous

    @contextmanager
    def visibility(
        self, allow: list[str] | tuple[str, ...] = ("",), deny: list[str] | tuple[str, ...] = ()
    ) -> Iterator[None]:
        """Calls made by this thread inside the block see only the nodes under these id
        prefixes: calendar and coverage count them alone, history names no other node
        in a commit's message, and prune and transplant refuse (``E_ANCHORED``, with a
        count only) when they would have to rewrite a node outside them. A server
        wraps each call of a scoped key in it.

        Args:
            allow: Id prefixes that may be seen (``"sales/"``); ``""`` is everything.
            deny: Id prefixes hidden even inside an allowed one.
        """
        previous = self._visibility()
        self._local.visibility = Visibility.of(allow, deny)
        try:
            yield
        finally:
            self._local.visibility = previous

    @contextmanager
    def trailers(self, pairs: dict[str, str]) -> Iterator[None]:
        """Commits made by this thread inside the block end with these git trailers
        (``key: value`` lines after a blank line), e.g. the principal a server wrote for.

        Args:
            pairs: Trailer keys (letters, digits and ``-``) and one-line values.
        """
        for key, value in argcheck.text_pairs(pairs, "pairs").items():
            if not key.replace("-", "").isalnum() or "\n" in value or "\r" in value:
                raise SchemaError(f"bad git trailer: {key!r}")
        previous = getattr(self._local, "trailers", ())
        self._local.trailers = previous + tuple(pairs.items())
        try:
            yield
        finally:
            self._local.trailers = previous

    def keeper(self) -> Keeper:
        """A keeper for this forest: while it serves (``serve_forever`` in a thread of
        its own, ``close`` to stop), one-shot processes ask it to bring the catalog up
        to date instead of walking the files (see :mod:`monkeyllm.keeper`).

        Raises ``VineError`` (``E_LOCKED``) when another keeper already serves this
        forest, ``E_SCHEMA`` where keepers are not supported or the catalog is not a
        file other processes share.
        """
        from .keeper import keep

        return keep(self.root, self._forest.catalog, lambda: self._closed)

    def head(self) -> str | None:
        """The forest's current commit (None before the first, or without git)."""
        with self._gate.entered():
            try:
                return self._repository().head()
            except VineError:
                return None

    @property
    def freshness(self) -> str:
        """How the last call learned what changed on disk: ``walk`` (a stat of every
        file), ``inotify`` (its own watcher) or ``keeper`` (a ``vine watch``)."""
        return self._forest.catalog.last_sync

    def reinforce(self, ids: list[str]) -> list[str]:
        """Deposit a successful hunt's heat on nodes an answer stood on (the Station's
        ``answer`` does, for its evidence), so that what answers questions climbs the
        rankings. Not a call: it changes no content. Returns the ids that exist."""
        from .heat import STRONG_DEPOSIT

        ids = argcheck.strings(ids, "ids", "node ids")
        with self._gate.entered():
            known = [
                i
                for i in dict.fromkeys(ids)
                if isinstance(i, str) and self._forest.catalog.row(i) is not None
            ]
            self._forest.heat.deposit(known, STRONG_DEPOSIT)
            return known

    def near(self, id: str, keep: Callable[[str], bool] | None = None) -> list[str]:
        """The existing ids nearest to a mistyped ``id`` (at most 3, best first), as an
        ``E_NOT_FOUND`` hint suggests them; ``keep`` limits them to ids a caller may
        see (a server scoping a key). Not a call: it deposits no heat and is not traced.
        """
        from .ids import normalize

        argcheck.function(keep, "keep", "a function of an id answering True or False")
        with self._gate.entered():
            return self._forest.near(normalize(id), keep)

    def problems(self) -> list[dict[str, str]]:
        """Files the catalog skipped because they are not well-formed nodes."""
        with self._gate.entered():
            self._forest.catalog.sync()
            return [{"path": p.path, "reason": p.reason} for p in self._forest.catalog.problems()]

    def asset(self, id: str) -> dict[str, Any]:
        """The local original of a media node, for a surface that serves its bytes.

        Not a call (it returns a path, not JSON): ``id``, ``title``, ``payload_type``,
        ``payload_hash``, ``media_type``, ``size`` and ``path``. Raises ``VineError``
        (``E_NOT_FOUND`` or ``E_SCHEMA``) instead of returning an envelope.
        """
        from .media import asset

        with self._gate.entered():
            self._forest.catalog.sync()
            return asset(self._forest, id)

    def reindex(self) -> dict[str, Any]:
        """Rebuild the catalog from the files (heat is kept); returns the node count."""
        started = time.perf_counter()
        with self._gate.entered():
            count = self._forest.catalog.build()
        return {
            "nodes": count,
            "skipped": len(self._forest.catalog.problems()),
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }
