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
from hypothesis import given
from hypothesis import strategies as st

from monkeyllm import Vine
from monkeyllm.reads import features
from monkeyllm.reads import sweep as sweep_module
from monkeyllm.reads.harvest import MAX_K_ENV
from monkeyllm.reads.sniff import Hits
from monkeyllm.reads.terms import derive_terms, locate_query
from monkeyllm.text import fold

from ..forestkit import (
    assert_error,
    assert_ok,
    body_offset,
    file_lines,
    forest_fixture,
    fuzzed,
    leaf,
    make_forest,
    reader,
)
from .kit import MAX_K, QUESTION, assert_whole, by_id, fillers, fused, ids

RESULT_KEYS = {
    "id",
    "title",
    "type",
    "trail",
    "summary",
    "score",
    "found_by",
    "matches",
    "content",
    "body_tokens",
}


# -- helpers -------------------------------------------------------------------------


def trail_of(node_id: str) -> list[str]:
    """The ancestor indexes of a node, from its path."""
    if node_id == "_index":
        return []
    folders = node_id.split("/")[:-1]
    if node_id.endswith("/_index"):
        folders = folders[:-1]
    return ["_index"] + ["/".join(folders[:i]) + "/_index" for i in range(1, len(folders) + 1)]


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
        assert (r["title"], r["type"], r["summary"]) == (
            digest["title"],
            digest["type"],
            digest["summary"],
        )
        assert r["body_tokens"] == digest["stats"]["body_tokens"]
        assert r["trail"] == trail_of(r["id"])
        assert r["found_by"] and r["found_by"] in (
            ["locate"],
            ["sniff"],
            ["locate", "sniff"],
            ["edge"],
            ["locate", "edge"],
            ["sniff", "edge"],
            ["locate", "sniff", "edge"],
        )
        # a node brought in by a link says which hit it came from, and by which rel
        assert ("via" in r) == ("edge" in r["found_by"])
        if "via" in r:
            assert r["via"]["from"] in [x["id"] for x in out["results"]]
        assert isinstance(r["score"], float) and r["score"] > 0
        lines = file_lines(hv.root, r["id"])  # match lines are the file's
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


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (QUESTION, ["deadline", "exchange", "retail", "order"]),
        # code-shaped first (a digit, all capitals, or - _ . /), then words, all folded
        (
            "Where is invoice NF-4412 for SKU ABC in 2026?",
            ["nf-4412", "sku", "abc", "2026", "invoice"],
        ),
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
        (
            "alpha bravo charlie delta echoes foxtrot golfing hotel indigo juliet",
            ["alpha", "bravo", "charlie", "delta", "echoes", "foxtrot", "golfing", "hotel"],
        ),
        ("... -- //", []),
    ],
)
def test_derive_terms(query: str, expected: list[str]) -> None:
    assert derive_terms(query) == expected


@pytest.mark.parametrize(
    "query", ["who is she?", "o que é isso", "how do I get it", "big cat sat on a mat"]
)
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


@pytest.mark.parametrize(
    ("query", "term", "k"),
    [
        (QUESTION, "exchange", 3),
        ("master agreement payment terms", "agreement", 2),
        ("ICMS tax on interstate sales", "ICMS", 5),
        ("warehouse stock", "on_hand", 4),
        ("erp outage", "outage", 1),
        ("Qual é o prazo de devolução?", "prazo", 3),
        ("tell me about the carriers?", None, 5),
    ],
)
def test_fusion_matches_the_primitives(hv: Vine, query: str, term: str | None, k: int) -> None:
    # sniff is literal; the sweep's word forms for derived terms are tested on their own.
    with features.without("forms", "edges"):
        expected = fused(hv, query, term, k)
        out = assert_ok(hv.harvest(query, terms=term, k=k, include_superseded=True))
    got = [(r["id"], r["score"], r["found_by"]) for r in out["results"]]
    want = [(i, round(s, 4), f) for i, s, f in expected][: len(got)]
    assert got == want
    if not out["truncated"]:
        assert len(got) == min(k, len(expected))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (QUESTION, "deadline exchange retail order"),
        ("Qual é o prazo de devolução da NF-4412?", "prazo devolucao nf-4412"),
        ("how big is the big CAT", "big cat"),  # 3-letter words stay for locate
        ("what is the", "what is the"),  # nothing left: the question as asked
    ],
)
def test_locate_gets_the_question_without_stopwords(query: str, expected: str) -> None:
    assert locate_query(query) == expected


