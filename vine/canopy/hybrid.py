"""Whether a read fuses the vector ranking into its lexical one, and the vector ranking.

``hybrid`` is ``"auto"`` (the default), ``True`` or ``False``. A read fuses when a
Canopy index exists, its embedder is installed and matches the index, and the query's
vector arrives in time; ``auto`` also needs the measured default to say fusion is
better for that call (:data:`AUTO`). Whatever happens, the response says whether hybrid
ran and, when it did not, why: a failing provider falls back to lexical ranking, and is
not asked again for :data:`RETRY_AFTER_S` seconds, so no read waits on it twice.

Before ranking, a hybrid read embeds up to :data:`INLINE` nodes that changed since the
Canopy last looked (a plant, a graft, an outside edit); a larger backlog (an ingest) is
left to ``vine canopy build``, and the response counts it as ``stale``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..errors import SchemaError, VineError
from .embedders import HTTP, EmbedderConfig, available

if TYPE_CHECKING:
    import numpy as np

    from ..forest import Forest
    from .embedders import Embedder

Hybrid = bool | Literal["auto"]
# What auto does per call, from the lexical-vs-hybrid scorecard with the local model
# (bench/README.md, "Canopy"): fusion where it measured better. For harvest it did on
# the sets its fusion was designed on, and not on the blind frozen3 set, so auto ranks
# harvest lexically.
AUTO = {"locate": True, "harvest": False}
INLINE = 8  # changed nodes a read embeds before it ranks
QUERY_CACHE = 512  # query vectors kept per process
RETRY_AFTER_S = 30.0  # a provider that failed is not asked again for this long
BUILD = "vine canopy build"

ENV_URL = "MONKEYLLM_EMBED_URL"
ENV_MODEL = "MONKEYLLM_EMBED_MODEL"
ENV_KEY = "MONKEYLLM_EMBED_API_KEY_ENV"
ENV_TIMEOUT = "MONKEYLLM_EMBED_TIMEOUT"

_queries: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
_embedders: dict[EmbedderConfig, Embedder] = {}
_down: dict[tuple[Any, ...], tuple[float, str]] = {}
_guard = threading.Lock()


def forget() -> None:
    """Drop this process's cached query vectors and its record of endpoints found down
    (the next read embeds and tries again)."""
    with _guard:
        _queries.clear()
        _down.clear()


@dataclass
class Plan:
    """What a read does: ``info`` for its response, and the vector ranking when it
    fuses (``(id, cosine)``, best first)."""

    info: dict[str, Any]
    vector: list[tuple[str, float]] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        """True when the read fuses."""
        return bool(self.info.get("ran"))


def _off(reason: str, note: str | None = None) -> Plan:
    info: dict[str, Any] = {"ran": False, "reason": reason}
    if note:
        info["note"] = note
    return Plan(info)


def check(value: Any) -> Hybrid:
    """A ``hybrid`` argument, or ``E_SCHEMA``."""
    if value is True or value is False or value == "auto":
        return value
    raise SchemaError(f"hybrid must be 'auto', true or false, got {value!r}")


def env_config() -> EmbedderConfig | None:
    """The embedder the environment names (``MONKEYLLM_EMBED_URL`` and
    ``MONKEYLLM_EMBED_MODEL``, optionally ``MONKEYLLM_EMBED_API_KEY_ENV`` and
    ``MONKEYLLM_EMBED_TIMEOUT``), or None."""
    url = os.environ.get(ENV_URL, "").strip()
    if not url:
        return None
    model = os.environ.get(ENV_MODEL, "").strip()
    if not model:
        raise SchemaError(
            f"{ENV_URL} is set but {ENV_MODEL} is not",
            hint=f"Set {ENV_MODEL} to the model the endpoint serves.",
        )
    raw = os.environ.get(ENV_TIMEOUT, "").strip()
    try:
        timeout = float(raw) if raw else None
    except ValueError:
        raise SchemaError(f"{ENV_TIMEOUT} must be a number of seconds, got {raw!r}") from None
    config = EmbedderConfig(HTTP, model, url, os.environ.get(ENV_KEY, "").strip() or None)
    if timeout is not None:
        config = replace(config, timeout_s=timeout)
    return config.checked()


def resolve(forest: Forest) -> EmbedderConfig:
    """The query embedder of a forest: the one bound to it (a Station's binding, or
    ``Vine(embedder=...)``), else the environment's, else the one its Canopy was built
    with, else the local default."""
    if forest.embedder is not None:
        return forest.embedder
    from_env = env_config()
    if from_env is not None:
        return from_env
    return forest.canopy.configured() or EmbedderConfig().checked()


def embedder(config: EmbedderConfig) -> Embedder:
    """The embedder of a configuration (one per process)."""
    from .embedders import make

    with _guard:
        made = _embedders.get(config)
        if made is None:
            made = _embedders[config] = make(config)
        return made


def _key(config: EmbedderConfig) -> tuple[Any, ...]:
    return (config.kind, config.model, config.url)


def _failed(config: EmbedderConfig, exc: VineError) -> Plan:
    with _guard:
        _down[_key(config)] = (time.monotonic() + RETRY_AFTER_S, exc.message)
    return _off(
        "provider",
        f"{exc.message}; ranked lexically (the embedder is retried after {RETRY_AFTER_S:g} s)",
    )


def query_vector(made: Embedder, query: str) -> np.ndarray:
    """The query's vector, from the per-process cache when it was asked before."""
    key = (*_key(made.config), query)
    with _guard:
        hit = _queries.get(key)
        if hit is not None:
            _queries.move_to_end(key)
            return hit
    vector = made.embed([query], query=True)[0]
    with _guard:
        _queries[key] = vector
        while len(_queries) > QUERY_CACHE:
            _queries.popitem(last=False)
    return vector


