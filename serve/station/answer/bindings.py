"""The model bound to each forest: an OpenAI-compatible chat completions endpoint.

A binding names the endpoint, the model, and the environment variable holding the API
key (read at call time only: the key itself is never stored or shown), with optional
rates in USD per million tokens, the reply bound and the provider's deadline.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from ..store import Store

MAX_TOKENS = 600
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Binding:
    """One forest's model."""

    forest: str
    endpoint: str
    model: str
    api_key_env: str | None = None
    price_prompt: float | None = None
    price_completion: float | None = None
    max_tokens: int = MAX_TOKENS
    timeout_s: float = TIMEOUT_S
    created_at: float = 0.0

    @property
    def priced(self) -> bool:
        """True when both rates are configured."""
        return self.price_prompt is not None and self.price_completion is not None

    def public(self) -> dict[str, Any]:
        """The binding as shown (the variable's name, never its value)."""
        return asdict(self)


def put(store: Store, binding: Binding) -> Binding:
    """Bind (or rebind) a forest's model; returns the stored binding.

    Raises:
        ValueError: a bad forest name, endpoint, model, rate, bound or deadline.
    """
    if not binding.forest or "/" in binding.forest or binding.forest.startswith("."):
        raise ValueError(f"not a forest name: {binding.forest!r}")
    if not binding.endpoint.startswith(("http://", "https://")):
        raise ValueError(f"the endpoint must be an http(s) URL, got {binding.endpoint!r}")
    if not binding.model.strip():
        raise ValueError("the model needs a name")
    if (binding.price_prompt is None) != (binding.price_completion is None):
        raise ValueError("give both rates (--price-prompt and --price-completion) or none")
    if any(p is not None and p < 0 for p in (binding.price_prompt, binding.price_completion)):
        raise ValueError("rates cannot be negative")
    if not 1 <= binding.max_tokens <= 32000:
        raise ValueError("max tokens must be 1 to 32000")
    if not 0 < binding.timeout_s <= 600:
        raise ValueError("the timeout must be over 0 and at most 600 seconds")
    row = Binding(
        **{
            **asdict(binding),
            "endpoint": binding.endpoint.rstrip("/"),
            "model": binding.model.strip(),
            "created_at": time.time(),
        }
    )
    with store.lock:
        store.conn.execute(
            "INSERT OR REPLACE INTO bindings (forest, endpoint, model, api_key_env, "
            "price_prompt, price_completion, max_tokens, timeout_s, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.forest,
                row.endpoint,
                row.model,
                row.api_key_env,
                row.price_prompt,
                row.price_completion,
                row.max_tokens,
                row.timeout_s,
                row.created_at,
            ),
        )
    return row


def get(store: Store, forest: str) -> Binding | None:
    """The forest's binding, or None."""
    with store.lock:
        row = store.conn.execute("SELECT * FROM bindings WHERE forest = ?", (forest,)).fetchone()
    return None if row is None else Binding(**dict(row))


def remove(store: Store, forest: str) -> bool:
    """Unbind a forest; False when it had no binding."""
    with store.lock:
        cur = store.conn.execute("DELETE FROM bindings WHERE forest = ?", (forest,))
    return cur.rowcount > 0


def listing(store: Store) -> list[Binding]:
    """Every binding, by forest."""
    with store.lock:
        rows = store.conn.execute("SELECT * FROM bindings ORDER BY forest").fetchall()
    return [Binding(**dict(r)) for r in rows]
