"""``harvest``: one-shot retrieval with no model. ``locate`` and ``sniff`` fused by
reciprocal rank fusion, matches refined by term scarcity, and the evidence itself (a
body that fits, else matched sections, else the outline) in one 4,000-token bundle.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import sqlite3
import time
from typing import Any

from .. import bodyindex, budget
from ..errors import SchemaError, VineError
from ..forest import Forest, row_list
from ..heat import LIST_DEPOSIT, READ_DEPOSIT
from ..ids import is_index
from ..nodes import Node
from ..text import fold
from ..windows import Window
from .locate import locate
from .sniff import (
    Hits,
    Scope,
    _direct,
    _indexed,
    _of_gen,
    _render,
    _rowids,
    matching_lines,
    term_lines,
)

RRF_K = 60                     # fused = sum of 1 / (RRF_K + rank) over the two rankings
MAX_K_ENV = "MONKEYLLM_HARVEST_MAX_K"
MAX_K_DEFAULT = 5
TERMS_MAX = 8
WHOLE_BODY = 1200              # a body up to this many tokens comes whole
SECTIONS_MAX = 2
MATCHES_MAX = 5
PER_TERM_MATCHES = budget.SNIFF_MATCHES_SHOWN
CODE_WEIGHT = 2.0              # an exact identifier counts twice a word as rare
SWEEP_DEPTH = 50               # nodes the sweep confirms before it may stop early
CONFIRM_MAX = 64               # bodies read to count those holding a term with punctuation
SWEEP_FLOOR = 0.1              # a body scoring under this share of the best one is not ranked

_TOKEN = re.compile(r"[\w\-./]{2,}")
_CODE_MARKS = set("-_./")

# Question words and connectives of English and Portuguese, folded (accents removed);
# the English list has the stems a contraction leaves ("didn't" reads as didn, t).
STOPWORDS = frozenset(fold(w) for w in """
a an the and or but nor of to in on at for with by from into onto over under about
after before between during since until than then there here this that these those
it its is are was were be been being am do does did doing done have has had having
what which who whom whose when where why how whether if else so such too very just
also only own same other others another each every both few more most much many
some any all no not yes can could should would will shall may might must need want
our ours we us you your yours they them their theirs he him his she her hers i me my
mine tell show give find know get got make please like via per upon within without
don didn doesn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn cannot
mustn needn shan ain
qual quais quem quando onde como porque porquê por que para pelo pela pelos pelas com
sem sobre entre depois antes desde até ate um uma uns umas o os as do da dos das no
na nos nas ao aos à às num numa se não nao sim mais menos muito muita muitos muitas
este esta estes estas esse essa esses essas aquele aquela aqueles aquelas isso isto
aquilo ele ela eles elas nós nos você voce vocês voces seu sua seus suas nosso nossa
nossos nossas meu minha ser estar está esta estão estao são sao foi foram era eram
tem têm tinha ter há haver pode podem deve devem fazer faz cada todo toda todos todas
também tambem ainda já ja então entao mesmo mesma outro outra outros outras qualquer
quanto quanta quantos quantas existe existem preciso precisa
""".split())


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
        raise SchemaError(f"{MAX_K_ENV} must be a positive integer, got {raw!r}",
                          hint=f"Unset it (the default is {MAX_K_DEFAULT}) or set it to 1 "
                               "or more.")
    return value


def _tokens(query: str) -> list[tuple[str, bool]]:
    """(folded token, code-shaped) for each non-stopword token of a question."""
    out = []
    for raw in _TOKEN.findall(query):
        token = raw.strip("./-")
        if len(token) < 2:
            continue
        letters = [c for c in token if c.isalpha()]
        code = (any(c.isdigit() for c in token)
                or (len(letters) >= 2 and all(c.isupper() for c in letters))
                or any(c in _CODE_MARKS for c in token))
        folded = fold(token)
        if folded not in STOPWORDS:
            out.append((folded, code))
    return out


def _is_code(term: str) -> bool:
    """A folded term that names something exactly: an identifier with ``- _ . /`` or
    with letters and digits mixed (``nf-4412``, ``l2503``); a bare number such as a
    year is not one."""
    if any(c in _CODE_MARKS for c in term.strip("-_./")):
        return any(c.isdigit() for c in term) or len(term) >= 4
    return any(c.isdigit() for c in term) and any(c.isalpha() for c in term)


def locate_query(query: str) -> str:
    """The question without its stopwords, for ``locate`` (function words of a question
    would otherwise match every summary written in the same language)."""
    words = [t for t, code in _tokens(query) if code or len(t) >= 3]
    return " ".join(dict.fromkeys(words)) or query


def derive_terms(query: str) -> list[str]:
    """Sniff terms from a question: code-shaped tokens (a digit, all capitals, or one of
    ``- _ . /``) at any length and first, other words of 4+ characters; stopwords and
    duplicates dropped; folded; at most 8."""
    codes = [t for t, code in _tokens(query) if code]
    words = [t for t, code in _tokens(query) if not code and len(t) >= 4]
    return list(dict.fromkeys(codes + words))[:TERMS_MAX]


def harvest(forest: Forest, query: str, terms: str | list[str] | None, k: int, win: Window,
            include_superseded: bool, steps: list[dict[str, Any]] | None = None
            ) -> dict[str, Any]:
    """The fused sweep; see the module docstring and the seed.

    ``steps``, when given, receives one ``{step, ms, tokens, id?}`` per inner read as it
    is measured (locate, sniff, then a ``pick`` per result's content); the Station's
    trace is built from it. The result is the same with or without it.
    """
    if not query.strip():
        raise SchemaError("harvest: query is empty",
                          hint="Ask a question, or name the exact terms to find.")
    if len(query) > budget.HARVEST_QUERY_CHARS_MAX:
        raise SchemaError(f"harvest: query is {len(query)} characters, over "
                          f"{budget.HARVEST_QUERY_CHARS_MAX}",
                          hint="Ask a shorter question; pass exact strings as terms.")
    k = min(max(k, 1), max_k())
    if terms is None:
        wanted = derive_terms(query)
    else:
        wanted = [terms] if isinstance(terms, str) else list(terms)
        _check_terms(wanted)
        wanted = _folded(wanted)
    pool = 2 * k
    started = time.perf_counter()
    located = locate(forest, locate_query(query), pool, "all", None, None, win)
    _record(steps, "locate", started, located)
    started = time.perf_counter()
    counts = _doc_counts(forest, wanted)
    sniffed = _sweep(forest, wanted, counts, pool, win)
    if wanted:
        _record(steps, "sniff", started, sniffed)
    fused = _fuse(forest, located["results"], sniffed["results"])
    named = {r["id"] for r in sniffed["results"] if r.get("named")}
    kept, excluded = _supersede(forest, fused, k, include_superseded, named, win)
    forest.found(c.id for c in kept)
    global_matches = {r["id"]: r.get("matches", []) for r in sniffed["results"]}
    scarcity = sorted(wanted, key=lambda t: counts[t])
    built = []
    for cand in kept:
        started = time.perf_counter()
        built.append(_item(forest, cand, wanted, scarcity, global_matches))
        if built[-1] is not None:
            _record(steps, "pick", started, built[-1][0]["content"], cand.id)
    results = [item for item, _ in filter(None, built)]
    outlines = {item["id"]: outline for item, outline in filter(None, built)}
    _annotate(forest, results)
    out: dict[str, Any] = {"query": query, "terms": wanted, "results": results,
                           "truncated": False}
    if excluded:
        out["superseded_excluded"] = excluded
    if win.active:
        out["window"] = win.echo()
    _fit(out, outlines)
    if not out["results"]:
        out["searched"] = {"locate": locate_query(query), "sniff": wanted,
                           "nodes": sniffed.get("scanned_nodes", 0)}
        out["hint"] = located.get("hint") if win.active and located.get("hint") else (
            "Nothing matched. Pass explicit terms (an exact code, a name, a word from the "
            "body), or ask with the words the forest would use in a title or summary.")
    forest.heat.deposit((r["id"] for r in out["results"]), READ_DEPOSIT)
    return out


def _record(steps: list[dict[str, Any]] | None, step: str, started: float, out: Any,
            node_id: str | None = None) -> None:
    """Append one measured step (when a recorder was given)."""
    if steps is None:
        return
    entry: dict[str, Any] = {"step": step,
                             "ms": round((time.perf_counter() - started) * 1000, 2),
                             "tokens": budget.cost(out)}
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
    __slots__ = ("id", "row", "score", "found_by", "replaces")

    def __init__(self, node_id: str, row: sqlite3.Row) -> None:
        self.id = node_id
        self.row = row
        self.score = 0.0
        self.found_by: list[str] = []
        self.replaces: str | None = None


def _fuse(forest: Forest, located: list[dict[str, Any]],
          sniffed: list[dict[str, Any]]) -> list[_Candidate]:
    """Reciprocal rank fusion; ties by updated, then created (newest first), then id."""
    cands: dict[str, _Candidate] = {}
    for name, ranking in (("locate", located), ("sniff", sniffed)):
        for rank, item in enumerate(ranking, 1):
            cand = cands.get(item["id"])
            if cand is None:
                row = forest.catalog.row(item["id"])
                if row is None:
                    continue
                cand = cands[item["id"]] = _Candidate(item["id"], row)
            cand.score += 1.0 / (RRF_K + rank)
            cand.found_by.append(name)
    ordered = sorted(cands.values(), key=lambda c: c.id)
    ordered.sort(key=lambda c: (c.row["created"] or ""), reverse=True)
    ordered.sort(key=lambda c: (c.row["updated"] or ""), reverse=True)
    ordered.sort(key=lambda c: round(c.score, 10), reverse=True)
    return ordered


_SUPERSEDERS = ("SELECT src FROM edges WHERE rel = 'supersedes' AND dst = ? "
                "UNION SELECT dst FROM edges WHERE rel = 'superseded-by' AND src = ?")


def _superseders(forest: Forest, node_id: str, win: Window) -> list[str]:
    """Live nodes that supersede ``node_id`` (either end of the edge may declare it),
    inside the window when there is one; a pair that supersede each other cancel."""
    conn = forest.catalog.conn
    ids = {r[0] for r in conn.execute(_SUPERSEDERS, (node_id, node_id))} - {node_id}
    wsql, wargs = win.sql("n.")
    out = []
    for other in sorted(ids):
        if conn.execute(f"SELECT 1 FROM nodes n WHERE n.id = ?{wsql}",
                        (other, *wargs)).fetchone() is None:
            continue
        if node_id in {r[0] for r in conn.execute(_SUPERSEDERS, (other, other))}:
            continue
        out.append(other)
    return out


def _supersede(forest: Forest, fused: list[_Candidate], k: int, include_superseded: bool,
               named: set[str], win: Window) -> tuple[list[_Candidate], list[dict[str, str]]]:
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
        raise SchemaError(f"harvest: give 1 to {budget.SNIFF_TERMS_MAX} terms, got "
                          f"{len(terms)}")
    for term in terms:
        if not isinstance(term, str) or len(fold(term).strip()) < 2:
            raise SchemaError(f"harvest: term {term!r} is not a string of 2+ characters",
                              hint="Terms are literal substrings of at least 2 characters.")
        if len(term) > budget.HARVEST_TERM_CHARS_MAX:
            raise SchemaError(f"harvest: a term is {len(term)} characters, over "
                              f"{budget.HARVEST_TERM_CHARS_MAX}",
                              hint="Terms are short literal strings: a code, a name, a word.")


def _doc_counts(forest: Forest, terms: list[str]) -> dict[str, float]:
    """How many bodies hold each term, from the body index. A term with punctuation
    (``6.202``, ``nf-4412``) has candidate lines holding its pieces anywhere (``6`` and
    ``2026``): up to ``CONFIRM_MAX`` candidate bodies are read to count the ones that
    hold it; past that the candidates count. A term the index cannot plan counts as
    unknown: infinity."""
    vocab = forest.vocabulary() if terms else None
    conn = forest.catalog.conn
    counts: dict[str, float] = {}
    for term in terms:
        tp = bodyindex.plan(term, vocab)
        if tp is None:
            counts[term] = float("inf")
            continue
        rowids = sorted({rowid for expr in bodyindex.expressions(tp)
                         for rowid in _rowids(conn, expr)})
        gens = {rowid >> bodyindex.LINE_BITS for rowid in rowids}
        if tp.exact or len(gens) > CONFIRM_MAX:
            counts[term] = len(gens)
            continue
        counts[term] = sum(1 for gen, node_id in Scope().owners(forest, sorted(gens)).items()
                           if _holds(forest.body_lines(node_id), term,
                                     _of_gen(rowids, gen, bodyindex.LINE_BITS)))
    return counts


def _holds(lines: list[str], term: str, rowids: list[int]) -> bool:
    """Whether any of these candidate lines (rowids of one body) holds ``term``."""
    return any((r & bodyindex.LINE_MASK) < len(lines)
               and term in fold(lines[r & bodyindex.LINE_MASK]) for r in rowids)


def _add_rare(forest: Forest, terms: list[str], counts: dict[str, float], where: Scope,
              hits: dict[str, Hits]) -> None:
    """Every node holding a rare term (one in at most SWEEP_DEPTH bodies): the sweep
    stops once enough nodes hit more terms, which would leave out the node holding only
    the one exact code the question is about."""
    if len(terms) < 2:
        return
    for term in terms:
        if counts.get(term, float("inf")) > SWEEP_DEPTH:
            continue
        found = _indexed(forest, [term], where, SWEEP_DEPTH)
        for node_id in (found[0] if found else {}):
            if node_id in hits:
                continue
            try:
                body = forest.body(forest.read(node_id))
            except VineError:
                continue
            hit = Hits.of(term_lines(body, terms))
            if hit.terms:
                hits[node_id] = hit


def _weigh(hit: Hits, weight: list[float]) -> float:
    """A body's weight for the sweep: the weight of the terms found together on its
    best line (the unit sniff matches). Never more than the weight of the terms it
    holds anywhere."""
    on_line: dict[int, float] = {}
    for t, lines in hit.rows.items():
        for line in lines:
            on_line[line] = on_line.get(line, 0.0) + weight[t]
    return max(on_line.values(), default=0.0)


def _best(forest: Forest, hits: dict[str, Hits], weight: list[float], heat: dict[str, float],
          pool: int) -> list[tuple[str, float, float, Hits]]:
    """The ``pool`` best bodies by ``_weigh`` (with heat): ordinary nodes, then index
    nodes, each tier best first, ties to more weight held, more lines, then id; a body
    under ``SWEEP_FLOOR`` of the best one is left out. Returns (id, weight, weight held,
    hits). A body's weight is worked out only while the weight of the terms it holds
    (its ceiling) could still earn it a seat."""
    held = {node_id: sum(weight[t] for t in hit.terms) for node_id, hit in hits.items()}
    exact: dict[str, float] = {}

    def weigh(node_id: str) -> float:
        if node_id not in exact:
            exact[node_id] = _weigh(hits[node_id], weight)
        return exact[node_id]

    top = 0.0
    for node_id in sorted(hits, key=lambda i: -held[i]):
        if held[node_id] <= top:
            break
        top = max(top, weigh(node_id))
    floor = SWEEP_FLOOR * top
    ranked: list[tuple[str, float, float, Hits]] = []
    for index_tier in (False, True):
        need = pool - len(ranked)
        if need <= 0:
            break
        tier = sorted((i for i in hits if is_index(i) == index_tier and held[i] >= floor),
                      key=lambda i: -forest.score(held[i], heat[i]))
        seats: list[float] = []          # min-heap of the best ``need`` scores so far
        chosen = []
        for node_id in tier:
            if len(seats) >= need and forest.score(held[node_id], heat[node_id]) < seats[0]:
                break
            value = weigh(node_id)
            if value < floor:
                continue
            score = forest.score(value, heat[node_id])
            chosen.append((node_id, value, held[node_id], hits[node_id]))
            heapq.heappush(seats, score)
            if len(seats) > need:
                heapq.heappop(seats)
        chosen.sort(key=lambda r: (-forest.score(r[1], heat[r[0]]), -r[2], -r[3].count, r[0]))
        ranked += chosen[:need]
    return ranked


def _sweep(forest: Forest, terms: list[str], counts: dict[str, float], pool: int,
           win: Window) -> dict[str, Any]:
    """sniff's sweep, ranked for harvest. Each term weighs by its scarcity (inverse
    document frequency), so an exact code outranks a common word; a body scores the
    weight of the terms on its best line, so terms that answer together outrank the
    same words scattered over a long body. Ties go to the body holding more of the
    terms anywhere; heat as in sniff; index nodes last.
    A body scoring under ``SWEEP_FLOOR`` of the best one (a common word alone) is left
    out: rank fusion would credit it by its position alone.
    Returns sniff's shape (ids, with matches for index nodes)."""
    if not terms:
        return {"results": [], "scanned_nodes": 0}
    where = Scope()
    if win.active:
        wsql, wargs = win.sql("n.")
        where.sql += wsql
        where.args += wargs
    found = _indexed(forest, terms, where, SWEEP_DEPTH)
    if found is None:
        hits, scanned = _direct(forest, terms, where.sql, tuple(where.args))
    else:
        hits, scanned = found
        _add_rare(forest, terms, counts, where, hits)
    total = forest.catalog.count() or 1
    weight = [math.log((total + 1) / (min(counts.get(t, 1), total) + 0.5))
              * (CODE_WEIGHT if _is_code(t) else 1.0) for t in terms]
    whole = sum(weight) or 1.0
    heat = forest.heat.many(hits)
    results = []
    for node_id, value, _, hit in _best(forest, hits, weight, heat, pool):
        score = forest.score(value / whole, heat[node_id])
        item: dict[str, Any] = {"id": node_id, "score": score}
        if any(_is_code(terms[t]) for t in hit.terms):
            item["named"] = True        # an exact code of the question is in its body
        if is_index(node_id):
            rendered = _render(forest, node_id, score, heat[node_id], hit, terms)
            item["matches"] = rendered["matches"] if rendered else []
        results.append(item)
    forest.heat.deposit((r["id"] for r in results), LIST_DEPOSIT)
    forest.found(r["id"] for r in results)
    return {"results": results, "scanned_nodes": scanned}


