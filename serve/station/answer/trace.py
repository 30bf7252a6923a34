"""Traces and costs: what each step of a composite took, measured, never estimated.

``{steps:[{step, ms, tokens, id?, hop?}..., {step:"model", ms, detail}], retrieval_ms,
total_ms}``. It reports shape only: a step naming a node the key cannot see is left out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from monkeyllm.errors import VineError, is_error

from .. import scope
from .bindings import Binding

Engine = Callable[[str, dict[str, Any]], dict[str, Any]]


def engine_for(station: Any, forest: str, steps: list[dict[str, Any]] | None = None) -> Engine:
    """The engine a scoped call runs on, as ``Station.call`` builds it; with ``steps``,
    harvest records its inner reads there."""

    def engine(call: str, given: dict[str, Any]) -> dict[str, Any]:
        if call == "harvest" and steps is not None:
            return _recorded_harvest(station, forest, given, steps)
        return station.dispatcher.run(call, {**given, "forest": forest}).result

    return engine


def _recorded_harvest(
    station: Any, forest: str, given: dict[str, Any], steps: list[dict[str, Any]]
) -> dict[str, Any]:
    """harvest through the Vine's own call boundary (catalog sync, envelopes, the
    trace file), its inner reads recorded in ``steps``."""
    try:
        _, vine = station.forests.get(forest)
    except VineError as exc:
        return exc.envelope()
    with vine.recording(steps):
        return vine.call("harvest", given)


def harvest(
    station: Any, who: Any, forest: str, args: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    """A scoped harvest, its measured steps and its wall milliseconds. The content
    reads kept are those of the results returned (a scoped harvest over-fetches, and
    a step never names a node the key cannot see); their time stays in the total."""
    steps: list[dict[str, Any]] = []
    _, vine = station.forests.get(forest)
    started = time.perf_counter()
    out = scope.run(who.policy, vine.root, "harvest", args, engine_for(station, forest, steps))
    ms = round((time.perf_counter() - started) * 1000, 2)
    shown = {r.get("id") for r in out.get("results", [])} if not is_error(out) else set()
    seen = [s for s in steps if "id" not in s or s["id"] in shown]
    return out, seen, ms


def build(steps: list[dict[str, Any]], retrieval_ms: float, started: float) -> dict[str, Any]:
    """The trace: the steps, the forest's share and the wall total since ``started``."""
    return {
        "steps": steps,
        "retrieval_ms": round(retrieval_ms, 2),
        "total_ms": round((time.perf_counter() - started) * 1000, 2),
    }


def model_step(ms: float, model: str, hop: int | None = None) -> dict[str, Any]:
    """The model's step in a trace."""
    step: dict[str, Any] = {"step": "model", "ms": ms, "detail": model}
    if hop is not None:
        step["hop"] = hop
    return step


def cost(binding: Binding, usage: dict[str, int]) -> dict[str, Any]:
    """What the provider metered, priced only when the binding has both rates."""
    out: dict[str, Any] = {
        "prompt_tokens": usage["prompt"],
        "completion_tokens": usage["completion"],
        "calls": usage["calls"],
        "priced": binding.priced,
    }
    if binding.priced:
        prompt = usage["prompt"] * float(binding.price_prompt or 0) / 1_000_000
        completion = usage["completion"] * float(binding.price_completion or 0) / 1_000_000
        out.update(
            usd=round(prompt + completion, 8),
            usd_prompt=round(prompt, 8),
            usd_completion=round(completion, 8),
            rates={
                "prompt": binding.price_prompt,
                "completion": binding.price_completion,
                "per": 1_000_000,
            },
        )
    return out


def trace_harvest(station: Any, who: Any, forest: str, args: Any) -> dict[str, Any]:
    """Station harvest with its trace: the scoped result plus ``trace``."""
    started = time.perf_counter()
    out, steps, ms = harvest(station, who, forest, args)
    if is_error(out):
        return out
    return {**out, "trace": build(steps, ms, started)}
