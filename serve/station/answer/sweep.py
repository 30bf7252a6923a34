"""The sweep: the scoped harvest, then one call to the forest's model, which answers
from that bundle only and cites the node ids it stands on."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from monkeyllm.errors import is_error

from . import cache, model, trace
from .ask import Ask, cache_parts
from .bindings import Binding

_CITE = re.compile(r"\[([^\[\]\s]+)\]")

SYSTEM = """You answer questions from a knowledge forest, using only the evidence given \
to you as a JSON bundle of harvest results (each with an id, title, summary, matches \
and content).
Rules:
- Answer only from the evidence. Never use outside knowledge, never guess.
- Cite the node ids you rely on in square brackets, exactly as written, like \
[sales/exchange-policy].
- When the evidence does not hold the answer, say plainly that you do not know from \
this forest.
- A dataset's rows are not in the bundle, only its prose: do not compute totals or \
counts from nearby text; say the figure needs a query of the dataset.
- A media node (an image, audio or video) is known only by its text; describe nothing \
beyond what its text says.
- Be direct and stay under {reply_tokens} tokens."""


def messages(question: str, bundle: dict[str, Any], reply_tokens: int) -> list[dict[str, str]]:
    """The system rules and the user turn carrying the question and the bundle."""
    shown = {
        key: bundle[key] for key in ("query", "terms", "results", "truncated") if key in bundle
    }
    return [
        {"role": "system", "content": SYSTEM.format(reply_tokens=reply_tokens)},
        {
            "role": "user",
            "content": f"Question: {question}\n\nEvidence (JSON):\n"
            + json.dumps(shown, ensure_ascii=False),
        },
    ]


def cited(text: str, bundle: dict[str, Any]) -> list[str]:
    """The ids the answer cites that are in the bundle, in citation order; without any,
    every result that carries content."""
    ids = [r["id"] for r in bundle.get("results", [])]
    found = [i for i in dict.fromkeys(m.strip() for m in _CITE.findall(text)) if i in ids]
    return found or [r["id"] for r in bundle.get("results", []) if r.get("content")]


def sources(bundle: dict[str, Any], evidence: list[str]) -> list[dict[str, Any]]:
    """id, title, summary, type and trail of each piece of evidence."""
    by_id = {r["id"]: r for r in bundle.get("results", [])}
    out = []
    for node_id in evidence:
        r = by_id.get(node_id)
        if r is None:
            continue
        src = {
            "id": node_id,
            "title": r.get("title"),
            "summary": r.get("summary"),
            "type": r.get("type"),
        }
        if r.get("trail"):
            src["trail"] = r["trail"]
        out.append(src)
    return out


def run(
    station: Any, who: Any, forest: str, ask: Ask, binding: Binding, root: Any
) -> dict[str, Any]:
    """Harvest, floor, store, model: the sweep's result, or an envelope."""
    started = time.perf_counter()
    bundle, steps, retrieval_ms = trace.harvest(station, who, forest, ask.harvest_args())
    if is_error(bundle):
        return bundle
    if ask.min_evidence:
        count = sum(
            1
            for r in bundle.get("results", [])
            if r.get("content") and r.get("score", 0) >= ask.min_score
        )
        if count < ask.min_evidence:
            out: dict[str, Any] = {
                "answer": None,
                "reason": "insufficient_evidence",
                "evidence_count": count,
                "min_evidence": ask.min_evidence,
            }
            if ask.min_score:
                out["min_score"] = ask.min_score
            out.update(harvest=bundle, trace=trace.build(steps, retrieval_ms, started))
            return out
    entry = cache.key(cache_parts(ask, binding, who.policy))
    reading = cache.fingerprint(bundle)
    with cache.AnswerStore(root) as store:
        if ask.cache:
            hit = store.get(entry, reading)
            if hit is not None:
                return {
                    **hit,
                    "harvest": bundle,
                    "cached": True,
                    "trace": trace.build(steps, retrieval_ms, started),
                }
        reply = model.chat(binding, messages(ask.question, bundle, ask.max_tokens), ask.max_tokens)
        usage = {"prompt": reply.prompt, "completion": reply.completion, "calls": 1}
        evidence = cited(reply.text, bundle)
        out = {
            "answer": reply.text.strip(),
            "model": binding.model,
            "model_ms": reply.ms,
            "usage": usage,
            "evidence": evidence,
            "sources": sources(bundle, evidence),
            "reply_tokens": ask.max_tokens,
        }
        if reply.finish_reason:
            out["finish_reason"] = reply.finish_reason
        if reply.finish_reason == "length":
            out["truncated"] = True
        store.put(entry, reading, out)
    steps.append(trace.model_step(reply.ms, binding.model))
    return {
        **out,
        "harvest": bundle,
        "trace": trace.build(steps, retrieval_ms, started),
        "cost": trace.cost(binding, usage),
    }
