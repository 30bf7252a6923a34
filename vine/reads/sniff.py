"""``sniff``: literal, case- and accent-blind substring search over bodies only."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import bodyindex, budget
from ..errors import SchemaError, VineError
from ..forest import Forest, row_list
from ..heat import LIST_DEPOSIT
from ..ids import ROOT_INDEX, branch_id, folder_prefix, is_index, normalize
from ..text import fold
from ..windows import Window


@dataclass
class Hits:
    """What one node matched: its matching lines and which terms it hit."""

    lines: set[int] = field(default_factory=set)
    terms: set[int] = field(default_factory=set)


def sniff(forest: Forest, terms: str | list[str], scope: str | None, k: int,
          type_filter: str | None, win: Window) -> dict[str, Any]:
    """Find bodies containing the terms; rank by terms hit, density and heat."""
    wanted = _terms(terms)
    k = min(max(k, 1), budget.SNIFF_K_MAX)
    scope_sql, scope_args = _scope(forest, scope)
    if type_filter is not None:
        scope_sql += " AND n.type = ?"
        scope_args.append(type_filter)
    wsql, wargs = win.sql("n.")
    scope_sql += wsql
    scope_args += wargs
    conn = forest.catalog.conn
    in_scope = conn.execute(f"SELECT count(*) FROM nodes n WHERE 1=1{scope_sql}",
                            scope_args).fetchone()[0]
    hits = _indexed(forest, wanted, scope_sql, tuple(scope_args))
    if hits is None:
        hits, in_scope = _direct(forest, wanted, scope_sql, tuple(scope_args))
    ranked = _rank(forest, hits, len(wanted))
    results = []
    for node_id, score, heat, hit in ranked[:k]:
        item = _render(forest, node_id, score, heat, hit, wanted)
        if item is not None:
            results.append(item)
    out: dict[str, Any] = {"results": results, "scanned_nodes": in_scope,
                           "truncated": len(ranked) > k}
    if win.active:
        out["window"] = win.echo()
    budget.shrink_with_hint(
        out, "results", budget.SNIFF,
        lambda kept: f"{kept} of {min(k, len(ranked))} matching nodes fit the 800-token "
                     "budget; the rest exist. Ask for a smaller k, or narrow with scope.")
    forest.heat.deposit((r["id"] for r in out["results"]), LIST_DEPOSIT)
    return out


def _terms(terms: str | list[str]) -> list[str]:
    raw = [terms] if isinstance(terms, str) else list(terms)
    if not raw or len(raw) > budget.SNIFF_TERMS_MAX:
        raise SchemaError(f"sniff: give 1 to {budget.SNIFF_TERMS_MAX} terms, got {len(raw)}")
    out = []
    for term in raw:
        folded = fold(term).strip()
        if len(folded) < 2:
            raise SchemaError(f"sniff: term {term!r} is shorter than 2 characters",
                              hint="Terms are literal substrings of at least 2 characters.")
        out.append(folded)
    return list(dict.fromkeys(out))


def _scope(forest: Forest, scope: str | None) -> tuple[str, list[Any]]:
    if scope is None or scope in ("", ROOT_INDEX):
        return "", []
    node_id = normalize(scope, param="scope")
    row = forest.catalog.row(node_id)
    if row is not None and row["kind"] != "branch":
        return " AND n.id = ?", [node_id]
    index = branch_id(node_id)
    if forest.catalog.row(index) is None:
        raise forest.absent(index if row is None else node_id)
    if index == ROOT_INDEX:
        return "", []
    prefix = folder_prefix(index)
    return (" AND n.id >= ? AND n.id < ?", [prefix, prefix[:-1] + chr(ord("/") + 1)])


def _indexed(forest: Forest, terms: list[str], scope_sql: str,
             scope_args: tuple[Any, ...]) -> dict[str, Hits] | None:
    """Hits through the body index, or None when a term needs a direct scan."""
    vocab = forest.vocabulary()
    plans = []
    for term in terms:
        tp = bodyindex.plan(term, vocab)
        if tp is None:
            return None
        plans.append(tp)
    conn = forest.catalog.conn
    hits: dict[str, Hits] = {}
    for t, tp in enumerate(plans):
        pairs: set[tuple[str, int]] = set()
        for expr in bodyindex.expressions(tp):
            pairs.update(bodyindex.lines_matching(conn, expr, scope_sql, scope_args))
        if not tp.exact:
            pairs = _verify(forest, terms[t], pairs)
        for node_id, line in pairs:
            hit = hits.setdefault(node_id, Hits())
            hit.lines.add(line)
            hit.terms.add(t)
    return hits


def _verify(forest: Forest, term: str, pairs: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """Keep the candidate lines that really contain the literal term."""
    by_node: dict[str, list[int]] = {}
    for node_id, line in pairs:
        by_node.setdefault(node_id, []).append(line)
    kept = set()
    for node_id, lines in by_node.items():
        body_lines = _body_lines(forest, node_id)
        for line in lines:
            if line < len(body_lines) and term in fold(body_lines[line]):
                kept.add((node_id, line))
    return kept


def _body_lines(forest: Forest, node_id: str) -> list[str]:
    try:
        return forest.read(node_id).lines
    except VineError:
        return []


def _direct(forest: Forest, terms: list[str], scope_sql: str,
            scope_args: tuple[Any, ...]) -> tuple[dict[str, Hits], int]:
    """Read every in-scope body (for terms the index cannot plan)."""
    ids = [r[0] for r in forest.catalog.conn.execute(
        f"SELECT n.id FROM nodes n WHERE 1=1{scope_sql} ORDER BY n.rowid", scope_args)]
    hits: dict[str, Hits] = {}
    scanned = 0
    for node_id in ids:
        try:
            node = forest.read(node_id)
            body = forest.body(node)
        except VineError:
            continue
        scanned += 1
        for i, line in enumerate(fold(body).split("\n")):
            for t, term in enumerate(terms):
                if term in line:
                    hit = hits.setdefault(node_id, Hits())
                    hit.lines.add(i)
                    hit.terms.add(t)
    return hits, scanned


def _rank(forest: Forest, hits: dict[str, Hits],
          asked: int) -> list[tuple[str, float, float, Hits]]:
    heat = forest.heat.many(hits)
    ranked = []
    for node_id, hit in hits.items():
        strength = len(hit.terms) / asked
        density = 1 + 0.15 * math.log2(len(hit.lines))
        ranked.append((node_id, forest.score(strength * density, heat[node_id]),
                       heat[node_id], hit))
    ranked.sort(key=lambda r: (is_index(r[0]), -r[1], -len(r[3].lines), r[0]))
    return ranked


def snippet(line: str, at: int) -> str:
    """The line, or a 100-character window starting 33 characters before the hit."""
    width = budget.SNIFF_SNIPPET_CHARS
    if len(line) <= width:
        return line.strip()
    start = max(0, min(at - 33, len(line) - width))
    end = start + width
    text = line[start:end]
    return ("…" if start > 0 else "") + text + ("…" if end < len(line) else "")


def _render(forest: Forest, node_id: str, score: float, heat: float, hit: Hits,
            terms: list[str]) -> dict[str, Any] | None:
    row = forest.catalog.row(node_id)
    if row is None:
        return None
    try:
        node = forest.read(node_id)
        body_lines = forest.body(node).split("\n")
    except VineError:
        return None
    view = node if body_lines == node.lines else None
    matches = []
    for line in sorted(hit.lines)[:budget.SNIFF_MATCHES_SHOWN]:
        text = body_lines[line] if line < len(body_lines) else ""
        folded = fold(text)
        at = min((p for p in (folded.find(t) for t in terms) if p >= 0), default=0)
        section = view.section_of_line(line) if view is not None else None
        matches.append({"section": section, "line": line + 1, "snippet": snippet(text, at)})
    item: dict[str, Any] = {
        "id": node_id, "type": row["type"], "title": row["title"],
        "trail": row_list(row, "trail"), "score": score, "heat": heat,
        "body_tokens": row["body_tokens"], "match_count": len(hit.lines),
        "truncated_matches": len(hit.lines) > budget.SNIFF_MATCHES_SHOWN, "matches": matches,
    }
    if is_index(node_id):
        item["demoted"] = True
    return item
