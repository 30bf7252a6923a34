"""``sniff``: literal, case- and accent-blind substring search over bodies only."""

from __future__ import annotations

import bisect
import heapq
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .. import bodyindex, budget
from ..errors import SchemaError, VineError
from ..forest import Forest, row_list
from ..heat import LIST_DEPOSIT
from ..ids import ROOT_INDEX, branch_id, folder_prefix, is_index, normalize
from ..text import fold
from ..windows import Window

# A term's word forms (harvest's sweep: ``deadlines`` -> ``deadline``): whole words that
# stand for the term beside the term itself, which is still found as a substring.
Forms = Mapping[str, Sequence[str]]


@lru_cache(maxsize=1024)
def _finder(term: str, forms: tuple[str, ...]) -> Callable[[str], int]:
    if not forms:
        return lambda line: line.find(term)
    pattern = re.compile(
        re.escape(term) + r"|(?<![^\W_])(?:" + "|".join(map(re.escape, forms)) + r")(?![^\W_])"
    )

    def find(line: str) -> int:
        # Substrings first (C-speed): the pattern only runs where it can match.
        if term not in line and not any(form in line for form in forms):
            return -1
        hit = pattern.search(line)
        return hit.start() if hit else -1

    return find


def finder(term: str, forms: Forms | None) -> Callable[[str], int]:
    """Where ``term`` (a substring) or one of its word forms (a whole word) starts in a
    folded line, or -1."""
    return _finder(term, tuple(forms.get(term, ())) if forms else ())


@dataclass
class Hits:
    """What one node matched: how many lines, which terms, and the lines each term
    was found on (term index -> lines, each a 0-based body line or a body index rowid
    holding it in its low ``bodyindex.LINE_BITS``)."""

    count: int = 0
    terms: set[int] = field(default_factory=set)
    rows: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: dict[int, list[int]], *, checked: bool = False) -> Hits:
        """The hits of a per-term map of lines (terms without lines left out, unless
        the caller ``checked`` there are none)."""
        if not checked:
            rows = {t: lines for t, lines in rows.items() if lines}
        if len(rows) == 1:
            (only,) = rows.values()
            return cls(len(only), set(rows), rows)
        return cls(len(set().union(*rows.values())), set(rows), rows)

    @property
    def lines(self) -> dict[int, set[int]]:
        """0-based body line -> the terms (indices) it holds, in line order."""
        out: dict[int, set[int]] = {}
        for t, lines in self.rows.items():
            for line in lines:
                out.setdefault(line & bodyindex.LINE_MASK, set()).add(t)
        return dict(sorted(out.items()))


@dataclass
class Scope:
    """Which nodes a sniff covers, as a SQL predicate over ``nodes n``."""

    sql: str = ""
    args: list[Any] = field(default_factory=list)

    def owners(self, forest: Forest, gens: list[int]) -> dict[int, str]:
        """``body_gen -> id`` of the live, in-scope nodes among ``gens``."""
        return dict(
            forest.catalog.conn.execute(
                "SELECT n.body_gen, n.id FROM nodes n WHERE n.body_gen IN "
                f"(SELECT value FROM json_each(?)){self.sql}",
                (json.dumps(gens), *self.args),
            )
        )


def sniff(
    forest: Forest,
    terms: str | list[str],
    scope: str | None,
    k: int,
    type_filter: str | None,
    win: Window,
) -> dict[str, Any]:
    """Find bodies containing the terms; rank by terms hit, heat, then match count."""
    wanted = _terms(terms)
    k = min(max(k, 1), budget.SNIFF_K_MAX)
    where = _scope(forest, scope)
    if type_filter is not None:
        where.sql += " AND n.type = ?"
        where.args.append(type_filter)
    if win.active:
        wsql, wargs = win.sql("n.")
        where.sql += wsql
        where.args += wargs
    conn = forest.catalog.conn
    # Without a WHERE, SQLite counts the rows page by page, not row by row (0.02 ms at
    # 100k nodes against 1.7 ms).
    in_scope = conn.execute(
        f"SELECT count(*) FROM nodes n WHERE 1=1{where.sql}"
        if where.sql
        else "SELECT count(*) FROM nodes",
        where.args,
    ).fetchone()[0]
    found = indexed_hits(forest, wanted, where, k)
    if found is None:
        hits, in_scope = direct_hits(forest, wanted, where.sql, tuple(where.args))
        matched = len(hits)
    else:
        hits, matched = found
    results = []
    for node_id, score, heat, hit in _rank(forest, hits, len(wanted), k):
        item = render_hit(forest, node_id, score, heat, hit, wanted)
        if item is not None:
            results.append(item)
    out: dict[str, Any] = {"results": results, "scanned_nodes": in_scope, "truncated": matched > k}
    if win.active:
        out["window"] = win.echo()
    budget.shrink_with_hint(
        out,
        "results",
        budget.SNIFF,
        lambda kept: (
            f"{kept} of {min(k, matched)} matching nodes fit the 800-token "
            "budget; the rest exist. Ask for a smaller k, or narrow with scope."
        ),
    )
    forest.heat.deposit((r["id"] for r in out["results"]), LIST_DEPOSIT)
    forest.found(r["id"] for r in out["results"])
    return out


