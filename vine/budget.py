"""Token budgets: the deterministic estimate, and every limit in one place.

The estimate is ``ceil(len/4)`` characters over ``json.dumps(obj,
ensure_ascii=False, default=str)`` with default separators. Responses shed
whole items from the tail of their list until they fit, and say so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

# Output budgets, in estimated tokens.
LOCATE = 800
LOOK = 500
LOOK_BATCH = 2000
MOVE = 600
PICK = 4000
PICK_BATCH = 4000
SCAN = 800
SNIFF = 800
QUERY = 2000
HARVEST = 4000
HISTORY = 800
CALENDAR = 800
COVERAGE = 800

# Clips inside responses.
NEIGHBOUR_SUMMARY = 25
NOTES = 200
SUMMARY_MAX = 60
EDGE_CAP = 12

# Call limits.
LOOK_BATCH_MAX = 10
PICK_BATCH_MAX = 5
PICK_SECTIONS_MAX = 10
SCAN_LIMIT_MAX = 50
SNIFF_TERMS_MAX = 8
SNIFF_K_MAX = 20
SNIFF_MATCHES_SHOWN = 3
SNIFF_SNIPPET_CHARS = 100
# harvest echoes its question and terms, so their length counts against its budget.
HARVEST_QUERY_CHARS_MAX = 1000
HARVEST_TERM_CHARS_MAX = 200
# locate's query: longer is a document, not a question (and would cost a second of
# stemming and ranking for nothing).
LOCATE_QUERY_CHARS_MAX = 1000
# An error's message and hint each, clipped: they may quote what the caller sent.
ENVELOPE_TEXT_MAX = 600
HISTORY_LIMIT_MAX = 50
CALENDAR_LIMIT_MAX = 120
QUERY_ROW_LIMIT = 200
QUERY_SECONDS = 2.0
SAMPLE_ROWS = 3


def tokens(text: str) -> int:
    """Estimated tokens of a text: 0 when empty, else ``max(1, ceil(len/4))``."""
    if not text:
        return 0
    return max(1, math.ceil(len(text) / 4))


def dumps(obj: Any) -> str:
    """The serialization every budget is measured on."""
    return json.dumps(obj, ensure_ascii=False, default=str)


def cost(obj: Any) -> int:
    """Estimated tokens of a JSON-serializable payload."""
    return tokens(dumps(obj))


def truncate_text(text: str, n: int) -> str:
    """``text`` unchanged when it fits ``n`` tokens, else its first ``4n`` chars plus ``…``."""
    if tokens(text) <= n:
        return text
    return text[: 4 * n].rstrip() + "…"


def shrink_list(payload: dict[str, Any], key: str, budget: int) -> bool:
    """Pop whole items off the tail of ``payload[key]`` until the payload fits.

    Returns True when anything was dropped. The character count is kept exactly
    (a list serializes as ``[a, b]``), so a long list is serialized once.
    """
    items = payload[key]
    chars = len(dumps(payload))
    if tokens_of_chars(chars) <= budget:
        return False
    while items and tokens_of_chars(chars) > budget:
        last = items.pop()
        chars -= len(dumps(last)) + (2 if items else 0)
    return True


def tokens_of_chars(chars: int) -> int:
    """The estimate for a serialization of ``chars`` characters."""
    return 0 if chars <= 0 else max(1, math.ceil(chars / 4))


def shrink_with_hint(
    payload: dict[str, Any], key: str, limit: int, hint: Callable[[int], str]
) -> bool:
    """Like :func:`shrink_list`, adding ``hint(kept)`` when anything is dropped.

    Room for the hint is reserved first at its longest (the count can only
    shrink), so the response still fits once the real count is written in.
    """
    if cost(payload) <= limit:
        return False
    payload["hint"] = hint(len(payload[key]))
    shrink_list(payload, key, limit)
    payload["hint"] = hint(len(payload[key]))
    payload["truncated"] = True
    return True


def truncation_note(call: str, response: dict[str, Any]) -> str | None:
    """What ``truncated: true`` means in this response of ``call``, as a sentence for a
    person (the meaning the call's own description gives); None for a call without one.

    Truncation is never absence: each note says that what was cut exists.
    """
    from . import hints

    k, after = hints.parameter(call, "k"), hints.parameter(call, "after")
    if isinstance(response.get("nodes"), list) and "dropped" in response:
        return (
            f"whole nodes were dropped to fit the {call} batch's budget: the ids in "
            "dropped exist, ask for them in another call."
        )
    if call == "pick" and response.get("next"):
        return "more of the body follows this page: the next one starts at the cursor below."
    notes = {
        "locate": f"more entry points matched than {k} (or than fit {LOCATE} tokens): "
        "narrow the query rather than concluding the forest is small.",
        "look": f"the digest shed items to fit {LOOK} tokens (cut to fit names which): the "
        "node has more than is shown here.",
        "move": f"more neighbours exist than fit {MOVE} tokens: name a rel, or "
        f"{hints.call('scan', 'parent_id', 'filter')} for a filtered list.",
        "pick": f"the body is over {PICK} tokens, so its outline is shown instead: read one "
        f"section with {hints.option('pick', 'section', hints.Hole('header'))}, or "
        f"page it with {hints.option('pick', 'after', '')}.",
        "scan": f"more nodes matched than the limit (or than fit {SCAN} tokens): total "
        f"counts them all; page with {after} or ask for fewer fields.",
        "sniff": f"more bodies matched than {k} (or than fit {SNIFF} tokens): they exist; "
        f"raise {k} or narrow the scope.",
        "query": f"rows that matched were dropped to fit {QUERY} tokens, not by the "
        "statement: these are not all of them; select fewer columns or aggregate.",
        "harvest": f"whole results were dropped to fit {HARVEST} tokens: the rest exist; "
        f"ask for a smaller {k} or a narrower question.",
    }
    return notes.get(call)
