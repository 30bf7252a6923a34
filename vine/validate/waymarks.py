"""The checks of waymarks: the ``moved_from`` addresses a transplant leaves behind."""

from __future__ import annotations

from ..indexing import clean_target
from .model import ERROR, NodeFile, ValidationRun


def check_waymarks(run: ValidationRun) -> None:
    """A waymark names an id that is free (no live node, not the node itself), one
    node claims it, and following waymarks never comes back where it started."""
    claims: dict[str, list[NodeFile]] = {}
    for f in run.files.values():
        if f.node is None or "moved_from" not in f.node.meta:
            continue
        raw = f.node.meta["moved_from"]
        line = f.key_line("moved_from")
        if not isinstance(raw, list) or not all(isinstance(v, str) and v.strip() for v in raw):
            run.add(
                f,
                ERROR,
                "frontmatter.invalid",
                "moved_from: a list of the ids this node moved from is required",
                "Only transplant writes moved_from; restore it from git history.",
                line=line,
            )
            continue
        for old in raw:
            target = clean_target(old) or old
            if target == f.id:
                run.add(
                    f,
                    ERROR,
                    "waymark.loop",
                    f"moved_from names the node itself ({old!r})",
                    f"Remove {old!r} from moved_from.",
                    line=line,
                )
            elif target in run.files:
                run.add(
                    f,
                    ERROR,
                    "waymark.live",
                    f"moved_from names {target!r}, which is a live node: reads of it "
                    "cannot lead here",
                    f"Remove {target!r} from moved_from, or prune or transplant the "
                    f"node at {target!r}.",
                    line=line,
                )
            claims.setdefault(target, []).append(f)
    for old, holders in sorted(claims.items()):
        if len(holders) > 1:
            names = ", ".join(sorted(h.id for h in holders))
            for f in holders:
                run.add(
                    f,
                    ERROR,
                    "waymark.ambiguous",
                    f"{old!r} is the old address of several nodes ({names})",
                    "Keep it in the moved_from of the node it really moved to.",
                    line=f.key_line("moved_from"),
                )
    _check_loops(run, {old: holders[0].id for old, holders in claims.items()})


def _check_loops(run: ValidationRun, moves: dict[str, str]) -> None:
    """Report each cycle of waymarks once, on the node where it is entered."""
    reported: set[str] = set()
    for start in sorted(moves):
        chain = [start]
        at = moves[start]
        while at in moves and at not in chain:
            chain.append(at)
            at = moves[at]
        if at != start or start in reported or moves[start] == start:
            continue  # no cycle, one reported already, or a node naming itself
        reported.update(chain)
        f = run.files.get(moves[start])
        if f is not None:
            run.add(
                f,
                ERROR,
                "waymark.loop",
                "waymarks form a loop: " + " -> ".join([*chain, start]),
                "Remove the old addresses that lead back, so every waymark ends at a live node.",
                line=f.key_line("moved_from"),
            )
