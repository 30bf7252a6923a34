"""``locate``: ranked entry points from curated metadata (never bodies)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import budget, hints
from ..errors import SchemaError
from ..forest import Forest, coverage_text, row_list
from ..heat import LIST_DEPOSIT
from ..kinds import BRANCH, SCOPES, kind_of
from ..stems import query_stems, search_languages
from ..text import fold
from ..translate import translated_stems
from ..windows import Window
from . import features, topk
from .succession import Successor, successors
from .terms import CODE_WEIGHT, Words, is_code, query_words

if TYPE_CHECKING:
    from ..canopy.hybrid import Hybrid

INCLUDES = ("outline",)
# The pool never needs more: the budget holds far fewer results.
MAX_K = 1000
# A successor outranks the node it succeeds or supersedes when it matches the query at
# least this share as strongly.
GIVE_WAY = 0.5
# A translation counts this share of what another form of the word would (the
# lexicon gives a word's usual senses, not the one a question means).
TRANSLATED = 0.75


def locate(
    forest: Forest,
    query: str,
    k: int,
    scope: str,
    type_filter: str | None,
    include: Sequence[str] | None,
    win: Window,
    hybrid: Hybrid = "auto",
    call: str = "locate",
) -> dict[str, Any]:
    """Search titles, aliases, tags and summaries; rank by strength and heat.

    The strength is the normalized lexical rank, or (``hybrid``) the reciprocal rank
    fusion of the lexical and the vector rankings when the forest's Canopy and a
    matching embedder are present; ``call`` names whose default ``auto`` follows (a
    harvest's locate leg says ``harvest``). The response's ``hybrid`` says which ran.
    """
    from ..canopy.hybrid import check, plan

    hybrid = check(hybrid)
    if scope not in SCOPES:
        raise SchemaError(f"locate: scope must be one of all, branches, notes; got {scope!r}")
    for item in include or []:
        if item not in INCLUDES:
            raise SchemaError(f"locate: include accepts only {list(INCLUDES)}, got {item!r}")
    k = min(max(1, k), MAX_K)
    kind = SCOPES[scope]
    on = features.active()
    words = query_words(query, drop_stopwords=on.stopwords)
    expr = expression(words, stems=on.stems, headers=on.headers, codes=on.codes)
    other = translated(words, expr) if on.translations and on.stems else ""
    if other:
        # A translation on hundreds of rows tells them apart little (a lexicon gives a
        # word's usual senses, not the one meant) and costs the most to score: left out.
        other = OR.join(topk.rare(other.split(OR), forest.locate_stats()))

    filters, args = _filters(kind, type_filter, win)
    pool = max(5 * k, 25)
    common: list[str] = []
    rarer: list[str] = []
    bound = 0.0
    if expr and on.headers:
        # A plain OR of phrases: its common words first, so that the bounded top of
        # topk.ranked scores each row exactly as the full query does.
        common, rarer, bound = topk.split(expr.split(OR), forest.locate_stats())
        expr = OR.join(common + rarer)
    top = topk.ranked(forest.catalog.conn, common, rarer, bound, pool) if common else None
    if top is None:
        top = _ranked(forest, expr, pool, "", []) if expr else []
    ranked = top if not filters else _ranked(forest, expr, pool, filters, args)
    if other:
        top = _with_translations(forest, top, other, pool, "", [])
        ranked = (
            top if not filters else _with_translations(forest, ranked, other, pool, filters, args)
        )
    best = top[0][1] if top else 0.0
    strengths = [(rowid, round(rank / best, 4) if best < 0 else 1.0) for rowid, rank in ranked]
    fusion = plan(
        forest, hybrid, query, call, has_terms=bool(expr), pool=pool * 4 if filters else pool
    )
    lexical_strength = dict(strengths)
    if fusion.ran:
        strengths = _fused(forest, ranked, fusion.vector, filters, args, pool)
    rows = _rows(forest, [rowid for rowid, _ in strengths])
    heat = forest.heat.many(r["id"] for r in rows.values())
    scored: list[_Scored] = []
    for rowid, strength in strengths:
        r = rows.get(rowid)
        if r is None:
            continue
        scored.append(_Scored(forest.score(strength, heat[r["id"]]), strength, r))
    scored.sort(key=lambda s: (-s.score, s.row["ord"]))
    scored, later = _succession(forest, scored, k, give=on.succession)
    results = [
        _item(forest, s.row, s.score, heat[s.row["id"]], include, later.get(s.row["id"]))
        for s in scored[:k]
    ]
    out: dict[str, Any] = {"results": results, "truncated": len(scored) > k, "hybrid": fusion.info}
    if win.active:
        out["window"] = win.echo()
    if not scored:
        out["searched"] = forest.catalog.conn.execute(
            "SELECT count(*) FROM nodes n WHERE 1=1" + filters, args
        ).fetchone()[0]
        out["hint"] = (
            (
                "locate reads titles, aliases, tags, summaries and section headers "
                "only; to find an exact string inside bodies use "
                f"{hints.call('sniff', 'terms')}."
            )
            if expr
            else (
                "The query holds only function words (what, the, qual, de, ...) or punctuation: "
                "nothing to search for. Name the subject: a topic, a name, a code."
            )
        )
    elif call != "harvest":
        # (harvest's locate leg is no response of its own: its pool is ranked whole,
        # and harvest's own budget holds what it returns.)
        matched = len(scored)
        budget.shrink_with_hint(
            out,
            "results",
            budget.LOCATE,
            lambda kept: (
                f"{kept} of the top {min(k, matched)} results fit the 800-token "
                "budget; the rest exist. Ask for a smaller k, drop include, or "
                "narrow the query."
            ),
        )
    forest.heat.deposit((r["id"] for r in out["results"]), LIST_DEPOSIT)
    forest.found(r["id"] for r in out["results"])
    if call == "harvest" and fusion.ran:
        # For harvest's fusion only (it removes the key, past the budget): each result's
        # lexical strength.
        lexical = {s.row["id"]: lexical_strength.get(s.row["ord"]) for s in scored[:k]}
        out["_lexical"] = {r["id"]: lexical.get(r["id"]) for r in out["results"]}
    return out


OR = " OR "
SURFACE = ("title", "aliases", "tags", "summary")
STEMS = ("title_stems", "label_stems", "summary_stems")


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _columns(names: tuple[str, ...]) -> str:
    return "{" + " ".join(names) + "}"


def expression(
    words: Words, *, stems: bool = True, headers: bool = True, codes: bool = True
) -> str:
    """The FTS5 expression for a query's words; no input is a syntax error.

    Every word is quoted and the words are OR-joined over the curated fields; a word with
    punctuation (``NF-4412``) is searched as a phrase too, so the exact form ranks first.
    With ``stems``, each word's stems (in the query's languages) are searched in the stem
    columns, so ``deadlines`` finds ``deadline`` but ranks it below an exact match. With
    ``headers``, section headers are searched too (at a low weight). With ``codes``, an
    exact identifier (``NF-4412``, ``L2503``) weighs ``CODE_WEIGHT`` times a word, as in
    harvest's body sweep: bm25 sums what each phrase of the query earns, so the
    identifier is asked that many times. (A word's translations are another
    expression, :func:`translated`.)
    """
    surface = [_quoted(p) for p in words.phrases] + [_quoted(t) for t in words.tokens]
    if not surface:
        return ""
    if codes:
        named = [w for w in (*words.phrases, *words.tokens) if is_code(fold(w))]
        surface += [_quoted(w) for w in named] * (CODE_WEIGHT - 1)
    langs = search_languages(words.langs)
    forms = [_quoted(s) for word in words.stem for s in query_stems(word, langs)] if stems else []
    forms = list(dict.fromkeys(forms))
    if headers:
        # Words and stem tokens never meet (a stem token starts with a digit): no column
        # filter is needed, and FTS5 answers faster without one.
        return OR.join(surface + forms)
    expr = f"{_columns(SURFACE)} : ({' OR '.join(surface)})"
    if forms:
        expr += f" OR {_columns(STEMS)} : ({' OR '.join(forms)})"
    return expr


def translated(words: Words, expr: str) -> str:
    """The FTS5 expression of a query's words in the other language: each word's
    translations (:mod:`monkeyllm.translate`) as the stem tokens the catalog's stem
    columns hold: a translation matches as another form of the word would, so the
    word itself and its forms in the question's language rank first. Those the query
    already searches are left out; empty when there are none."""
    searched = set(expr.split(OR))
    forms = [_quoted(s) for word in words.stem for s in translated_stems(word, words.langs)]
    return OR.join(f for f in dict.fromkeys(forms) if f not in searched)


def _with_translations(
    forest: Forest,
    ranked: list[tuple[int, float]],
    other: str,
    pool: int,
    filters: str,
    args: list[Any],
) -> list[tuple[int, float]]:
    """The best ``pool`` rows by the query's bm25 plus ``TRANSLATED`` times that of its
    translations (bm25 is a sum over phrases, so this is the whole query's rank with
    the translated phrases weighed down). Each ranking is its best ``pool`` rows: a row
    below one of them gets nothing from it (it could add at most that ranking's last
    rank)."""
    translated_ranks = _ranked(forest, other, pool, filters, args)
    if not translated_ranks:
        return ranked
    rank = dict(ranked)
    for rowid, value in translated_ranks:
        rank[rowid] = rank.get(rowid, 0.0) + TRANSLATED * value
    return sorted(rank.items(), key=lambda item: (item[1], item[0]))[:pool]


@dataclass
class _Scored:
    score: float
    strength: float
    row: sqlite3.Row


def _succession(
    forest: Forest, scored: list[_Scored], k: int, *, give: bool
) -> tuple[list[_Scored], dict[str, list[Successor]]]:
    """The ranking after ``give_way`` (when ``give``) and the successors of its top
    ``k``. Only nodes in the top ``k`` are asked for theirs: a node only ever moves
    down, so one below it cannot change the top; each node a move lifts into the
    top is asked in turn."""
    later: dict[str, list[Successor]] = {}
    asked: set[str] = set()
    while True:
        ask = [s.row["id"] for s in scored[:k] if s.row["id"] not in asked]
        if not ask:
            return scored, later
        later.update(successors(forest, ask))
        asked.update(ask)
        if give:
            scored = give_way(scored, later)


def give_way(scored: list[_Scored], later: dict[str, list[Successor]]) -> list[_Scored]:
    """The ranking with each superseded node moved to just below its successor, when the
    successor ranks lower but matches the query at least ``GIVE_WAY`` as strongly (an
    older node the query names much better, by its own title, stays on top). The moved
    node takes its successor's score, so scores still descend."""
    order = list(scored)
    for _ in range(len(order) ** 2):
        position = {s.row["id"]: i for i, s in enumerate(order)}
        move = None
        for i, s in enumerate(order):
            for heir in later.get(s.row["id"], []):
                j = position.get(heir.id, -1)
                if j > i and order[j].strength >= GIVE_WAY * s.strength:
                    move = (i, j)
                    break
            if move:
                break
        if move is None:
            return order
        i, j = move
        old = order.pop(i)
        old.score = min(old.score, order[j - 1].score)
        order.insert(j, old)
    return order