def _terms(terms: str | list[str]) -> list[str]:
    raw = [terms] if isinstance(terms, str) else list(terms)
    if not raw or len(raw) > budget.SNIFF_TERMS_MAX:
        raise SchemaError(f"sniff: give 1 to {budget.SNIFF_TERMS_MAX} terms, got {len(raw)}")
    out = []
    for term in raw:
        folded = fold(term).strip()
        if len(folded) < 2:
            raise SchemaError(
                f"sniff: term {term!r} is shorter than 2 characters",
                hint="Terms are literal substrings of at least 2 characters.",
            )
        out.append(folded)
    return list(dict.fromkeys(out))


def _scope(forest: Forest, scope: str | None) -> Scope:
    if scope is None or scope in ("", ROOT_INDEX):
        return Scope()
    node_id = normalize(scope, param="scope")
    row = forest.catalog.row(node_id)
    if row is not None and row["kind"] != "branch":
        return Scope(" AND n.id = ?", [node_id])
    index = branch_id(node_id)
    if forest.catalog.row(index) is None:
        raise forest.absent(index if row is None else node_id)
    if index == ROOT_INDEX:
        return Scope()
    prefix = folder_prefix(index)
    return Scope(" AND n.id >= ? AND n.id < ?", [prefix, prefix[:-1] + chr(ord("/") + 1)])


def term_rows(
    conn: Any,
    term: str,
    tp: bodyindex.TermPlan,
    seen: dict[str, list[int]] | None = None,
    vocab: bodyindex.Vocabulary | None = None,
) -> list[int]:
    """The body index rowids a planned term's lines have (candidates, for a term with
    punctuation), ascending and distinct; ``seen`` keeps them for the other steps of one
    call, ``vocab`` reads a term's common tokens apart (:func:`bodyindex.expressions`)."""
    if seen is not None and term in seen:
        return seen[term]
    rowids: list[int] = []
    exprs = bodyindex.expressions(tp, vocab)
    for expr in exprs:
        rowids += bodyindex.match_rowids(conn, expr)
    if len(exprs) > 1:
        # Each part is ascending: the sort merges runs; a line holding tokens of two
        # parts comes twice, and the dict keeps one.
        rowids.sort()
        rowids = list(dict.fromkeys(rowids))
    if seen is not None:
        seen[term] = rowids
    return rowids


def term_gens(term: str, rowids: list[int], seen: dict[Any, Any] | None = None) -> set[int]:
    """The body versions among a term's index rowids (kept in ``seen`` beside them)."""
    key = ("gens", term)
    if seen is not None and key in seen:
        return seen[key]
    shift = bodyindex.LINE_BITS
    gens = {r >> shift for r in rowids}
    if seen is not None:
        seen[key] = gens
    return gens


