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

import math
import random
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from monkeyllm import Vine
from monkeyllm.budget import cost
from monkeyllm.indexing import LANGUAGE_SAMPLE
from monkeyllm.language import languages
from monkeyllm.reads.terms import STOPWORDS
from monkeyllm.stems import node_languages, search_languages, stems

from .forestkit import body_offset, make_forest

LOCATE, LOOK, LOOK_BATCH, MOVE, PICK, SCAN, SNIFF, QUERY = 800, 500, 2000, 600, 4000, 800, 800, \
    2000
SETTINGS = settings(max_examples=60, deadline=None, database=None)

WORDS = ["zebrafish", "harbor", "ledger", "quartz", "monsoon", "violet", "tundra", "ember",
         "cobalt", "saffron", "glacier", "orchid"]
INVERSE = {"part-of": "contains", "related-to": "related-to", "mentioned-in": "mentions",
           "supersedes": "superseded-by", "discovered-shortcut": None}
RELS = list(INVERSE)
WIDE_COLS = 60
ELLIPSIS = "…"


def _tokens(text: str) -> int:
    """§7: 0 when empty, else max(1, ceil(len/4))."""
    return 0 if not text else max(1, math.ceil(len(text) / 4))


def _clip(text: str, n: int) -> str:
    """§7 text cut."""
    return text if _tokens(text) <= n else text[: 4 * n].rstrip() + ELLIPSIS


# -- the forest --------------------------------------------------------------------------------


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _nodes(rng: random.Random) -> dict[str, tuple[str, dict[str, Any], str]]:
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {}
    nodes["big/_index"] = ("branch", {"title": "Big branch", "summary": "Eighty notes "
                           + _sentence(rng, 20)},
                           "# Big\n\n## Cross trails\n\n- graph/hub\n- docs/manual\n")
    for i in range(80):
        sections = []
        for s in range(6):
            lines = [f"Line {s}.{j} " + _sentence(rng, 20) + (" zebrafish " if j % 2 else " ")
                     + _sentence(rng, 8) for j in range(4)]
            sections.append(f"## Part {s} of note {i}\n\n" + "\n".join(lines))
        links = [{"rel": "related-to", "target": f"big/n{(i + 1) % 80:02d}"}]
        if i % 10 == 0:
            links.append({"rel": "mentioned-in", "target": "graph/hub"})
        nodes[f"big/n{i:02d}"] = ("note", {
            "title": f"Note {i} " + _sentence(rng, 3),
            "summary": f"Summary of note {i}: " + _sentence(rng, 45),
            "tags": rng.sample(WORDS, 3), "links": links,
        }, f"# Note {i}\n\n" + "\n\n".join(sections))
    nodes["graph/hub"] = ("entity", {
        "title": "The hub", "summary": "A hub " + _sentence(rng, 40), "tags": ["hub"],
        "links": [{"rel": RELS[k % len(RELS)], "target": f"graph/spoke-{k:02d}"}
                  for k in range(50)],
    }, "# Hub\n\n## About\n\nThe hub of the graph.\n")
    for k in range(50):
        nodes[f"graph/spoke-{k:02d}"] = ("note", {
            "title": f"Spoke {k}", "summary": f"Spoke {k} " + _sentence(rng, 35),
            "links": [{"rel": RELS[(k + 1) % len(RELS)], "target": "graph/hub"}],
        }, f"# Spoke {k}\n\n## Body\n\nSpoke text {_sentence(rng, 10)}.\n")
    nodes["misc/long-title"] = ("note", {
        "title": "A very long title " + _sentence(rng, 70),
        "summary": "Long everything " + _sentence(rng, 120),
        "tags": [f"{w}{n}" for n in range(8) for w in WORDS[:6]],
        "aliases": [f"alias {n} " + _sentence(rng, 6) for n in range(20)],
    }, "# Long\n\n" + "\n".join(f"### Heading {n} " + _sentence(rng, 12) for n in range(80)))
    manual = []
    for s in range(40):
        paras = ["\n".join(_sentence(rng, 18) for _ in range(3)) for _ in range(3)]
        sub = f"\n\n### Detail {s}\n\n{_sentence(rng, 30)}" if s % 4 == 0 else ""
        manual.append(f"## Chapter {s:02d}\n\n" + "\n\n".join(paras) + sub)
    nodes["docs/manual"] = ("note", {"title": "Manual", "summary": "A long manual "
                            + _sentence(rng, 10), "tags": ["docs"]},
                            "# Manual\n\n" + "\n\n".join(manual))
    nodes["docs/paragraph"] = ("note", {"title": "Paragraph", "summary": "One paragraph "
                               + _sentence(rng, 10)},
                               " ".join(_sentence(rng, 12) + "." for _ in range(330)))
    nodes["docs/short"] = ("note", {"title": "Short", "summary": "A short note."},
                           "# Short\n\n## Only\n\nzebrafish harbor.\n")
    nodes["misc/huge-summary"] = ("note", {
        "title": "Huge summary", "summary": "Huge " + _sentence(rng, 500), "tags": ["huge"],
        "links": [{"rel": "related-to", "target": "graph/hub"}],
    }, "# Huge summary\n\n## Text\n\nzebrafish once.\n")
    nodes["misc/huge-title"] = ("note", {
        "title": "Huge title " + _sentence(rng, 500), "summary": "A node with a huge title.",
    }, "# Huge title\n\n## Text\n\nzebrafish and harbor.\n")
    nodes["data/many-tables"] = ("dataset", {
        "title": "Many tables", "summary": "Thirty tables " + _sentence(rng, 8),
        "payload": "many.db", "payload_type": "sqlite",
    }, "# Many\n\n## Notes\n\nShort notes.\n")
    nodes["data/wide"] = ("dataset", {
        "title": "Wide data", "summary": "Rows with sixty columns " + _sentence(rng, 10),
        "payload": "wide.db", "payload_type": "sqlite", "tags": ["data"],
    }, "# Wide\n\n## Query manual\n\n`SELECT * FROM wide LIMIT 5`\n\n"
       "`SELECT COUNT(*) FROM wide`\n\n## Sample rows\n\nGenerated.\n\n## Notes\n\n"
       + " ".join(_sentence(rng, 15) + "." for _ in range(25)))
    return nodes


