"""Budgets as properties (primitives "Budgets and truncation", forest-format §6.1-6.7, §7).

One forest is built per module to stress every budget: a branch with 80 children
with long summaries, a hub with 50 typed links out and 50 in, long titles and
tags, a body far over 4000 tokens with many sections, a body that is one giant
paragraph, 80 bodies sharing a word, and a dataset with wide rows. Hypothesis
then draws call arguments and checks, for every response:

* it fits its budget by ``monkeyllm.budget.cost`` (a single named section of
  pick has no cap);
* a list that lost items says ``truncated`` (and a list that did not, does not);
* items are whole: summaries equal the files' frontmatter, snippets are short
  windows of real lines, pick bodies are exact substrings of the files;
* nothing is ``E_INTERNAL``.

The expectations are computed from the files written here, not from the engine.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from monkeyllm.indexing import LANGUAGE_SAMPLE
from monkeyllm.language import languages
from monkeyllm.reads.terms import STOPWORDS
from monkeyllm.stems import node_languages, search_languages, stems

from .kit import (
    ALL_IDS,
    ELLIPSIS,
    LOCATE,
    LOOK,
    LOOK_BATCH,
    NODE_IDS,
    SETTINGS,
    STRESS,
    WORDS,
    Model,
    _tokens,
    fits,
    no_internal,
)


def _clip(text: str, n: int) -> str:
    """§7 text cut."""
    return text if _tokens(text) <= n else text[: 4 * n].rstrip() + ELLIPSIS


# -- the forest --------------------------------------------------------------------------------


def test_the_forest_stresses_what_it_should(model: Model) -> None:
    assert model.ids == ALL_IDS
    assert len(model.children["big/_index"]) == 80
    assert len(model.out_links["graph/hub"]) == 50 and len(model.in_links["graph/hub"]) >= 50
    assert _tokens(model.body["docs/manual"]) > 8000
    assert _tokens(model.body["docs/paragraph"]) > 4000 and "\n" not in model.body["docs/paragraph"]
    assert sum("zebrafish" in b for b in model.body.values()) > 80


# -- strategies -----------------------------------------------------------------------------------


def words(min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[list[str]]:
    return st.lists(
        st.sampled_from([*WORDS, "nomatchword", "hub", "spoke", "note", "huge"]),
        min_size=min_size,
        max_size=max_size,
    )


# -- locate (800) -------------------------------------------------------------------------------


def _fts_tokens(*parts: Any) -> set[str]:
    found: set[str] = set()
    for part in parts:
        values = part if isinstance(part, list) else [part]
        for v in values:
            found.update(re.findall(r"[^\W_]+", str(v or "").lower()))
    return found


def _stem_tokens(words: set[str], langs: tuple[str, ...]) -> set[str]:
    return {lang + s for w in words for lang in langs for s in stems(w, lang)}


def _locate_matches(
    model: Model, query: list[str], scope: str, type_filter: str | None
) -> set[str]:
    """What locate's contract says matches: a query word (not a function word, of 3+
    letters) or its stem in the query's languages, against a node's title, aliases,
    tags, summary and headers or their stems in the node's language."""
    asked = {w for w in query if w not in STOPWORDS and len(w) >= 3}
    asked_stems = _stem_tokens(asked, search_languages(languages(" ".join(query))))
    hits = set()
    for node_id, meta in model.meta.items():
        toks = _fts_tokens(
            meta.get("title"),
            meta.get("aliases") or [],
            meta.get("tags") or [],
            meta.get("summary"),
            model.outline(node_id),
        )
        text = f"{meta.get('title')} {meta.get('summary')}"
        langs = node_languages(text, lambda i=node_id: model.body[i][:LANGUAGE_SAMPLE])
        if not toks & asked and not _stem_tokens(toks, langs) & asked_stems:
            continue
        if scope == "branches" and not model.is_branch(node_id):
            continue
        if scope in ("notes", "bananas") and model.is_branch(node_id):
            continue
        if type_filter and meta.get("type") != type_filter:
            continue
        hits.add(node_id)
    return hits


@SETTINGS
@given(
    query=words(),
    k=st.integers(1, 60),
    scope=st.sampled_from(["all", "branches", "notes", "bananas"]),
    include=st.sampled_from([None, ["outline"]]),
    type_filter=st.sampled_from([None, "note", "entity", "branch", "dataset"]),
)
@example(query=["huge"], k=1, scope="all", include=None, type_filter=None)
@example(query=["zebrafish", "harbor"], k=60, scope="all", include=["outline"], type_filter=None)
def test_locate_fits_and_never_hides_a_cut(
    model: Model,
    query: list[str],
    k: int,
    scope: str,
    include: list[str] | None,
    type_filter: str | None,
) -> None:
    out = model.vine.locate(
        " ".join(query), k=k, scope=scope, include=include, type_filter=type_filter
    )
    no_internal(out)
    fits(out, LOCATE)
    matched = _locate_matches(model, query, scope, type_filter)
    got = [r["id"] for r in out["results"]]
    assert len(got) == len(set(got)) and set(got) <= matched
    assert len(got) <= k
    assert out["truncated"] is (len(got) < len(matched)), (len(got), len(matched))
    if matched:
        # the "nothing matched, try sniff" extras are for a real miss, not a budget cut
        assert "searched" not in out, (sorted(matched)[:5], out)
    for r in out["results"]:
        assert r["summary"] == model.summary(r["id"])
        assert r["title"] == model.meta[r["id"]]["title"]
        if include:
            assert r["outline"] == model.outline(r["id"])