def indexed_hits(
    forest: Forest,
    terms: list[str],
    scope: Scope,
    k: int,
    forms: Forms | None = None,
    seen: dict[str, list[int]] | None = None,
) -> tuple[dict[str, Hits], int] | None:
    """Hits through the body index, or None when a term needs a direct scan.

    Ranking is by terms hit first, so nodes are taken tier by tier (most terms
    first) and only until no later tier can reach the top ``k``: ids, line counts
    and the file reads that confirm terms with punctuation are spent on those
    alone. Returns the hits and how many nodes matched in all (a lower bound
    when the later tiers were never opened, which only happens past ``k``).
    """
    vocab = forest.vocabulary()
    plans = []
    for term in terms:
        tp = bodyindex.plan_forms(term, forms.get(term, ()) if forms else (), vocab)
        if tp is None:
            return None
        plans.append(tp)
    conn = forest.catalog.conn
    # Rowids per term; for a term with punctuation they are candidates, not hits.
    per_term = [
        term_rows(conn, term, tp, seen, vocab) for term, tp in zip(terms, plans, strict=True)
    ]
    gens_of = [term_gens(term, rowids, seen) for term, rowids in zip(terms, per_term, strict=True)]
    inexact = {t for t, tp in enumerate(plans) if not tp.exact}
    confirmed: dict[int, tuple[str, dict[int, list[int]]]] = {}  # gen -> id, rows

    def sure(later: int) -> int:
        # Heat multiplies a score by at most (1 + alpha): the ordinary nodes confirmed
        # with enough terms that no node of a tier holding ``later`` can pass them.
        return sum(
            1
            for node_id, rows in confirmed.values()
            if len(rows) >= later * (1 + forest.alpha) and not is_index(node_id)
        )

    def confirm(gens: list[int]) -> None:
        for gen, node_id in scope.owners(forest, gens).items():
            rows = _lines_of(forest, gen, node_id, terms, per_term, gens_of, inexact)
            if rows:
                confirmed[gen] = (node_id, rows)

    every = set.intersection(*gens_of) if gens_of else set()
    if every:
        # The versions that may hold every term come from one intersection; the other
        # tiers are counted only when these do not settle the top k (judged first
        # against the most a later tier can hold).
        confirm(list(every))
        if len(terms) == 1 or sure(len(terms) - 1) > k:
            return _hits(confirmed)
    tiers = _tiers(gens_of, len(terms))
    order = sorted(tiers, reverse=True)
    if every and sure(order[0] if order else 0) > k:
        return _hits(confirmed)
    for i, n in enumerate(order):
        confirm(tiers[n])
        if sure(order[i + 1] if i + 1 < len(order) else 0) > k:
            break
    return _hits(confirmed)


def _hits(confirmed: dict[int, tuple[str, dict[int, list[int]]]]) -> tuple[dict[str, Hits], int]:
    hits = {node_id: Hits.of(rows, checked=True) for node_id, rows in confirmed.values()}
    return hits, len(hits)


def _tiers(gens_of: list[set[int]], below: int) -> dict[int, list[int]]:
    """Body versions by how many of the terms their lines may hold, for the tiers
    holding fewer than ``below`` (terms -> gens)."""
    upper: Counter[int] = Counter()
    for gens in gens_of:
        upper.update(gens)
    tiers: dict[int, list[int]] = {}
    for gen, n in upper.items():
        if n < below:
            tiers.setdefault(n, []).append(gen)
    return tiers


def _lines_of(
    forest: Forest,
    gen: int,
    node_id: str,
    terms: list[str],
    per_term: list[list[int]],
    gens_of: list[set[int]],
    inexact: set[int],
) -> dict[int, list[int]]:
    """Term index -> the index rowids of one body version's lines holding it (a term
    with punctuation confirmed against the body's own lines)."""
    shift = bodyindex.LINE_BITS
    mask = bodyindex.LINE_MASK
    lo = gen << shift
    hi = lo + (1 << shift)
    rows: dict[int, list[int]] = {}
    text = None
    for t, gens in enumerate(gens_of):
        if gen not in gens:
            continue
        rowids = per_term[t]
        start = bisect.bisect_left(rowids, lo)
        found = rowids[start : bisect.bisect_left(rowids, hi, start)]
        if t in inexact:
            if text is None:
                text = forest.body_lines(node_id)
            found = [
                r for r in found if (r & mask) < len(text) and terms[t] in fold(text[r & mask])
            ]
            if not found:
                continue
        rows[t] = found
    return rows


def of_gen(rowids: list[int], gen: int, shift: int) -> list[int]:
    """The rowids of one body version, from a list sorted ascending."""
    lo = bisect.bisect_left(rowids, gen << shift)
    hi = bisect.bisect_left(rowids, (gen + 1) << shift)
    return rowids[lo:hi]


