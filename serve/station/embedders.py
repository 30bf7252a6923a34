"""The query embedder bound to each forest, for hybrid locate and harvest: an
OpenAI-compatible ``/v1/embeddings`` endpoint (or a local model), bound like the model
that answers. A forest with no binding uses the embedder its Canopy was built with.

A binding names the endpoint, the model, the environment variable holding the API key
(read at call time only: the key itself is never stored or shown) and the deadline of
one query's vector.
"""

from __future__ import annotations

import time
from typing import Any

from monkeyllm.canopy.embedders import HTTP, LOCAL, QUERY_TIMEOUT_S, EmbedderConfig
from monkeyllm.errors import VineError

from .store import Store

_TABLE = """
CREATE TABLE IF NOT EXISTS embedders (
    forest TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    endpoint TEXT,
    model TEXT NOT NULL,
    api_key_env TEXT,
    timeout_s REAL NOT NULL,
    created_at REAL NOT NULL
)
"""


def _ready(store: Store) -> None:
    store.conn.execute(_TABLE)


def put(
    store: Store,
    forest: str,
    model: str,
    endpoint: str | None = None,
    api_key_env: str | None = None,
    timeout_s: float = QUERY_TIMEOUT_S,
) -> dict[str, Any]:
    """Bind (or rebind) a forest's query embedder; without ``endpoint``, a local model.

    Raises:
        ValueError: a bad forest name or embedder configuration.
    """
    if not forest or "/" in forest or forest.startswith("."):
        raise ValueError(f"not a forest name: {forest!r}")
    try:
        config = EmbedderConfig(
            HTTP if endpoint else LOCAL, model, endpoint, api_key_env, timeout_s
        ).checked()
    except VineError as exc:
        raise ValueError(exc.message) from None
    with store.lock:
        _ready(store)
        store.conn.execute(
            "INSERT OR REPLACE INTO embedders VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                forest,
                config.kind,
                config.url,
                config.model,
                config.api_key_env,
                config.timeout_s,
                time.time(),
            ),
        )
    return {"forest": forest, "role": "embed", **config.public()}


def get(store: Store, forest: str) -> EmbedderConfig | None:
    """The forest's bound embedder, or None."""
    with store.lock:
        _ready(store)
        row = store.conn.execute("SELECT * FROM embedders WHERE forest = ?", (forest,)).fetchone()
    if row is None:
        return None
    return EmbedderConfig(
        row["kind"], row["model"], row["endpoint"], row["api_key_env"], row["timeout_s"]
    )


def remove(store: Store, forest: str) -> bool:
    """Unbind a forest's embedder; False when it had none."""
    with store.lock:
        _ready(store)
        cur = store.conn.execute("DELETE FROM embedders WHERE forest = ?", (forest,))
    return cur.rowcount > 0


def listing(store: Store) -> list[dict[str, Any]]:
    """Every embedder binding, by forest (a variable's name, never a key)."""
    with store.lock:
        _ready(store)
        rows = store.conn.execute("SELECT forest FROM embedders ORDER BY forest").fetchall()
    out = []
    for (forest,) in rows:
        config = get(store, forest)
        if config is not None:
            out.append({"forest": forest, "role": "embed", **config.public()})
    return out
