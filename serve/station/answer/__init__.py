"""``answer`` on the Station: the scoped sweep or walk, and the model bound to a forest.

``bindings`` stores each forest's model, ``model`` speaks the OpenAI-compatible chat
completions API, ``ask`` settles the arguments, ``sweep`` is harvest plus one model
call, ``walk`` lets the model drive the read calls, ``cache`` is the answer store and
``trace`` measures every step (and gives Station harvest its trace too).
"""

from __future__ import annotations

from typing import Any

from monkeyllm.errors import SchemaError

from . import bindings
from .trace import trace_harvest

__all__ = ["run", "trace_harvest"]


def run(station: Any, who: Any, forest: str, args: dict[str, Any]) -> dict[str, Any]:
    """One ``answer`` call as ``who`` sees the forest (the capability is checked)."""
    from . import sweep, walk
    from .ask import settle

    binding = bindings.get(station.store, forest)
    if binding is None:
        raise SchemaError(
            f"answer: no model is bound to the forest {forest!r}",
            hint=f"The operator binds one: vine station bind {forest} "
            "--root DIR --endpoint URL --model NAME.",
        )
    ask = settle(args, binding)
    _, vine = station.forests.get(forest)
    if ask.hops is not None:
        out = walk.run(station, who, forest, ask, binding, vine.root)
    else:
        out = sweep.run(station, who, forest, ask, binding, vine.root)
    evidence = out.get("evidence")
    if isinstance(evidence, list) and evidence and out.get("answer"):
        # What an answer stood on is a successful hunt: it climbs the rankings
        # (served from the store or fresh alike).
        vine.reinforce(evidence)
    return out
