"""harvest: locate and sniff fused by reciprocal rank fusion, matches refined by term
scarcity, and the evidence itself (whole body, matched sections or outline) in one
4,000-token bundle.

Expectations come from the primitives (locate, sniff, look, pick) or from the files a
test writes, never from an earlier harvest answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from monkeyllm import Vine, budget
from monkeyllm.commands.app import app
from monkeyllm.reads import features
from monkeyllm.reads import sweep as sweep_module
from monkeyllm.reads.harvest import MAX_K_ENV
from monkeyllm.reads.sniff import Hits
from monkeyllm.reads.terms import derive_terms, locate_query
from monkeyllm.text import fold

from .forestkit import (
    assert_error,
    assert_ok,
    body_offset,
    copy_sample,
    file_lines,
    make_forest,
)

QUESTION = "what is the deadline to exchange a retail order?"
RESULT_KEYS = {"id", "title", "type", "trail", "summary", "score", "found_by", "matches",
               "content", "body_tokens"}
MAX_K = 5
LOREM = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
         "incididunt ut labore et dolore magna aliqua. ")


@pytest.fixture(autouse=True)
def _default_max_k(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's shell cannot change k's ceiling under these tests."""
    monkeypatch.delenv(MAX_K_ENV, raising=False)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-brain/ of this module's own (reads leave heat behind)."""
    return copy_sample(tmp_path_factory.mktemp("harvest") / "brain")


@pytest.fixture(scope="module")
def hv(sample: Path) -> Iterator[Vine]:
    """Read-only, heat off: rankings do not move as the tests read."""
    with Vine(sample, writable=False, alpha=0) as vine:
        yield vine


# -- helpers -------------------------------------------------------------------------


def fused(vine: Vine, query: str, term: str | None, k: int
          ) -> list[tuple[str, float, list[str]]]:
    """The fusion computed from the primitives: locate(the question, 2k) (locate drops
    its stopwords) and sniff(term, 2k), each id scored sum(share / (60 + rank)), where
    share is its score over the best score of its ranking; ties by updated, then
    created (newest first), then id. Returns (id, score, found_by), best first.

    One term only (by default the question's single derived term): harvest's sweep
    weighs terms by scarcity, which can reorder nodes hitting different terms, but with
    one term its ranking is sniff's."""
    if term is None:
        (term,) = derive_terms(query)
    rankings = [("locate", assert_ok(vine.locate(query, k=2 * k))["results"]),
                ("sniff", assert_ok(vine.sniff(term, k=2 * k))["results"])]
    score: dict[str, float] = {}
    found_by: dict[str, list[str]] = {}
    for name, ranking in rankings:
        best = ranking[0]["score"] if ranking else 1.0
        for rank, item in enumerate(ranking, 1):
            share = item["score"] / best
            score[item["id"]] = score.get(item["id"], 0.0) + share / (60 + rank)
            found_by.setdefault(item["id"], []).append(name)
    dates = {i: vine.look(i, fields=["created", "updated"]) for i in score}
    order = sorted(score)
    order.sort(key=lambda i: dates[i].get("created") or "", reverse=True)
    order.sort(key=lambda i: dates[i].get("updated") or "", reverse=True)
    order.sort(key=lambda i: round(score[i], 10), reverse=True)
    # branch indexes and _meta nodes after every other node
    order.sort(key=lambda i: i.endswith("_index") or i.startswith("_meta/"))
    return [(i, score[i], found_by[i]) for i in order]


def trail_of(node_id: str) -> list[str]:
    """The ancestor indexes of a node, from its path."""
    if node_id == "_index":
        return []
    folders = node_id.split("/")[:-1]
    if node_id.endswith("/_index"):
        folders = folders[:-1]
    return ["_index"] + ["/".join(folders[:i]) + "/_index" for i in range(1, len(folders) + 1)]


def by_id(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in out["results"]}


def ids(out: dict[str, Any]) -> list[str]:
    return [r["id"] for r in out["results"]]


def assert_whole(vine: Vine, result: dict[str, Any]) -> None:
    """Every body in a result's content is exactly what pick answers: never a slice."""
    for part in result["content"]:
        if "body" not in part:
            assert "outline" in part and "hint" in part, part
            continue
        if part["section"] is None:
            expected = assert_ok(vine.pick(result["id"]))["body"]
        else:
            expected = assert_ok(vine.pick(result["id"], section=part["section"]))["body"]
        assert part["body"] == expected
        assert part["body_tokens"] == budget.tokens(expected)


def long_body(title: str, sections: dict[str, str], preamble: str = "") -> str:
    """A body of several sections, each padded with filler text."""
    parts = [f"# {title}\n", preamble] if preamble else [f"# {title}\n"]
    for header, extra in sections.items():
        parts.append(f"## {header}\n\n{LOREM * 6}\n{extra}\n".rstrip() + "\n")
    return "\n".join(parts)


# -- the response --------------------------------------------------------------------


def test_response_shape_and_ids_lead_back_to_the_primitives(hv: Vine) -> None:
    out = assert_ok(hv.harvest(QUESTION))
    assert list(out)[:4] == ["query", "terms", "results", "truncated"]
    assert out["query"] == QUESTION and out["truncated"] is False
    assert out["terms"] == derive_terms(QUESTION)
    assert 1 <= len(out["results"]) <= 3
    for r in out["results"]:
        assert RESULT_KEYS <= set(r), r.keys()
        digest = assert_ok(hv.look(r["id"]))
        assert (r["title"], r["type"], r["summary"]) == (digest["title"], digest["type"],
                                                          digest["summary"])
        assert r["body_tokens"] == digest["stats"]["body_tokens"]
        assert r["trail"] == trail_of(r["id"])
        assert r["found_by"] and r["found_by"] in (
            ["locate"], ["sniff"], ["locate", "sniff"], ["edge"], ["locate", "edge"],
            ["sniff", "edge"], ["locate", "sniff", "edge"])
        # a node brought in by a link says which hit it came from, and by which rel
        assert ("via" in r) == ("edge" in r["found_by"])
        if "via" in r:
            assert r["via"]["from"] in [x["id"] for x in out["results"]]
        assert isinstance(r["score"], float) and r["score"] > 0
        lines = file_lines(hv.root, r["id"])    # match lines are the file's
        for m in r["matches"]:
            assert {"section", "line", "snippet"} <= set(m)
            assert m["line"] > body_offset(hv.root, r["id"])
            text = lines[m["line"] - 1]
            assert fold(m["snippet"].strip("…")) in fold(text)
            assert any(t in fold(text) for t in out["terms"])
        assert r["content"]
        assert_whole(hv, r)
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)


