"""The batch form of ``look`` and ``pick``: one answer per id, within one budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import budget
from ..errors import NotFound, SchemaError


def batch(
    call: str, ids: list[str], most: int, limit: int, one: Callable[[str], dict[str, Any]]
) -> dict[str, Any]:
    """Answer ``one(id)`` for each of ``ids`` (a repeated id once, in first-seen order).

    Args:
        call: The call's name, for the error message.
        ids: The ids asked for: 1 to ``most`` of them.
        most: How many ids one batch takes.
        limit: The token budget of the whole answer.
        one: The single-node answer; it raises :class:`NotFound` for an id that is not
            there.

    Returns:
        ``{"nodes", "missing", "dropped", "truncated"}``: the answers that fit, the ids
        not found, and the ids whose answers were dropped from the end to fit ``limit``.

    Raises:
        SchemaError: ``ids`` is empty or longer than ``most``.
    """
    if not ids or len(ids) > most:
        raise SchemaError(f"{call}: a batch takes 1 to {most} ids, got {len(ids)}")
    nodes: list[dict[str, Any]] = []
    missing: list[str] = []
    for raw in dict.fromkeys(ids):
        try:
            nodes.append(one(raw))
        except NotFound:
            missing.append(raw)
    out: dict[str, Any] = {"nodes": nodes, "missing": missing, "dropped": [], "truncated": False}
    while out["nodes"] and budget.cost(out) > limit:
        out["dropped"].insert(0, out["nodes"].pop()["id"])
        out["truncated"] = True
    return out
