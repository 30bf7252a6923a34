"""``history``: the commits that changed a node, newest first, across its moves.

The moves are the ones its waymarks record (``moved_from``, written by transplant):
``git log`` runs over the node's path and every path it had. A file renamed by hand
(``git mv``, or a rename in another tool) leaves no waymark: when the oldest commit found
added the file and is not one of the engine's own (a plant, an ingest), git's rename
detection is asked about that one commit, and the log goes on over the path the file
had before it, up to :data:`RENAMES` such renames.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from typing import Any

from .. import budget
from ..errors import FrontmatterError, SchemaError
from ..forest import Forest
from ..gitops import Repository
from ..ids import normalize
from ..visibility import Visibility

TRAILER = "station-principal"
# The subject's prefix before "(" (or ":"): plant, graft, tend, prune, transplant, init...
_ACTION = re.compile(r"^([A-Za-z][\w-]*)(?=[(:])")
_RECORD, _FIELD = "\x1e", "\x1f"
RENAMES = 8  # hand renames followed back, at most
# Commits of the engine's own that add a file it did not have before under another
# name (a transplant's old path is a waymark, followed already).
_CREATES = frozenset({"plant", "ingest", "init", "transplant"})
_FORMAT = (
    f"--format={_RECORD}%H{_FIELD}%aI{_FIELD}%s{_FIELD}%P{_FIELD}"
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
    """The node's commits (``git log`` over its path and every path it moved from).

    A file that is not a well-formed node (its frontmatter broken) has a history all
    the same, which is how one learns what broke it: its own path's, with a hint.
    """
    broken = None
    try:
        node_id = forest.resolve(raw)["id"]
    except FrontmatterError as err:
        node_id, broken = normalize(raw), err
    limit = min(max(limit, 1), budget.HISTORY_LIMIT_MAX)
    if not (forest.root / ".git").exists():
        # A forest owns its repository; git would otherwise answer for an outer one.
        repository().repo  # noqa: B018 - raises the engine's E_SCHEMA saying so
    olds = None if broken else forest.read(node_id).meta.get("moved_from")
    olds = [olds] if isinstance(olds, str) else olds if isinstance(olds, list) else []
    paths = [node_id + ".md", *[f"{o}.md" for o in olds if isinstance(o, str) and o]]
    records = _log(forest, node_id, paths, limit + 1, seen.restricted, None)
    for _ in range(RENAMES):
        if len(records) > limit or not records:
            break
        before = _renamed_from(forest, records[-1], paths)
        if before is None:
            break
        paths = [before]
        since = records[-1].split(_FIELD, 1)[0]
        records += _log(forest, node_id, paths, limit + 1 - len(records), seen.restricted, since)
    entries = [_entry(record, seen) for record in records]
    truncated = len(entries) > limit
    out: dict[str, Any] = {"id": node_id, "entries": entries[:limit], "truncated": truncated}
    if broken is not None:
        out["hint"] = f"{broken.message}. {broken.hint}"
    if budget.shrink_list(out, "entries", budget.HISTORY):
        out["truncated"] = True
    if broken is None:
        forest.read_deposit([node_id])
    return out


def _entry(record: str, seen: Visibility) -> dict[str, Any]:
    sha, at, subject, _parents, trailers, files = (record.split(_FIELD) + [""] * 6)[:6]
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


def _log(
    forest: Forest, node_id: str, paths: list[str], count: int, restricted: bool, before: str | None
) -> list[str]:
    """The raw records of ``git log`` over ``paths`` (``count`` at most; from the parent
    of ``before`` when given), each with the status of the files it touched: the
    ``paths`` only, or (``restricted``) every file of the commit."""
    args = [
        "git",
        "-c",
        "core.quotePath=false",
        "log",
        "--no-show-signature",
        "--no-renames",
        _FORMAT,
        "-n",
        str(count),
    ]
    if restricted:
        # Every file each commit touched, not only this node's: a subject may name any.
        args += ["--name-only", "--full-diff"]
    if before is not None:
        args.append(f"{before}^")
    # The node's moves are its waymarks, so git is asked for those paths rather than
    # to guess renames at every commit (--follow costs a rename search at each one, and
    # cannot list every file a commit touched); a hand rename is looked for only at the
    # commit that added the file (_renamed_from).
    args += ["--", *paths]
    done = _git(forest, args)
    if done.returncode != 0:
        raise SchemaError(
            f"history: git could not read the history of {node_id}",
            hint=(done.stderr.strip().splitlines() or ["git log failed"])[0],
        )
    return done.stdout.split(_RECORD)[1:]


def _git(forest: Forest, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=forest.root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
    )


def _renamed_from(forest: Forest, record: str, paths: list[str]) -> str | None:
    """The path a file had before the commit of ``record``, when that commit added one
    of ``paths`` by renaming another file; None otherwise. Only a commit with a parent
    that is not one of the engine's own that add files can be such a rename, so only
    that one costs git's rename detection."""
    sha, _, subject, parents = (record.split(_FIELD) + [""] * 4)[:4]
    if not parents.strip() or action_of(subject) in _CREATES:
        return None
    done = _git(
        forest,
        ["git", "-c", "core.quotePath=false", "diff-tree", "--no-commit-id", "-r", "-M"]
        + ["--name-status", sha],
    )
    if done.returncode != 0:
        return None
    for line in done.stdout.splitlines():
        status, *names = line.split("\t")
        if status.startswith("R") and len(names) == 2 and names[1] in paths:
            return names[0] if names[0].endswith(".md") else None
    return None
