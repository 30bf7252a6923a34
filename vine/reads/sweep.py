"""harvest's sweep of the bodies: sniff's index, ranked for a question. Each term
weighs by its scarcity, a body by the terms on its best line, and a body holding only a
common word is left out before the fusion."""

from __future__ import annotations

import heapq
import math
from typing import Any

from .. import bodyindex
from ..bodyindex import Vocabulary
from ..errors import VineError
from ..forest import Forest
from ..heat import LIST_DEPOSIT
from ..ids import is_index
from ..stems import forms_start, same_stem, search_languages, stemmable, stems
from ..text import fold
from ..translate import translations
from ..windows import Window
from .sniff import (
    Forms,
    Hits,
    Scope,
    direct_hits,
    indexed_hits,
    of_gen,
    render_hit,
    term_gens,
    term_lines,
    term_rows,
)
from .terms import CODE_WEIGHT, STOPWORDS, is_code

SWEEP_DEPTH = 50  # nodes the sweep confirms before it may stop early
CONFIRM_MAX = 64  # bodies read to count those holding a term with punctuation
SWEEP_FLOOR = 0.1  # a body scoring under this share of the best one is not ranked
FORMS_MAX = 12  # word forms searched for one term, at most
FORM_MIN = 4  # letters of the shortest word form searched
TRANSLATED_MAX = 8  # body words searched for one term's translations, at most


def word_forms(
    forest: Forest, terms: list[str], langs: tuple[str, ...], *, translate: bool = False
) -> Forms:
    """The body words that share a stem with each word-like term, in the question's
    languages (``deadlines`` -> ``deadline``, ``prazos`` -> ``prazo``), from the body
    index's vocabulary: whole words, besides the term itself (which sniff finds inside
    longer words too). Codes are never expanded, and neither function words nor words
    under ``FORM_MIN`` letters are forms; a term with no other form is left out.

    With ``translate``, the body words sharing a stem with the term's translations in
    the other language (:mod:`monkeyllm.translate`) are its forms too (``prazo`` ->
    ``deadline``, ``deadlines``), up to ``TRANSLATED_MAX`` of them after its own, none
    of them a common token of the body index (``bodyindex.COMMON_LINES`` lines)."""
    vocab = forest.vocabulary() if terms else None
    asked = langs
    langs = search_languages(langs)
    out: dict[str, tuple[str, ...]] = {}
    for term in terms:
        if vocab is None or is_code(term) or not stemmable(term):
            continue
        found = _forms_of(vocab, term, langs, exclude=term)[:FORMS_MAX]
        if translate:
            more: list[str] = []
            for lang, target in translations(term, asked):
                if vocab.containing_all([target]):
                    more.append(target)
                more += _forms_of(vocab, target, (lang,), exclude=term)
            # A translation on thousands of lines (a common token of the body index)
            # tells the bodies apart little and costs the sweep the most: left out, as
            # locate leaves out one on hundreds of rows.
            found += [w for w in dict.fromkeys(more) if w not in found and not vocab.lines(w)][
                :TRANSLATED_MAX
            ]
        if found:
            out[term] = tuple(found)
    return out


def _forms_of(vocab: Vocabulary, word: str, langs: tuple[str, ...], *, exclude: str) -> list[str]:
    """The vocabulary's words sharing a stem with ``word`` in ``langs``, shortest first:
    none containing ``exclude`` (sniff finds those already), no function words, none
    under ``FORM_MIN`` letters."""
    roots = [s for lang in langs for s in stems(word, lang)]
    if not roots:
        return []
    start = forms_start(roots)
    found = sorted(
        w
        for w in vocab.containing(start, prefix=True)
        if exclude not in w
        and len(w) >= FORM_MIN
        and w not in STOPWORDS
        and same_stem(w, word, langs)
    )
    return sorted(found, key=len)


def term_weights(forest: Forest, terms: list[str], counts: dict[str, float]) -> dict[str, float]:
    """Each term's weight: its scarcity over the bodies (inverse document frequency),
    doubled for an exact identifier."""
    total = forest.catalog.count() or 1
    return {
        t: math.log((total + 1) / (min(counts.get(t, 1), total) + 0.5))
        * (CODE_WEIGHT if is_code(t) else 1.0)
        for t in terms
    }