def test_the_seed_example_finds_the_exchange_policy(hv: Vine) -> None:
    out = assert_ok(hv.harvest(QUESTION, terms=["exchange", "deadline"], k=3))
    top = by_id(out)["sales/exchange-policy"]
    assert top["found_by"] == ["locate", "sniff"]
    assert "Deadlines" in [m["section"] for m in top["matches"]]
    assert top["content"][0]["section"] is None  # a 548-token body comes whole


# -- derived terms -------------------------------------------------------------------


@pytest.mark.parametrize(("query", "expected"), [
    (QUESTION, ["deadline", "exchange", "retail", "order"]),
    # code-shaped first (a digit, all capitals, or - _ . /), then words, all folded
    ("Where is invoice NF-4412 for SKU ABC in 2026?", ["nf-4412", "sku", "abc", "2026",
                                                         "invoice"]),
    ("value_cents column", ["value_cents", "column"]),
    ("how big are VAT and cat-1 rules", ["vat", "cat-1", "rules"]),
    ("see file.txt. and v2.0- please", ["file.txt", "v2.0"]),
    # Portuguese stopwords and accents
    ("Qual é o prazo de devolução?", ["prazo", "devolucao"]),
    ("quais são os clientes que compraram", ["clientes", "compraram"]),
    # case and accent duplicates collapse; a stopword in capitals is still a stopword
    ("EXCHANGE Exchange exchange", ["exchange"]),
    ("Ação ação AÇÃO", ["acao"]),
    ("THE DEADLINE", ["deadline"]),
    # what an English contraction leaves behind is a stopword too
    ("Why didn't Tapajós get terms? It doesn't, wouldn't", ["tapajos", "terms"]),
    # at most 8, in order
    ("alpha bravo charlie delta echoes foxtrot golfing hotel indigo juliet",
     ["alpha", "bravo", "charlie", "delta", "echoes", "foxtrot", "golfing", "hotel"]),
    ("... -- //", []),
])
def test_derive_terms(query: str, expected: list[str]) -> None:
    assert derive_terms(query) == expected


@pytest.mark.parametrize("query", [
    "who is she?", "o que é isso", "how do I get it", "big cat sat on a mat",
])
def test_derived_terms_drop_stopwords_and_short_words(query: str) -> None:
    assert derive_terms(query) == []


def test_the_response_reports_the_terms_it_used(hv: Vine) -> None:
    q = "Where is invoice NF-4412 for the retail exchange?"
    assert assert_ok(hv.harvest(q))["terms"] == derive_terms(q)
    assert assert_ok(hv.harvest(q, terms="NF-4412"))["terms"] == ["nf-4412"]
    explicit = assert_ok(hv.harvest(q, terms=["Retail", "NF-4412", "Devolução", "RETAIL"]))
    assert explicit["terms"] == ["retail", "nf-4412", "devolucao"]


def test_explicit_terms_replace_the_derived_ones(hv: Vine) -> None:
    out = assert_ok(hv.harvest("exchange policy", terms=["zzqxv-no-such-string"], k=3))
    assert out["results"] and all(r["found_by"] == ["locate"] for r in out["results"])
    sniffed = assert_ok(hv.harvest("zzqxv nothing", terms=["NF-4412"], k=3))
    assert "sales/exchange-policy" in ids(sniffed)
    assert by_id(sniffed)["sales/exchange-policy"]["found_by"] == ["sniff"]


# -- reciprocal rank fusion ----------------------------------------------------------


@pytest.mark.parametrize(("query", "term", "k"), [
    (QUESTION, "exchange", 3),
    ("master agreement payment terms", "agreement", 2),
    ("ICMS tax on interstate sales", "ICMS", 5),
    ("warehouse stock", "on_hand", 4),
    ("erp outage", "outage", 1),
    ("Qual é o prazo de devolução?", "prazo", 3),
    ("tell me about the carriers?", None, 5),
])
def test_fusion_matches_the_primitives(hv: Vine, query: str, term: str | None,
                                       k: int) -> None:
    # sniff is literal; the sweep's word forms for derived terms are tested on their own.
    with features.without("forms", "edges"):
        expected = fused(hv, query, term, k)
        out = assert_ok(hv.harvest(query, terms=term, k=k, include_superseded=True))
    got = [(r["id"], r["score"], r["found_by"]) for r in out["results"]]
    want = [(i, round(s, 4), f) for i, s, f in expected][:len(got)]
    assert got == want
    if not out["truncated"]:
        assert len(got) == min(k, len(expected))


@pytest.mark.parametrize(("query", "expected"), [
    (QUESTION, "deadline exchange retail order"),
    ("Qual é o prazo de devolução da NF-4412?", "prazo devolucao nf-4412"),
    ("how big is the big CAT", "big cat"),      # 3-letter words stay for locate
    ("what is the", "what is the"),              # nothing left: the question as asked
])
def test_locate_gets_the_question_without_stopwords(query: str, expected: str) -> None:
    assert locate_query(query) == expected


@pytest.fixture
def codes(tmp_path: Path) -> Path:
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "i/code": ("note", {"title": "Part list", "summary": "Parts."},
                   "# Parts\n\nthe part ZX-99 is here\n"),
    }
    for i in range(6):
        nodes[f"i/w{i}"] = ("note", {"title": f"Filler {i}", "summary": "Filler."},
                            f"# W{i}\n\nalpha and beta, line {i}\n")
    return make_forest(tmp_path / "codes", nodes)


def test_a_rare_code_outranks_common_words_in_the_sweep(codes: Path) -> None:
    q = "alpha beta ZX-99"
    with Vine(codes, writable=False, alpha=0) as vine:
        assert derive_terms(q) == ["zx-99", "alpha", "beta"]
        plain = [r["id"] for r in assert_ok(vine.sniff(derive_terms(q), k=10))["results"]]
        assert plain[-1] == "i/code"  # sniff: one term of three ranks last
        assert assert_ok(vine.locate(locate_query(q)))["results"] == []
        out = assert_ok(vine.harvest(q, k=3))
    assert ids(out)[0] == "i/code"
    assert out["results"][0]["found_by"] == ["sniff"]
    assert out["results"][0]["score"] == round(1 / 61, 4)