def _wide_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    cols = ", ".join(f"c{c:02d}_{'x' * 10} TEXT" for c in range(WIDE_COLS))
    conn.execute(f"CREATE TABLE wide(id INTEGER PRIMARY KEY, {cols})")
    marks = ", ".join("?" for _ in range(WIDE_COLS + 1))
    conn.executemany(f"INSERT INTO wide VALUES({marks})",
                     [(r, *(f"r{r:03d}c{c:02d} value text" for c in range(WIDE_COLS)))
                      for r in range(1, 301)])
    conn.commit()
    conn.close()


def _many_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    for t in range(30):
        cols = ", ".join(f"column_{c:02d}_of_table_{t:02d} TEXT" for c in range(20))
        conn.execute(f"CREATE TABLE table_{t:02d}({cols})")
    conn.commit()
    conn.close()


@dataclass(repr=False)
class Model:
    """The forest as written: everything a property needs to know, from the files."""

    root: Path
    vine: Vine
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    body: dict[str, str] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    out_links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    in_links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def __repr__(self) -> str:           # short: hypothesis prints it with a failing example
        return f"Model({len(self.meta)} nodes)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @property
    def ids(self) -> list[str]:
        return sorted(self.meta)

    @property
    def branches(self) -> list[str]:
        return [i for i in self.ids if i == "_index" or i.endswith("/_index")]

    def summary(self, node_id: str) -> str:
        return str(self.meta[node_id].get("summary") or "")

    def is_branch(self, node_id: str) -> bool:
        return self.meta[node_id].get("type") == "branch"

    def outline(self, node_id: str) -> list[str]:
        return [m.group(2) for m in re.finditer(r"^(#{2,3}) +(.*?) *$", self.body[node_id],
                                                re.MULTILINE)]


