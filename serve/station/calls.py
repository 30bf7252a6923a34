"""The Station's calls: every engine call, plus ``answer``, which exists only here.

``answer``'s contract is a documented signature, described by the registry's own
:func:`~monkeyllm.registry.spec_of`, so REST, the OpenAPI document and the Station's
MCP tools all take its parameters from one place, as they do the engine's.
"""

from __future__ import annotations

from typing import Any, Literal

from monkeyllm.registry import CALLS, Call, spec_of


def answer(self: Any, question: str, k: int = 3, cache: bool = True,
           reply_tokens: int | None = None, min_evidence: int = 0,
           min_score: float = 0.0, hops: bool | int | None = None,
           terms: str | list[str] | None = None, since: str | None = None,
           until: str | None = None,
           date_field: Literal["created", "updated"] = "created") -> dict[str, Any]:
    """Answer a question in prose from this forest, with the model bound to it.

    Runs the scoped harvest sweep and hands its bundle to the forest's model, which
    answers from that evidence only; returns the answer, the ids it stands on, the
    sources, the whole harvest bundle, the provider's usage, a trace of every step and,
    when rates are configured, the cost. With hops, the model instead walks the read
    calls (locate, sniff, look, move, pick, scan, query; never a write) until it can
    answer; a walk that runs out of turns answers exhausted=true and an empty answer,
    never a made-up one. A repeated question is answered from the answer store until
    the forest or the evidence changes.

    Args:
        question: The question, in any words (up to 1,000 characters).
        k: How many harvest results the model reads (1 to 5).
        cache: Answer a repeated question from the store; false runs fresh and
            replaces the stored answer.
        reply_tokens: Bound on the reply's length, 64 to 4,000 (default: the
            binding's max_tokens).
        min_evidence: Skip the model, answering reason insufficient_evidence, when
            fewer results carry content with a score of at least min_score.
        min_score: The score floor min_evidence counts against (RRF scale).
        hops: Walk the read calls instead of one sweep: true for 6 turns, or 1 to 16.
        terms: Exact strings for the sweep's sniff; default: derived from the question.
        since: Window start, YYYY, YYYY-MM or YYYY-MM-DD (inclusive).
        until: Window end, YYYY, YYYY-MM or YYYY-MM-DD (inclusive).
        date_field: The date the window applies to: created or updated.
    """
    raise NotImplementedError  # a contract only: the Station runs answer itself


ANSWER: Call = spec_of(answer, "composite")
STATION_CALLS: dict[str, Call] = {**CALLS, "answer": ANSWER}
