"""The write calls (plant, graft, tend, prune, transplant), init, and the transaction
they share."""

from __future__ import annotations

from typing import Any

# The write journal under ``_derived/`` (see :mod:`monkeyllm.writes.transaction`); named
# here so that opening a forest can look for one without loading the write machinery.
JOURNAL = "journal.json"

# The format's ``source`` for what a person wrote themselves (``plant`` defaults to
# ``agent``; ingest writes ``ingest``).
MANUAL = "manual"


def authored(call: str, args: dict[str, Any], source: str = MANUAL) -> dict[str, Any]:
    """``args`` of ``call`` with ``source`` recorded on every node it plants that does
    not name its own: a surface a person writes through (the command line, the terminal
    browser) passes its writes through this, so they say ``source: manual``."""
    if call != "plant" or not isinstance(args, dict):
        return args
    node = args.get("node")
    if isinstance(node, dict) and "source" not in node:
        return {**args, "node": {**node, "source": source}}
    if isinstance(node, list):
        return {
            **args,
            "node": [
                {**n, "source": source} if isinstance(n, dict) and "source" not in n else n
                for n in node
            ],
        }
    return args
