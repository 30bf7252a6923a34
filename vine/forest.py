"""A forest as the calls see it: its root, catalog, heat and dialect, and the
helpers that turn an id into a catalog row or a parsed node."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import datasets, hints
from .bodyindex import Vocabulary
from .catalog import Catalog, parse_coverage
from .datasets import PayloadPool
from .dialect import Dialect, parse_dialect
from .errors import FrontmatterError, Moved, NotFound
from .heat import READ_DEPOSIT, STRONG_DEPOSIT, HeatStore
from .ids import normalize, path_of
from .nodes import Node, ParseError, body_of_bytes, parse_bytes
from .reads.topk import Stats
from .text import counted

if TYPE_CHECKING:
    from .canopy.embedders import EmbedderConfig
    from .canopy.index import Index

SCHEMA_ID = "_meta/schema"
_NODE_CACHE = 64
_HUNT_MEMORY = 256  # ids that searches returned, remembered to reward a read
REVISION_CHARS = 12  # of a node's blob id, in what reads answer


def not_found(node_id: str, near: list[str] | tuple[str, ...] = ()) -> NotFound:
    """The one ``E_NOT_FOUND`` for a node that is not there (or not visible), with the
    nearest ids that are (``near``) in its hint."""
    guess = f"Did you mean {', '.join(repr(i) for i in near)}? " if near else ""
    return NotFound(
        f"node not found: {node_id}",
        hint=guess + f"Use {hints.call('locate', 'query')} to find entry points, "
        f"or {hints.call('scan', parent_id='_index')} to list the "
        "forest.",
    )


class Forest:
    """Root, catalog, heat and dialect of one open forest."""

    def __init__(
        self, root: Path, *, alpha: float, half_life_days: float, use_inotify: bool = True
    ) -> None:
        self.root = root
        self.alpha = alpha
        self.catalog = Catalog(root, use_inotify=use_inotify)
        self.heat = HeatStore(
            self.catalog.path.parent if self.catalog.path else None, half_life_days=half_life_days
        )
        self._dialect: Dialect | None = None
        self._nodes: dict[str, tuple[tuple[int, int], Node]] = {}
        self._revisions: dict[str, tuple[tuple[int, int, int], str]] = {}
        self.payloads = PayloadPool()
        self._payload_paths: dict[tuple[str, str | None], Path] = {}
        self._vocab = Vocabulary()
        self._vocab_lock = threading.Lock()
        self._locate_stats = Stats()
        self.catalog.on_change.append(self._changed)
        self._found: dict[str, None] = {}
        self._memo: dict[str, Any] = {}
        # The query embedder bound to this forest (None: the environment's, else the
        # one its Canopy was built with).
        self.embedder: EmbedderConfig | None = None
        self._canopy: Index | None = None

    @property
    def canopy(self) -> Index:
        """The forest's Canopy (its module loads on first use; numpy later still)."""
        if self._canopy is None:
            from .canopy.index import Index

            self._canopy = Index(self.root, self.catalog)
        return self._canopy

    def close(self) -> None:
        """Release connections and watches."""
        if self._canopy is not None:
            self._canopy.close()
        self.payloads.close()
        self.catalog.close()
        self.heat.close()

    def payload_path(self, row: sqlite3.Row) -> Path:
        """A dataset row's payload file, checked to stay inside the forest (the answer
        is kept until the node changes)."""
        key = (row["id"], row["payload"])
        hit = self._payload_paths.get(key)
        if hit is None:
            hit = datasets.payload_path(self.root, row["id"], row["payload"])
            self._payload_paths[key] = hit
        return hit

    def _changed(self, ids: list[str] | None) -> None:
        self._payload_paths.clear()
        self._memo.clear()
        if ids is None or SCHEMA_ID in ids:
            self._dialect = None
        if ids is None:
            self._nodes.clear()
        else:
            for node_id in ids:
                self._nodes.pop(node_id, None)

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """A value derived from the whole catalog, built once and kept until the catalog
        next changes."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def locate_stats(self) -> tuple[dict[str, int], int, int] | None:
        """How many catalog rows held each common word at the last rebuild, the row
        count, and the rows indexed since (None before a rebuild)."""
        return self._locate_stats.read(self.catalog.conn)

    def vocabulary(self) -> Vocabulary:
        """The body index's vocabulary, brought up to date."""
        with self._vocab_lock:
            self._vocab.refresh(self.catalog.conn)
            return self._vocab

    @property
    def dialect(self) -> Dialect:
        """The declared types and rels (defaults when ``_meta/schema.md`` says nothing)."""
        if self._dialect is None:
            try:
                self._dialect = parse_dialect(self.read(SCHEMA_ID).body)
            except (NotFound, FrontmatterError):
                self._dialect = Dialect()
        return self._dialect

    # -- ids -----------------------------------------------------------------------

    def resolve(self, raw: Any, *, param: str = "id") -> sqlite3.Row:
        """The catalog row of a caller's id, or the right error for its absence."""
        node_id = normalize(raw, param=param)
        row = self.catalog.row(node_id)
        if row is not None:
            return row
        raise self.absent(node_id)

    def absent(self, node_id: str) -> Exception:
        """The error for an id with no catalog row: moved, malformed or not found."""
        moved = self.catalog.moved_to(node_id)
        if moved:
            return Moved(
                f"node moved: {node_id} is now {moved}",
                moved_to=moved,
                hint=f"Ask for '{moved}' instead.",
            )
        problem = self.catalog.problem(node_id)
        if problem:
            return FrontmatterError(
                f"{node_id}.md is not a well-formed node: {problem}",
                hint="Fix the file; `vine validate` lists every problem. "
                "The rest of the forest keeps working.",
            )
        return not_found(node_id, self.near(node_id))

    def near(self, node_id: str, keep: Callable[[str], bool] | None = None) -> list[str]:
        """The existing ids nearest to a mistyped ``node_id`` (at most 3), among those
        ``keep`` accepts."""
        from .suggest import near_ids

        return near_ids(self.catalog.conn, node_id, keep=keep)

    def read(self, node_id: str) -> Node:
        """The parsed file of a cataloged id (cached while the file is unchanged)."""
        path = path_of(self.root, node_id)
        try:
            st = os.stat(path)
        except OSError:
            raise not_found(node_id) from None
        key = (st.st_mtime_ns, st.st_size)
        hit = self._nodes.get(node_id)
        if hit is not None and hit[0] == key:
            return hit[1]
        try:
            with open(path, "rb") as fh:
                node = parse_bytes(node_id, fh.read())
        except OSError:
            raise not_found(node_id) from None
        except ParseError as exc:
            raise FrontmatterError(f"{node_id}.md is not a well-formed node: {exc}") from None
        if len(self._nodes) >= _NODE_CACHE:
            self._nodes.pop(next(iter(self._nodes)))
        self._nodes[node_id] = (key, node)
        return node

    def revision(self, node_id: str) -> str:
        """The revision reads answer for a cataloged id: the first
        :data:`REVISION_CHARS` characters of :meth:`blob_id`."""
        return self.blob_id(node_id)[:REVISION_CHARS]

    def blob_id(self, node_id: str) -> str:
        """The git blob id of a cataloged id's file as it is now (what ``git hash-object``
        prints): it changes whenever the file does, whoever changes it."""
        path = path_of(self.root, node_id)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            raise not_found(node_id) from None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
            hit = self._revisions.get(node_id)
            if hit is not None and hit[0] == key:
                return hit[1]
            data = fh.read()
        try:
            from _sha1 import sha1  # CPython's own: no OpenSSL to load for one digest
        except ImportError:  # pragma: no cover - other interpreters
            from hashlib import sha1
        sha = sha1(b"blob %d\0" % len(data) + data).hexdigest()
        if len(self._revisions) >= _NODE_CACHE:
            self._revisions.pop(next(iter(self._revisions)))
        self._revisions[node_id] = (key, sha)
        return sha

    def body_lines(self, node_id: str) -> list[str]:
        """The lines of the body in a cataloged id's file (what the body index holds),
        read without parsing the frontmatter; sniff confirms candidate lines this way.
        [] when the node cannot be read."""
        hit = self._nodes.get(node_id)
        if hit is None:
            # A cataloged id is a regular file inside the forest (the walk follows no
            # symlink); O_NOFOLLOW refuses one that became a link since.
            try:
                fd = os.open(
                    os.path.join(self.root, node_id + ".md"),
                    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0),
                )
            except OSError:
                return []
            try:
                with os.fdopen(fd, "rb") as fh:
                    body = body_of_bytes(fh.read())
            except OSError:
                return []
            if body is not None:
                return body.split("\n")
        try:
            return self.read(node_id).lines
        except (NotFound, FrontmatterError):
            return []

    def body(self, node: Node) -> str:
        """A node's body, resolving bodies kept outside the file (``content:``)."""
        mode = node.meta.get("content")
        if mode == "cached":
            cached = self.root / "_derived" / "bodies" / (node.id + ".md")
            try:
                return cached.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                raise NotFound(
                    f"body of {node.id} is not reachable (cached copy missing)",
                    hint="look still works; re-fetch the source.",
                ) from None
        if mode == "reference":
            return self._referenced_body(node)
        return node.body

    def _referenced_body(self, node: Node) -> str:
        source_path = node.meta.get("source_path")
        root = self._source_root()
        if not isinstance(source_path, str) or root is None:
            raise NotFound(f"body of {node.id} is not reachable (no source)")
        target = os.path.realpath(os.path.join(root, source_path))
        if not target.startswith(os.path.realpath(root) + os.sep):
            raise NotFound(f"body of {node.id} is not reachable (source escapes its root)")
        try:
            with open(target, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError):
            raise NotFound(f"body of {node.id} is not reachable ({source_path})") from None

    def _source_root(self) -> str | None:
        try:
            import yaml

            data = yaml.safe_load((self.root / "_meta" / "gardener.yaml").read_text("utf-8"))
        except (OSError, ValueError, ImportError):
            return None
        if isinstance(data, dict):
            value = data.get("source_root") or data.get("source")
            if isinstance(value, str):
                return value if os.path.isabs(value) else str(self.root / value)
        return None

    # -- heat ----------------------------------------------------------------------

    def found(self, ids: Iterable[str]) -> None:
        """Remember ids a search (locate, sniff) returned, so that reading one of them
        next counts as a successful hunt."""
        for node_id in ids:
            self._found.pop(node_id, None)
            self._found[node_id] = None
        while len(self._found) > _HUNT_MEMORY:
            self._found.pop(next(iter(self._found)), None)

    def read_deposit(self, ids: Iterable[str]) -> None:
        """Heat for nodes whose content was read: a read of what a search just found is
        a successful hunt and deposits more (once per find)."""
        plain, hunted = [], []
        for node_id in ids:
            if self._found.pop(node_id, 0) is None:
                hunted.append(node_id)
            else:
                plain.append(node_id)
        if plain:
            self.heat.deposit(plain, READ_DEPOSIT)
        if hunted:
            self.heat.deposit(hunted, STRONG_DEPOSIT)

    def score(self, strength: float, heat: float) -> float:
        """``strength * (1 + alpha * heat)``, rounded to 4 decimals."""
        return round(strength * (1 + self.alpha * heat), 4)


def row_list(row: sqlite3.Row, key: str) -> list[Any]:
    """A JSON list column of a catalog row."""
    raw = row[key]
    if not raw:
        return []
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def coverage_phrase(notes: int, branches: int) -> str:
    """Counts of leaves and sub-branches in words, each noun as its count needs:
    ``"23 bananas, 1 sub-branch."``. (The ``coverage`` frontmatter keeps its fixed
    plural form, which the forest format documents; this is what output shows.)"""
    return f"{counted(notes, 'banana')}, {counted(branches, 'sub-branch', 'sub-branches')}."


def coverage_text(raw: str) -> str:
    """A coverage string in its human form: ``"23 bananas, 1 sub-branch."``."""
    parsed = parse_coverage(raw)
    if isinstance(parsed, dict):
        return coverage_phrase(parsed["notes"], parsed["branches"])
    return raw