def test_a_rare_code_is_found_among_many_common_words(tmp_path: Path) -> None:
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        f"d/n{i:02d}": ("note", {"title": f"Note {i}", "summary": "Plain."},
                        f"# N{i}\n\nalpha and beta here\n") for i in range(55)}
    nodes["e/code"] = ("note", {"title": "Code note", "summary": "Plain."},
                       "# Code\n\nthe part ZX-99 is here\n")
    root = make_forest(tmp_path / "deep", nodes)
    with Vine(root, writable=False, alpha=0) as vine:
        assert ids(assert_ok(vine.sniff("ZX-99"))) == ["e/code"]
        assert ids(assert_ok(vine.harvest("alpha beta ZX-99", terms="ZX-99"))) == ["e/code"]
        out = assert_ok(vine.harvest("alpha beta ZX-99", k=3))
    assert "e/code" in ids(out)


def test_a_code_with_punctuation_counts_the_bodies_that_hold_it(tmp_path: Path) -> None:
    """``6.202`` is found through the index as lines holding ``6`` and a token starting
    ``202``: every line saying "6 pallets in 2026" is a candidate. Its scarcity counts
    the one body that holds it, so it outweighs the common words."""
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "c/code": ("note", {"title": "Fiscal codes", "summary": "Codes."},
                   "# Codes\n\nGoods sent back from another state use CFOP 6.202.\n"),
    }
    for i in range(8):
        nodes[f"c/f{i}"] = ("note", {"title": f"Filler {'abcdefgh'[i]}", "summary": "Filler."},
                            f"# F{i}\n\nThe return invoice: 6 pallets in 2026, lot {i}.\n")
    root = make_forest(tmp_path / "cfop", nodes)
    q = "return invoice 6.202"
    with Vine(root, writable=False, alpha=0) as vine:
        assert derive_terms(q) == ["6.202", "return", "invoice"]
        assert ids(assert_ok(vine.sniff("6.202", k=10))) == ["c/code"]
        assert assert_ok(vine.locate(locate_query(q)))["results"] == []
        out = assert_ok(vine.harvest(q, k=1))
    assert ids(out) == ["c/code"]


def test_terms_found_together_outrank_the_same_words_scattered(tmp_path: Path) -> None:
    """The sweep ranks a body by its best passage (a few consecutive lines): two terms
    in one sentence beat three terms lines apart, though sniff counts three first."""
    gap = "\n".join(f"unrelated line {i}" for i in range(8))
    root = make_forest(tmp_path / "near", {
        "p/together": ("note", {"title": "Shop floor", "summary": "Stores."},
                       "# Together\n\nReturned goods go to the outlet.\n"),
        "p/scattered": ("note", {"title": "Contract", "summary": "Clauses."},
                        f"# Scattered\n\nreturned\n{gap}\noutlet\n{gap}\ndiscount\n"),
        "p/third": ("note", {"title": "Prices", "summary": "Tiers."},
                    "# Third\n\nThe discount ladder.\n"),
        **{f"p/f{i}": ("note", {"title": f"Filler {i}", "summary": "Filler."},
                       f"# F{i}\n\nnothing to see {i}\n") for i in range(5)},
    })
    q = "which returned goods get an outlet discount"
    with Vine(root, writable=False, alpha=0) as vine:
        assert derive_terms(q) == ["returned", "goods", "outlet", "discount"]
        terms = ["returned", "outlet", "discount"]
        assert ids(assert_ok(vine.sniff(terms, k=3)))[0] == "p/scattered"
        assert assert_ok(vine.locate(locate_query(q)))["results"] == []
        out = assert_ok(vine.harvest(q, terms=terms, k=2))
    assert ids(out) == ["p/together", "p/scattered"]


def test_a_common_word_alone_earns_no_rank_in_the_fusion(tmp_path: Path) -> None:
    """Nodes whose body holds only the question's common word (here ``ERP``) leave the
    sweep's ranking, so being found by locate too does not lift them over the one body
    that answers, found by sniff alone."""
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "e/kettle": ("entity", {"title": "Aurora kettle", "summary": "A kettle."},
                     "# Kettle\n\n## Quality\n\nThe lot L2503 is blocked in the ERP.\n"),
    }
    for i in range(3):
        nodes[f"e/erp{i}"] = ("note", {"title": f"ERP job {i}",
                                       "summary": f"An ERP integration job, number {i}."},
                              f"# Job {i}\n\nThe ERP runs job {i} at night.\n")
    for i in range(6):
        nodes[f"e/f{i}"] = ("note", {"title": f"Filler {i}", "summary": "Filler."},
                            f"# F{i}\n\nthe ERP again, line {i}\n")
    root = make_forest(tmp_path / "erp", nodes)
    q = "Why is lot L2503 blocked in the ERP?"
    with Vine(root, writable=False, alpha=0) as vine:
        located = ids(assert_ok(vine.locate(locate_query(q), k=6)))
        assert located[:3] == ["e/erp0", "e/erp1", "e/erp2"] or \
            set(located[:3]) == {"e/erp0", "e/erp1", "e/erp2"}
        assert "e/kettle" not in located
        sniffed = ids(assert_ok(vine.sniff(derive_terms(q), k=10)))
        assert sniffed[0] == "e/kettle" and {"e/erp0", "e/erp1", "e/erp2"} <= set(sniffed)
        out = assert_ok(vine.harvest(q, k=3))
    found_by = {r["id"]: r["found_by"] for r in out["results"]}
    assert found_by["e/kettle"] == ["sniff"]
    assert all(by == ["locate"] for i, by in found_by.items() if i != "e/kettle")


@pytest.fixture(scope="module")
def tiny_forest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vine]:
    root = make_forest(tmp_path_factory.mktemp("tiny") / "f", {})
    with Vine(root, writable=False, alpha=0.5) as vine:
        yield vine


_HITS = st.dictionaries(
    st.sampled_from([f"n/{i}" for i in range(8)] + ["n/_index", "m/_index", "_index"]),
    st.dictionaries(st.integers(0, 3), st.lists(st.integers(0, 6), min_size=1, max_size=4,
                                                unique=True).map(sorted), min_size=1),
    max_size=11)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=_HITS, weight=st.lists(st.sampled_from([0.1, 0.5, 1.0, 2.0, 3.3]), min_size=4,
                                   max_size=4),
       heat=st.lists(st.sampled_from([0.0, 0.2, 1.0]), min_size=11, max_size=11),
       pool=st.integers(1, 8))
