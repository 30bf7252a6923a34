"""One forest's Canopy: ``_derived/canopy/``, never in git, always rebuildable.

- ``index.json``: the manifest. The embedder's name (``local`` or ``http``), its model
  and the vectors' dimension, the embedder's configuration (an endpoint's URL and the
  name of its API-key variable, never a key), the text recipe and when it was built.
  A query embedder that does not match it is detected, never compared against the
  wrong space.
- ``vectors.db``: one row per node (id, the digest of the text embedded, a generation,
  the float32 vector), so that re-embedding one node rewrites one row.

In memory the vectors are one float32 matrix (nodes x dimension, unit rows): exact
nearest neighbours are one matrix-vector product. That is 1.5 KB a node at 384
dimensions: 15 MB for 10,000 nodes, 154 MB for 100,000.

The catalog marks every node it (re)indexes ``stale``; :meth:`Index.sync` looks at those
rows only, re-embeds the ones whose text changed and clears the mark, and drops the
vectors of nodes that are gone. A writer of another process is seen through the
generation stored with the vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import derived
from ..errors import SchemaError
from .embedders import Embedder, EmbedderConfig

if TYPE_CHECKING:
    import numpy as np

    from ..catalog import Catalog

FOLDER = "canopy"
MANIFEST = "index.json"
VECTORS = "vectors.db"
FORMAT = 1
# What a node's vector is made from: its title, aliases, tags and summary (what locate
# reads). A new recipe re-embeds every node.
RECIPE = 1
BUILD_BATCH = 32

_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS vectors(id TEXT PRIMARY KEY, digest TEXT NOT NULL,
    gen INTEGER NOT NULL, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS vectors_gen ON vectors(gen);
"""
_STALE = "SELECT id, title, aliases, tags, summary FROM nodes WHERE stale = 1"
_CLEAR = (
    "UPDATE nodes SET stale = 0 WHERE id = ? AND title IS ? AND aliases IS ? "
    "AND tags IS ? AND summary IS ?"
)


def _labels(raw: Any) -> list[str]:
    try:
        value = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def text_of(
    title: str | None, aliases: Any, tags: Any, summary: str | None, waymarks: Iterable[str] = ()
) -> str:
    """The text a node's vector is made from (catalog columns: aliases and tags JSON).
    The old ids a transplant left among the aliases (``waymarks``) are addresses, not
    names: they are left out, so a move changes no vector."""
    parts = [title or ""]
    left = set(waymarks)
    names = [n for n in _labels(aliases) if n not in left]
    if names:
        parts.append("Also called " + ", ".join(names))
    labels = _labels(tags)
    if labels:
        parts.append("Tags: " + ", ".join(labels))
    if summary:
        parts.append(summary)
    return ". ".join(p.strip().rstrip(".") for p in parts if p and p.strip()) + "."


def digest(text: str) -> str:
    """What tells whether a node's embedded text changed."""
    return hashlib.blake2b(
        f"{RECIPE}\0{text}".encode("utf-8", "surrogatepass"), digest_size=12
    ).hexdigest()


@dataclass
class Pending:
    """A node whose vector is missing or out of date."""

    id: str
    text: str
    digest: str
    row: tuple[Any, ...]


@dataclass
class Synced:
    """What a sync did: vectors written, and nodes still waiting for one."""

    embedded: int = 0
    stale: int = 0