def _filters(kind: str | None, type_filter: str | None, win: Window) -> tuple[str, list[Any]]:
    sql, args = "", []
    if kind:
        sql += " AND n.kind = ?"
        args.append(kind)
    if type_filter:
        sql += " AND n.type = ?"
        args.append(type_filter)
    wsql, wargs = win.sql("n.")
    return sql + wsql, args + wargs


def _ranked(
    forest: Forest, expr: str, pool: int, filters: str, args: list[Any]
) -> list[tuple[int, float]]:
    """``(rowid, rank)`` of the best matches, best first (rank is bm25: lower is better)."""
    if filters:
        sql = (
            "SELECT f.rowid, f.rank FROM nodes_fts f JOIN nodes n ON n.rowid = f.rowid "
            f"WHERE nodes_fts MATCH ?{filters} ORDER BY f.rank, f.rowid LIMIT ?"
        )
    else:
        sql = (
            "SELECT rowid, rank FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY rank, rowid LIMIT ?"
        )
    try:
        return forest.catalog.conn.execute(sql, (expr, *args, pool)).fetchall()
    except sqlite3.OperationalError:
        return []


def _fused(
    forest: Forest,
    ranked: list[tuple[int, float]],
    vector: list[tuple[str, float]],
    filters: str,
    args: list[Any],
    pool: int,
) -> list[tuple[int, float]]:
    """The lexical ranking fused with the vector one (kept to the same filters)."""
    ids = [node_id for node_id, _ in vector]
    rowid_of = {
        node_id: rowid
        for rowid, node_id in forest.catalog.conn.execute(
            "SELECT n.rowid, n.id FROM nodes n WHERE n.id IN (SELECT value FROM json_each(?))"
            + filters,
            (json.dumps(ids), *args),
        )
    }
    nearest = [rowid_of[node_id] for node_id in ids if node_id in rowid_of][:pool]
    from ..canopy.hybrid import fuse

    return fuse([rowid for rowid, _ in ranked], nearest)


# What a result is made of (reading every column of a pool costs twice as much).
_COLUMNS = "id, kind, type, title, summary, trail, body_tokens, coverage, outline"


def _rows(forest: Forest, rowids: list[int]) -> dict[int, sqlite3.Row]:
    if not rowids:
        return {}
    rows = forest.catalog.rows(
        f"SELECT rowid AS ord, {_COLUMNS} FROM nodes "
        "WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    )
    return {r["ord"]: r for r in rows}


def _item(
    forest: Forest,
    r: sqlite3.Row,
    score: float,
    heat: float,
    include: Sequence[str] | None,
    heirs: list[Successor] | None,
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": r["id"],
        "kind": kind_of(r["kind"]),
        "type": r["type"],
        "title": r["title"],
        "summary": r["summary"],
        "trail": row_list(r, "trail"),
        "score": score,
        "heat": heat,
        "body_tokens": r["body_tokens"],
    }
    if r["kind"] == BRANCH and r["coverage"]:
        item["coverage"] = coverage_text(r["coverage"])
    if include and "outline" in include:
        item["outline"] = row_list(r, "outline")
    if heirs:
        item["superseded_by"] = [h.id for h in heirs]
    return item