def test_the_sweep_ranking_skips_only_bodies_that_cannot_place(
        tiny_forest: Vine, rows: dict[str, dict[int, list[int]]], weight: list[float],
        heat: list[float], pool: int) -> None:
    """``_best`` works out a body's best line only while it can still place; the result
    is the full sort of every body, floor and tiers applied."""
    forest = tiny_forest._forest
    hits = {node_id: Hits.of(r) for node_id, r in rows.items()}
    heats = {node_id: heat[i] for i, node_id in enumerate(hits)}
    got = sweep_module._best(forest, hits, weight, heats, pool)
    value = {i: sweep_module._weigh(h, weight) for i, h in hits.items()}
    floor = sweep_module.SWEEP_FLOOR * max(value.values(), default=0.0)
    held = {i: sum(weight[t] for t in h.terms) for i, h in hits.items()}
    full = sorted((i for i in hits if value[i] >= floor),
                  key=lambda i: (i.endswith("_index"), -forest.score(value[i], heats[i]),
                                 -held[i], -hits[i].count, i))[:pool]
    assert [r[0] for r in got] == full
    assert [r[1] for r in got] == [value[i] for i in full]


@pytest.fixture
def rrf_forest(tmp_path: Path) -> Path:
    return make_forest(tmp_path / "rrf", {
        # first for locate only (its body never says zebra)
        "z/meta": ("note", {"title": "Zebra zebra", "summary": "Zebra zebra zebra."},
                   "# Meta\n\nStripes, nothing else.\n"),
        # second for both
        "z/both": ("note", {"title": "Zebra", "summary": "A zebra note among other words."},
                   "# Both\n\nOne zebra here.\n"),
        # first for sniff only (its metadata never says zebra)
        "z/body": ("note", {"title": "Stripes", "summary": "Horse-like animal."},
                   "# Body\n\nzebra\nzebra\nzebra\n"),
        "z/quokka": ("note", {"title": "Quokka", "summary": "Quokka."}, "# Q\n\nquokka\n"),
    })


def test_found_by_both_outranks_found_by_one(rrf_forest: Path) -> None:
    with Vine(rrf_forest, writable=False, alpha=0) as vine:
        located = {r["id"]: r["score"] for r in vine.locate("zebra", k=6)["results"]}
        sniffed = {r["id"]: r["score"] for r in vine.sniff("zebra", k=6)["results"]}
        assert list(located)[:2] == ["z/meta", "z/both"] and "z/body" not in located
        assert list(sniffed)[:2] == ["z/body", "z/both"] and "z/meta" not in sniffed
        out = assert_ok(vine.harvest("zebra", terms=["zebra"], k=3))
        top = assert_ok(vine.harvest("quokka", k=1))["results"]
    # Each ranking's second entry is credited its score's share of that ranking's best.
    share = located["z/both"] / located["z/meta"] + sniffed["z/both"] / sniffed["z/body"]
    assert out["results"][0]["id"] == "z/both"
    assert out["results"][0]["found_by"] == ["locate", "sniff"]
    assert out["results"][0]["score"] == round(share / 62, 4) > round(1 / 61, 4)
    assert {r["id"]: r["found_by"] for r in out["results"][1:]} == {
        "z/meta": ["locate"], "z/body": ["sniff"]}
    assert [r["score"] for r in out["results"][1:]] == [round(1 / 61, 4)] * 2 == [0.0164] * 2
    assert [(r["id"], r["score"], r["found_by"]) for r in top] == [
        ("z/quokka", round(2 / 61, 4), ["locate", "sniff"])]
    assert top[0]["score"] == 0.0328


@pytest.mark.parametrize(("meta_dates", "body_dates", "first"), [
    ({"updated": "2026-02-01"}, {"updated": "2026-03-01"}, "z/body"),
    ({"updated": "2026-03-01"}, {"updated": "2026-02-01"}, "z/meta"),
    ({"created": "2026-01-20"}, {"created": "2026-01-05"}, "z/meta"),
    ({}, {}, "z/body"),  # same dates: id ascending
])
def test_fusion_ties_break_on_updated_created_then_id(
        tmp_path: Path, meta_dates: dict[str, str], body_dates: dict[str, str],
        first: str) -> None:
    root = make_forest(tmp_path / "tie", {
        "z/meta": ("note", {"title": "Zebra", "summary": "Zebra.", **meta_dates},
                   "# Meta\n\nStripes.\n"),
        "z/body": ("note", {"title": "Stripes", "summary": "Horse-like.", **body_dates},
                   "# Body\n\nzebra\n"),
    })
    with Vine(root, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("zebra", terms=["zebra"], k=2))
    assert [r["score"] for r in out["results"]] == [0.0164, 0.0164]
    assert ids(out)[0] == first


@pytest.fixture
def many(tmp_path: Path) -> Path:
    nodes = {f"c/n{i:02d}": ("note", {"title": f"Capybara {i}", "summary": "Capybara."},
                             f"# N{i}\n\ncapybara {i}\n") for i in range(12)}
    nodes["c/other"] = ("note", {"title": "Heron", "summary": "Heron."}, "# H\n\nheron\n")
    return make_forest(tmp_path / "many", nodes)


@pytest.mark.parametrize(("k", "expected"), [(1, 1), (2, 2), (5, 5)])
def test_k_picks_one_through_five(many: Path, k: int, expected: int) -> None:
    with Vine(many, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("capybara", k=k))
    assert len(out["results"]) == expected and out["truncated"] is False


@pytest.mark.parametrize("k", [-3, 0, MAX_K + 1, 99])
def test_k_out_of_range_is_refused(many: Path, k: int) -> None:
    with Vine(many, writable=False, alpha=0) as vine:
        err = assert_error(vine.harvest("capybara", k=k), "E_SCHEMA")
    assert f"from 1 to {MAX_K}" in err["message"]


def test_the_environment_moves_the_ceiling(many: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    with Vine(many, writable=False, alpha=0) as vine:
        monkeypatch.setenv(MAX_K_ENV, "8")
        assert len(assert_ok(vine.harvest("capybara", k=8))["results"]) == 8
        assert "from 1 to 8" in assert_error(vine.harvest("capybara", k=99),
                                             "E_SCHEMA")["message"]
        assert len(assert_ok(vine.call("harvest", {"query": "capybara", "k": 7}))
                   ["results"]) == 7
        monkeypatch.setenv(MAX_K_ENV, "2")
        assert_error(vine.harvest("capybara", k=5), "E_SCHEMA")
        assert len(assert_ok(vine.harvest("capybara", k=2))["results"]) == 2
        for bad in ("abc", "0", "-1", "2.5"):
            monkeypatch.setenv(MAX_K_ENV, bad)
            err = assert_error(vine.harvest("capybara"), "E_SCHEMA")
            assert MAX_K_ENV in err["message"]
            assert_error(vine.call("harvest", {"query": "capybara"}), "E_SCHEMA")


# -- matches -------------------------------------------------------------------------


@pytest.fixture
def scarce(tmp_path: Path) -> Path:
    commons = "\n".join(f"common line {i}" for i in range(30))
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "m/_index": ("branch", {"title": "Rarity hub", "summary": "Rarity hub of the test."},
                     "# Rarity hub\n\n" + "\n".join(f"common entry {i}" for i in range(4))
                     + "\n\nthe rarity sits at the end\n"),
        # the rare term shares a line with the common one, then comes twice much later
        "m/big": ("note", {"title": "Big", "summary": "Mostly common words."},
                  "# Big\n\n## Intro\n\ncommon and rarity together\n" + commons
                  + "\n\n## Later\n\nthe rarity appears here\nand rarity once more\n"),
        # three rare lines plus three common ones would be six: capped at five
        "m/big2": ("note", {"title": "Big two", "summary": "More common words."},
                   "# Big two\n\n" + commons + "\n\n## End\n\nrarity one\nrarity two\n"
                   "rarity three\n"),
    }
    for i in range(5):
        nodes[f"m/c{i}"] = ("note", {"title": f"Filler {i}", "summary": "Filler."},
                            f"# C{i}\n\ncommon {i}\n")
    return make_forest(tmp_path / "scarce", nodes)