@pytest.fixture
def codes(tmp_path: Path) -> Path:
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "i/code": leaf("# Parts\n\nthe part ZX-99 is here\n", title="Part list", summary="Parts.")
    }
    nodes.update(fillers("i/w", 6, lambda i: f"alpha and beta, line {i}"))
    return make_forest(tmp_path / "codes", nodes)


def test_a_rare_code_outranks_common_words_in_the_sweep(codes: Path) -> None:
    q = "alpha beta ZX-99"
    with reader(codes) as vine:
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
        f"d/n{i:02d}": leaf(f"# N{i}\n\nalpha and beta here\n", title=f"Note {i}", summary="Plain.")
        for i in range(55)
    }
    nodes["e/code"] = leaf(
        "# Code\n\nthe part ZX-99 is here\n", title="Code note", summary="Plain."
    )
    root = make_forest(tmp_path / "deep", nodes)
    with reader(root) as vine:
        assert ids(assert_ok(vine.sniff("ZX-99"))) == ["e/code"]
        assert ids(assert_ok(vine.harvest("alpha beta ZX-99", terms="ZX-99"))) == ["e/code"]
        out = assert_ok(vine.harvest("alpha beta ZX-99", k=3))
    assert "e/code" in ids(out)


def test_a_code_with_punctuation_counts_the_bodies_that_hold_it(tmp_path: Path) -> None:
    """``6.202`` is found through the index as lines holding ``6`` and a token starting
    ``202``: every line saying "6 pallets in 2026" is a candidate. Its scarcity counts
    the one body that holds it, so it outweighs the common words."""
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "c/code": leaf(
            "# Codes\n\nGoods sent back from another state use CFOP 6.202.\n",
            title="Fiscal codes",
            summary="Codes.",
        )
    }
    lot = fillers(
        "c/f",
        8,
        lambda i: f"The return invoice: 6 pallets in 2026, lot {i}.",
        title=lambda i: f"Filler {'abcdefgh'[i]}",
    )
    nodes.update(lot)
    root = make_forest(tmp_path / "cfop", nodes)
    q = "return invoice 6.202"
    with reader(root) as vine:
        assert derive_terms(q) == ["6.202", "return", "invoice"]
        assert ids(assert_ok(vine.sniff("6.202", k=10))) == ["c/code"]
        assert assert_ok(vine.locate(locate_query(q)))["results"] == []
        out = assert_ok(vine.harvest(q, k=1))
    assert ids(out) == ["c/code"]


def test_terms_found_together_outrank_the_same_words_scattered(tmp_path: Path) -> None:
    """The sweep ranks a body by its best passage (a few consecutive lines): two terms
    in one sentence beat three terms lines apart, though sniff counts three first."""
    gap = "\n".join(f"unrelated line {i}" for i in range(8))
    root = make_forest(
        tmp_path / "near",
        {
            "p/together": leaf(
                "# Together\n\nReturned goods go to the outlet.\n",
                title="Shop floor",
                summary="Stores.",
            ),
            "p/scattered": leaf(
                f"# Scattered\n\nreturned\n{gap}\noutlet\n{gap}\ndiscount\n",
                title="Contract",
                summary="Clauses.",
            ),
            "p/third": leaf("# Third\n\nThe discount ladder.\n", title="Prices", summary="Tiers."),
            **fillers("p/f", 5, lambda i: f"nothing to see {i}"),
        },
    )
    q = "which returned goods get an outlet discount"
    with reader(root) as vine:
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
        "e/kettle": leaf(
            "# Kettle\n\n## Quality\n\nThe lot L2503 is blocked in the ERP.\n",
            "entity",
            title="Aurora kettle",
            summary="A kettle.",
        )
    }
    for i in range(3):
        nodes[f"e/erp{i}"] = leaf(
            f"# Job {i}\n\nThe ERP runs job {i} at night.\n",
            title=f"ERP job {i}",
            summary=f"An ERP integration job, number {i}.",
        )
    nodes.update(fillers("e/f", 6, lambda i: f"the ERP again, line {i}"))
    root = make_forest(tmp_path / "erp", nodes)
    q = "Why is lot L2503 blocked in the ERP?"
    with reader(root) as vine:
        located = ids(assert_ok(vine.locate(locate_query(q), k=6)))
        assert located[:3] == ["e/erp0", "e/erp1", "e/erp2"] or set(located[:3]) == {
            "e/erp0",
            "e/erp1",
            "e/erp2",
        }
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
    st.dictionaries(
        st.integers(0, 3),
        st.lists(st.integers(0, 6), min_size=1, max_size=4, unique=True).map(sorted),
        min_size=1,
    ),
    max_size=11,
)