class Index:
    """A forest's Canopy (see the module docstring).

    Args:
        root: The forest's root.
        catalog: Its catalog (the rows to embed, and their stale marks).
    """

    def __init__(self, root: Path, catalog: Catalog) -> None:
        self.root = root
        self.catalog = catalog
        self.folder = root / "_derived" / FOLDER
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._manifest: tuple[tuple[int, int], dict[str, Any]] | None = None
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._digests: dict[str, str] = {}
        self._matrix: np.ndarray | None = None
        self._gen = -1

    # -- manifest --------------------------------------------------------------------

    def manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when the forest has no Canopy (re-read when it changes
        on disk, so another process's build is seen)."""
        path = self.folder / MANIFEST
        try:
            st = os.stat(path)
        except OSError:
            self._manifest = None
            return None
        key = (st.st_mtime_ns, st.st_size)
        if self._manifest is not None and self._manifest[0] == key:
            return self._manifest[1]
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("format") != FORMAT
            or not isinstance(data.get("embedder"), dict)
        ):
            return None
        self._manifest = (key, data)
        return data

    def configured(self) -> EmbedderConfig | None:
        """The embedder the manifest records (its local configuration), or None."""
        data = self.manifest()
        if data is None:
            return None
        try:
            return EmbedderConfig.from_public(data["embedder"].get("config") or {})
        except (SchemaError, TypeError):
            return None

    def write_manifest(self, config: EmbedderConfig, dim: int | None) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {
            "format": FORMAT,
            "recipe": RECIPE,
            "embedder": {
                "name": config.name,
                "model": config.model,
                "dim": dim,
                "config": config.public(),
            },
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        tmp = self.folder / f".{MANIFEST}.{os.getpid()}"
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / MANIFEST)
        self._manifest = None

    def matches(self, config: EmbedderConfig) -> str | None:
        """Why a query embedder does not match this Canopy's vectors, or None."""
        data = self.manifest()
        if data is None:
            return "no Canopy index"
        made = data["embedder"]
        if data.get("recipe") != RECIPE:
            return "the index was built from another text recipe"
        if made.get("name") != config.name or made.get("model") != config.model:
            return (
                f"the index was built with {made.get('name')}:{made.get('model')}, the "
                f"query embedder is {config.name}:{config.model}"
            )
        return None

    # -- vectors ---------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            conn = derived.connect(self.folder / VECTORS, "canopy")
            conn.executescript(_DDL)
            self._conn = conn
        return self._conn

    def _db_gen(self) -> int:
        row = self._db().execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()
        return int(row[0]) if row else 0

    def _next_gen(self, conn: sqlite3.Connection) -> int:
        """Move the index's generation on by one, inside ``conn``'s transaction (so other
        processes reload what it writes): the new generation."""
        conn.execute(
            "INSERT INTO meta VALUES('gen', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1"
        )
        return self._db_gen()

    def load(self) -> None:
        """Bring the matrix in line with ``vectors.db`` (all of it the first time, then
        what other processes wrote since)."""
        import numpy as np

        with self._lock:
            gen = self._db_gen()
            if gen == self._gen:
                return
            conn = self._db()
            if self._matrix is None:
                self._reset(conn)
            else:
                rows = conn.execute(
                    "SELECT id, digest, vector FROM vectors WHERE gen > ?", (self._gen,)
                ).fetchall()
                self._put([(r[0], r[1], np.frombuffer(r[2], dtype=np.float32)) for r in rows])
                if conn.execute("SELECT count(*) FROM vectors").fetchone()[0] != len(self._ids):
                    alive = {r[0] for r in conn.execute("SELECT id FROM vectors")}
                    self._remove([i for i in self._ids if i not in alive])
            self._gen = gen

    def _reset(self, conn: sqlite3.Connection) -> None:
        """The matrix from every stored vector, read row by row into a matrix sized
        once (the rows are never all in memory as bytes beside it)."""
        import numpy as np

        count, dim = conn.execute(
            "SELECT count(*), max(length(vector)) / 4 FROM vectors"
        ).fetchone()
        self._ids, self._pos, self._digests = [], {}, {}
        matrix = np.zeros((max(count, 16), dim or 0), dtype=np.float32)
        for node_id, made, blob in conn.execute("SELECT id, digest, vector FROM vectors"):
            if len(blob) != 4 * (dim or 0):
                continue  # another model's vector: never compared
            at = len(self._ids)
            matrix[at] = np.frombuffer(blob, dtype=np.float32)
            self._ids.append(node_id)
            self._pos[node_id] = at
            self._digests[node_id] = made
        self._matrix = matrix

    def _put(self, items: list[tuple[str, str, np.ndarray]]) -> None:
        import numpy as np

        for node_id, made, vector in items:
            if self._matrix is None or self._matrix.shape[1] != len(vector):
                # The first vectors, or another model's: start the matrix over.
                self._ids, self._pos, self._digests = [], {}, {}
                self._matrix = np.zeros((16, len(vector)), dtype=np.float32)
            at = self._pos.get(node_id)
            if at is None:
                at = len(self._ids)
                if at >= self._matrix.shape[0]:
                    grown = np.zeros(
                        (max(16, at * 3 // 2), self._matrix.shape[1]), dtype=np.float32
                    )
                    grown[:at] = self._matrix[:at]
                    self._matrix = grown
                self._ids.append(node_id)
                self._pos[node_id] = at
            self._matrix[at] = vector
            self._digests[node_id] = made

    def _remove(self, ids: Iterable[str]) -> None:
        for node_id in ids:
            at = self._pos.pop(node_id, None)
            if at is None or self._matrix is None:
                continue
            self._digests.pop(node_id, None)
            last = len(self._ids) - 1
            if at != last:
                moved = self._ids[last]
                self._ids[at] = moved
                self._pos[moved] = at
                self._matrix[at] = self._matrix[last]
            self._ids.pop()

    @property
    def count(self) -> int:
        """Nodes with a vector (in memory)."""
        return len(self._ids)

    @property
    def dim(self) -> int:
        """The vectors' dimension (0 before any)."""
        return 0 if self._matrix is None or not self._ids else int(self._matrix.shape[1])

    def search(self, query: np.ndarray, n: int) -> list[tuple[str, float]]:
        """The ``n`` nodes nearest to a unit query vector: ``(id, cosine)``, best first."""
        import numpy as np

        with self._lock:
            count = len(self._ids)
            if self._matrix is None or not count or query.shape[-1] != self._matrix.shape[1]:
                return []
            scores = self._matrix[:count] @ query.astype(np.float32, copy=False)
            n = min(n, count)
            top = np.argpartition(-scores, n - 1)[:n] if n < count else np.arange(count)
            top = top[np.argsort(-scores[top], kind="stable")]
            return [(self._ids[i], float(scores[i])) for i in top]

    # -- keeping it true to the files ------------------------------------------------

    def pending(self) -> list[Pending]:
        """Nodes whose vector is missing or made from other text; marks of nodes whose
        text is unchanged are cleared, and vectors of nodes that are gone dropped."""
        self.load()
        conn = self.catalog.conn
        todo: dict[str, Pending] = {}
        unchanged: list[tuple[Any, ...]] = []
        waymarks: dict[str, list[str]] = {}
        for old, new in conn.execute("SELECT old_id, new_id FROM moves"):
            waymarks.setdefault(new, []).append(old)
        for row in conn.execute(_STALE):
            item = _pending(row, waymarks)
            if self._digests.get(item.id) == item.digest:
                unchanged.append(row)
            else:
                todo[item.id] = item
        total = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        known = sum(1 for i in todo if i not in self._pos)
        if total != len(self._ids) + known:
            ids = {r[0] for r in conn.execute("SELECT id FROM nodes")}
            gone = [i for i in self._ids if i not in ids]
            missing = [i for i in ids if i not in self._pos and i not in todo]
            for start in range(0, len(missing), 500):
                chunk = missing[start : start + 500]
                for row in conn.execute(
                    "SELECT id, title, aliases, tags, summary FROM nodes WHERE id IN "
                    "(SELECT value FROM json_each(?))",
                    (json.dumps(chunk),),
                ):
                    todo[row[0]] = _pending(row, waymarks)
            # A node that moved (a transplant) keeps its vector under its new id.
            moved = self._moved(gone, todo)
            for new, _ in moved:
                unchanged.append(todo.pop(new).row)
            gone = [i for i in gone if i not in {old for _, old in moved}]
            if gone:
                self._forget(gone)
        if unchanged:
            self._clear(unchanged)
        return sorted(todo.values(), key=lambda p: p.id)

    def _moved(self, gone: list[str], todo: dict[str, Pending]) -> list[tuple[str, str]]:
        """``(new id, old id)`` for new nodes whose text is a gone node's, renamed in
        place (so a transplant re-embeds nothing)."""
        by_digest = {self._digests[i]: i for i in gone if i in self._digests}
        pairs = [
            (p.id, by_digest.pop(p.digest))
            for p in list(todo.values())
            if p.id not in self._pos and p.digest in by_digest
        ]
        if not pairs:
            return []
        conn = self._db()
        try:
            with conn:
                gen = self._next_gen(conn)
                conn.executemany(
                    "UPDATE vectors SET id = ?, gen = ? WHERE id = ?",
                    [(new, gen, old) for new, old in pairs],
                )
        except sqlite3.OperationalError:
            return []
        for new, old in pairs:
            at = self._pos.pop(old)
            self._ids[at] = new
            self._pos[new] = at
            self._digests[new] = self._digests.pop(old)
        self._gen = self._db_gen()
        return pairs

    def embed(
        self,
        embedder: Embedder,
        items: list[Pending],
        *,
        progress: Callable[[int], None] | None = None,
        batch: int = BUILD_BATCH,
        timeout_s: float | None = None,
    ) -> int:
        """Embed ``items`` in batches, writing each batch as it is done (an interrupted
        build keeps what it finished); returns how many were embedded."""
        done = 0
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            vectors = embedder.embed([p.text for p in chunk], query=False, timeout_s=timeout_s)
            self._store(embedder.config, chunk, vectors)
            done += len(chunk)
            if progress is not None:
                progress(len(chunk))
        return done

    def _store(self, config: EmbedderConfig, chunk: list[Pending], vectors: np.ndarray) -> None:
        import numpy as np

        with self._lock:
            data = self.manifest()
            dim = int(vectors.shape[1])
            if data is None or data["embedder"].get("dim") != dim or self.matches(config):
                self.write_manifest(config, dim)
            conn = self._db()
            rows = [
                (p.id, p.digest, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                for p, v in zip(chunk, vectors, strict=True)
            ]
            try:
                with conn:
                    gen = self._next_gen(conn)
                    conn.executemany(
                        "INSERT OR REPLACE INTO vectors VALUES(?, ?, ?, ?)",
                        [(i, d, gen, b) for i, d, b in rows],
                    )
            except sqlite3.OperationalError:
                return  # busy or refused: the nodes stay stale, retried next time
            self.load()
            self._clear([p.row for p in chunk])

    def _forget(self, ids: list[str]) -> None:
        conn = self._db()
        try:
            with conn:
                self._next_gen(conn)
                conn.executemany("DELETE FROM vectors WHERE id = ?", [(i,) for i in ids])
            self._gen = self._db_gen()
        except sqlite3.OperationalError:
            pass
        self._remove(ids)

    def _clear(self, rows: list[tuple[Any, ...]]) -> None:
        """Clear the stale marks of rows whose text is still what was embedded (a node
        changed since keeps its mark). Skipped when a writer holds the catalog."""
        conn = self.catalog.conn
        conn.execute("PRAGMA busy_timeout=0")
        try:
            with conn:
                conn.executemany(_CLEAR, rows)
        except sqlite3.OperationalError:
            pass
        finally:
            conn.execute(f"PRAGMA busy_timeout={derived.BUSY_MS}")

    def sync(
        self, embedder: Embedder, *, limit: int | None = None, timeout_s: float | None = None
    ) -> Synced:
        """Embed what changed, at most ``limit`` nodes (all when None)."""
        with self._lock:
            todo = self.pending()
            now = todo if limit is None else todo[:limit]
            done = self.embed(embedder, now, timeout_s=timeout_s) if now else 0
            return Synced(done, len(todo) - done)

    def drop(self) -> bool:
        """Delete the Canopy; False when there was none."""
        with self._lock:
            self.close()
            self._ids, self._pos, self._digests, self._matrix = [], {}, {}, None
            self._gen = -1
            self._manifest = None
            if not self.folder.exists():
                return False
            shutil.rmtree(self.folder, ignore_errors=True)
            return True

    def close(self) -> None:
        """Close the vectors' connection."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def size_bytes(self) -> int:
        """Bytes the Canopy takes on disk."""
        total = 0
        for path in self.folder.glob("*") if self.folder.exists() else []:
            try:
                total += path.stat().st_size
            except OSError:
                pass
        return total


def _pending(row: tuple[Any, ...], waymarks: dict[str, list[str]]) -> Pending:
    text = text_of(row[1], row[2], row[3], row[4], waymarks.get(row[0], ()))
    return Pending(row[0], text, digest(text), tuple(row))
