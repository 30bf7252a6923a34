"""``Vine``: the facade every surface calls. It opens a forest, takes the writer
lock when asked to, keeps the catalog true to the files, and runs the calls."""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from . import budget, lifecycle, registry
from .argtypes import (
    DateBound,
    DateField,
    Direction,
    Edit,
    HarvestK,
    Hybrid,
    Id,
    Ids,
    LocateInclude,
    LocateK,
    LookField,
    Nodes,
    PageCursor,
    Query,
    Question,
    ScanField,
    ScanFilter,
    ScanLimit,
    Scope,
    Sections,
    SniffK,
    Terms,
    Text,
)
from .canopy.methods import CanopyMethods, embedder_of
from .errors import SchemaError, VineError, refused_write
from .limits import Apart, MaxLen
from .plumbing import Gate, Plumbing, closed
from .registry import CALLS, Call, check_args, internal
from .traces import TraceLog

if TYPE_CHECKING:
    from .canopy.embedders import EmbedderConfig
    from .gitops import Repository

# Importing the engine stays cheap (a one-shot command pays it every time): the
# forest, each call and the write machinery are imported where they are first used.


class Vine(CanopyMethods, Plumbing):
    """An open forest.

    ``Vine(path)`` opens the forest at ``path`` for writing, taking its
    ``.vine.lock`` for as long as it stays open (another process's writes get
    ``E_LOCKED``; a lock left by a dead process is reclaimed). With
    ``lock="per-write"`` it takes the lock inside each write instead and lets go at
    once, so it shares the forest with other writers: what a long-lived process (a
    server, a notebook, a bot) should use. A write that finds another write in
    progress waits its turn (``lock_timeout``). ``writable=False`` never locks, and
    any number of read-only Vines may be open beside writers. Opening builds the
    catalog when it is missing; every call first brings it up to date with the files,
    so edits made outside the engine (even while no process had the forest open) are
    noticed by the next call.

    Every call returns a dict: the result, or the error envelope
    ``{"error": {"code", "message", "hint"}}``. Use it as a context manager,
    or call :meth:`close`, to release the lock.

    Opening raises :class:`~monkeyllm.VineError` instead: ``E_NOT_FOUND`` when
    ``path`` is not a forest's root (no ``_index.md``, or a branch's folder inside a
    forest), ``E_SCHEMA`` for an option of the wrong type or range, ``E_LOCKED`` when
    another process holds the lock past ``lock_timeout``.

    Args:
        path: The forest's root folder (it holds ``_index.md``).
        writable: Allow writes (plant, graft, tend, prune and transplant).
        alpha: Weight of heat in ranking, a number >= 0; 0 turns the pheromone off.
        half_life_days: Days for heat to halve (> 0).
        watch: Use inotify (where available) to notice outside edits; without
            it each call compares file stats.
        embedder: The query embedder for hybrid ranking (an
            :class:`~monkeyllm.canopy.EmbedderConfig` or its dict form); default the
            environment's (``MONKEYLLM_EMBED_URL``...), else the one the forest's
            Canopy was built with.
        lock: ``"while-open"`` (the default) holds the writer lock from open to close;
            ``"per-write"`` takes it for each write alone.
        lock_timeout: Seconds a write (or a ``while-open`` open) waits while another
            process is writing, before it answers ``E_LOCKED``; default
            ``$VINE_LOCK_TIMEOUT``, else 5. A process that holds the lock while open
            is not waited for.
        on_lock_wait: Called with the holder's lock card when a write has waited half a
            second (to tell a person it is waiting).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        writable: bool = True,
        alpha: float = 0.3,
        *,
        half_life_days: float = 30.0,
        watch: bool = True,
        embedder: EmbedderConfig | dict[str, Any] | None = None,
        lock: Literal["while-open", "per-write"] = "while-open",
        lock_timeout: float | None = None,
        on_lock_wait: Callable[[dict[str, object]], None] | None = None,
    ) -> None:
        from .opening import check_options, forest_root

        # Every argument is checked before the writer lock is taken.
        root = forest_root(path)
        check_options(writable, alpha, half_life_days, watch, on_lock_wait)
        bound = embedder_of(embedder)
        self.root = root
        self.writable = writable
        self.alpha = float(alpha)
        self.session = os.urandom(6).hex()
        from .forest import Forest
        from .writepath import WritePath

        self._path = WritePath(root, lock, lock_timeout, on_lock_wait)
        if self.writable and not self._path.per_write:
            self._path.take_for_life()
        try:
            self._forest = Forest(
                root, alpha=self.alpha, half_life_days=half_life_days, use_inotify=watch
            )
            self._forest.catalog.ensure_built()
        except BaseException:
            self._path.close()
            raise
        self._trace = TraceLog(root, self.session)
        if bound is not None:
            self._forest.embedder = bound
        self._closed = False
        self._gate = Gate()
        self._local = threading.local()
        self._repo: Repository | None = None
        if self.writable:
            self._path.settle_at_open(self._forest, self._repository)

    @property
    def lock(self) -> str:
        """How this Vine holds the writer lock: ``"while-open"`` or ``"per-write"``."""
        return self._path.hold

    # -- lifecycle -----------------------------------------------------------------

    def close(self) -> None:
        """Release the lock and every connection, once the calls other threads are
        running have ended; every call after it answers ``E_SCHEMA``. Safe to call
        twice."""
        if not self._gate.close():
            return
        self._closed = True
        self._trace.close()
        if self._repo is not None:
            self._repo.close()
        self._forest.close()
        self._path.close()

    def __enter__(self) -> Vine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = f"writable, lock {self.lock}" if self.writable else "read-only"
        return f"Vine({str(self.root)!r}, {mode})"

    # -- plumbing ------------------------------------------------------------------

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run a call by name with a JSON-style argument object (as MCP and REST do)."""
        spec = CALLS.get(name) if isinstance(name, str) else None
        if spec is None:
            return SchemaError(
                f"unknown call: {name!r}", hint="Calls: " + ", ".join(sorted(CALLS)) + "."
            ).envelope()
        try:
            clean = check_args(spec, {} if args is None else args)
        except VineError as exc:
            return exc.envelope()
        return self._run(spec, clean)

    def _run(self, spec: Call, args: dict[str, Any]) -> dict[str, Any]:
        if not self._gate.enter():
            return closed().envelope()
        try:
            return self._counted(spec, args)
        finally:
            self._gate.leave()

    def _counted(self, spec: Call, args: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            if spec.read_only:
                # A write brings the catalog up to date once it holds the lock.
                self._forest.catalog.sync()
            result = spec.method(self, **args)
        except VineError as exc:
            result = exc.envelope()
        except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback
            # A file system refusing a write (the forest's files, or the catalog a read
            # keeps fresh) is E_READONLY; anything else is a bug.
            refused = refused_write(exc)
            if (
                refused
                and spec.read_only
                and isinstance(exc, OSError)
                and exc.errno in (errno.EACCES, errno.EPERM)
            ):
                refused = None  # a read that may not open a file refused no write
            result = refused.envelope() if refused else internal(spec.name, exc)
        self._trace.record(spec, args, result, started)
        return result

    # -- the seven reads (lifecycle reads above, composites below) ------------------

    @registry.call("read", budget.LOCATE)
    def locate(
        self,
        query: Query,
        k: LocateK = 5,
        scope: Scope = "all",
        type_filter: str | None = None,
        include: list[LocateInclude] | None = None,
        since: DateBound | None = None,
        until: DateBound | None = None,
        date_field: DateField = "created",
        hybrid: Hybrid = "auto",
    ) -> dict[str, Any]:
        """Turn a question into ranked entry points, searching curated metadata only.

        Reach for it when you have a question and no id. It searches titles,
        aliases, tags, summaries and section headers (never bodies: that is sniff) of
        leaves and branches, in any word form (deadlines finds deadline, prazos finds
        prazo; the exact form ranks first) and across English and Portuguese (prazo
        finds deadline, below the question's own language); function words weigh
        nothing, and a node another supersedes says so (superseded_by) and ranks below
        it when it matches about as well. scope="branches" lands on whole regions to
        navigate down from.
        Score is strength * (1 + alpha * heat); with the forest's Canopy (its vector
        index) the strength fuses the lexical and vector ranks, so a question worded
        unlike the node (a paraphrase, the other language) finds it too, and hybrid
        says whether that ran. truncated means more entry points matched than k: narrow
        the query rather than concluding the forest is small.

        Args:
            query: The question or keywords, in English or Portuguese; no syntax to
                learn.
            k: How many results to return.
            scope: all, branches, or notes: every leaf, whatever its type ("bananas"
                is accepted too).
            type_filter: Only nodes of this type (note, dataset, entity, ...).
            include: Extra fields per result; ["outline"] adds section headers.
            since: Window start, inclusive.
            until: Window end, inclusive.
            date_field: The date the window applies to: created or updated.
            hybrid: "auto" fuses the vector ranking when the forest has a Canopy and a
                matching embedder; true asks for it, false ranks lexically only.
        """
        from .reads.locate import locate
        from .windows import window

        return locate(
            self._forest,
            query,
            k,
            scope,
            type_filter,
            include,
            window(since, until, date_field),
            hybrid,
        )

    @registry.call("read", budget.LOOK)
    def look(
        self,
        id: Id | Annotated[Ids, MaxLen(budget.LOOK_BATCH_MAX)],
        fields: list[LookField] | None = None,
    ) -> dict[str, Any]:
        """A digest of one node: what it is, what it links to, what its body costs.

        Reach for it after every hop, before paying for pick: summary, tags,
        edges out and in (hottest first, 12 each, stats.degree is the real total),
        the outline of a leaf or the children of a branch, and for a dataset its
        query manual, sample rows and notes. stats.body_tokens prices a pick;
        revision (pick answers it too) is what graft's if_revision takes. Within 500
        tokens; a list of up to 10 ids returns a batch within 2000.

        Args:
            id: A node id, or a list of ids.
            fields: Keep only these keys (plus id), e.g. ["summary"] for a cheap sweep.
        """
        from .reads.look import look

        return look(self._forest, id, fields)

    @registry.call("read", budget.MOVE)
    def move(self, id: Id, rel: Text | None = None, direction: Direction = "out") -> dict[str, Any]:
        """Neighbours of a node along typed edges, or the children of a branch.

        Reach for it when a digest showed an edge worth following, or for a
        region's contents (rel="children"). Incoming edges appear under their
        inverse name. No filter and no k: on a hub it truncates, and
        scan(parent_id, filter, fields) is the better call there.

        Args:
            id: The node to move from.
            rel: Only this rel (or its inverse); "children" lists a branch's children.
            direction: out, in or both.
        """
        from .reads.move import move

        return move(self._forest, id, rel, direction)

    @registry.call(
        "read",
        budget.PICK,
        apart=(
            Apart(
                "after",
                "section",
                "{after} and {section} cannot be combined: use {section} to "
                "read one section, or {after} to page",
            ),
            Apart("after", "id", "{after} cannot be used with a list of ids", list),
        ),
    )
    def pick(
        self,
        id: Id | Annotated[Ids, MaxLen(budget.PICK_BATCH_MAX)],
        section: Sections | None = None,
        after: PageCursor | None = None,
    ) -> dict[str, Any]:
        """The markdown body of a node, or one named section of it.

        Reach for it last, once a digest or a sniff snippet said this is the
        node (and ideally which section). A body over 4000 tokens is never cut:
        you get its outline, body_tokens and a hint to name a section; a section
        read has no cap. after="" reads an over-budget body page by page.

        Args:
            id: A node id, or a list of ids.
            section: A header to read (case-insensitive; a prefix works), or several.
            after: Page cursor: "" for the first page, then the "next" value returned.
        """
        from .reads.pick import pick

        return pick(self._forest, id, section, after)

    @registry.call("read", budget.SCAN)
    def scan(
        self,
        parent_id: Id,
        filter: ScanFilter | None = None,
        fields: list[ScanField] | None = None,
        recursive: bool = False,
        limit: ScanLimit = 50,
        after: str | None = None,
        since: DateBound | None = None,
        until: DateBound | None = None,
        date_field: DateField = "created",
    ) -> dict[str, Any]:
        """A metadata query over a branch, served from the catalog with no file opened.

        Reach for it when you know the region and want a subset by property: the
        datasets updated this quarter, the nodes tagged x, everything below a
        confidence floor. Asking for fewer fields fits more nodes. Hottest first;
        after= pages by id instead.

        Args:
            parent_id: The branch (e.g. "sales" or "sales/_index"; "_index" is the root).
            filter: ANDed keys: tags_any, updated_after, updated_before, created_after,
                created_before, min_confidence, origin_prefix, kind (note: every leaf,
                whatever its type; branch), or a column's value.
            fields: Columns to return (default id, type, summary, body_tokens).
            recursive: The whole subtree instead of direct children.
            limit: At most this many nodes.
            after: Cursor: "" to start paging by id, then the "next" value returned.
            since: Window start, inclusive.
            until: Window end, inclusive.
            date_field: The date the window applies to: created or updated.
        """
        from .reads.scan import scan
        from .windows import window

        return scan(
            self._forest,
            parent_id,
            filter,
            fields,
            recursive,
            limit,
            after,
            window(since, until, date_field),
        )

    @registry.call("read", budget.SNIFF)
    def sniff(
        self,
        terms: Terms,
        scope: Id | None = None,
        k: SniffK = 5,
        type_filter: str | None = None,
        since: DateBound | None = None,
        until: DateBound | None = None,
        date_field: DateField = "created",
    ) -> dict[str, Any]:
        """Literal substring search over node bodies: node, section, line and snippet.

        Reach for it when the question holds something exact nobody would put in a
        summary: an invoice number, an error code, a SKU, a proper name. Case- and
        accent-blind; never reads curated metadata. Ranked by terms hit over terms
        asked, then by how many lines matched, then heat. A match's line is the
        node file's own line (the frontmatter counts), as validate reports it.

        Args:
            terms: One term or several; each a literal substring.
            scope: A branch (its whole subtree) or one node id; default the whole forest.
            k: How many nodes to return.
            type_filter: Only nodes of this type.
            since: Window start, inclusive.
            until: Window end, inclusive.
            date_field: The date the window applies to: created or updated.
        """
        from .reads.sniff import sniff
        from .windows import window

        return sniff(self._forest, terms, scope, k, type_filter, window(since, until, date_field))

    # -- explaining a forest (reads) ------------------------------------------------

    history = registry.call("read", budget.HISTORY)(lifecycle.history)
    calendar = registry.call("read", budget.CALENDAR)(lifecycle.calendar)
    coverage = registry.call("read", budget.COVERAGE)(lifecycle.coverage)

    # -- the writes ----------------------------------------------------------------

    @registry.call("write")
    def plant(self, node: Nodes, if_absent: bool = False, dry_run: bool = False) -> dict[str, Any]:
        """Create a node: its file and its entry in the parent index, in one commit.

        Reach for it when something worth keeping was learned, or a document needs a
        structured twin. A dataset is declared as data (schema and rows): the engine
        creates the SQLite payload, records its hash and appends a query manual.
        Unknown keys pass into the frontmatter.

        Args:
            node: id, type, parent (the branch index id), title, summary, and optionally
                body, tags, aliases, links, confidence, source; for a dataset schema and rows.
                A list of up to 20 nodes (no datasets) is one commit, "plant(batch): N nodes".
            if_absent: When the id exists, answer created=false instead of an error.
            dry_run: Check everything and write nothing.
        """
        from .writes.plant import plant, plant_batch

        with self.writing() as ctx:
            if isinstance(node, list):
                return plant_batch(ctx, node, if_absent, dry_run)
            return plant(ctx, node, if_absent, dry_run)

    @registry.call("write")
    def graft(self, id: Id, patch: Edit) -> dict[str, Any]:
        """Edit a node: frontmatter, links, one section or the whole body, in one commit.

        Reach for it to correct a summary, record a connection, or append what a hunt
        learned. A summary change is carried to every index that lists the node. Adding
        a link that exists is fortification: heat rises, nothing is written. A section or
        body replacement names what it replaced and removed (sections_replaced,
        sections_removed), so subsections dropped with a section are never silent.

        Another writer may edit the node between your read and your graft: give
        if_revision (the revision look and pick answer) and a node changed since
        answers E_CONFLICT with its new revision, writing nothing. The result's
        revision is the node's as written.

        Args:
            id: The node to edit.
            patch: Any of set_frontmatter (title, summary, tags, confidence, aliases,
                origin), add_links, remove_links, append_section {header, body},
                replace_section {header, body}, replace_body; and if_revision.
        """
        from .writes.graft import graft

        with self.writing() as ctx:
            return graft(ctx, id, patch)

    @registry.call("write")
    def tend(self, id: Id, sql: Text) -> dict[str, Any]:
        """Write rows into a dataset: one INSERT, UPDATE ... WHERE or DELETE ... WHERE.

        The only way into a payload. The rows land first; then the node's payload_hash
        and updated are refreshed and only the markdown is committed as
        "tend(<id>): <VERB> <n> row(s)". A statement that changes no row makes no
        commit (commit is null).

        Args:
            id: The dataset node.
            sql: One INSERT, UPDATE with WHERE, or DELETE with WHERE.
        """
        from .writes.tend import tend

        with self.writing() as ctx:
            return tend(ctx, id, sql)

    prune = registry.call("write")(lifecycle.prune)
    transplant = registry.call("write")(lifecycle.transplant)

    @registry.call("read", budget.QUERY)
    def query(self, id: Id, sql: Text) -> dict[str, Any]:
        """Read-only SQL over a dataset's SQLite payload, returned as columns and rows.

        Reach for it when the answer is an aggregate, a filter or a join over rows:
        the numbers live only here. One SELECT (or WITH ... SELECT); LIMIT 200 is
        added when absent; 2 seconds at most. Read the dataset's look first.

        Args:
            id: The dataset node.
            sql: One SQLite SELECT statement.
        """
        from .reads.query import query

        return query(self._forest, id, sql)

    # -- composites ----------------------------------------------------------------

    @registry.call("composite", budget.HARVEST)
    def harvest(
        self,
        query: Question,
        terms: Terms | None = None,
        k: HarvestK = 3,
        since: DateBound | None = None,
        until: DateBound | None = None,
        date_field: DateField = "created",
        include_superseded: bool = False,
        hybrid: Hybrid = "auto",
    ) -> dict[str, Any]:
        """One-shot retrieval, no model: the evidence itself for a question.

        Reach for it when you want material in one round trip and your own model will
        do the reasoning. locate(query, 2k) and a sweep of the bodies for the terms
        (2k, each body ranked by its best line, rarer terms weighing more) are fused
        by reciprocal rank fusion (each credit scaled by its score's share of its
        ranking's best) and the top k kept. A node linked to a hit that holds what the
        hit lacks (question words, the person a "who" asks for, a newer version) joins
        as a result of its own: found_by ["edge"], via {from, rel}. Each result brings
        its matches (rarest term first, other word forms too) and its content: the whole
        body when it is at most 1,200 tokens, else up to 2 matched sections, else the
        outline. A node superseded by a live one gives way to it (superseded_excluded
        says so). With the forest's Canopy the locate leg is hybrid (see locate). To fit
        4,000 tokens the lowest results give up their bodies for their outline, then
        whole tail results drop, and truncated is set. For reasoning between hops, use
        the primitives instead.

        Args:
            query: The question, in any words; searched literally.
            terms: Exact strings for sniff; default: derived from the query (codes
                first, stopwords dropped, at most 8).
            k: How many results (MONKEYLLM_HARVEST_MAX_K raises the most, 5).
            since: Window start, inclusive.
            until: Window end, inclusive.
            date_field: The date the window applies to: created or updated.
            include_superseded: Keep nodes that a live node supersedes.
            hybrid: "auto" fuses the vector ranking into the locate leg when the forest
                has a Canopy and a matching embedder; true asks for it, false does not.
        """
        from .reads.harvest import harvest
        from .windows import window

        return harvest(
            self._forest,
            query,
            terms,
            k,
            window(since, until, date_field),
            include_superseded,
            steps=self._steps(),
            hybrid=hybrid,
        )
