"""Helpers the harvest tests share: the fusion and refinement recomputed from the primitives,
and small forests written for one question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from monkeyllm import Vine, budget
from monkeyllm.reads.harvest import MAX_K_DEFAULT
from monkeyllm.reads.terms import derive_terms

from ..forestkit import assert_ok, leaf

QUESTION = "what is the deadline to exchange a retail order?"


MAX_K = 5


def fillers(
    prefix: str,
    count: int,
    line: Callable[[int], str],
    title: Callable[[int], str] = lambda i: f"Filler {i}",
) -> dict[str, tuple[str, dict[str, Any], str]]:
    """``count`` filler notes ``{prefix}{i}`` (for :func:`make_forest`), each a heading
    and the one line ``line(i)``, titled ``title(i)``."""
    head = prefix.rsplit("/", 1)[-1].upper()
    return {
        f"{prefix}{i}": leaf(f"# {head}{i}\n\n{line(i)}\n", title=title(i), summary="Filler.")
        for i in range(count)
    }


def fused(vine: Vine, query: str, term: str | None, k: int) -> list[tuple[str, float, list[str]]]:
    """The fusion computed from the primitives: locate(the question, pool) (locate drops
    its stopwords) and sniff(term, pool), with pool twice the larger of k and the
    default k (5), each id scored sum(share / (60 + rank)), where
    share is its score over the best score of its ranking; ties by updated, then
    created (newest first), then id. Returns (id, score, found_by), best first.

    One term only (by default the question's single derived term): harvest's sweep
    weighs terms by scarcity, which can reorder nodes hitting different terms, but with
    one term its ranking is sniff's."""
    if term is None:
        (term,) = derive_terms(query)
    pool = 2 * max(k, MAX_K_DEFAULT)
    rankings = [
        ("locate", assert_ok(vine.locate(query, k=pool))["results"]),
        ("sniff", assert_ok(vine.sniff(term, k=pool))["results"]),
    ]
    score: dict[str, float] = {}
    found_by: dict[str, list[str]] = {}
    for name, ranking in rankings:
        best = ranking[0]["score"] if ranking else 1.0
        for rank, item in enumerate(ranking, 1):
            share = item["score"] / best
            score[item["id"]] = score.get(item["id"], 0.0) + share / (60 + rank)
            found_by.setdefault(item["id"], []).append(name)
    dates = {i: vine.look(i, fields=["created", "updated"]) for i in score}
    order = sorted(score)
    order.sort(key=lambda i: dates[i].get("created") or "", reverse=True)
    order.sort(key=lambda i: dates[i].get("updated") or "", reverse=True)
    order.sort(key=lambda i: round(score[i], 10), reverse=True)
    # branch indexes and _meta nodes after every other node
    order.sort(key=lambda i: i.endswith("_index") or i.startswith("_meta/"))
    return [(i, score[i], found_by[i]) for i in order]


def by_id(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in out["results"]}


def ids(out: dict[str, Any]) -> list[str]:
    return [r["id"] for r in out["results"]]


def assert_whole(vine: Vine, result: dict[str, Any]) -> None:
    """Every body in a result's content is exactly what pick answers: never a slice."""
    for part in result["content"]:
        if "body" not in part:
            assert "outline" in part and "hint" in part, part
            continue
        if part["section"] is None:
            expected = assert_ok(vine.pick(result["id"]))["body"]
        else:
            expected = assert_ok(vine.pick(result["id"], section=part["section"]))["body"]
        assert part["body"] == expected
        assert part["body_tokens"] == budget.tokens(expected)