@fuzzed(300)
@given(
    rows=_HITS,
    weight=st.lists(st.sampled_from([0.1, 0.5, 1.0, 2.0, 3.3]), min_size=4, max_size=4),
    heat=st.lists(st.sampled_from([0.0, 0.2, 1.0]), min_size=11, max_size=11),
    pool=st.integers(1, 8),
)
def test_the_sweep_ranking_skips_only_bodies_that_cannot_place(
    tiny_forest: Vine,
    rows: dict[str, dict[int, list[int]]],
    weight: list[float],
    heat: list[float],
    pool: int,
) -> None:
    """``_best`` works out a body's best line only while it can still place; the result
    is the full sort of every body, floor and tiers applied."""
    forest = tiny_forest._forest
    hits = {node_id: Hits.of(r) for node_id, r in rows.items()}
    heats = {node_id: heat[i] for i, node_id in enumerate(hits)}
    got = sweep_module._best(forest, hits, weight, heats, pool)
    value = {i: sweep_module._weigh(h, weight) for i, h in hits.items()}
    floor = sweep_module.SWEEP_FLOOR * max(value.values(), default=0.0)
    held = {i: sum(weight[t] for t in h.terms) for i, h in hits.items()}
    full = sorted(
        (i for i in hits if value[i] >= floor),
        key=lambda i: (
            i.endswith("_index"),
            -forest.score(value[i], heats[i]),
            -held[i],
            -hits[i].count,
            i,
        ),
    )[:pool]
    assert [r[0] for r in got] == full
    assert [r[1] for r in got] == [value[i] for i in full]


rrf_forest = forest_fixture(
    {
        # first for locate only (its body never says zebra)
        "z/meta": leaf(
            "# Meta\n\nStripes, nothing else.\n", title="Zebra zebra", summary="Zebra zebra zebra."
        ),
        # second for both
        "z/both": leaf(
            "# Both\n\nOne zebra here.\n", title="Zebra", summary="A zebra note among other words."
        ),
        # first for sniff only (its metadata never says zebra)
        "z/body": leaf(
            "# Body\n\nzebra\nzebra\nzebra\n", title="Stripes", summary="Horse-like animal."
        ),
        "z/quokka": leaf("# Q\n\nquokka\n", title="Quokka", summary="Quokka."),
    }
)


def test_found_by_both_outranks_found_by_one(rrf_forest: Path) -> None:
    with reader(rrf_forest) as vine:
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
        "z/meta": ["locate"],
        "z/body": ["sniff"],
    }
    assert [r["score"] for r in out["results"][1:]] == [round(1 / 61, 4)] * 2 == [0.0164] * 2
    assert [(r["id"], r["score"], r["found_by"]) for r in top] == [
        ("z/quokka", round(2 / 61, 4), ["locate", "sniff"])
    ]
    assert top[0]["score"] == 0.0328