def parent_of(node_id: str) -> str | None:
    """§1.4, re-derived here."""
    if node_id == "_index":
        return None
    parts = node_id.split("/")
    if parts[-1] == "_index":
        parts = parts[:-1]
    folders = parts[:-1]
    return "/".join([*folders, "_index"]) if folders else "_index"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Model]:
    root = make_forest(tmp_path_factory.mktemp("budgets") / "forest",
                       _nodes(random.Random(SEED)))
    _wide_db(root / "data" / "wide.db")
    _many_db(root / "data" / "many.db")
    # heat evaporates at once, so repeated calls see the same forest (stable examples)
    with Vine(root, writable=False, alpha=0, half_life_days=1e-9) as vine:
        m = Model(root, vine)
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith("_derived/"):
                continue
            node_id = rel[:-3]
            text = path.read_text(encoding="utf-8")
            _, fm, rest = text.split("---\n", 2)
            m.meta[node_id] = yaml.safe_load(fm)
            m.body[node_id] = rest.strip()
            m.text[node_id] = text
        for node_id in m.ids:
            parent = parent_of(node_id)
            m.children.setdefault(node_id, [])
            if parent is not None:
                m.children.setdefault(parent, []).append(node_id)
            m.out_links.setdefault(node_id, [])
            m.in_links.setdefault(node_id, [])
        for node_id in m.ids:
            for link in m.meta[node_id].get("links") or []:
                m.out_links[node_id].append((link["rel"], link["target"]))
                m.in_links.setdefault(link["target"], []).append((link["rel"], node_id))
        yield m


def test_the_forest_stresses_what_it_should(model: Model) -> None:
    assert model.ids == ALL_IDS
    assert len(model.children["big/_index"]) == 80
    assert len(model.out_links["graph/hub"]) == 50 and len(model.in_links["graph/hub"]) >= 50
    assert _tokens(model.body["docs/manual"]) > 8000
    assert _tokens(model.body["docs/paragraph"]) > 4000 and "\n" not in model.body[
        "docs/paragraph"]
    assert sum("zebrafish" in b for b in model.body.values()) > 80


def no_internal(out: dict[str, Any]) -> None:
    assert isinstance(out, dict)
    if "error" in out:
        assert set(out) == {"error"}
        assert out["error"]["code"] != "E_INTERNAL", out


def fits(out: dict[str, Any], limit: int) -> None:
    spent = cost(out)
    assert spent <= limit, f"{spent} tokens over a {limit}-token budget"


# -- strategies -----------------------------------------------------------------------------------


SEED = 20260704
STRESS = ["graph/hub", "big/_index", "docs/manual", "data/wide", "misc/long-title",
          "no/such-node", "misc/huge-summary", "misc/huge-title", "data/many-tables"]


def _all_ids() -> list[str]:
    """Every id the module forest holds, known before it is built."""
    ids = set(_nodes(random.Random(SEED)))
    for node_id in list(ids):
        folders = node_id.split("/")[:-1]
        ids.update("/".join(folders[:d]) + "/_index" for d in range(1, len(folders) + 1))
    return sorted(ids | {"_index", "_meta/schema"})


ALL_IDS = _all_ids()
NODE_IDS = st.one_of(st.sampled_from(ALL_IDS), st.sampled_from(STRESS))


def words(min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from([*WORDS, "nomatchword", "hub", "spoke", "note", "huge"]),
                    min_size=min_size, max_size=max_size)


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


