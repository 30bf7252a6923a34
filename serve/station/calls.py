"""The Station's calls: every engine call, plus ``answer``, which exists only here.

``answer``'s contract is a documented signature, described by the registry's own
:func:`~monkeyllm.registry.spec_of`, so REST, the OpenAPI document and the Station's
MCP tools all take its parameters from one place, as they do the engine's.
"""

from __future__ import annotations

from typing import Annotated, Any

from monkeyllm import shapes
from monkeyllm.argtypes import DateBound, DateField, Question, Terms
from monkeyllm.limits import Range
from monkeyllm.registry import CALLS, Call, spec_of

# The longest reply answer asks a model for, and the most turns of a walk.
REPLY_MIN, REPLY_MAX = 64, 4000
HOPS_MAX = 16

ANSWER_RESULT = shapes.obj(
    {"answer": shapes.TEXT},
    {
        "model": shapes.STR,
        "model_ms": shapes.NUM,
        "usage": shapes.OBJ,
        "evidence": shapes.STRS,
        "sources": shapes.array(shapes.obj({"id": shapes.STR})),
        "harvest": shapes.OBJ,
        "trace": shapes.OBJ,
        "cost": shapes.OBJ,
        "cached": shapes.BOOL,
        "reason": shapes.STR,
        "turns": shapes.INT,
        "hops": shapes.array(shapes.OBJ),
        "read": shapes.array(shapes.ANY),
        "exhausted": shapes.BOOL,
        "hint": shapes.STR,
        "reply_tokens": shapes.maybe(shapes.INT),
    },
)


def _harvest_max_k() -> int:
    from monkeyllm.reads.harvest import max_k

    return max_k()


def answer(
    self: Any,
    question: Question,
    k: Annotated[int, Range(1, _harvest_max_k)] = 3,
    cache: bool = True,
    reply_tokens: Annotated[int, Range(REPLY_MIN, REPLY_MAX)] | None = None,
    min_evidence: Annotated[int, Range(0, _harvest_max_k)] = 0,
    min_score: Annotated[float, Range(0)] = 0.0,
    hops: bool | Annotated[int, Range(1, HOPS_MAX)] | None = None,
    terms: Terms | None = None,
    since: DateBound | None = None,
    until: DateBound | None = None,
    date_field: DateField = "created",
) -> dict[str, Any]:
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
        question: The question, in any words.
        k: How many harvest results the model reads.
        cache: Answer a repeated question from the store; false runs fresh and
            replaces the stored answer.
        reply_tokens: Bound on the reply's length, in tokens (default: the binding's
            max_tokens).
        min_evidence: Skip the model, answering reason insufficient_evidence, when
            fewer results carry content with a score of at least min_score.
        min_score: The score floor min_evidence counts against (RRF scale).
        hops: Walk the read calls instead of one sweep: true for 6 turns, or a count.
        terms: Exact strings for the sweep's sniff; default: derived from the question.
        since: Window start, inclusive.
        until: Window end, inclusive.
        date_field: The date the window applies to: created or updated.
    """
    raise NotImplementedError  # a contract only: the Station runs answer itself


ANSWER: Call = spec_of(answer, "composite", returns=ANSWER_RESULT)
STATION_CALLS: dict[str, Call] = {**CALLS, "answer": ANSWER}
