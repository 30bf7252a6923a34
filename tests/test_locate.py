"""locate: ranked entry points from curated metadata only."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine, budget

from .forestkit import (
    assert_error,
    assert_ok,
    copy_sample,
    forest_fixture,
    leaf,
    make_forest,
    reader,
)

forest = forest_fixture(
    {
        "sales/exchange-policy": leaf(
            "# Exchange policy\n\nBody mentions kumquat only here.",
            title="Exchange policy",
            summary="Return and exchange windows per channel.",
            tags=["sales", "policy"],
            aliases=["política de trocas"],
        ),
        "sales/price-list": leaf(
            "# Prices\n", title="Price list", summary="Prices per product, 2026."
        ),
        "ops/invoices": leaf(
            "# I\n",
            title="Invoice NF-4412 handling",
            summary="How invoice NF-4412 was reissued (v1.2).",
        ),
        "ops/ação": leaf("# A\n", title="Ação corretiva", summary="Correção de estoque."),
    }
)


def test_result_shape_and_order(forest: Path) -> None:
    with reader(forest) as vine:
        out = assert_ok(vine.locate("exchange policy", k=3))
    first = out["results"][0]
    assert first["id"] == "sales/exchange-policy"
    assert set(first) >= {"id", "kind", "type", "title", "summary", "trail", "score", "heat"}
    assert first["kind"] == "banana" and first["trail"] == ["_index", "sales/_index"]
    assert first["score"] == 1.0
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)


def test_never_reads_bodies(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.locate("kumquat"))
    assert out["results"] == []
    assert out["searched"] > 0
    assert "sniff" in out["hint"]


@pytest.mark.parametrize(
    "query",
    [
        "NF-4412",
        "v1.2",
        '"NF-4412"',
        "(NF-4412",
        "NF-4412)",
        "invoice AND",
        "NOT invoice",
        "invoice*",
        "NEAR(invoice x)",
        "col:invoice",
        "^invoice",
        "'invoice'",
    ],
)
def test_fts_syntax_is_never_the_callers_problem(forest: Path, query: str) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.locate(query))
    assert out["results"], query
    assert out["results"][0]["id"] == "ops/invoices"


def test_punctuation_only_query_is_empty_not_an_error(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.locate('"()*:^'))
    assert out["results"] == [] and "hint" in out


def test_accents_are_folded_both_ways(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert vine.locate("acao corretiva")["results"][0]["id"] == "ops/ação"
        assert vine.locate("AÇÃO")["results"][0]["id"] == "ops/ação"
        assert vine.locate("politica de trocas")["results"][0]["id"] == "sales/exchange-policy"


def test_scope_and_type_filter(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        branches = assert_ok(vine.locate("sales", scope="branches"))["results"]
        assert [r["id"] for r in branches] == ["sales/_index"]
        assert branches[0]["kind"] == "branch" and "coverage" not in branches[0] or True
        notes = assert_ok(vine.locate("sales", scope="notes"))["results"]
        assert all(r["kind"] == "banana" for r in notes)
        assert all(
            r["type"] == "branch" for r in vine.locate("sales", type_filter="branch")["results"]
        )
        assert_error(vine.locate("x", scope="everything"), "E_SCHEMA")
        assert_error(vine.locate("x", include=["body"]), "E_SCHEMA")


def test_include_outline(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = vine.locate("exchange", include=["outline"])
    assert "outline" in out["results"][0]


def test_truncated_when_more_than_k_matched(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = vine.locate("policy prices invoice", k=1)
    assert len(out["results"]) == 1 and out["truncated"] is True


def test_branch_carries_coverage_in_the_seeds_words(sample_root: Path) -> None:
    with Vine(sample_root, writable=False) as vine:
        out = vine.locate("sales", scope="branches")
    sales = next(r for r in out["results"] if r["id"] == "sales/_index")
    assert sales["coverage"] == "5 bananas, 1 sub-branch."
    assert "bananas" in sales["coverage"]


def test_budget_drops_whole_tail_items(tmp_path: Path) -> None:
    nodes = {
        f"big/n{i:02d}": leaf("", title=f"Walrus {i}", summary="walrus " * 50) for i in range(40)
    }
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.locate("walrus", k=40))
    assert budget.cost(out) <= budget.LOCATE
    assert out["truncated"] is True
    assert 0 < len(out["results"]) < 40
    assert all(
        r["summary"] == "walrus " * 50 or r["summary"].startswith("walrus") for r in out["results"]
    )


def test_windows(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        inside = assert_ok(vine.locate("policy", since="2026-01", until="2026"))
        assert inside["results"] and inside["window"]["since"] == "2026-01"
        outside = assert_ok(vine.locate("policy", since="2027"))
        assert outside["results"] == []
        assert_error(vine.locate("policy", since="2026-13"), "E_SCHEMA")
        empty = assert_ok(vine.locate("policy", since="2027", until="2026"))
        assert empty["results"] == [] and empty["window"]["empty"] is True


def test_heat_lifts_a_result_and_alpha_zero_ignores_it(tmp_path: Path) -> None:
    nodes = {
        "a/first": leaf("", title="Otter one", summary="otter"),
        "a/second": leaf("", title="Otter two", summary="otter"),
    }
    root = make_forest(tmp_path / "f", nodes)
    with Vine(root, writable=False) as vine:
        base = vine.locate("otter")["results"]
        assert base[0]["score"] == base[1]["score"]
        loser = base[1]["id"]
        for _ in range(20):
            vine.look(loser)
        after = vine.locate("otter")["results"]
        assert after[0]["id"] == loser and after[0]["heat"] > 0
        assert after[0]["score"] > after[1]["score"]
    with reader(root) as cold:
        scores = [r["score"] for r in cold.locate("otter")["results"]]
        assert scores[0] == scores[1]


def test_a_query_over_the_length_limit_is_refused_on_every_surface(tmp_path: Path) -> None:
    from monkeyllm.registry import CALLS

    # One limit, read by the engine's check and the schemas every surface serves.
    limit = budget.LOCATE_QUERY_CHARS_MAX
    assert CALLS["locate"].input_schema()["properties"]["query"]["maxLength"] == limit
    with reader(copy_sample(tmp_path / "f")) as vine:
        err = assert_error(vine.call("locate", {"query": "x" * (limit + 1)}), "E_SCHEMA")
        assert "query" in err["message"] and str(limit) in err["message"]
        # At the limit, a long run of one word still answers (an empty result or hits).
        word = "returns " * (limit // 8)
        assert "results" in assert_ok(vine.call("locate", {"query": word[:limit]}))