def _locate_matches(model: Model, query: list[str], scope: str, type_filter: str | None
                    ) -> set[str]:
    """What locate's contract says matches: a query word (not a function word, of 3+
    letters) or its stem in the query's languages, against a node's title, aliases,
    tags, summary and headers or their stems in the node's language."""
    asked = {w for w in query if w not in STOPWORDS and len(w) >= 3}
    asked_stems = _stem_tokens(asked, search_languages(languages(" ".join(query))))
    hits = set()
    for node_id, meta in model.meta.items():
        toks = _fts_tokens(meta.get("title"), meta.get("aliases") or [],
                           meta.get("tags") or [], meta.get("summary"),
                           model.outline(node_id))
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
@given(query=words(), k=st.integers(1, 60),
       scope=st.sampled_from(["all", "branches", "notes", "bananas"]),
       include=st.sampled_from([None, ["outline"]]),
       type_filter=st.sampled_from([None, "note", "entity", "branch", "dataset"]))
@example(query=["huge"], k=1, scope="all", include=None, type_filter=None)
@example(query=["zebrafish", "harbor"], k=60, scope="all", include=["outline"],
         type_filter=None)
def test_locate_fits_and_never_hides_a_cut(model: Model, query: list[str], k: int, scope: str,
                                           include: list[str] | None,
                                           type_filter: str | None) -> None:
    out = model.vine.locate(" ".join(query), k=k, scope=scope, include=include,
                            type_filter=type_filter)
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

LOOK_FIELDS = ["summary", "title", "tags", "edges_out", "edges_in", "children", "outline",
               "query_manual", "sample_rows", "notes", "stats", "aliases", "cross_trails",
               "coverage", "type"]


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
            assert d[key] != model.meta[node_id].get(key), \
                f"{key!r} is listed in truncated_fields but came back whole"
        elif key in ("tags", "aliases"):
            assert key not in d, key
            assert model.meta[node_id].get(key), \
                f"{key!r} is listed in truncated_fields but the node has none"
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
        assert d["stats"]["degree"] == len(model.out_links[node_id]) + len(
            model.in_links[node_id])
        assert d["stats"]["body_tokens"] == _tokens(model.body[node_id])
    if fields is not None:
        assert set(d) <= {"id", "truncated", "truncated_fields", *fields}


@SETTINGS
@given(node_id=NODE_IDS, fields=st.one_of(st.none(), st.lists(
    st.sampled_from(LOOK_FIELDS), min_size=1, max_size=5, unique=True)))
@example(node_id="misc/huge-title", fields=None)
@example(node_id="misc/huge-summary", fields=["summary", "edges_out"])
@example(node_id="data/many-tables", fields=None)
@example(node_id="graph/hub", fields=None)
def test_look_fits_and_lists_what_it_shed(model: Model, node_id: str,
                                          fields: list[str] | None) -> None:
    out = model.vine.look(node_id, fields=fields)
    no_internal(out)
    fits(out, LOOK)
    if node_id not in model.meta:
        assert out["error"]["code"] == "E_NOT_FOUND"
        return
    _check_digest(model, out, fields)


@SETTINGS
@given(ids=st.lists(NODE_IDS, min_size=1, max_size=10),
       fields=st.sampled_from([None, ["summary"], ["edges_out", "edges_in"]]))
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


# -- move (600) ---------------------------------------------------------------------------------


def _move_total(model: Model, node_id: str, rel: str | None, direction: str) -> int:
    if rel == "children":
        return len(model.children[node_id])

    def hit(stored: str) -> bool:
        return rel is None or rel in (stored, INVERSE.get(stored))

    n = 0
    if direction in ("out", "both"):
        n += sum(hit(r) for r, _ in model.out_links[node_id])
    if direction in ("in", "both"):
        n += sum(hit(r) for r, _ in model.in_links[node_id])
    return n