def doc_counts(
    forest: Forest,
    terms: list[str],
    forms: Forms | None = None,
    seen: dict[str, list[int]] | None = None,
) -> dict[str, float]:
    """How many bodies hold each term, from the body index. A term with punctuation
    (``6.202``, ``nf-4412``) has candidate lines holding its pieces anywhere (``6`` and
    ``2026``): up to ``CONFIRM_MAX`` candidate bodies are read to count the ones that
    hold it; past that the candidates count. A term the index cannot plan counts as
    unknown: infinity."""
    vocab = forest.vocabulary() if terms else None
    conn = forest.catalog.conn
    counts: dict[str, float] = {}
    for term in terms:
        assert vocab is not None  # read above whenever there are terms
        tp = bodyindex.plan_forms(term, forms.get(term, ()) if forms else (), vocab)
        if tp is None:
            counts[term] = float("inf")
            continue
        rowids = term_rows(conn, term, tp, seen, vocab)
        gens = term_gens(term, rowids, seen)
        if tp.exact or len(gens) > CONFIRM_MAX:
            counts[term] = len(gens)
            continue
        counts[term] = sum(
            1
            for gen, node_id in Scope().owners(forest, sorted(gens)).items()
            if _holds(forest.body_lines(node_id), term, of_gen(rowids, gen, bodyindex.LINE_BITS))
        )
    return counts


def _holds(lines: list[str], term: str, rowids: list[int]) -> bool:
    """Whether any of these candidate lines (rowids of one body) holds ``term``."""
    return any(
        (r & bodyindex.LINE_MASK) < len(lines) and term in fold(lines[r & bodyindex.LINE_MASK])
        for r in rowids
    )


def _add_rare(
    forest: Forest,
    terms: list[str],
    counts: dict[str, float],
    where: Scope,
    hits: dict[str, Hits],
    forms: Forms | None,
    seen: dict[str, list[int]] | None,
) -> None:
    """Every node holding a rare term (one in at most SWEEP_DEPTH bodies): the sweep
    stops once enough nodes hit more terms, which would leave out the node holding only
    the one exact code the question is about."""
    if len(terms) < 2:
        return
    for term in terms:
        if counts.get(term, float("inf")) > SWEEP_DEPTH:
            continue
        found = indexed_hits(forest, [term], where, SWEEP_DEPTH, forms, seen)
        for node_id in found[0] if found else {}:
            if node_id in hits:
                continue
            try:
                body = forest.body(forest.read(node_id))
            except VineError:
                continue
            hit = Hits.of(term_lines(body, terms, forms))
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


def _best(
    forest: Forest, hits: dict[str, Hits], weight: list[float], heat: dict[str, float], pool: int
) -> list[tuple[str, float, float, Hits]]:
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
        tier = sorted(
            (i for i in hits if is_index(i) == index_tier and held[i] >= floor),
            key=lambda i: -forest.score(held[i], heat[i]),
        )
        seats: list[float] = []  # min-heap of the best ``need`` scores so far
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


def sweep(
    forest: Forest,
    terms: list[str],
    counts: dict[str, float],
    pool: int,
    win: Window,
    forms: Forms | None = None,
    seen: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
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
    found = indexed_hits(forest, terms, where, SWEEP_DEPTH, forms, seen)
    if found is None:
        hits, scanned = direct_hits(forest, terms, where.sql, tuple(where.args), forms)
    else:
        hits, scanned = found
        _add_rare(forest, terms, counts, where, hits, forms, seen)
    weights = term_weights(forest, terms, counts)
    weight = [weights[t] for t in terms]
    whole = sum(weight) or 1.0
    heat = forest.heat.many(hits)
    results = []
    for node_id, value, _, hit in _best(forest, hits, weight, heat, pool):
        score = forest.score(value / whole, heat[node_id])
        item: dict[str, Any] = {"id": node_id, "score": score}
        if any(is_code(terms[t]) for t in hit.terms):
            item["named"] = True  # an exact code of the question is in its body
        if is_index(node_id):
            rendered = render_hit(forest, node_id, score, heat[node_id], hit, terms, forms)
            item["matches"] = rendered["matches"] if rendered else []
        results.append(item)
    forest.heat.deposit((r["id"] for r in results), LIST_DEPOSIT)
    forest.found(r["id"] for r in results)
    return {"results": results, "scanned_nodes": scanned}