def refined(vine: Vine, node_id: str, terms: list[str]) -> list[tuple[Any, ...]]:
    """The refinement the call contract describes: one scoped sniff per term, rarest
    term (fewest bodies) first, deduplicated by (section, line), at most 5."""
    bodies = {t: len(assert_ok(vine.sniff([t], k=20))["results"]) for t in terms}
    out: list[tuple[Any, ...]] = []
    for term in sorted(terms, key=lambda t: bodies[t]):
        hit = assert_ok(vine.sniff([term], scope=node_id))["results"]
        for m in hit[0]["matches"] if hit else []:
            key = (m["section"], m["line"], m["snippet"])
            if key[:2] not in [seen[:2] for seen in out]:
                out.append(key)
    return out[:5]


def test_matches_are_refined_rarest_term_first(scarce: Path) -> None:
    terms = ["common", "rarity"]
    with Vine(scarce, writable=False, alpha=0) as vine:
        plain = assert_ok(vine.sniff(terms, scope="m/big"))["results"][0]["matches"]
        out = assert_ok(vine.harvest("rarity hub big", terms=terms, k=5))
        expected = {i: refined(vine, i, terms) for i in ("m/big", "m/big2")}
    late = file_lines(scarce, "m/big").index("the rarity appears here") + 1
    assert late not in [m["line"] for m in plain]  # a plain sniff drowns it
    results = by_id(out)
    for node_id, want in expected.items():
        matches = results[node_id]["matches"]
        assert [(m["section"], m["line"], m["snippet"]) for m in matches] == want
        assert len(matches) <= 5
        assert len({m["line"] for m in matches}) == len(matches)
        assert "rarity" in fold(matches[0]["snippet"])
    assert late in [m["line"] for m in results["m/big"]["matches"]]
    assert len(results["m/big2"]["matches"]) == 5


def test_index_nodes_keep_the_global_matches(scarce: Path) -> None:
    terms = ["common", "rarity"]
    with Vine(scarce, writable=False, alpha=0) as vine:
        # (with index nodes in their rank, not after every leaf, so this one has a seat)
        with features.without("tiers"):
            out = assert_ok(vine.harvest("rarity hub", terms=terms, k=5))
        global_hits = {r["id"]: r["matches"]
                       for r in assert_ok(vine.sniff(terms, k=10))["results"]}
        own = refined(vine, "m/_index", terms)
    index = by_id(out)["m/_index"]
    assert index["matches"] == global_hits["m/_index"]
    assert [(m["section"], m["line"], m["snippet"]) for m in index["matches"]] != own


# -- content -------------------------------------------------------------------------


@pytest.fixture
def bodies(tmp_path: Path) -> Path:
    return make_forest(tmp_path / "bodies", {
        "b/short": ("note", {"title": "Okapi short", "summary": "Okapi."},
                    "# Short\n\n## One\n\nokapi in a short note\n"),
        "b/long": ("note", {"title": "Okapi long", "summary": "Okapi at length."},
                   long_body("Long", {f"Part {i}": (f"okapi in part {i}"
                                                    if i in (2, 4, 5) else "")
                                      for i in range(1, 8)},
                             preamble="The long preamble.\n")),
        "b/map": ("note", {"title": "Okapi map", "summary": "Okapi, no body match."},
                  long_body("Map", {f"Chapter {i}": "" for i in range(1, 8)},
                            preamble="An okapi before any section.\n")),
    })


def test_content_whole_sections_or_outline(bodies: Path) -> None:
    with Vine(bodies, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("okapi", terms=["okapi"], k=3))
        results = by_id(out)
        assert set(results) == {"b/short", "b/long", "b/map"}
        short, long, map_ = results["b/short"], results["b/long"], results["b/map"]
        whole = assert_ok(vine.pick("b/short"))["body"]
        assert budget.tokens(whole) <= 1200
        assert short["content"] == [{"section": None, "body": whole,
                                     "body_tokens": budget.tokens(whole)}]
        # a long body: up to two of its matched sections, in the order of the matches
        assert budget.tokens(assert_ok(vine.pick("b/long"))["body"]) > 1200
        matched = list(dict.fromkeys(m["section"] for m in long["matches"] if m["section"]))
        assert len(matched) == 3
        assert [c["section"] for c in long["content"]] == matched[:2]
        assert_whole(vine, long)
        # a long body whose only match is outside every section: the outline, a map
        assert map_["matches"] and all(m["section"] is None for m in map_["matches"])
        map_body = assert_ok(vine.pick("b/map"))["body"]
        (part,) = map_["content"]
        assert part["section"] is None and "body" not in part
        assert part["outline"] == assert_ok(vine.look("b/map"))["outline"]
        assert part["body_tokens"] == budget.tokens(map_body) > 1200
        assert "section" in part["hint"]


def test_a_long_body_found_only_by_locate_comes_as_an_outline(bodies: Path) -> None:
    with Vine(bodies, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("Okapi map", terms=["no-such-text"], k=1))
    (result,) = out["results"]
    assert result["id"] == "b/map" and result["matches"] == []
    assert "outline" in result["content"][0] and "body" not in result["content"][0]


@pytest.mark.parametrize("dataset", ["sales/orders-2026", "sales/pipeline/prospects-q2",
                                     "operations/stock-levels"])
