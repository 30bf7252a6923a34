"""The Canopy: a forest's vector index, and hybrid ``locate`` and ``harvest``.

Importing this package loads nothing heavy: numpy and the embedding model are imported
by the first read that fuses, or by a build.

- :mod:`.embedders`: the embedder interface, the local model and any OpenAI-compatible
  ``/v1/embeddings`` endpoint;
- :mod:`.index`: ``_derived/canopy/`` on disk and the matrix in memory;
- :mod:`.hybrid`: whether a read fuses, the query cache, the rank fusion;
- this module: build, status and drop (``vine canopy ...``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import SchemaError
from .embedders import BUILD_TIMEOUT_S, HTTP, INSTALL, EmbedderConfig, available

if TYPE_CHECKING:
    from ..forest import Forest

__all__ = ["EmbedderConfig", "build", "drop", "status"]

Progress = Callable[[int, int], None]


def build(
    forest: Forest,
    config: EmbedderConfig | None = None,
    *,
    rebuild: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Embed every node whose vector is missing or out of date (all of them with
    ``rebuild``, or when ``config`` names another embedder than the index's).

    Args:
        forest: The forest.
        config: The embedder to build with; default the forest's (see
            :func:`monkeyllm.canopy.hybrid.resolve`).
        rebuild: Throw the vectors away first.
        progress: Called as ``progress(done, total)`` after each batch.

    Raises:
        VineError: ``E_SCHEMA`` when the embedder cannot run here (the extra is not
            installed, a bad configuration); ``E_PROVIDER`` or ``E_TIMEOUT`` when an
            endpoint fails (the batches done so far are kept).
    """
    import sqlite3

    from .hybrid import embedder, resolve

    started = time.perf_counter()
    config = (config or resolve(forest)).checked()
    missing = available(config)
    if missing:
        raise SchemaError(
            f"cannot build the Canopy: {missing}",
            hint=f"Install the local model with {INSTALL}, or give an "
            "OpenAI-compatible endpoint (--url, --model).",
        )
    index = forest.canopy
    replaced = None
    manifest = index.manifest()
    if manifest is not None and index.matches(config):
        replaced = f"{manifest['embedder'].get('name')}:{manifest['embedder'].get('model')}"
    if rebuild or replaced:
        index.drop()
    forest.catalog.sync()
    try:
        todo = index.pending()
    except sqlite3.DatabaseError as exc:
        raise SchemaError(
            f"the Canopy is damaged ({exc})", hint="vine canopy build --rebuild makes it again."
        ) from None
    total = len(todo)
    if progress is not None:
        progress(0, total)
    done = [0]

    def step(count: int) -> None:
        done[0] += count
        if progress is not None:
            progress(done[0], total)

    made = embedder(config)
    if todo:
        index.embed(
            made,
            todo,
            progress=step,
            batch=config.batch if config.kind == HTTP else 32,
            timeout_s=BUILD_TIMEOUT_S,
        )
    elif index.manifest() is None:
        # An empty forest still records which embedder its Canopy speaks.
        index.write_manifest(config, None)
    out = status(forest)
    out["built"] = {
        "embedded": done[0],
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    if replaced:
        out["built"]["replaced"] = replaced
    return out


def status(forest: Forest) -> dict[str, Any]:
    """How many nodes are embedded and stale, with which model, and whether this
    process's query embedder matches.

    Raises:
        VineError: ``E_SCHEMA`` when the index exists but the extra that reads it is
            not installed.
    """
    import sqlite3

    from .hybrid import resolve

    index = forest.canopy
    data = index.manifest()
    nodes = forest.catalog.count()
    out: dict[str, Any] = {"index": data is not None, "nodes": nodes, "folder": str(index.folder)}
    try:
        query = resolve(forest)
    except SchemaError as exc:
        query = None
        out["query_embedder"] = {"error": exc.message}
    if query is not None:
        out["query_embedder"] = query.public()
    if data is None:
        out.update(
            embedded=0,
            stale=nodes,
            hint="No Canopy yet: vine canopy build makes one (locate and harvest "
            "rank lexically meanwhile).",
        )
        return out
    made = data["embedder"]
    out["embedder"] = {
        "name": made.get("name"),
        "model": made.get("model"),
        "dim": made.get("dim"),
        "config": made.get("config"),
    }
    out["built_at"] = data.get("built")
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise SchemaError(f"reading the Canopy needs the canopy extra ({INSTALL})") from None
    forest.catalog.sync()
    try:
        pending = index.pending()
    except sqlite3.DatabaseError as exc:
        out.update(
            embedded=0,
            stale=nodes,
            matches=False,
            mismatch=f"the Canopy is damaged ({exc}); vine canopy build --rebuild makes it again",
        )
        return out
    out["embedded"] = index.count
    out["stale"] = len(pending)
    out["size_bytes"] = index.size_bytes()
    if query is not None:
        why = index.matches(query) or available(query)
        out["matches"] = why is None
        if why:
            out["mismatch"] = why
    return out


def drop(forest: Forest) -> dict[str, Any]:
    """Delete the forest's Canopy (locate and harvest rank lexically until the next
    build)."""
    index = forest.canopy
    return {"dropped": index.drop(), "folder": str(index.folder)}
