"""``history``: the commits that changed a node, newest first, across its moves.

The moves are the ones its waymarks record (``moved_from``, written by transplant):
``git log`` runs over the node's path and every path it had. A file renamed by hand
(``git mv``) leaves no waymark; its history starts at the rename, and
``git log --follow`` shows the rest.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from typing import Any

from .. import budget
from ..errors import SchemaError
from ..forest import Forest
from ..gitops import Repository
from ..visibility import Visibility

TRAILER = "station-principal"
# The subject's prefix before "(" (or ":"): plant, graft, tend, prune, transplant, init...
_ACTION = re.compile(r"^([A-Za-z][\w-]*)(?=[(:])")
_RECORD, _FIELD = "\x1e", "\x1f"
_FORMAT = (
    f"--format={_RECORD}%H{_FIELD}%aI{_FIELD}%s{_FIELD}"
    f"%(trailers:key={TRAILER},valueonly,separator=%x1d){_FIELD}"
)


def action_of(subject: str) -> str:
    """What a commit did, from its subject: the word before ``(`` or ``:`` when the
    subject follows the format's convention, else the whole subject."""
    m = _ACTION.match(subject)
    return m.group(1) if m else subject


def history(
    forest: Forest, repository: Callable[[], Repository], raw: Any, limit: int, seen: Visibility
) -> dict[str, Any]:
    """The node's commits (``git log`` over its path and every path it moved from)."""
    row = forest.resolve(raw)
    node_id = row["id"]
    limit = min(max(limit, 1), budget.HISTORY_LIMIT_MAX)
    if not (forest.root / ".git").exists():
        # A forest owns its repository; git would otherwise answer for an outer one.
        repository().repo  # noqa: B018 - raises the engine's E_SCHEMA saying so
    node = forest.read(node_id)
    olds = node.meta.get("moved_from")
    olds = [olds] if isinstance(olds, str) else olds if isinstance(olds, list) else []
    paths = [node_id + ".md", *[f"{o}.md" for o in olds if isinstance(o, str) and o]]
    args = ["git", "log", "--no-show-signature", _FORMAT, "-n", str(limit + 1)]
    if seen.restricted:
        # Every file each commit touched, not only this node's: a subject may name any.
        args += ["--name-only", "--full-diff"]
    # The node's moves are its waymarks, so git is asked for those paths rather than
    # to guess renames (--follow costs a rename search at every commit, and cannot
    # list every file a commit touched).
    args += ["--", *paths]
    done = subprocess.run(
        args,
        cwd=forest.root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
    )
    if done.returncode != 0:
        raise SchemaError(
            f"history: git could not read the history of {node_id}",
            hint=(done.stderr.strip().splitlines() or ["git log failed"])[0],
        )
    entries = [_entry(record, seen) for record in done.stdout.split(_RECORD)[1:]]
    truncated = len(entries) > limit
    out: dict[str, Any] = {"id": node_id, "entries": entries[:limit], "truncated": truncated}
    if budget.shrink_list(out, "entries", budget.HISTORY):
        out["truncated"] = True
    forest.read_deposit([node_id])
    return out


def _entry(record: str, seen: Visibility) -> dict[str, Any]:
    sha, at, subject, trailers, files = (record.split(_FIELD) + [""] * 5)[:5]
    entry: dict[str, Any] = {
        "commit": sha,
        "at": at,
        "action": action_of(subject),
        "message": subject,
    }
    if seen.restricted:
        touched = [f[:-3] for f in files.split("\n") if f.endswith(".md")]
        if any(not seen.sees(f) for f in touched):
            # The subject may name a node, or a count of nodes, the caller cannot see.
            entry["message"] = f"{entry['action']}(…)" if entry["action"] != subject else "…"
    by = [v.strip() for v in trailers.split("\x1d") if v.strip()]
    if by:
        entry["by"] = by[-1]
    return entry