def test_datasets_always_carry_their_notes(hv: Vine, sample: Path, dataset: str) -> None:
    digest = assert_ok(hv.look(dataset))
    text = (sample / f"{dataset}.md").read_text(encoding="utf-8")
    notes = text.split("\n## Notes\n", 1)[1].split("\n## ", 1)[0].strip()
    assert digest["notes"] == budget.truncate_text(notes, budget.NOTES)
    # found by its title alone, with terms that share nothing with the notes
    out = assert_ok(hv.harvest(digest["title"], terms=["zzqxv-no-such-string"], k=5))
    item = by_id(out)[dataset]
    assert item["type"] == "dataset" and item["notes"] == digest["notes"]


def test_only_datasets_carry_notes(hv: Vine) -> None:
    out = assert_ok(hv.harvest(QUESTION, k=5))
    for r in out["results"]:
        assert ("notes" in r) == (r["type"] == "dataset" and bool(hv.look(r["id"]).get("notes")))


# -- budget --------------------------------------------------------------------------


@pytest.fixture
def heavy(tmp_path: Path) -> Path:
    nodes = {}
    for i in range(6):
        body = (f"# Pangolin {i}\n\n## Facts\n\nThe pangolin number {i}.\n\n"
                + (LOREM * 38) + "\n")
        nodes[f"h/p{i}"] = ("note", {"title": f"Pangolin {i}", "summary": "Pangolin."}, body)
    return make_forest(tmp_path / "heavy", nodes)


def test_tail_results_give_up_their_bodies_before_any_is_dropped(heavy: Path) -> None:
    with Vine(heavy, writable=False, alpha=0) as vine:
        sizes = [budget.tokens(assert_ok(vine.pick(f"h/p{i}"))["body"]) for i in range(6)]
        assert all(1000 < s <= 1200 for s in sizes), sizes
        out = assert_ok(vine.harvest("pangolin", k=5))
        expected = [i for i, _, _ in fused(vine, "pangolin", None, 5)]
        assert budget.cost(out) <= budget.HARVEST
        assert out["truncated"] is True
        assert ids(out) == expected[:5]
        whole = [r for r in out["results"] if "body" in r["content"][0]]
        mapped = [r for r in out["results"] if "outline" in r["content"][0]]
        # the best results keep their bodies, whole; the tail comes as maps, matches kept
        assert 1 <= len(whole) < 5 and out["results"][:len(whole)] == whole
        assert out["results"][len(whole):] == mapped
        for r in whole:
            assert_whole(vine, r)
        for r in mapped:
            (content,) = r["content"]
            assert content["section"] is None and content["outline"] == ["Facts"]
            assert content["body_tokens"] == sizes[int(r["id"][-1])]
            assert r["matches"]
        # the first of the maps could not have kept its body
        assert budget.cost(out) + min(sizes) > budget.HARVEST
        smaller = assert_ok(vine.harvest("pangolin", k=len(whole)))
    assert ids(smaller) == ids(out)[:len(whole)] and smaller["truncated"] is False


def test_a_lone_result_too_big_for_the_bundle_is_never_sliced(tmp_path: Path) -> None:
    giant = "## Giant\n\nthe tapir section\n\n" + "\n\n".join([LOREM * 10] * 16)
    root = make_forest(tmp_path / "giant", {
        "g/doc": ("note", {"title": "Tapir", "summary": "Tapir."},
                  "# Doc\n\n## Small\n\nshort\n\n" + giant + "\n"),
    })
    with Vine(root, writable=False, alpha=0) as vine:
        section = assert_ok(vine.pick("g/doc", section="Giant"))["body"]
        assert budget.tokens(section) > budget.HARVEST
        out = assert_ok(vine.harvest("tapir", terms=["tapir"], k=1))
    assert budget.cost(out) <= budget.HARVEST and out["truncated"] is True
    for r in out["results"]:
        assert all("body" not in part for part in r["content"])


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(
    ["exchange", "policy", "deadline", "orders", "2026", "ICMS", "NF-4412", "stock", "erp",
     "outage", "master", "agreement", "the", "what", "é", "prazo", "região", "price", "list",
     "Horizonte", "carriers", "freight", "?", "zzqxv"]), min_size=1, max_size=7),
    terms=st.none() | st.lists(st.sampled_from(["exchange", "orders", "stock", "REC", "30 days",
                                                "ICMS", "qq", "on_hand"]),
                               min_size=1, max_size=4),
    k=st.integers(1, 5))
def test_every_bundle_fits_and_never_slices(hv: Vine, words: list[str],
                                            terms: list[str] | None, k: int) -> None:
    out = assert_ok(hv.harvest(" ".join(words), terms=terms, k=k))
    assert budget.cost(out) <= budget.HARVEST
    assert len(out["results"]) <= min(max(k, 1), MAX_K)
    assert len(set(ids(out))) == len(out["results"])
    for r in out["results"]:
        assert len(r["matches"]) <= 5
        assert_whole(hv, r)


# -- supersession --------------------------------------------------------------------


@pytest.fixture
def superseded(tmp_path: Path) -> Path:
    return make_forest(tmp_path / "sup", {
        "p/old": ("note", {"title": "Walrus policy", "summary": "Walrus walrus rules."},
                  "# Old\n\nwalrus walrus walrus\n"),
        "p/other": ("note", {"title": "Walrus notes", "summary": "Notes on a walrus."},
                    "# Other\n\nwalrus\n"),
        "p/new": ("note", {"title": "Policy 2027", "summary": "The new rules.",
                           "links": [{"rel": "supersedes", "target": "p/old"}]},
                  "# New\n\nrules for 2027\n"),
        # a chain: v3 supersedes v2, which supersedes v1
        "r/v1": ("note", {"title": "Manatee guide", "summary": "Manatee."}, "# V1\n\nmanatee\n"),
        "r/v2": ("note", {"title": "Guide two", "summary": "Second guide.",
                          "links": [{"rel": "supersedes", "target": "r/v1"}]}, "# V2\n"),
        "r/v3": ("note", {"title": "Guide three", "summary": "Third guide.",
                          "links": [{"rel": "supersedes", "target": "r/v2"}]}, "# V3\n"),
    })


def test_a_superseded_node_gives_its_seat_to_its_successor(superseded: Path) -> None:
    with Vine(superseded, writable=False, alpha=0) as vine:
        expected = fused(vine, "walrus", "walrus", 2)
        assert [i for i, _, _ in expected] == ["p/old", "p/other"]  # p/new is not found
        out = assert_ok(vine.harvest("walrus", terms=["walrus"], k=2))
        kept = assert_ok(vine.harvest("walrus", terms=["walrus"], k=2,
                                      include_superseded=True))
        assert_ok(vine.look(ids(out)[0]))
    assert ids(out) == ["p/new", "p/other"]
    assert out["superseded_excluded"] == [{"id": "p/old", "by": "p/new"}]
    new = out["results"][0]
    assert (new["score"], new["found_by"]) == (round(expected[0][1], 4), expected[0][2])
    assert new["title"] == "Policy 2027"
    assert ids(kept) == ["p/old", "p/other"] and "superseded_excluded" not in kept
    assert "superseded_by" not in kept["results"][0]  # its successor is not among them


