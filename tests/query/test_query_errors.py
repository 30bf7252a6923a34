"""``query``'s refusals: every error envelope, its code and its hint."""

from __future__ import annotations

import time

import pytest

from monkeyllm.budget import dumps

from ..forestkit import assert_error, assert_ok
from .kit import GUARD_CODES, SENTINEL, TABLES, Shop, q


def test_missing_table_lists_the_real_tables(shop: Shop) -> None:
    err = assert_error(q(shop, "SELECT * FROM order_lines"), "E_QUERY_INVALID")
    assert "order_lines" in err["message"]
    for table in TABLES:
        assert table in err["hint"]


def test_missing_column_lists_the_real_columns(shop: Shop) -> None:
    err = assert_error(q(shop, "SELECT total_value FROM orders"), "E_QUERY_INVALID")
    assert "total_value" in err["message"]
    assert "orders(id, customer, region, total_invoice, closed_at, value_cents)" in err["hint"]


def test_an_empty_statement_is_refused_by_the_signature(shop: Shop) -> None:
    err = assert_error(q(shop, ""), "E_SCHEMA")
    assert "sql must not be empty" in err["message"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM orders WHERE",
        "SELECT (1",
        "SELECT * FROM orders ORDER",
        "SELECT 'unterminated",
        "SELECT * FROM orders GROUP BY",
        "SELECT 1 +",
        "SELECT * FROM orders WHERE id = = 1",
        "SELECT FROM orders",
        "   ",
        ";",
        ";;;",
    ],
)
def test_syntax_errors_are_invalid(shop: Shop, sql: str) -> None:
    assert_error(q(shop, sql), "E_QUERY_INVALID")


@pytest.mark.parametrize(
    "sql, line, column",
    [
        ("hello world", 1, 1),
        ("hello", 1, 1),
        ("42", 1, 1),
        ("region = 'South'", 1, 1),
        ("SELEC region FROM orders", 1, 1),
        ("SELECT region FROM orders WHERE id = 1 1", 1, 40),
        ("SELECT region\nFROM orders\nWHERE id = = 1", 3, 12),
        ("SELECT region FROM orders WHERE", 1, 32),
    ],
)
def test_text_that_is_no_statement_is_invalid_where_it_breaks(
    shop: Shop, sql: str, line: int, column: int
) -> None:
    """Forbidden means a real statement the caller may not run; text that SQLite cannot
    read as a statement is invalid, at the line and column where reading stops."""
    err = assert_error(q(shop, sql), "E_QUERY_INVALID")
    assert (err["line"], err["column"]) == (line, column), err
    assert f"line {line}, column {column}" in err["message"]


@pytest.mark.parametrize(
    "sql, verb",
    [
        ("DROP TABLE orders", "DROP"),
        ("PRAGMA table_info(orders)", "PRAGMA"),
        ("ATTACH 'x.db' AS x", "ATTACH"),
        ("VACUUM", "VACUUM"),
        ("REPLACE INTO orders (id) VALUES (1)", "REPLACE"),
        ("DELETE FROM orders WHERE 1", "DELETE"),
    ],
)
def test_real_writes_stay_forbidden_and_named(shop: Shop, sql: str, verb: str) -> None:
    err = assert_error(q(shop, sql), "E_QUERY_FORBIDDEN")
    assert verb in err["message"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM orders WHERE id = ?",
        "SELECT :name",
        "SELECT @x",
        "SELECT CAST(x'ff' AS TEXT)",
        "SELECT 1 / 0, abs(-9223372036854775808)",
        "SELECT no_such_function(1)",
        "SELECT * FROM orders o1 JOIN orders o2 USING (nope)",
    ],
)
def test_other_sqlite_failures_are_envelopes_not_crashes(shop: Shop, sql: str) -> None:
    out = q(shop, sql)
    if "error" in out:
        assert out["error"]["code"] in GUARD_CODES, out


def test_not_a_dataset_is_forbidden(shop: Shop) -> None:
    for node in ("data/readme", "_index", "data/_index", "_meta/schema"):
        assert_error(shop.vine.query(node, "SELECT 1"), "E_QUERY_FORBIDDEN")


def test_a_non_sqlite_payload_is_forbidden(shop: Shop) -> None:
    assert_error(shop.vine.query("data/sheet", "SELECT 1"), "E_QUERY_FORBIDDEN")
    assert_error(shop.vine.query("data/remote", "SELECT 1"), "E_QUERY_FORBIDDEN")


def test_missing_payload_or_node_is_not_found(shop: Shop) -> None:
    assert_error(shop.vine.query("data/ghost", "SELECT 1"), "E_NOT_FOUND")
    assert_error(shop.vine.query("data/no-such-dataset", "SELECT 1"), "E_NOT_FOUND")


@pytest.mark.parametrize("node", ["data/escape", "data/absolute"])
def test_a_payload_outside_the_forest_is_never_opened(shop: Shop, node: str) -> None:
    out = shop.vine.query(node, "SELECT customer FROM orders")
    assert_error(out, "E_NOT_FOUND")
    assert SENTINEL not in dumps(out)
    assert SENTINEL not in dumps(shop.vine.look(node))


def test_a_corrupt_payload_is_an_envelope(shop: Shop) -> None:
    out = shop.vine.query("data/corrupt", "SELECT * FROM orders")
    assert_error(out, "E_QUERY_INVALID")


def test_the_guard_runs_before_the_payload_is_needed(shop: Shop) -> None:
    # a missing payload still refuses a write as a write, or answers not found
    out = shop.vine.query("data/ghost", "DROP TABLE orders")
    assert out["error"]["code"] in {"E_QUERY_FORBIDDEN", "E_NOT_FOUND"}


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT MAX(x) FROM c",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT x FROM c WHERE x < 0",
        "SELECT COUNT(*) FROM nums a, nums b, nums c",
    ],
)
def test_runaway_statement_times_out(shop: Shop, sql: str) -> None:
    started = time.monotonic()
    out = q(shop, sql)
    elapsed = time.monotonic() - started
    assert_error(out, "E_TIMEOUT")
    assert elapsed < 6, elapsed
    # the next statement runs normally
    assert assert_ok(q(shop, "SELECT COUNT(*) FROM nums"))["rows"] == [[1000]]
