"""harvest's evidence one typed edge away: the linked node that holds what a hit lacks.

A question often needs two nodes, the second reachable only through a link from the
first ("who leads project X, and where does that person live?": the project links to
its leader, whose own node says where they live). For each hit, the question's terms it
does not carry (in its metadata or its body) are what a neighbour may supply: a node
linked to it, either direction, whose title, aliases, tags or summary carry some of
them, or whose link to it is named by one (``led-by`` answers "who leads"). Index nodes
are never brought in this way: a branch lists its region, it does not answer.

A question that asks *who* is missing a person until one is found, as much as all its
other missing words together: a person linked to a hit that is not one supplies it; so
does a place for a question that asks *where*. A
newer version of the source (``succeeds``, ``supersedes``) supplies all of what the
source lacks, an older one half.

A link carries evidence of its own, whatever the words: a neighbour scores its source's
score times ``LINK_PRIOR + (1 - LINK_PRIOR) * share``, where share is the part (by term
weight) of what the source lacks that it supplies: all of it, and it ranks right after
its source; none, half the source's. So it competes for a seat with the direct
hits and never displaces one that scored higher (a tie goes to the hit).

A neighbour the rankers found as well counts both (harvest's ``support``): its own score
plus what the terms it supplies add to the prior (``credit``), and still no more than
its source's score, so it ranks right after its source at most.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..forest import Forest
from ..stems import LANGUAGES, stemmable, stems
from ..text import TOKEN, fold
from .sniff import Forms, finder

if TYPE_CHECKING:
    import sqlite3

LINK_PRIOR = 0.5  # the share a typed link alone is credited with
NEWER, OLDER = 1.0, 0.5  # the shares of a newer and an older version of the source
NEIGHBOURS_MAX = 64  # edges read per source, at most
KIND_WEIGHT = 2.0  # what the asked kind weighs: twice all the other missing words
KIND = "\0"  # prefix of the missing "who" / "where" of a question (then the entity kind)
# Version rels as stored, and the share of the node at the link's far end when the
# source declares the link (the near end's share when the other end declares it).
_LATER = {"succeeds", "supersedes"}  # the declaring node is the newer one
_EARLIER = {"precedes", "superseded-by"}  # the declaring node is the older one

_OUT = (
    "SELECT e.rel, e.dst FROM edges e JOIN nodes n ON n.id = e.dst "
    "WHERE e.src = ? AND n.kind != 'branch' ORDER BY e.ord LIMIT ?"
)
_IN = (
    "SELECT e.rel, e.src FROM edges e JOIN nodes n ON n.id = e.src "
    "WHERE e.dst = ? AND n.kind != 'branch' ORDER BY n.rowid LIMIT ?"
)
_META = (
    "SELECT id, title, summary, aliases, tags, type, entity_kind FROM nodes "
    "WHERE id IN (SELECT value FROM json_each(?))"
)


@dataclass
class Linked:
    """A neighbour brought in by an edge: its id, score, and the edge it came by."""

    id: str
    score: float
    source: str
    rel: str
    supplies: list[str]
    # What the terms it supplies add to the link's own prior (a version's share aside),
    # and its source's score.
    credit: float = 0.0
    source_score: float = 0.0


def _stems_of(text: str) -> set[str]:
    return {
        s
        for token in TOKEN.findall(text)
        if stemmable(fold(token))
        for lang in LANGUAGES
        for s in stems(token, lang)
    }


def _carries(folded: str, text_stems: set[str] | None, term: str, forms: Forms) -> bool:
    """Whether a text holds a term: the term as a substring or one of its word forms as
    a word (as the sweep finds them), or a word sharing its stem."""
    if finder(term, forms)(folded) >= 0:
        return True
    if text_stems is None or not stemmable(term):
        return False
    return any(s in text_stems for lang in LANGUAGES for s in stems(term, lang))


def _meta_text(row: sqlite3.Row) -> str:
    parts = [row["title"] or "", row["summary"] or ""]
    for key in ("aliases", "tags"):
        try:
            values = json.loads(row[key] or "[]")
        except ValueError:
            values = []
        parts.extend(str(v) for v in values if isinstance(v, str))
    return " ".join(parts)


def _is_kind(row: sqlite3.Row | None, kind: str) -> bool:
    return row is not None and row["type"] == "entity" and row["entity_kind"] == kind


def linked(
    forest: Forest,
    sources: list[tuple[str, float, str]],
    terms: list[str],
    weight: Mapping[str, float],
    forms: Forms,
    *,
    asks: frozenset[str] = frozenset(),
    older: bool = False,
) -> list[Linked]:
    """The neighbours of the ``sources`` (``(id, score, text)``: a hit, its fused score,
    its metadata and body) that supply what the source lacks, best first (each node
    once); the forest's own ``_meta`` nodes are left out."""
    conn = forest.catalog.conn
    dialect = forest.dialect
    mean = sum(weight.get(t, 0.0) for t in terms) / len(terms) if terms else 0.0
    best: dict[str, Linked] = {}
    for source, score, text in sources:
        folded = fold(text)
        missing = {t: weight.get(t, 0.0) for t in terms if not _carries(folded, None, t, forms)}
        if asks:
            row = forest.catalog.row(source)
            found = (sum(missing.values()) or mean) * KIND_WEIGHT
            missing.update(
                (KIND + kind, found)
                for kind in sorted(asks)
                if kind == "place" or not _is_kind(row, kind)
            )
        lacking = sum(missing.values())
        if lacking <= 0:
            continue
        edges = [
            (rel, dst, _version(rel, out=True, older=older))
            for rel, dst in conn.execute(_OUT, (source, NEIGHBOURS_MAX))
        ]
        edges += [
            (dialect.inverse(rel), src, _version(rel, out=False, older=older))
            for rel, src in conn.execute(_IN, (source, NEIGHBOURS_MAX))
        ]
        edges = [
            (rel, other, version)
            for rel, other, version in edges
            if other != source and not other.startswith("_meta/")
        ]
        if not edges:
            continue
        rows = {
            r["id"]: r
            for r in forest.catalog.rows(
                _META, (json.dumps(sorted({other for _, other, _ in edges})),)
            )
        }
        for rel, other, version in edges:
            row = rows.get(other)
            if row is None:
                continue
            meta = _meta_text(row)
            meta_folded, meta_stems = fold(meta), _stems_of(meta)
            rel_text = rel.replace("-", " ")
            rel_folded, rel_stems = fold(rel_text), _stems_of(rel_text)
            supplies = [
                t
                for t in missing
                if not t.startswith(KIND)
                and (
                    _carries(meta_folded, meta_stems, t, forms)
                    or _carries(rel_folded, rel_stems, t, forms)
                )
            ]
            supplies += [
                t for t in missing if t.startswith(KIND) and _is_kind(row, t.removeprefix(KIND))
            ]
            supplied = min(1.0, sum(missing[t] for t in supplies) / lacking)
            share = max(supplied, version)
            value = score * (LINK_PRIOR + (1 - LINK_PRIOR) * share)
            held = best.get(other)
            if held is None or value > held.score:
                best[other] = Linked(
                    other,
                    value,
                    source,
                    rel,
                    [t for t in supplies if not t.startswith(KIND)],
                    score * (1 - LINK_PRIOR) * supplied,
                    score,
                )
    return sorted(best.values(), key=lambda n: (-n.score, n.id))


def _version(stored: str, *, out: bool, older: bool = False) -> float:
    """The share a version link gives the node at its far end from the source: a newer
    version all of what the source lacks, an older one half (``out``: the source
    declares the link); the other way round when the question asks for an old one."""
    if stored not in _LATER | _EARLIER:
        return 0.0
    far_is_newer = (stored in _EARLIER) == out
    return NEWER if far_is_newer != older else OLDER