def plan(
    forest: Forest, hybrid: Hybrid, query: str, call: str, *, has_terms: bool, pool: int
) -> Plan:
    """Decide whether ``call`` fuses for ``query``, and rank by vector when it does
    (``pool`` nodes). Never raises for a missing index, model or provider: it says so."""
    if hybrid is False:
        return _off("off")
    if not has_terms:
        return _off("no-terms")
    if not (forest.root / "_derived" / "canopy" / "index.json").exists():
        # Said in words only to a call that asked for fusion: under auto, most forests
        # have no Canopy, and the reason alone says why on every response.
        note = f"this forest has no Canopy index ({BUILD} makes one)" if hybrid is True else None
        return _off("no-index", note)
    if hybrid == "auto" and not AUTO.get(call, False):
        return _off(
            "auto-lexical",
            f"auto ranks {call} lexically: fusion measured no "
            "better there; pass hybrid=true to fuse",
        )
    try:
        config = resolve(forest)
    except SchemaError as exc:
        return _off("config", exc.message)
    missing = available(config)
    if missing:
        return _off("not-installed", missing)
    try:
        return _ranked(forest, config, query, pool)
    except (sqlite3.Error, OSError, ValueError) as exc:
        # A damaged or unreadable Canopy never fails a read: it ranks lexically.
        return _off(
            "index",
            f"the Canopy cannot be read ({type(exc).__name__}: {exc}); "
            f"{BUILD} --rebuild makes it again",
        )


def _ranked(forest: Forest, config: EmbedderConfig, query: str, pool: int) -> Plan:
    index = forest.canopy
    if index.manifest() is None:
        return _off(
            "index", f"the Canopy's index.json is unreadable; {BUILD} --rebuild makes it again"
        )
    why = index.matches(config)
    if why:
        return _off("mismatch", f"{why}; {BUILD} rebuilds it")
    with _guard:
        down = _down.get(_key(config))
    if down is not None:
        if time.monotonic() < down[0]:
            return _off(
                "provider",
                f"{down[1]}; ranked lexically (retrying in {down[0] - time.monotonic():.0f} s)",
            )
        with _guard:
            _down.pop(_key(config), None)
    made = embedder(config)
    stale = 0
    try:
        synced = index.sync(made, limit=INLINE, timeout_s=config.timeout_s)
        stale = synced.stale
        vector = query_vector(made, query)
    except VineError as exc:
        return _failed(config, exc)
    if vector.shape[-1] != index.dim:
        return _off(
            "mismatch",
            f"the query embedder gives {vector.shape[-1]} dimensions, "
            f"the index holds {index.dim}; {BUILD} rebuilds it",
        )
    info: dict[str, Any] = {"ran": True, "model": config.model}
    if stale:
        info["stale"] = stale
        info["note"] = f"{stale} changed nodes wait for their vectors ({BUILD})"
    return Plan(info, index.search(vector, pool))


def fuse(lexical: list[int], vector: list[int], rrf_k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of two rankings of rowids: each credits an entry
    ``1 / (rrf_k + rank)``; the strength is the fused score over the best one, so the
    top is 1.0. Ties keep the lexical order first."""
    scores: dict[int, float] = {}
    for ranking in (lexical, vector):
        for rank, rowid in enumerate(ranking, 1):
            scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (rrf_k + rank)
    if not scores:
        return []
    best = max(scores.values())
    order = {rowid: i for i, rowid in enumerate(dict.fromkeys([*lexical, *vector]))}
    fused = sorted(scores, key=lambda r: (-round(scores[r], 12), order[r]))
    return [(rowid, round(scores[rowid] / best, 4)) for rowid in fused]
