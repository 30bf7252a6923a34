"""answer's arguments, checked against its documented signature and settled once:
clamps, the hop count, the reply bound and the harvest arguments of the sweep."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monkeyllm.budget import HARVEST_QUERY_CHARS_MAX
from monkeyllm.errors import SchemaError
from monkeyllm.reads.harvest import max_k
from monkeyllm.registry import check_args

from ..calls import ANSWER, HOPS_MAX, REPLY_MAX, REPLY_MIN
from .bindings import Binding
from .cache import normalize

HOPS_DEFAULT = 6


@dataclass(frozen=True)
class Ask:
    """One answer request, settled."""

    question: str
    k: int
    cache: bool
    max_tokens: int
    reply_tokens: int | None
    min_evidence: int
    min_score: float
    hops: int | None
    terms: str | list[str] | None
    window: dict[str, Any]

    def harvest_args(self) -> dict[str, Any]:
        """The sweep's harvest arguments."""
        args: dict[str, Any] = {"query": self.question, "k": self.k, **self.window}
        if self.terms is not None:
            args["terms"] = self.terms
        return args


def settle(raw: dict[str, Any], binding: Binding) -> Ask:
    """Check and settle ``raw`` (``query`` is accepted for ``question``)."""
    if "query" in raw and raw.get("question") is None:
        raw = {**{k: v for k, v in raw.items() if k != "query"}, "question": raw["query"]}
    args = check_args(ANSWER, raw)
    question = args["question"]
    if not question.strip():
        raise SchemaError("answer: question is empty", hint="Ask a question.")
    if len(question) > HARVEST_QUERY_CHARS_MAX:
        raise SchemaError(
            f"answer: question is {len(question)} characters, over {HARVEST_QUERY_CHARS_MAX}",
            hint="Ask a shorter question.",
        )
    k = min(max(args.get("k", 3), 1), max_k())
    reply = args.get("reply_tokens")
    reply = None if reply is None else min(max(reply, REPLY_MIN), REPLY_MAX)
    hops = args.get("hops")
    if hops is True:
        hops = HOPS_DEFAULT
    elif hops is False:
        hops = None
    elif hops is not None and not 1 <= hops <= HOPS_MAX:
        raise SchemaError(
            f"answer: hops must be true or 1 to {HOPS_MAX}, got {hops}",
            hint=f"Pass hops: true for {HOPS_DEFAULT} turns, or an integer "
            f"1 to {HOPS_MAX}; leave it out for the single sweep.",
        )
    window = {name: args[name] for name in ("since", "until") if name in args}
    if window and "date_field" in args:
        window["date_field"] = args["date_field"]
    return Ask(
        question=question,
        k=k,
        cache=args.get("cache", True),
        max_tokens=reply if reply is not None else binding.max_tokens,
        reply_tokens=reply,
        min_evidence=min(max(args.get("min_evidence", 0), 0), k),
        min_score=float(args.get("min_score", 0.0)),
        hops=hops,
        terms=args.get("terms"),
        window=window,
    )


def cache_parts(ask: Ask, binding: Binding, policy: Any) -> dict[str, Any]:
    """What the answer store's key covers (HEAD is added for a walk)."""
    return {
        "question": normalize(ask.question),
        "terms": ask.terms,
        "k": ask.k,
        "hops": ask.hops,
        "hybrid": False,
        "binding": {
            "provider": binding.endpoint,
            "model": binding.model,
            "max_tokens": binding.max_tokens,
            "reasoning": False,
        },
        "scope": {
            "allow": sorted(policy.allow),
            "deny": sorted(policy.deny),
            "tables": None,
            "query": policy.may("query"),
        },
        "reply_tokens": ask.reply_tokens,
        "window": ask.window or None,
    }