@pytest.mark.parametrize(
    ("meta_dates", "body_dates", "first"),
    [
        ({"updated": "2026-02-01"}, {"updated": "2026-03-01"}, "z/body"),
        ({"updated": "2026-03-01"}, {"updated": "2026-02-01"}, "z/meta"),
        ({"created": "2026-01-20"}, {"created": "2026-01-05"}, "z/meta"),
        ({}, {}, "z/body"),  # same dates: id ascending
    ],
)
def test_fusion_ties_break_on_updated_created_then_id(
    tmp_path: Path, meta_dates: dict[str, str], body_dates: dict[str, str], first: str
) -> None:
    root = make_forest(
        tmp_path / "tie",
        {
            "z/meta": (
                "note",
                {"title": "Zebra", "summary": "Zebra.", **meta_dates},
                "# Meta\n\nStripes.\n",
            ),
            "z/body": (
                "note",
                {"title": "Stripes", "summary": "Horse-like.", **body_dates},
                "# Body\n\nzebra\n",
            ),
        },
    )
    with reader(root) as vine:
        out = assert_ok(vine.harvest("zebra", terms=["zebra"], k=2))
    assert [r["score"] for r in out["results"]] == [0.0164, 0.0164]
    assert ids(out)[0] == first


@pytest.fixture
def many(tmp_path: Path) -> Path:
    nodes = {
        f"c/n{i:02d}": leaf(f"# N{i}\n\ncapybara {i}\n", title=f"Capybara {i}", summary="Capybara.")
        for i in range(12)
    }
    nodes["c/other"] = leaf("# H\n\nheron\n", title="Heron", summary="Heron.")
    return make_forest(tmp_path / "many", nodes)


@pytest.mark.parametrize(("k", "expected"), [(1, 1), (2, 2), (5, 5)])
def test_k_picks_one_through_five(many: Path, k: int, expected: int) -> None:
    with reader(many) as vine:
        out = assert_ok(vine.harvest("capybara", k=k))
    assert len(out["results"]) == expected and out["truncated"] is False


@pytest.mark.parametrize("k", [-3, 0, MAX_K + 1, 99])
def test_k_out_of_range_is_refused(many: Path, k: int) -> None:
    with reader(many) as vine:
        err = assert_error(vine.harvest("capybara", k=k), "E_SCHEMA")
    assert f"from 1 to {MAX_K}" in err["message"]


def test_the_environment_moves_the_ceiling(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with reader(many) as vine:
        monkeypatch.setenv(MAX_K_ENV, "8")
        assert len(assert_ok(vine.harvest("capybara", k=8))["results"]) == 8
        assert "from 1 to 8" in assert_error(vine.harvest("capybara", k=99), "E_SCHEMA")["message"]
        assert len(assert_ok(vine.call("harvest", {"query": "capybara", "k": 7}))["results"]) == 7
        monkeypatch.setenv(MAX_K_ENV, "2")
        assert_error(vine.harvest("capybara", k=5), "E_SCHEMA")
        assert len(assert_ok(vine.harvest("capybara", k=2))["results"]) == 2
        for bad in ("abc", "0", "-1", "2.5"):
            monkeypatch.setenv(MAX_K_ENV, bad)
            err = assert_error(vine.harvest("capybara"), "E_SCHEMA")
            assert MAX_K_ENV in err["message"]
            assert_error(vine.call("harvest", {"query": "capybara"}), "E_SCHEMA")


BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_first_seats_do_not_depend_on_k(hv: Vine) -> None:
    """harvest(k=3) is the first three of harvest(k=5): both legs rank the same pool,
    and a seated hit that is also a linked neighbour of a better one rises to its
    edge's score either way (every question of the bench sets on sample-brain)."""
    questions = [
        q["question"]
        for path in sorted(BENCH.glob("*.json"))
        if isinstance(data := json.loads(path.read_text()), list)
        for q in data
        if isinstance(q, dict) and q.get("forest", "sample-brain") == "sample-brain"
    ]
    assert len(questions) > 50
    differ = [q for q in questions if ids(hv.harvest(q, k=3)) != ids(hv.harvest(q, k=5))[:3]]
    assert differ == []
