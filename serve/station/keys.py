"""API keys: ``mk_`` plus a random secret, shown once, stored as a sha256 digest.

Each key belongs to a principal and carries one grant (a :class:`Policy` on one
forest). Missing, unknown and revoked keys are told apart nowhere: each is ``None``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from monkeyllm.visibility import prefix

from .policy import CAPS, Policy
from .store import Store

PREFIX_CHARS = 12


@dataclass(frozen=True)
class Principal:
    """Who a verified key speaks for, and its grant."""

    key_id: str
    name: str
    policy: Policy


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def parse_caps(raw: str) -> frozenset[str]:
    """``read,query`` as a set, refusing unknown capabilities (ValueError)."""
    caps = frozenset(c.strip() for c in raw.split(",") if c.strip())
    unknown = sorted(caps - set(CAPS))
    if unknown or not caps:
        raise ValueError(f"unknown capability {unknown[0]!r}" if unknown else "no capability given")
    return caps


def add(
    store: Store,
    principal: str,
    forest: str,
    allow: list[str],
    deny: list[str],
    caps: frozenset[str],
) -> tuple[str, str]:
    """Mint a key; returns ``(key_id, key)``. The key itself is never stored."""
    if not principal.strip():
        raise ValueError("the principal needs a name")
    if not forest or "/" in forest or forest.startswith("."):
        raise ValueError(f"not a forest name: {forest!r}")
    key = "mk_" + secrets.token_urlsafe(32)
    key_id = "k_" + secrets.token_hex(4)
    allowed = sorted({prefix(a) for a in allow}) or [""]
    with store.lock:
        store.conn.execute(
            "INSERT INTO keys (id, principal, prefix, hash, forest, allow, deny, caps, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key_id,
                principal.strip(),
                key[:PREFIX_CHARS],
                _digest(key),
                forest,
                json.dumps(allowed),
                json.dumps(sorted({prefix(d) for d in deny} - {""})),
                ",".join(sorted(caps)),
                time.time(),
            ),
        )
    return key_id, key


# Verified keys are kept briefly so a request costs no SQLite query or write: an entry
# is good for CACHE_S seconds and only while the state file's ``data_version`` is the
# one it was cached at. ``data_version`` moves whenever another connection (the CLI's
# ``key revoke``, another process) commits, so a revocation made anywhere answers 401
# on the very next request; a revocation through this process's own store clears the
# cache itself. ``last_used_at`` is written on a miss, so at most once per CACHE_S
# seconds per key rather than on every request.
CACHE_S = 60.0
CACHE_MAX = 4096


@dataclass
class _Cache:
    version: int = -1
    entries: dict[str, tuple[Principal, float]] = field(default_factory=dict)


_CACHES: weakref.WeakKeyDictionary[Store, _Cache] = weakref.WeakKeyDictionary()


def _cache(store: Store) -> _Cache:
    """The store's cache of verified keys, emptied when another connection has
    committed since it was filled (call with ``store.lock`` held)."""
    cache = _CACHES.get(store)
    if cache is None:
        cache = _CACHES[store] = _Cache()
    version = store.conn.execute("PRAGMA data_version").fetchone()[0]
    if version != cache.version:
        cache.entries.clear()
        cache.version = version
    return cache


def verify(store: Store, key: str | None) -> Principal | None:
    """The principal of a live key, or None (missing, unknown or revoked)."""
    if not key or not key.startswith("mk_"):
        return None
    digest = _digest(key)
    now = time.monotonic()
    with store.lock:
        cache = _cache(store)
        hit = cache.entries.get(digest)
        if hit is not None and now - hit[1] < CACHE_S:
            return hit[0]
        rows = store.conn.execute(
            "SELECT * FROM keys WHERE prefix = ? AND revoked_at IS NULL", (key[:PREFIX_CHARS],)
        ).fetchall()
        match = next((r for r in rows if hmac.compare_digest(r["hash"], digest)), None)
        if match is None:
            cache.entries.pop(digest, None)
            return None
        store.conn.execute(
            "UPDATE keys SET last_used_at = ? WHERE id = ?", (time.time(), match["id"])
        )
        policy = Policy(
            match["forest"],
            tuple(json.loads(match["allow"])),
            tuple(json.loads(match["deny"])),
            frozenset(match["caps"].split(",")),
        )
        found = Principal(match["id"], match["principal"], policy)
        if len(cache.entries) >= CACHE_MAX:
            cache.entries.clear()
        cache.entries[digest] = (found, now)
        return found


def listing(store: Store) -> list[dict[str, Any]]:
    """Every key, without its secret or digest."""
    with store.lock:
        rows = store.conn.execute("SELECT * FROM keys ORDER BY created_at").fetchall()
    return [
        {
            "id": r["id"],
            "principal": r["principal"],
            "prefix": r["prefix"],
            "forest": r["forest"],
            "allow": json.loads(r["allow"]),
            "deny": json.loads(r["deny"]),
            "caps": r["caps"].split(","),
            "created_at": r["created_at"],
            "revoked_at": r["revoked_at"],
            "last_used_at": r["last_used_at"],
        }
        for r in rows
    ]


def revoke(store: Store, key_id: str) -> bool:
    """Revoke a key; False when no live key has that id."""
    with store.lock:
        cur = store.conn.execute(
            "UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
            (time.time(), key_id),
        )
        _CACHES.pop(store, None)
    return cur.rowcount > 0