def direct_hits(
    forest: Forest,
    terms: list[str],
    scope_sql: str,
    scope_args: tuple[Any, ...],
    forms: Forms | None = None,
) -> tuple[dict[str, Hits], int]:
    """Read every in-scope body (for terms the index cannot plan)."""
    ids = [
        r[0]
        for r in forest.catalog.conn.execute(
            f"SELECT n.id FROM nodes n WHERE 1=1{scope_sql} ORDER BY n.rowid", scope_args
        )
    ]
    hits: dict[str, Hits] = {}
    scanned = 0
    for node_id in ids:
        try:
            node = forest.read(node_id)
            body = forest.body(node)
        except VineError:
            continue
        scanned += 1
        hit = Hits.of(term_lines(body, terms, forms))
        if hit.terms:
            hits[node_id] = hit
    return hits, scanned


def term_lines(body: str, terms: list[str], forms: Forms | None = None) -> dict[int, list[int]]:
    """Term index -> the 0-based lines of ``body`` holding that folded term (or one of
    its ``forms``)."""
    out: dict[int, list[int]] = {t: [] for t in range(len(terms))}
    finders = [finder(term, forms) for term in terms]
    for i, line in enumerate(fold(body).split("\n")):
        for t, find in enumerate(finders):
            if find(line) >= 0:
                out[t].append(i)
    return out


def matching_lines(
    body: str, terms: list[str], forms: Forms | None = None
) -> tuple[list[int], set[int]]:
    """0-based lines of ``body`` holding any folded term, and which terms were hit."""
    hit = Hits.of(term_lines(body, terms, forms))
    return list(hit.lines), hit.terms


def first_hit(folded_line: str, terms: list[str], forms: Forms | None = None) -> int:
    """Where the leftmost of the terms (or their forms) starts in a folded line (0 when
    none is there)."""
    return min(
        (p for p in (finder(term, forms)(folded_line) for term in terms) if p >= 0), default=0
    )


def _rank(
    forest: Forest, hits: dict[str, Hits], asked: int, first: int | None = None
) -> list[tuple[str, float, float, Hits]]:
    """The seed's order: strength (terms hit over terms asked) times heat, ties broken by
    match_count; index nodes after the rest, keeping their true score. With ``first``,
    only the first that many of that order."""
    heat = forest.heat.many(hits)
    ranked = [
        (node_id, forest.score(len(hit.terms) / asked, heat[node_id]), heat[node_id], hit)
        for node_id, hit in hits.items()
    ]

    def order(r: tuple[str, float, float, Hits]) -> tuple[bool, float, int, str]:
        return is_index(r[0]), -r[1], -r[3].count, r[0]

    if first is not None and len(ranked) > 4 * first:
        return heapq.nsmallest(first, ranked, key=order)
    ranked.sort(key=order)
    return ranked if first is None else ranked[:first]


def snippet(line: str, at: int) -> str:
    """The line, or a 100-character window starting 33 characters before the hit."""
    width = budget.SNIFF_SNIPPET_CHARS
    if len(line) <= width:
        return line.strip()
    start = max(0, min(at - 33, len(line) - width))
    end = start + width
    text = line[start:end]
    return ("…" if start > 0 else "") + text + ("…" if end < len(line) else "")


def render_hit(
    forest: Forest,
    node_id: str,
    score: float,
    heat: float,
    hit: Hits,
    terms: list[str],
    forms: Forms | None = None,
) -> dict[str, Any] | None:
    """One node's sniff result from its hits (None when its row is gone)."""
    row = forest.catalog.row(node_id)
    if row is None:
        return None
    try:
        node = forest.read(node_id)
        body = forest.body(node)
    except VineError:
        return None
    body_lines = body.split("\n")
    lines, _ = matching_lines(body, terms, forms)
    view = node if body is node.body else None
    matches = []
    for line in lines[: budget.SNIFF_MATCHES_SHOWN]:
        text = body_lines[line]
        at = first_hit(fold(text), terms, forms)
        section = view.section_of_line(line) if view is not None else None
        # A file line, as validate counts and an editor opens (a body kept outside
        # the node file counts from its own first line).
        number = view.file_line(line) if view is not None else line + 1
        matches.append({"section": section, "line": number, "snippet": snippet(text, at)})
    item: dict[str, Any] = {
        "id": node_id,
        "type": row["type"],
        "title": row["title"],
        "trail": row_list(row, "trail"),
        "score": score,
        "heat": heat,
        "body_tokens": row["body_tokens"],
        "match_count": hit.count,
        "truncated_matches": hit.count > budget.SNIFF_MATCHES_SHOWN,
        "matches": matches,
    }
    if is_index(node_id):
        item["demoted"] = True
    return item
