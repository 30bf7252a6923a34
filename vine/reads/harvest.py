"""``harvest``: one-shot retrieval with no model. ``locate`` and ``sniff`` fused by
reciprocal rank fusion, matches refined by term scarcity, and the evidence itself (a
body that fits, else matched sections, else the outline) in one 4,000-token bundle.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from .. import budget, hints
from ..errors import SchemaError, VineError
from ..forest import Forest, row_list
from ..heat import READ_DEPOSIT
from ..hints import Hole
from ..ids import is_index
from ..nodes import Node
from ..text import fold
from ..windows import Window
from . import features
from .edges import linked
from .locate import locate
from .sniff import Forms, first_hit, matching_lines, snippet
from .sweep import doc_counts, sweep, term_weights, word_forms
from .terms import asked_kinds, asks_for_older, derive_terms, languages, locate_query

RRF_K = 60  # fused = sum of 1 / (RRF_K + rank) over the two rankings
MAX_K_ENV = "MONKEYLLM_HARVEST_MAX_K"
MAX_K_DEFAULT = 5
WHOLE_BODY = 1200  # a body up to this many tokens comes whole
SECTIONS_MAX = 2
MATCHES_MAX = 5
PER_TERM_MATCHES = budget.SNIFF_MATCHES_SHOWN


def max_k() -> int:
    """The largest k, from ``MONKEYLLM_HARVEST_MAX_K`` (default 5)."""
    raw = os.environ.get(MAX_K_ENV)
    if raw is None or raw.strip() == "":
        return MAX_K_DEFAULT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise SchemaError(
            f"{MAX_K_ENV} must be a positive integer, got {raw!r}",
            hint=f"Unset it (the default is {MAX_K_DEFAULT}) or set it to 1 or more.",
        )
    return value


def harvest(
    forest: Forest,
    query: str,
    terms: str | list[str] | None,
    k: int,
    win: Window,
    include_superseded: bool,
    steps: list[dict[str, Any]] | None = None,
    hybrid: Any = "auto",
) -> dict[str, Any]:
    """The fused sweep the module docstring describes.

    ``steps``, when given, receives one ``{step, ms, tokens, id?}`` per inner read as it
    is measured (locate, sniff, then a ``pick`` per result's content); the Station's
    trace is built from it. The result is the same with or without it.
    """
    if not query.strip():
        raise SchemaError(
            "harvest: query is empty", hint="Ask a question, or name the exact terms to find."
        )
    if len(query) > budget.HARVEST_QUERY_CHARS_MAX:
        raise SchemaError(
            f"harvest: query is {len(query)} characters, over {budget.HARVEST_QUERY_CHARS_MAX}",
            hint="Ask a shorter question; pass exact strings as terms.",
        )
    k = min(max(k, 1), max_k())
    on = features.active()
    forms: Forms = {}
    if terms is None:
        wanted = derive_terms(query)
        if on.forms:
            forms = word_forms(forest, wanted, languages(query), translate=on.translations)
    else:
        # Explicit terms are exact strings: no other word forms.
        wanted = [terms] if isinstance(terms, str) else list(terms)
        _check_terms(wanted)
        wanted = _folded(wanted)
    # Each leg ranks the same pool whatever k is, so harvest(k=3) is the first three
    # of harvest(k=5), not a ranking of fewer candidates.
    pool = 2 * max(k, MAX_K_DEFAULT)
    started = time.perf_counter()
    located = locate(forest, query, pool, "all", None, None, win, hybrid, "harvest")
    leg = _weighed(located)
    _record(steps, "locate", started, located)
    started = time.perf_counter()
    seen: dict[str, list[int]] = {}  # each term's index lines, read once
    counts = doc_counts(forest, wanted, forms, seen)
    sniffed = sweep(forest, wanted, counts, pool, win, forms, seen)
    if wanted:
        _record(steps, "sniff", started, sniffed)
    fused = _fuse(forest, leg, sniffed["results"], weighted=on.weighted, tiered=on.tiers)
    named = {r["id"] for r in sniffed["results"] if r.get("named")}
    older = on.older and asks_for_older(query)
    kept, excluded = _supersede(forest, fused, k, include_superseded or older, named, win)
    if on.edges:
        asked = wanted if terms is None else derive_terms(query)
        kept = _with_neighbours(
            forest,
            kept,
            k,
            asked,
            counts if terms is None else doc_counts(forest, asked),
            forms,
            fused,
            asked_kinds(query) - (frozenset() if on.places else {"place"}),
            older,
            support=on.support,
        )
    forest.found(c.id for c in kept)
    global_matches = {r["id"]: r.get("matches", []) for r in sniffed["results"]}
    scarcity = sorted(wanted, key=lambda t: counts[t])
    built = []
    for cand in kept:
        started = time.perf_counter()
        built.append(_item(forest, cand, scarcity, global_matches, forms))
        if built[-1] is not None:
            _record(steps, "pick", started, built[-1][0]["content"], cand.id)
    results = [item for item, _ in filter(None, built)]
    outlines = {item["id"]: outline for item, outline in filter(None, built)}
    _annotate(forest, results)
    out: dict[str, Any] = {
        "query": query,
        "terms": wanted,
        "results": results,
        "truncated": False,
        "hybrid": located["hybrid"],
    }
    if excluded:
        out["superseded_excluded"] = excluded
    if win.active:
        out["window"] = win.echo()
    _fit(out, outlines)
    if not out["results"]:
        out["searched"] = {
            "locate": locate_query(query),
            "sniff": wanted,
            "nodes": sniffed.get("scanned_nodes", 0),
        }
        out["hint"] = (
            located.get("hint")
            if win.active and located.get("hint")
            else (
                "Nothing matched. Pass explicit terms (an exact code, a name, a word from the "
                "body), or ask with the words the forest would use in a title or summary."
            )
        )
    forest.heat.deposit((r["id"] for r in out["results"]), READ_DEPOSIT)
    return out


def _record(
    steps: list[dict[str, Any]] | None,
    step: str,
    started: float,
    out: Any,
    node_id: str | None = None,
) -> None:
    """Append one measured step (when a recorder was given)."""
    if steps is None:
        return
    entry: dict[str, Any] = {
        "step": step,
        "ms": round((time.perf_counter() - started) * 1000, 2),
        "tokens": budget.cost(out),
    }
    if node_id is not None:
        entry["id"] = node_id
    steps.append(entry)


def _folded(terms: list[str]) -> list[str]:
    out = []
    for term in terms:
        if not isinstance(term, str):
            raise SchemaError("harvest: terms must be strings")
        folded = fold(term).strip()
        if folded:
            out.append(folded)
    return list(dict.fromkeys(out))


class _Candidate:
    __slots__ = ("id", "row", "score", "found_by", "replaces", "via")

    def __init__(self, node_id: str, row: sqlite3.Row) -> None:
        self.id = node_id
        self.row = row
        self.score = 0.0
        self.found_by: list[str] = []
        self.replaces: str | None = None
        self.via: dict[str, str] | None = None


def _with_neighbours(
    forest: Forest,
    kept: list[_Candidate],
    k: int,
    terms: list[str],
    counts: dict[str, float],
    forms: Forms,
    fused: list[_Candidate],
    asks: frozenset[str],
    older: bool = False,
    *,
    support: bool = True,
) -> list[_Candidate]:
    """The top k once the hits' linked neighbours that supply question terms the hits
    lack (:mod:`monkeyllm.reads.edges`) compete for the seats; a neighbour never takes
    the seat of a hit that scored as much or more. A neighbour the rankers found too,
    seated or below the seats, rises to its edge's score when that is higher, so the
    first seats do not depend on how many there are."""
    if not terms or not kept:
        return kept
    sources = []
    for cand in kept:
        try:
            node = forest.read(cand.id)
            body = forest.body(node)
        except VineError:
            continue
        row = cand.row
        sources.append(
            (
                cand.id,
                cand.score,
                " ".join(
                    [
                        row["title"] or "",
                        row["summary"] or "",
                        row["aliases"] or "",
                        row["tags"] or "",
                        body,
                    ]
                ),
            )
        )
    weight = term_weights(forest, terms, counts)
    seated = {c.id for c in kept}
    found = {c.id: c for c in fused}
    extra = []
    raised = False
    # What a neighbour must beat to take a seat (a tie goes to the hit).
    floor = kept[-1].score if len(kept) >= k else float("-inf")
    for near in linked(forest, sources, terms, weight, forms, asks=asks, older=older):
        known = found.get(near.id)
        value = near.score
        if known is not None and support:
            # Found by the rankers and supplying what a hit lacks: both count (its own
            # score and what its link credits for the terms it supplies), up to the
            # hit's own score: it ranks right after the hit at most.
            value = max(value, min(known.score + near.credit, near.source_score))
        if near.id not in seated and value <= floor:
            continue
        if known is None:
            near_row = forest.catalog.row(near.id)
            if near_row is None:
                continue
            known = _Candidate(near.id, near_row)
        elif value <= known.score:
            continue
        known.score = value
        known.found_by = [*known.found_by, "edge"]
        known.via = {"from": near.source, "rel": near.rel}
        raised = True
        if near.id not in seated:
            extra.append(known)
    if not raised:
        return kept
    # On a tie the rankers' order decides (a hit already seated first), then the id for
    # a node only an edge found, so that the first seats are the same for every k.
    rank = {c.id: i for i, c in enumerate(fused)}
    return sorted(
        [*kept, *extra], key=lambda c: (_is_map(c.id), -c.score, rank.get(c.id, len(rank)), c.id)
    )[:k]


def _weighed(located: dict[str, Any]) -> list[dict[str, Any]]:
    """The locate leg as the fusion weighs it. A hybrid locate ranks by the fused
    strength, whose reciprocal ranks flatten how strongly each node matched; the fusion
    keeps that order but weighs a node the lexical ranking found by its lexical
    strength, and one only the vectors found by its fused strength."""
    lexical = located.pop("_lexical", None)
    if not lexical:
        return located["results"]
    return [
        {**r, "score": lexical[r["id"]] if lexical.get(r["id"]) is not None else r["score"]}
        for r in located["results"]
    ]


def _fuse(
    forest: Forest,
    located: list[dict[str, Any]],
    sniffed: list[dict[str, Any]],
    *,
    weighted: bool = True,
    tiered: bool = True,
) -> list[_Candidate]:
    """Reciprocal rank fusion: each ranking credits an entry ``1 / (RRF_K + rank)``, and
    (``weighted``) scales that credit by the entry's score as a share of its ranking's
    best, so a faint match low in one list does not count like the top of the other and
    a clear winner of one ranking keeps its margin. Ties by updated, then created (newest
    first), then id. With ``tiered``, branch indexes and ``_meta`` nodes come last."""
    cands: dict[str, _Candidate] = {}
    for name, ranking in (("locate", located), ("sniff", sniffed)):
        # A hybrid locate leg is weighed out of its rank order (see _weighed): its best
        # is its highest weight. Otherwise the first entry's score is the best.
        best = (
            max((item["score"] for item in ranking), default=0.0)
            if name == "locate"
            else ranking[0]["score"]
            if ranking
            else 0.0
        )
        for rank, item in enumerate(ranking, 1):
            cand = cands.get(item["id"])
            if cand is None:
                row = forest.catalog.row(item["id"])
                if row is None:
                    continue
                cand = cands[item["id"]] = _Candidate(item["id"], row)
            share = item["score"] / best if weighted and best > 0 else 1.0
            cand.score += share / (RRF_K + rank)
            cand.found_by.append(name)
    ordered = sorted(cands.values(), key=lambda c: c.id)
    ordered.sort(key=lambda c: c.row["created"] or "", reverse=True)
    ordered.sort(key=lambda c: c.row["updated"] or "", reverse=True)
    ordered.sort(key=lambda c: round(c.score, 10), reverse=True)
    if tiered:
        ordered.sort(key=lambda c: _is_map(c.id))
    return ordered


def _is_map(node_id: str) -> bool:
    """A branch index or one of the forest's own ``_meta`` nodes: what lists or describes
    the forest rather than what it knows. They come after every other candidate."""
    return is_index(node_id) or node_id.startswith("_meta/")


_SUPERSEDERS = (
    "SELECT src FROM edges WHERE rel = 'supersedes' AND dst = ? "
    "UNION SELECT dst FROM edges WHERE rel = 'superseded-by' AND src = ?"
)


def _superseders(forest: Forest, node_id: str, win: Window) -> list[str]:
    """Live nodes that supersede ``node_id`` (either end of the edge may declare it),
    inside the window when there is one; a pair that supersede each other cancel."""
    conn = forest.catalog.conn
    ids = {r[0] for r in conn.execute(_SUPERSEDERS, (node_id, node_id))} - {node_id}
    wsql, wargs = win.sql("n.")
    out = []
    for other in sorted(ids):
        if (
            conn.execute(f"SELECT 1 FROM nodes n WHERE n.id = ?{wsql}", (other, *wargs)).fetchone()
            is None
        ):
            continue
        if node_id in {r[0] for r in conn.execute(_SUPERSEDERS, (other, other))}:
            continue
        out.append(other)
    return out


def _supersede(
    forest: Forest,
    fused: list[_Candidate],
    k: int,
    include_superseded: bool,
    named: set[str],
    win: Window,
) -> tuple[list[_Candidate], list[dict[str, str]]]:
    """The top k, a superseded candidate giving its seat to its successor (found lower
    in the pool or not at all; when the successor already has a seat, to the next
    candidate). A node whose body holds an exact code the question asks for (``named``)
    is the one asked about and keeps its seat."""
    if include_superseded:
        return fused[:k], []
    kept: list[_Candidate] = []
    excluded: list[dict[str, str]] = []
    queue = list(fused)
    placed = set()
    while queue and len(kept) < k:
        cand = queue.pop(0)
        by = [] if cand.id in named else _superseders(forest, cand.id, win)
        if not by:
            kept.append(cand)
            placed.add(cand.id)
            continue
        successor = by[0]
        excluded.append({"id": cand.id, "by": successor})
        if successor in placed:
            continue
        later = next((c for c in queue if c.id == successor), None)
        if later is not None:
            queue.remove(later)
            later.score = max(later.score, cand.score)
            later.replaces = cand.id
            queue.insert(0, later)
            continue
        row = forest.catalog.row(successor)
        if row is not None:
            heir = _Candidate(successor, row)
            heir.score, heir.found_by, heir.replaces = cand.score, cand.found_by, cand.id
            queue.insert(0, heir)
    return kept, excluded


def _check_terms(terms: list[Any]) -> None:
    if not terms or len(terms) > budget.SNIFF_TERMS_MAX:
        raise SchemaError(f"harvest: give 1 to {budget.SNIFF_TERMS_MAX} terms, got {len(terms)}")
    for term in terms:
        if not isinstance(term, str) or len(fold(term).strip()) < 2:
            raise SchemaError(
                f"harvest: term {term!r} is not a string of 2+ characters",
                hint="Terms are literal substrings of at least 2 characters.",
            )
        if len(term) > budget.HARVEST_TERM_CHARS_MAX:
            raise SchemaError(
                f"harvest: a term is {len(term)} characters, over {budget.HARVEST_TERM_CHARS_MAX}",
                hint="Terms are short literal strings: a code, a name, a word.",
            )


def _item(
    forest: Forest,
    cand: _Candidate,
    scarcity: list[str],
    global_matches: dict[str, list[dict[str, Any]]],
    forms: Forms,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A result, and its outline form (for a bundle too small to hold its content)."""
    row = cand.row
    try:
        node = forest.read(cand.id)
        body = forest.body(node)
    except VineError:
        return None
    view = node if body is node.body else Node(node.id, node.meta, body)
    if is_index(cand.id):
        matches = list(global_matches.get(cand.id, []))[:MATCHES_MAX]
    else:
        matches = _refine(view, body, scarcity, forms)
    item: dict[str, Any] = {
        "id": cand.id,
        "title": row["title"],
        "type": row["type"],
        "trail": row_list(row, "trail"),
        "summary": row["summary"] or "",
        "score": round(cand.score, 4),
        "found_by": list(cand.found_by),
        "body_tokens": row["body_tokens"],
        "matches": matches,
        "content": _content(view, body, matches),
    }
    for key in ("created", "updated"):
        if row[key]:
            item[key] = row[key]
    if cand.replaces:
        item["replaces"] = cand.replaces
    if cand.via:
        item["via"] = dict(cand.via)
    if row["type"] == "dataset":
        notes = node.section("Notes")
        text = notes[1].split("\n", 1)[1].strip() if notes and "\n" in notes[1] else ""
        if text:
            item["notes"] = budget.truncate_text(text, budget.NOTES)
    return item, _outline(view, budget.tokens(body))


def _refine(view: Node, body: str, scarcity: list[str], forms: Forms) -> list[dict[str, Any]]:
    """Matches in this node, term by term (or one of its word forms), rarest first,
    deduplicated, at most 5."""
    lines = body.split("\n")
    matches: list[dict[str, Any]] = []
    seen: set[int] = set()
    for term in scarcity:
        hit, _ = matching_lines(body, [term], forms)
        for index in hit[:PER_TERM_MATCHES]:
            if index in seen:
                continue
            seen.add(index)
            text = lines[index]
            matches.append(
                {
                    "section": view.section_of_line(index),
                    "line": view.file_line(index),
                    "term": term,
                    "snippet": snippet(text, first_hit(fold(text), [term], forms)),
                }
            )
            if len(matches) >= MATCHES_MAX:
                return matches
    return matches


def _content(view: Node, body: str, matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The body when it fits 1,200 tokens, else up to 2 matched sections, else the
    outline as a map."""
    tokens = budget.tokens(body)
    if tokens <= WHOLE_BODY:
        return [{"section": None, "body": body, "body_tokens": tokens}]
    out: list[dict[str, Any]] = []
    for name in dict.fromkeys(m["section"] for m in matches if m.get("section")):
        found = view.section(name)
        if found is None:
            continue
        header, text = found
        out.append({"section": header.text, "body": text, "body_tokens": budget.tokens(text)})
        if len(out) >= SECTIONS_MAX:
            break
    return out or [_outline(view, tokens)]


def _outline(view: Node, tokens: int) -> dict[str, Any]:
    return {
        "section": None,
        "outline": view.outline,
        "body_tokens": tokens,
        "hint": f"Body is {tokens} tokens; "
        f"{hints.call('pick', 'id', section=Hole('header'))} reads one section.",
    }


def _annotate(forest: Forest, results: list[dict[str, Any]]) -> None:
    """``supersedes`` / ``superseded_by`` between results, from succeeds and supersedes
    edges (either direction of declaration)."""
    ids = [r["id"] for r in results]
    if len(ids) < 2:
        return
    marks = ",".join("?" * len(ids))
    rows = forest.catalog.conn.execute(
        f"SELECT src, rel, dst FROM edges WHERE src IN ({marks}) AND dst IN ({marks}) AND "
        "rel IN ('succeeds', 'supersedes', 'precedes', 'superseded-by')",
        (*ids, *ids),
    )
    newer_of: dict[str, set[str]] = {}
    for src, rel, dst in rows:
        new, old = (src, dst) if rel in ("succeeds", "supersedes") else (dst, src)
        if new != old:
            newer_of.setdefault(old, set()).add(new)
    by_id = {r["id"]: r for r in results}
    for old, news in newer_of.items():
        by_id[old]["superseded_by"] = sorted(news)
        for new in news:
            by_id[new].setdefault("supersedes", []).append(old)
    for r in results:
        if "supersedes" in r:
            r["supersedes"] = sorted(set(r["supersedes"]))


def _fit(out: dict[str, Any], outlines: dict[str, dict[str, Any]]) -> None:
    """Within 4,000 tokens, never by slicing a body: first the lowest-ranked result still
    carrying a body or sections gives them up for its outline (its matches stay: the
    evidence, and where to pick), then whole results drop from the tail; a lone result's
    outline is shortened last."""
    results = out["results"]
    while results and budget.cost(out) > budget.HARVEST:
        out["truncated"] = True
        mapped = next(
            (
                item
                for item in reversed(results)
                if outlines.get(item["id"]) is not None
                and item["content"] != [outlines[item["id"]]]
            ),
            None,
        )
        if mapped is not None:
            mapped["content"] = [outlines[mapped["id"]]]
            continue
        if len(results) > 1:
            results.pop()
            continue
        item = results[0]
        outline = outlines.get(item["id"])
        if outline is None:
            results.pop()
            continue
        shell = {**out, "results": []}
        room = budget.HARVEST - budget.cost(shell) - budget.cost({**item, "content": []})
        if (
            not budget.shrink_list(outline, "outline", max(room, 0))
            or budget.cost(out) > budget.HARVEST
        ):
            results.pop()