def test_a_chain_of_successors_is_followed(superseded: Path) -> None:
    with Vine(superseded, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("manatee", terms=["manatee"], k=1))
    assert ids(out) == ["r/v3"]
    assert out["superseded_excluded"] == [{"id": "r/v1", "by": "r/v2"},
                                          {"id": "r/v2", "by": "r/v3"}]


def test_a_found_successor_still_takes_the_seat(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "dugong", {
        "q/old": ("note", {"title": "Dugong policy", "summary": "Dugong dugong rules."},
                  "# Old\n\ndugong dugong dugong\n"),
        "q/x": ("note", {"title": "Dugong notes", "summary": "Dugong notes."},
                "# X\n\ndugong dugong\n"),
        "q/y": ("note", {"title": "Dugong facts", "summary": "Dugong facts."}, "# Y\n\ndugong\n"),
        # Its metadata does not say dugong (locate cannot find it, so locate cannot
        # move it up either); its body does, once: sniff ranks it last.
        "q/new": ("note", {"title": "Policy 2028", "summary": "The rules that replace the old "
                                                               "sea cow text.",
                           "links": [{"rel": "supersedes", "target": "q/old"}]},
                  "# New\n\nrules, the dugong included\n"),
    })
    with Vine(root, writable=False, alpha=0) as vine:
        order = [i for i, _, _ in fused(vine, "dugong", "dugong", 2)]
        assert order[0] == "q/old" and order.index("q/new") >= 2
        out = assert_ok(vine.harvest("dugong", terms=["dugong"], k=2))
    assert out["superseded_excluded"] == [{"id": "q/old", "by": "q/new"}]
    assert ids(out)[0] == "q/new"


def test_a_node_whose_exact_code_is_asked_keeps_its_seat(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "named", {
        "p/old": ("note", {"title": "Walrus policy", "summary": "Walrus rules."},
                  "# Old\n\nwalrus rules under form POL-7\n"),
        "p/new": ("note", {"title": "Policy 2027", "summary": "The new rules.",
                           "links": [{"rel": "supersedes", "target": "p/old"}]},
                  "# New\n\nrules for 2027\n"),
    })
    with Vine(root, writable=False, alpha=0) as vine:
        asked = assert_ok(vine.harvest("walrus form POL-7", k=1))
        vague = assert_ok(vine.harvest("walrus form", k=1))
    assert ids(asked) == ["p/old"] and "superseded_excluded" not in asked
    assert ids(vague) == ["p/new"]
    assert vague["superseded_excluded"] == [{"id": "p/old", "by": "p/new"}]


def test_a_year_in_the_question_does_not_revive_a_superseded_node(hv: Vine) -> None:
    old, new = "contracts/master-agreement-2024", "contracts/master-agreement"
    out = assert_ok(hv.harvest("master agreement 2026 payment terms", k=3))
    assert new in ids(out)
    assert old not in ids(out)


def test_sample_brain_master_agreement_supersedes_2024(hv: Vine) -> None:
    q = "master agreement payment terms"
    old, new = "contracts/master-agreement-2024", "contracts/master-agreement"
    assert {"rel": "supersedes", "target": old} in [
        {k: e[k] for k in ("rel", "target")} for e in hv.look(new)["edges_out"]]
    out = assert_ok(hv.harvest(q, k=3))
    assert old not in ids(out) and new in ids(out)
    assert {"id": old, "by": new} in out["superseded_excluded"]
    kept = assert_ok(hv.harvest(q, k=3, include_superseded=True))
    assert {old, new} <= set(ids(kept)) and "superseded_excluded" not in kept
    assert by_id(kept)[new]["supersedes"] == [old]
    assert by_id(kept)[old]["superseded_by"] == [new]


def test_succeeds_annotates_but_never_excludes(hv: Vine) -> None:
    new, old = "sales/exchange-policy", "sales/exchange-policy-2025"
    assert {"rel": "succeeds", "target": old} in [
        {k: e[k] for k in ("rel", "target")} for e in hv.look(new)["edges_out"]]
    out = assert_ok(hv.harvest(QUESTION, k=3))
    assert {new, old} <= set(ids(out)) and "superseded_excluded" not in out
    assert by_id(out)[new]["supersedes"] == [old]
    assert by_id(out)[old]["superseded_by"] == [new]
    for r in out["results"]:
        if r["id"] not in (new, old):
            assert "supersedes" not in r and "superseded_by" not in r


# -- empty, windows, errors ----------------------------------------------------------


def test_nothing_matched(hv: Vine) -> None:
    out = assert_ok(hv.harvest("xylophonic quagmirical zzqxv"))
    assert out["results"] == [] and out["truncated"] is False
    assert "searched" in out and out["hint"]
    assert "terms" in out["hint"]


@pytest.fixture
def dated(tmp_path: Path) -> Path:
    return make_forest(tmp_path / "dated", {
        "w/a": ("note", {"title": "Otter a", "summary": "Otter.", "created": "2025-06-01",
                         "updated": "2026-07-01"}, "# A\n\notter\n"),
        "w/b": ("note", {"title": "Otter b", "summary": "Otter.", "created": "2026-02-10",
                         "updated": "2026-02-10"}, "# B\n\notter\n"),
        "w/c": ("note", {"title": "Otter c", "summary": "Otter.", "created": "2026-08-01",
                         "updated": "2026-08-01"}, "# C\n\notter\n"),
    })


@pytest.mark.parametrize(("window", "expected"), [
    ({}, {"w/a", "w/b", "w/c"}),
    ({"since": "2026-01", "until": "2026-06"}, {"w/b"}),
    ({"since": "2026"}, {"w/b", "w/c"}),
    ({"until": "2025"}, {"w/a"}),
    ({"since": "2026-02-10", "until": "2026-02-10"}, {"w/b"}),
    ({"since": "2026-06", "date_field": "updated"}, {"w/a", "w/c"}),
])
def test_windows_restrict_results_like_locate(dated: Path, window: dict[str, str],
                                              expected: set[str]) -> None:
    with Vine(dated, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("otter", k=5, **window))
        located = {r["id"] for r in assert_ok(vine.locate("otter", k=10, **window))["results"]}
        sniffed = {r["id"] for r in assert_ok(vine.sniff("otter", k=10, **window))["results"]}
    assert set(ids(out)) == expected == located == sniffed
    if window:
        assert out["window"] == {"since": window.get("since"), "until": window.get("until"),
                                 "date_field": window.get("date_field", "created")}
    else:
        assert "window" not in out