def _item(forest: Forest, cand: _Candidate, terms: list[str], scarcity: list[str],
          global_matches: dict[str, list[dict[str, Any]]]
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
        matches = _refine(view, body, scarcity)
    item: dict[str, Any] = {
        "id": cand.id, "title": row["title"], "type": row["type"],
        "trail": row_list(row, "trail"), "summary": row["summary"] or "",
        "score": round(cand.score, 4), "found_by": list(cand.found_by),
        "body_tokens": row["body_tokens"], "matches": matches,
        "content": _content(view, body, matches),
    }
    for key in ("created", "updated"):
        if row[key]:
            item[key] = row[key]
    if cand.replaces:
        item["replaces"] = cand.replaces
    if row["type"] == "dataset":
        notes = node.section("Notes")
        text = notes[1].split("\n", 1)[1].strip() if notes and "\n" in notes[1] else ""
        if text:
            item["notes"] = budget.truncate_text(text, budget.NOTES)
    return item, _outline(view, budget.tokens(body))


def _refine(view: Node, body: str, scarcity: list[str]) -> list[dict[str, Any]]:
    """Matches in this node, term by term, rarest first, deduplicated, at most 5."""
    from .sniff import snippet

    lines = body.split("\n")
    matches: list[dict[str, Any]] = []
    seen: set[int] = set()
    for term in scarcity:
        hit, _ = matching_lines(body, [term])
        for index in hit[:PER_TERM_MATCHES]:
            if index in seen:
                continue
            seen.add(index)
            text = lines[index]
            matches.append({"section": view.section_of_line(index), "line": index + 1,
                            "term": term, "snippet": snippet(text, max(0, fold(text).find(term)))})
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
    return {"section": None, "outline": view.outline, "body_tokens": tokens,
            "hint": f"Body is {tokens} tokens; pick(id, section=<header>) reads one section."}


def _annotate(forest: Forest, results: list[dict[str, Any]]) -> None:
    """``supersedes`` / ``superseded_by`` between results, from succeeds and supersedes
    edges (either direction of declaration)."""
    ids = [r["id"] for r in results]
    if len(ids) < 2:
        return
    marks = ",".join("?" * len(ids))
    rows = forest.catalog.conn.execute(
        f"SELECT src, rel, dst FROM edges WHERE src IN ({marks}) AND dst IN ({marks}) AND "
        "rel IN ('succeeds', 'supersedes', 'precedes', 'superseded-by')", (*ids, *ids))
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
    """Within 4,000 tokens by dropping whole results from the tail; a lone result too
    big for the bundle comes as its outline (never a slice) instead of being dropped."""
    results = out["results"]
    while results and budget.cost(out) > budget.HARVEST:
        out["truncated"] = True
        if len(results) > 1:
            results.pop()
            continue
        item = results[0]
        outline = outlines.get(item["id"])
        if outline is None or item["content"] == [outline]:
            results.pop()
            continue
        item["content"] = [outline]
        if budget.cost(out) > budget.HARVEST:
            shell = {**out, "results": []}
            room = budget.HARVEST - budget.cost(shell) - budget.cost({**item, "content": []})
            budget.shrink_list(outline, "outline", max(room, 0))
