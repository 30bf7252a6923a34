"""``query``: read-only SQL over a dataset payload (primitives "query", forest-format §6.7).

Most tests run on a forest built here, so every number can be asserted exactly;
one smoke test reads ``sales/orders-2026`` of the sample brain.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from monkeyllm import Vine
from monkeyllm.budget import QUERY, cost, dumps, tokens

from ..forestkit import assert_ok
from .kit import N_ORDERS, REGIONS, WIDE_COLS, Shop, _order, budget_ok, direct, q, sha256

# -- happy paths -------------------------------------------------------------------------


def test_group_by_count_matches_the_data(shop: Shop) -> None:
    out = assert_ok(
        q(shop, "SELECT region, COUNT(*) AS orders FROM orders GROUP BY region ORDER BY region")
    )
    assert out["columns"] == ["region", "orders"]
    expected = sorted(
        (r, sum(1 for i in range(1, N_ORDERS + 1) if REGIONS[i % 4] == r)) for r in REGIONS
    )
    assert out["rows"] == [list(p) for p in expected]
    assert out["row_count"] == 4
    assert out["limited"] is False


def test_count_and_sum(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT COUNT(*) AS n, SUM(value_cents) AS cents FROM orders"))
    assert out["rows"] == [[N_ORDERS, sum(_order(i)[5] for i in range(1, N_ORDERS + 1))]]
    assert out["row_count"] == 1 and out["limited"] is False


def test_with_select(shop: Shop) -> None:
    out = assert_ok(
        q(
            shop,
            "WITH big AS (SELECT * FROM orders WHERE value_cents > 50000) "
            "SELECT COUNT(*) AS n FROM big",
        )
    )
    assert out["rows"] == [[sum(1 for i in range(1, N_ORDERS + 1) if _order(i)[5] > 50000)]]


def test_recursive_with_that_terminates(shop: Shop) -> None:
    out = assert_ok(
        q(
            shop,
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
            "WHERE x < 10) SELECT SUM(x) FROM c",
        )
    )
    assert out["rows"] == [[55]]


def test_union_and_join(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT 'a' AS x UNION SELECT 'b' UNION SELECT 'a' ORDER BY x"))
    assert out["rows"] == [["a"], ["b"]]
    out = assert_ok(
        q(
            shop,
            "SELECT o.region, SUM(i.qty) FROM items i JOIN orders o "
            "ON o.id = i.order_id GROUP BY o.region ORDER BY o.region",
        )
    )
    assert out["rows"] == direct(
        shop,
        "SELECT o.region, SUM(i.qty) FROM items i JOIN orders o "
        "ON o.id = i.order_id GROUP BY o.region ORDER BY o.region",
    )


def test_a_view_is_readable(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT COUNT(*) FROM big_orders"))
    assert out["rows"] == direct(shop, "SELECT COUNT(*) FROM big_orders")


@pytest.mark.parametrize(
    "sql, rows",
    [
        ("SELECT 'update' AS x", [["update"]]),
        ("SELECT 'DROP TABLE orders' AS x", [["DROP TABLE orders"]]),
        ("SELECT 'x; DELETE FROM orders' AS x", [["x; DELETE FROM orders"]]),
        ("SELECT 'pragma_table_info' AS x", [["pragma_table_info"]]),
        ("SELECT 'ATTACH' AS attach_word", [["ATTACH"]]),
        ("SELECT COUNT(*) AS \"delete\" FROM orders WHERE customer = 'update'", [[0]]),
        ("SELECT 1 -- ; DROP TABLE orders", [[1]]),
        ("SELECT 1 /* ; DELETE FROM orders */", [[1]]),
    ],
)
def test_keywords_inside_literals_and_comments_are_still_reads(
    shop: Shop, sql: str, rows: list[list[Any]]
) -> None:
    out = assert_ok(q(shop, sql))
    assert out["rows"] == rows
    assert sha256(shop.payload) == shop.digest


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM orders;",
        "SELECT COUNT(*) FROM orders ;",
        "SELECT COUNT(*) FROM orders;;",
        "SELECT COUNT(*) FROM orders;\n  \n",
        "  \n select count(*) from orders ;",
        "-- how many\nSELECT COUNT(*) FROM orders",
        "/* how many */ SELECT COUNT(*) FROM orders;",
    ],
)
def test_trailing_semicolon_case_and_comments(shop: Shop, sql: str) -> None:
    assert assert_ok(q(shop, sql))["rows"] == [[N_ORDERS]]


def test_response_shape(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id, customer, value_cents FROM orders ORDER BY id LIMIT 3"))
    assert list(out) == ["columns", "rows", "row_count", "limited", "elapsed_ms"]
    assert out["columns"] == ["id", "customer", "value_cents"]
    assert out["rows"] == [[i, _order(i)[1], _order(i)[5]] for i in (1, 2, 3)]
    assert out["row_count"] == 3
    assert out["limited"] is False
    assert isinstance(out["elapsed_ms"], int | float) and out["elapsed_ms"] >= 0
    assert all(isinstance(r, list) for r in out["rows"])


def test_same_answer_through_call(shop: Shop) -> None:
    sql = "SELECT region, MAX(value_cents) FROM orders GROUP BY region ORDER BY region"
    a = assert_ok(q(shop, sql))
    b = assert_ok(shop.vine.call("query", {"id": "data/shop", "sql": sql}))
    assert a["rows"] == b["rows"] and a["columns"] == b["columns"]


def test_types_survive(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT 1, 2.5, NULL, 'ação ✓', 9223372036854775807, -0.125"))
    assert out["rows"] == [[1, 2.5, None, "ação ✓", 9223372036854775807, -0.125]]


def test_limit_200_injected_when_absent(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id FROM orders ORDER BY id"))
    assert out["row_count"] == 200 and len(out["rows"]) == 200
    assert out["rows"] == [[i] for i in range(1, 201)]
    assert out["limited"] is True
    assert "truncated" not in out


def test_limited_when_exactly_200_came_back_under_an_injected_limit(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id FROM orders WHERE id <= 200"))
    assert out["row_count"] == 200 and out["limited"] is True
    out = assert_ok(q(shop, "SELECT id FROM orders WHERE id <= 199"))
    assert out["row_count"] == 199 and out["limited"] is False


@pytest.mark.parametrize(
    "sql, n",
    [
        ("SELECT id FROM orders LIMIT 200", 200),
        ("SELECT id FROM orders ORDER BY id LIMIT 10", 10),
        ("SELECT id FROM orders ORDER BY id LIMIT 5 OFFSET 10", 5),
        ("SELECT id FROM orders UNION ALL SELECT id FROM orders LIMIT 7", 7),
        ("WITH x AS (SELECT id FROM orders) SELECT id FROM x LIMIT 3", 3),
        ("SELECT id FROM orders limit 0", 0),
    ],
)
def test_explicit_limit_is_kept_and_not_limited(shop: Shop, sql: str, n: int) -> None:
    out = assert_ok(q(shop, sql))
    assert out["row_count"] == n
    assert out["limited"] is False


def test_offset_rows_are_the_right_ones(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id FROM orders ORDER BY id LIMIT 5 OFFSET 10"))
    assert out["rows"] == [[i] for i in range(11, 16)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (SELECT id FROM orders LIMIT 300)",
        "SELECT id FROM orders UNION ALL SELECT id FROM orders",
        "SELECT id FROM orders WHERE id IN (SELECT order_id FROM items LIMIT 400) OR id > 0",
    ],
)
def test_a_subquery_limit_does_not_stop_the_injection(shop: Shop, sql: str) -> None:
    out = assert_ok(q(shop, sql))
    assert out["row_count"] == 200
    assert out["limited"] is True


@pytest.mark.parametrize("limit", [201, 300, 1000, -1])
def test_rows_past_an_explicit_large_limit_are_never_dropped_silently(
    shop: Shop, limit: int
) -> None:
    out = assert_ok(q(shop, f"SELECT id FROM orders ORDER BY id LIMIT {limit}"))
    wanted = N_ORDERS if limit < 0 else min(limit, N_ORDERS)
    assert out["rows"] == [[i] for i in range(1, out["row_count"] + 1)]
    if out["row_count"] < wanted:
        assert out["limited"] is True or out.get("truncated") is True, out


def test_blob_cells_are_described_not_returned(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id, data FROM blobs ORDER BY id"))
    assert out["rows"] == [
        [1, "<blob 2 bytes>"],
        [2, "<blob 0 bytes>"],
        [3, None],
        [4, "<blob 1024 bytes>"],
    ]
    out = assert_ok(q(shop, "SELECT randomblob(5000) AS b, zeroblob(3) AS z"))
    assert out["rows"] == [["<blob 5000 bytes>", "<blob 3 bytes>"]]


def test_sample_brain_orders_ledger(brain: Vine) -> None:
    out = assert_ok(
        brain.query("sales/orders-2026", "SELECT region, COUNT(*) AS n FROM orders GROUP BY region")
    )
    assert out["columns"] == ["region", "n"]
    total = assert_ok(brain.query("sales/orders-2026", "SELECT COUNT(*) FROM orders"))
    assert sum(r[1] for r in out["rows"]) == total["rows"][0][0] >= 1500
    # the documented gotcha: total_invoice is formatted TEXT ('USD 54.607,56')
    text = assert_ok(brain.query("sales/orders-2026", "SELECT total_invoice FROM orders LIMIT 1"))
    assert re.fullmatch(r"USD [\d.]+,\d\d", text["rows"][0][0])


# -- the 2000-token budget -----------------------------------------------------------------


def _check_cut(out: dict[str, Any], *, columns: list[str], matched: int) -> None:
    assert budget_ok(out)
    assert out["columns"] == columns
    assert out["truncated"] is True
    assert out["row_count"] == len(out["rows"]) < matched
    hint = out["hint"]
    assert "exist" in hint
    assert f"{len(columns)} column" in hint
    assert f"{out['row_count']} of {matched}" in hint


def test_wide_rows_are_cut_by_whole_rows(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT * FROM wide ORDER BY id"))
    columns = ["id", *(f"column_{c:02d}" for c in range(WIDE_COLS))]
    _check_cut(out, columns=columns, matched=200)
    assert out["row_count"] >= 1
    assert out["limited"] is True
    truth = direct(shop, "SELECT * FROM wide ORDER BY id")
    assert out["rows"] == truth[: out["row_count"]]  # a prefix of whole rows
    # one more row would not have fitted
    bigger = dict(out, rows=truth[: out["row_count"] + 1])
    assert cost(bigger) > QUERY


def test_long_results_are_cut_and_say_so(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT * FROM orders ORDER BY id"))
    _check_cut(
        out,
        columns=["id", "customer", "region", "total_invoice", "closed_at", "value_cents"],
        matched=200,
    )
    assert out["rows"] == [list(_order(i)) for i in range(1, out["row_count"] + 1)]


def test_when_no_row_fits_the_hint_prices_a_row(shop: Shop) -> None:
    sql = "SELECT id, hex(zeroblob(6000)) AS big FROM orders ORDER BY id LIMIT 3"
    out = assert_ok(q(shop, sql))
    _check_cut(out, columns=["id", "big"], matched=3)
    assert out["rows"] == [] and out["row_count"] == 0
    m = re.search(r"(\d+) tokens", out["hint"].split("2 columns")[-1])
    assert m, out["hint"]
    row_cost = tokens(dumps([1, "00" * 6000]))
    assert abs(int(m.group(1)) - row_cost) <= 2


def test_an_aggregate_is_never_cut(shop: Shop) -> None:
    out = assert_ok(
        q(
            shop,
            "SELECT region, SUM(value_cents), COUNT(*) FROM wide "
            "JOIN orders USING (id) GROUP BY region",
        )
    )
    assert "truncated" not in out and "hint" not in out


@pytest.mark.parametrize(
    "sql",
    [
        # one column whose name alone is bigger than the budget
        'SELECT id AS "' + "n" * 9000 + '" FROM orders LIMIT 1',
        # so many columns that their names alone are bigger than the budget
        "SELECT " + ", ".join(f"id AS c{i:04d}_{'x' * 30}" for i in range(300)) + " FROM orders",
    ],
)
def test_response_fits_even_when_the_columns_alone_do_not(shop: Shop, sql: str) -> None:
    out = q(shop, sql)
    assert budget_ok(out), f"query answered {cost(out)} tokens, budget {QUERY}"
    if "error" in out:
        assert out["error"]["code"] == "E_QUERY_INVALID", out
        assert "column" in out["error"]["message"] + out["error"].get("hint", "")
    else:
        assert out.get("truncated") is True


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM wide",
        "SELECT * FROM orders",
        "SELECT * FROM items",
        "SELECT id, data FROM blobs",
        "SELECT a.*, b.* FROM wide a JOIN wide b ON a.id = b.id LIMIT 5",
        "SELECT group_concat(customer, ', ') FROM orders",
        "SELECT hex(randomblob(3000)) FROM nums LIMIT 2",
        "SELECT n, printf('%.*c', n, 'x') FROM nums ORDER BY n DESC LIMIT 50",
    ],
)
def test_every_response_fits_2000_tokens(shop: Shop, sql: str) -> None:
    out = q(shop, sql)
    assert budget_ok(out), cost(out)
    if "error" not in out and out.get("truncated"):
        assert out["row_count"] == len(out["rows"])