# -- look (500, batch 2000) ---------------------------------------------------------------------


LOOK_FIELDS = [
    "summary",
    "title",
    "tags",
    "edges_out",
    "edges_in",
    "children",
    "outline",
    "query_manual",
    "sample_rows",
    "notes",
    "stats",
    "aliases",
    "cross_trails",
    "coverage",
    "type",
]


def _check_digest(model: Model, d: dict[str, Any], fields: list[str] | None) -> None:
    node_id = d["id"]
    shed = d.get("truncated_fields", [])
    assert d.get("truncated", False) is bool(shed)
    full = {
        "edges_out": min(12, len(model.out_links[node_id])),
        "edges_in": min(12, len(model.in_links[node_id])),
        "children": len(model.children[node_id]) if model.is_branch(node_id) else None,
        "outline": None if model.is_branch(node_id) else len(model.outline(node_id)),
    }
    for key, n in full.items():
        if n is None or key not in d:
            continue
        assert len(d[key]) <= n
        if len(d[key]) < n:
            assert key in shed, (key, len(d[key]), n, shed)
    for key in shed:
        if key in full:
            assert full[key] is not None and len(d.get(key, [])) < full[key], key
        elif key in ("summary", "title"):
            assert d[key] != model.meta[node_id].get(key), (
                f"{key!r} is listed in truncated_fields but came back whole"
            )
        elif key in ("tags", "aliases"):
            assert key not in d, key
            assert model.meta[node_id].get(key), (
                f"{key!r} is listed in truncated_fields but the node has none"
            )
        elif key != "notes":
            assert key not in d, key
    if "summary" in d and "summary" not in shed:
        assert d["summary"] == model.summary(node_id)
    if "title" in d and "title" not in shed:
        assert d["title"] == model.meta[node_id]["title"]
    for edge in d.get("edges_out", []):
        assert edge["target_summary"] == _clip(model.summary(edge["target"]), 25)
    for child in d.get("children", []):
        assert child["summary"] == _clip(model.summary(child["id"]), 25)
    if "stats" in d:
        assert d["stats"]["degree"] == len(model.out_links[node_id]) + len(model.in_links[node_id])
        assert d["stats"]["body_tokens"] == _tokens(model.body[node_id])
    if fields is not None:
        assert set(d) <= {"id", "truncated", "truncated_fields", *fields}


@SETTINGS
@given(
    node_id=NODE_IDS,
    fields=st.one_of(
        st.none(), st.lists(st.sampled_from(LOOK_FIELDS), min_size=1, max_size=5, unique=True)
    ),
)
@example(node_id="misc/huge-title", fields=None)
@example(node_id="misc/huge-summary", fields=["summary", "edges_out"])
@example(node_id="data/many-tables", fields=None)
@example(node_id="graph/hub", fields=None)
def test_look_fits_and_lists_what_it_shed(
    model: Model, node_id: str, fields: list[str] | None
) -> None:
    out = model.vine.look(node_id, fields=fields)
    no_internal(out)
    fits(out, LOOK)
    if node_id not in model.meta:
        assert out["error"]["code"] == "E_NOT_FOUND"
        return
    _check_digest(model, out, fields)


@SETTINGS
@given(
    ids=st.lists(NODE_IDS, min_size=1, max_size=10),
    fields=st.sampled_from([None, ["summary"], ["edges_out", "edges_in"]]),
)
@example(ids=STRESS, fields=None)
@example(ids=["misc/huge-title", "misc/huge-summary"], fields=None)
@example(ids=["misc/long-title", "graph/hub", "big/_index"], fields=None)
def test_look_batch_fits_2000(model: Model, ids: list[str], fields: list[str] | None) -> None:
    out = model.vine.look(ids, fields=fields)
    no_internal(out)
    fits(out, LOOK_BATCH)
    unique = list(dict.fromkeys(ids))
    got = [n["id"] for n in out["nodes"]]
    assert out["missing"] == [i for i in unique if i not in model.meta]
    assert got + out["dropped"] == [i for i in unique if i in model.meta]
    assert out["truncated"] is bool(out["dropped"])
    for d in out["nodes"]:
        fits(d, LOOK)
        _check_digest(model, d, fields)