def test_a_successor_outside_the_window_is_not_returned(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "wsup", {
        "p/old": ("note", {"title": "Walrus policy 2025", "summary": "Walrus rules.",
                           "created": "2025-01-10", "updated": "2025-01-10"},
                  "# Old\n\nwalrus\n"),
        "p/new": ("note", {"title": "Policy 2027", "summary": "The new rules.",
                           "created": "2027-01-10", "updated": "2027-01-10",
                           "links": [{"rel": "supersedes", "target": "p/old"}]},
                  "# New\n\nrules\n"),
    })
    with Vine(root, writable=False, alpha=0) as vine:
        assert ids(assert_ok(vine.locate("walrus", until="2025"))) == ["p/old"]
        out = assert_ok(vine.harvest("walrus", until="2025"))
    assert all(r["created"] <= "2025-12-31" for r in out["results"]), out["results"]
    # Inside the window the old policy has no live successor: it is the answer.
    assert ids(out) == ["p/old"] and "superseded_excluded" not in out


def test_nodes_that_supersede_each_other_are_both_kept(tmp_path: Path) -> None:
    """A cycle of supersession is a mistake in the data; it must not empty the result."""
    root = make_forest(tmp_path / "cycle", {
        "c/a": ("note", {"title": "Narwhal rules A", "summary": "Narwhal rules.",
                         "links": [{"rel": "supersedes", "target": "c/b"}]}, "# A\n\nnarwhal\n"),
        "c/b": ("note", {"title": "Narwhal rules B", "summary": "Narwhal rules.",
                         "links": [{"rel": "supersedes", "target": "c/a"}]}, "# B\n\nnarwhal\n"),
    })
    with Vine(root, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("narwhal rules"))
    assert sorted(ids(out)) == ["c/a", "c/b"]
    assert "superseded_excluded" not in out


def test_an_empty_window(dated: Path) -> None:
    with Vine(dated, writable=False, alpha=0) as vine:
        out = assert_ok(vine.harvest("otter", since="2030"))
    assert out["results"] == [] and out["hint"] and "searched" in out
    assert out["window"]["since"] == "2030"


BAD_ARGS: list[dict[str, Any]] = [
    {"query": ""},
    {"query": "   "},
    {"query": "x", "k": "3"},
    {"query": "x", "k": True},
    {"query": "x", "k": 1.5},
    {"query": "x", "k": 2**70},
    {"query": ["exchange"]},
    {"query": "x", "terms": 5},
    {"query": "x", "terms": [1]},
    {"query": "x", "terms": ["a"]},
    {"query": "x", "terms": [f"term{i}" for i in range(9)]},
    {"query": "x", "include_superseded": "yes"},
    {"query": "x", "since": "2026-13"},
    {"query": "x", "date_field": "birthday"},
]


@pytest.mark.parametrize("args", BAD_ARGS)
def test_bad_arguments_are_envelopes(hv: Vine, args: dict[str, Any]) -> None:
    assert_error(hv.harvest(**args), "E_SCHEMA")
    assert_error(hv.call("harvest", args), "E_SCHEMA")


@pytest.mark.parametrize("args", [{}, {"k": 3}, {"query": "x", "scope": "sales"}, None])
def test_call_checks_the_argument_object(hv: Vine, args: dict[str, Any] | None) -> None:
    if args is None:
        assert_error(hv.call("harvest", ["x"]), "E_SCHEMA")  # type: ignore[arg-type]
    else:
        assert_error(hv.call("harvest", args), "E_SCHEMA")


def test_call_answers_like_the_method(hv: Vine) -> None:
    args = {"query": QUESTION, "terms": ["exchange", "deadline"], "k": 2}
    assert hv.call("harvest", args) == hv.harvest(**args)


# -- heat ----------------------------------------------------------------------------


def test_harvest_deposits_heat_on_what_it_returns(tmp_path: Path) -> None:
    nodes = {f"c/n{i}": ("note", {"title": f"Capybara {i}", "summary": "Capybara."},
                         f"# N{i}\n\ncapybara\n") for i in range(4)}
    nodes["d/heron"] = ("note", {"title": "Heron", "summary": "Heron."}, "# H\n\nheron\n")
    root = make_forest(tmp_path / "heat", nodes)
    with Vine(root, writable=False) as vine:
        out = assert_ok(vine.harvest("capybara", k=2))  # the sweep lists all 4, keeps 2
        kept = set(ids(out))
        # look reports the heat before its own deposit
        heat = {i: assert_ok(vine.look(i))["stats"]["heat"] for i in [*nodes, "c/_index"]}
    listed = {f"c/n{i}" for i in range(4)} - kept
    assert len(kept) == 2
    assert min(heat[i] for i in kept) > max(heat[i] for i in listed) > 0
    assert heat["d/heron"] == heat["c/_index"] == 0.0


# -- the command line ----------------------------------------------------------------

runner = CliRunner()


def cool(root: Path) -> None:
    """Forget all heat, so the CLI and the engine rank from the same empty trails."""
    for suffix in ("", "-wal", "-shm"):
        (root / "_derived" / f"trails.db{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize(("argv", "args"), [
    (["-k", "2", "--terms", "exchange", "--terms", "deadline"],
     {"k": 2, "terms": ["exchange", "deadline"]}),
    ([], {}),
    (["-k", "3", "--include-superseded"], {"k": 3, "include_superseded": True}),
    (["--since", "2026", "--date-field", "updated"], {"since": "2026", "date_field": "updated"}),
])
def test_cli_prints_the_engine_answer(tmp_path: Path, argv: list[str],
                                      args: dict[str, Any]) -> None:
    root = copy_sample(tmp_path / "brain")
    query = "master agreement exchange deadline"
    cool(root)
    with Vine(root, writable=False) as vine:
        expected = assert_ok(vine.harvest(query, **args))
    cool(root)
    result = runner.invoke(app, ["harvest", query, "-f", str(root), *argv],
                           env={"VINE_FOREST": None}, catch_exceptions=False)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert json.loads(result.stdout) == expected


def test_cli_error_is_the_envelope(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    result = runner.invoke(app, ["harvest", " ", "-f", str(root)], env={"VINE_FOREST": None},
                           catch_exceptions=False)
    assert result.exit_code != 0
    assert json.loads(result.stdout)["error"]["code"] == "E_SCHEMA"
    assert "E_SCHEMA" in result.stderr