@SETTINGS
@given(data=st.data())
def test_move_fits_and_never_hides_a_cut(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(NODE_IDS)
    rel = data.draw(st.sampled_from([None, "children", *RELS, "contains", "mentions",
                                     "superseded-by", "nope"]))
    direction = data.draw(st.sampled_from(["out", "in", "both"]))
    out = model.vine.move(node_id, rel=rel, direction=direction)
    no_internal(out)
    fits(out, MOVE)
    if node_id not in model.meta:
        assert out["error"]["code"] == "E_NOT_FOUND"
        return
    if rel == "nope":
        assert out["error"]["code"] == "E_SCHEMA"     # a rel the dialect does not declare
        return
    total = _move_total(model, node_id, rel, direction)
    assert len(out["neighbors"]) <= total
    assert out["truncated"] is (len(out["neighbors"]) < total), (len(out["neighbors"]), total)
    if out["truncated"]:
        assert "hint" in out
    for n in out["neighbors"]:
        assert n["summary"] == model.summary(n["id"])
        if n["direction"] == "in":
            assert n["rel"] in {INVERSE.get(r) or r for r, _ in model.in_links[node_id]}


# -- scan (800) ---------------------------------------------------------------------------------

SCAN_FIELDS = ["id", "kind", "type", "title", "summary", "tags", "aliases", "created",
               "updated", "confidence", "parent", "trail", "body_tokens", "outline", "heat"]


def _scan_scope(model: Model, index: str, recursive: bool) -> list[str]:
    if not recursive:
        return [i for i in model.ids if parent_of(i) == index]
    if index == "_index":
        return [i for i in model.ids if i != "_index"]
    prefix = index[: -len("_index")]
    return [i for i in model.ids if i.startswith(prefix) and i != index]


@SETTINGS
@given(data=st.data())
def test_scan_fits_and_never_hides_a_cut(model: Model, data: st.DataObject) -> None:
    index = data.draw(st.sampled_from(model.branches))
    parent = data.draw(st.sampled_from([index, index.removesuffix("/_index")]))
    fields = data.draw(st.one_of(st.none(), st.lists(st.sampled_from(SCAN_FIELDS),
                                                     min_size=1, max_size=8, unique=True)))
    recursive = data.draw(st.booleans())
    limit = data.draw(st.integers(1, 50))
    word = data.draw(st.sampled_from(WORDS))
    filt = data.draw(st.sampled_from([None, {"type": "note"}, {"tags_any": [word]},
                                      {"kind": "branch"}, {"kind": "note"}]))
    cursor = data.draw(st.sampled_from([None, ""]))
    out = model.vine.scan(parent, filter=filt, fields=fields, recursive=recursive,
                          limit=limit, after=cursor)
    no_internal(out)
    fits(out, SCAN)
    scope = _scan_scope(model, index, recursive)
    if filt and "type" in filt:
        scope = [i for i in scope if model.meta[i].get("type") == filt["type"]]
    if filt and "tags_any" in filt:
        scope = [i for i in scope if word in (model.meta[i].get("tags") or [])]
    if filt and "kind" in filt:
        want_branch = filt["kind"] == "branch"
        scope = [i for i in scope if model.is_branch(i) is want_branch]
    got = [n["id"] for n in out["nodes"]]
    assert out["total"] == len(scope)
    assert set(got) <= set(scope) and len(got) == len(set(got)) <= limit
    assert out["returned"] == len(got)
    assert out["truncated"] is (len(got) < len(scope)), (len(got), len(scope))
    if cursor == "":
        assert got == sorted(got) == sorted(scope)[: len(got)]
    for n in out["nodes"]:
        if fields is None or "summary" in fields:
            assert n["summary"] == model.summary(n["id"])
        if fields is not None and "title" in fields:
            assert n["title"] == model.meta[n["id"]]["title"]


# -- sniff (800) --------------------------------------------------------------------------------


def _sniff_scope(model: Model, scope: str | None) -> list[str]:
    if scope is None:
        return model.ids
    if scope in model.meta and not model.is_branch(scope):
        return [scope]
    index = scope if scope.endswith("_index") else scope + "/_index"
    if index == "_index":
        return model.ids
    prefix = index[: -len("_index")]
    return [i for i in model.ids if i.startswith(prefix)]


@SETTINGS
@given(data=st.data())
def test_sniff_fits_and_snippets_are_real_windows(model: Model, data: st.DataObject) -> None:
    terms = data.draw(st.lists(st.sampled_from([*WORDS, "zebrafish harbor", "ZEBRAFISH",
                                                "line 3.1", "nomatchword", "part 2 of"]),
                               min_size=1, max_size=4))
    scope = data.draw(st.sampled_from([None, "big", "big/_index", "graph", "docs",
                                       "docs/manual", "big/n07", "_index"]))
    k = data.draw(st.integers(1, 20))
    out = model.vine.sniff(terms, scope=scope, k=k)
    no_internal(out)
    fits(out, SNIFF)
    folded = list(dict.fromkeys(t.lower() for t in terms))
    in_scope = _sniff_scope(model, scope)
    matching: dict[str, list[int]] = {}
    for node_id in in_scope:
        lines = [n for n, line in enumerate(model.body[node_id].split("\n"), 1)
                 if any(t in line.lower() for t in folded)]
        if lines:
            matching[node_id] = lines
    assert out["scanned_nodes"] == len(in_scope)
    got = [r["id"] for r in out["results"]]
    assert set(got) <= set(matching) and len(got) <= k
    assert out["truncated"] is (len(got) < len(matching)), (len(got), len(matching))
    for r in out["results"]:
        lines = model.body[r["id"]].split("\n")
        assert r["match_count"] == len(matching[r["id"]])
        assert r["truncated_matches"] is (r["match_count"] > 3)
        assert len(r["matches"]) == min(3, r["match_count"])
        off = body_offset(model.vine.root, r["id"])      # match lines are file lines
        for m in r["matches"]:
            assert m["line"] - off in matching[r["id"]]
            snippet = m["snippet"]
            assert len(snippet) <= 102, snippet
            assert snippet.strip(ELLIPSIS) in lines[m["line"] - off - 1]


# -- query (2000) -------------------------------------------------------------------------------

WIDE_NAMES = ["id", *(f"c{c:02d}_{'x' * 10}" for c in range(WIDE_COLS))]


def _direct(model: Model, sql: str) -> list[list[Any]]:
    conn = sqlite3.connect(f"file:{model.root / 'data' / 'wide.db'}?mode=ro", uri=True)
    try:
        return [list(r) for r in conn.execute(sql)]
    finally:
        conn.close()


@SETTINGS
@given(cols=st.lists(st.sampled_from(WIDE_NAMES), min_size=1, max_size=WIDE_COLS, unique=True),
       below=st.integers(0, 320), limit=st.one_of(st.none(), st.integers(0, 320)),
       alias=st.one_of(st.just(0), st.integers(0, 700)))
@example(cols=WIDE_NAMES, below=320, limit=None, alias=0)
@example(cols=WIDE_NAMES[:20], below=320, limit=None, alias=330)
def test_query_fits_and_keeps_whole_rows(model: Model, cols: list[str], below: int,
                                         limit: int | None, alias: int) -> None:
    names = [f"a{i}_{'y' * alias}" if alias else c for i, c in enumerate(cols)]
    shown = ", ".join(f"{c} AS {n}" if alias else c for c, n in zip(cols, names, strict=True))
    sql = f"SELECT {shown} FROM wide WHERE id <= {below} ORDER BY id"
    if limit is not None:
        sql += f" LIMIT {limit}"
    out = model.vine.query("data/wide", sql)
    no_internal(out)
    fits(out, QUERY)
    if "error" in out:
        # only a statement whose column names alone cannot fit may be refused
        assert out["error"]["code"] == "E_QUERY_INVALID", out
        assert cost({"columns": names}) > QUERY - 200, out
        return
    truth = _direct(model, sql if limit is not None else sql + " LIMIT 200")
    assert out["columns"] == names
    assert out["row_count"] == len(out["rows"])
    assert out["rows"] == truth[: len(out["rows"])]
    if len(out["rows"]) < len(truth):
        assert out.get("truncated") is True or out["limited"] is True
    if out.get("truncated"):
        assert "exist" in out["hint"] and f"{len(cols)} column" in out["hint"]
    else:
        assert "hint" not in out
        assert out["rows"] == truth[:200]


# -- pick (4000; a single named section has no cap) ---------------------------------------------

PICKABLE = ["docs/manual", "docs/paragraph", "docs/short", "misc/long-title", "big/n00",
            "big/n41", "graph/hub", "data/wide", "big/_index"]


@SETTINGS
@given(data=st.data())
def test_pick_whole_body_fits_or_gives_a_map(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from([*PICKABLE, *model.ids]))
    out = model.vine.pick(node_id)
    no_internal(out)
    fits(out, PICK)
    body = model.body[node_id]
    assert out["body_tokens"] == _tokens(body)
    if out["truncated"]:
        assert "body" not in out or out["body"] in model.text[node_id]
        assert out["outline"] == model.outline(node_id)[: len(out["outline"])]
        assert "section" in out["hint"]
    else:
        assert out["body"] == body
        assert out["body"] in model.text[node_id]


@SETTINGS
@given(data=st.data())
def test_pick_a_named_section_is_exact_and_uncapped(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from(["docs/manual", "big/n03", "misc/long-title",
                                         "data/wide", "docs/short"]))
    outline = model.outline(node_id)
    name = data.draw(st.sampled_from(outline))
    spelled = data.draw(st.sampled_from([name, name.lower(), name.upper(), "## " + name]))
    out = model.vine.pick(node_id, section=spelled)
    no_internal(out)
    assert out["truncated"] is False
    assert out["body"] in model.text[node_id]
    assert out["body"].split("\n", 1)[0].lstrip("#").strip().lower().startswith(
        name.lower()[: len(out["section"])])
    assert out["body_tokens"] == _tokens(out["body"])


@SETTINGS
@given(data=st.data())
def test_pick_section_lists_fit_and_partition(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from(["docs/manual", "big/n10", "misc/long-title"]))
    names = data.draw(st.lists(st.sampled_from([*model.outline(node_id), "No such section"]),
                               min_size=1, max_size=10))
    out = model.vine.pick(node_id, section=names)
    no_internal(out)
    fits(out, PICK)
    unique = list(dict.fromkeys(names))
    got = [s["section"] for s in out["sections"]]
    assert sorted(got + out["missing"] + out["dropped"]) == sorted(unique)
    assert out["truncated"] is bool(out["dropped"])
    for s in out["sections"]:
        assert s["body"] in model.text[node_id]


@SETTINGS
@given(data=st.data())
def test_pick_pages_fit_and_join_back(model: Model, data: st.DataObject) -> None:
    node_id = data.draw(st.sampled_from(PICKABLE))
    body = model.body[node_id]
    cursor: str | None = ""
    pages = []
    for _ in range(100):
        out = model.vine.pick(node_id, after=cursor)
        no_internal(out)
        fits(out, PICK)
        pages.append(out)
        if not out["truncated"]:
            break
        assert out["next"] != cursor
        cursor = out["next"]
    assert not pages[-1]["truncated"]
    if any(p.get("cut") for p in pages):
        for p in pages:
            core = p["body"].removesuffix(ELLIPSIS) if p.get("cut") else p["body"]
            assert core.rstrip() in body
    else:
        assert "".join(p["body"] for p in pages) == body


@SETTINGS
@given(data=st.data())
def test_pick_batch_fits(model: Model, data: st.DataObject) -> None:
    ids = data.draw(st.lists(st.sampled_from([*PICKABLE, "no/such"]), min_size=1, max_size=5))
    out = model.vine.pick(ids)
    no_internal(out)
    fits(out, PICK)
    unique = list(dict.fromkeys(ids))
    got = [n["id"] for n in out["nodes"]]
    assert sorted(got + out["missing"] + out["dropped"]) == sorted(unique)
    for n in out["nodes"]:
        if "body" in n and not n.get("truncated"):
            assert n["body"] == model.body[n["id"]]
