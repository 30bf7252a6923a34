"""The five calls that reorganize and explain a forest: ``prune``, ``transplant``,
``history``, ``calendar`` and ``coverage``.

Each is a :class:`~monkeyllm.Vine` method (registered in its class body, ``self`` a
Vine); its work lives in ``writes/`` and ``reads/``, imported on first use.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from . import budget
from .argtypes import DateBound, DateField, Id, NewId
from .limits import Range

Granularity = Literal["day", "week", "month", "year"]
HistoryLimit = Annotated[int, Range(1, budget.HISTORY_LIMIT_MAX)]
CalendarLimit = Annotated[int, Range(1, budget.CALENDAR_LIMIT_MAX)]


def history(self: Any, id: Id, limit: HistoryLimit = 20) -> dict[str, Any]:
    """The commits that changed a node, newest first, following its moves.

    Reach for it to learn who changed a node and when, or what a write did. Each
    entry has the commit sha, when (ISO 8601 with the time of day), the action
    (plant, graft, tend, prune, transplant, ingest, init, ...), the commit's
    subject line, and by (the principal a Station wrote for) when recorded. It
    lists what happened and serves no old bodies. An id that moved answers E_MOVED
    with moved_to; a pruned one E_NOT_FOUND. Within 800 tokens: whole entries drop
    from the tail and truncated is set (also when older commits exist).

    Args:
        id: The node.
        limit: How many commits at most.
    """
    from .reads.history import history as run

    return run(self._forest, self._repository, id, limit, self._visibility())


def calendar(
    self: Any,
    scope: str | None = None,
    date_field: DateField = "created",
    granularity: Granularity = "month",
    since: DateBound | None = None,
    until: DateBound | None = None,
    limit: CalendarLimit = 24,
) -> dict[str, Any]:
    """Which periods hold nodes, and how many, from the catalog alone (no file opened).

    Reach for it before a windowed read, to see where the dates are: each bucket's
    since and until are exactly what locate, sniff, scan and harvest take. Buckets
    are newest first and empty periods are left out; a week is ISO 8601
    (2026-W34). range gives the first and last date and how many nodes are dated;
    undated counts those without one. Within 800 tokens: buckets drop from the far
    end and truncated is set (also when more periods exist than limit).

    Args:
        scope: A branch (its whole subtree); default the whole forest.
        date_field: The date to group by: created or updated.
        granularity: day, week, month or year.
        since: Only dates from here, inclusive.
        until: Only dates up to here, inclusive.
        limit: How many periods at most.
    """
    from .reads.calendar import calendar as run
    from .windows import window

    return run(
        self._forest,
        scope,
        granularity,
        window(since, until, date_field),
        limit,
        self._visibility(),
    )


def coverage(
    self: Any, scope: str | None = None, date_field: DateField = "created"
) -> dict[str, Any]:
    """What this forest holds at all, in one cheap call, before any search.

    Reach for it first on an unfamiliar forest: its top regions (the branches under
    the root, or under scope) with their node and branch counts, first and last
    dates and the origin their nodes share (a prefix scan's origin_prefix filter
    takes as it is), then totals: nodes, types, sources, undated, and the system
    nodes (_meta). Every figure is one SQL statement over the catalog; it opens no
    file and deposits no heat. Within 800 tokens: regions drop from the tail and
    truncated is set; the totals never drop.

    Args:
        scope: A branch whose sub-branches are the regions; default the root.
        date_field: The date first and last read: created or updated.
    """
    from .reads.coverage import coverage as run

    return run(self._forest, scope, date_field, self._visibility())


def prune(self: Any, id: Id, force: bool = False, dry_run: bool = False) -> dict[str, Any]:
    """Remove one node in one commit, "prune(<id>)"; git history keeps it.

    Reach for it when a node was wrong or is no longer wanted. Its entry leaves the
    parent index (and any other index listing it), and a local payload (a dataset's
    .db, an _assets/ file) moves to _derived/graveyard/<id>/, never deleted. A node
    other nodes link to answers E_ANCHORED naming the links (anchors, at most 20, and
    anchor_count); force=true removes it anyway and drops exactly those links in the
    same commit. A branch is pruned only once it is empty; the root index and _meta/*
    never. A pruned id is free again.

    Args:
        id: The node to remove.
        force: Also drop the links other nodes hold to it.
        dry_run: Check everything and say what would go; write nothing.
    """
    from .writes.prune import prune as run

    with self.writing() as ctx:
        return run(ctx, id, force, dry_run)


def transplant(self: Any, id: Id, new_id: NewId, dry_run: bool = False) -> dict[str, Any]:
    """Move (rename) one leaf in one commit, "transplant(<id> -> <new_id>)".

    Reach for it when a node sits under the wrong branch or its id is wrong. The file
    keeps everything (created included) and git follows the rename; a local payload
    moves beside it; both parent indexes are updated; every backlink is rewritten in
    the same commit, frontmatter links and body [[wikilinks]] alike. The old id stays
    as a waymark: moved_from and an alias, so locate still finds the old name and a
    read of it answers E_MOVED with moved_to. new_id obeys what plant requires: its
    parent branch exists and the id is free. Branches, the root and _meta/* do not
    move.

    Args:
        id: The leaf to move.
        new_id: Where it goes, e.g. "sales/policies/exchange-policy".
        dry_run: Check everything and say what would be rewritten; write nothing.
    """
    from .writes.transplant import transplant as run

    with self.writing() as ctx:
        return run(ctx, id, new_id, dry_run)
