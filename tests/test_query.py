"""``query``: read-only SQL over a dataset payload (primitives "query", forest-format §6.7).

Most tests run on a forest built here, so every number can be asserted exactly;
one smoke test reads ``sales/orders-2026`` of the sample brain.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monkeyllm import Vine
from monkeyllm.budget import QUERY, cost, dumps, tokens

from .forestkit import assert_error, assert_ok, make_forest

REGIONS = ("North", "South", "East", "West")
N_ORDERS = 500
WIDE_COLS = 50
SENTINEL = "SENTINEL-outside-4b1d9e"
GUARD_CODES = {"E_QUERY_FORBIDDEN", "E_QUERY_INVALID", "E_TIMEOUT"}
TABLES = ("orders", "items", "blobs", "wide", "nums")


def _order(i: int) -> tuple[Any, ...]:
    cents = (i * 7919) % 100_000 + 100
    invoice = f"USD {cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"
    return (i, f"Customer {i % 37}", REGIONS[i % 4], invoice,
            f"2026-{(i % 12) + 1:02d}-{(i % 28) + 1:02d}", cents)


def _build_shop(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT, region TEXT, "
                 "total_invoice TEXT, closed_at TEXT, value_cents INTEGER)")
    conn.executemany("INSERT INTO orders VALUES(?,?,?,?,?,?)",
                     [_order(i) for i in range(1, N_ORDERS + 1)])
    conn.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, order_id INTEGER, sku TEXT, "
                 "qty INTEGER, price REAL)")
    conn.executemany("INSERT INTO items VALUES(?,?,?,?,?)",
                     [(i, i % N_ORDERS + 1, f"SKU-{i:05d}", i % 5 + 1, i / 4)
                      for i in range(1, 301)])
    conn.execute("CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB)")
    conn.executemany("INSERT INTO blobs VALUES(?,?)",
                     [(1, b"\x00\x01"), (2, b""), (3, None), (4, bytes(range(256)) * 4)])
    cols = ", ".join(f"column_{c:02d} TEXT" for c in range(WIDE_COLS))
    conn.execute(f"CREATE TABLE wide(id INTEGER PRIMARY KEY, {cols})")
    marks = ", ".join("?" for _ in range(WIDE_COLS + 1))
    conn.executemany(f"INSERT INTO wide VALUES({marks})",
                     [(r, *(f"row {r:03d} col {c:02d} " + "lorem ipsum dolor sit amet"
                            for c in range(WIDE_COLS))) for r in range(1, 301)])
    conn.execute("CREATE TABLE nums(n INTEGER)")
    conn.executemany("INSERT INTO nums VALUES(?)", [(n,) for n in range(1, 1001)])
    conn.execute("CREATE VIEW big_orders AS SELECT * FROM orders WHERE value_cents > 50000")
    conn.commit()
    conn.close()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Shop:
    root: Path
    outside: Path
    vine: Vine
    payload: Path
    digest: str

    def files(self) -> set[str]:
        """Every file under the forest's parent folder (forest and its neighbours)."""
        base = self.root.parent
        return {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()}


DATASET = {"payload": "shop.db", "payload_type": "sqlite", "tags": ["shop"]}
SHOP_BODY = """# Shop

## Query manual

`SELECT region, COUNT(*) FROM orders GROUP BY region`

## Notes

total_invoice is formatted text; use value_cents.
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    base = tmp_path_factory.mktemp("query")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.db").unlink(missing_ok=True)
    secret = sqlite3.connect(outside / "secret.db")
    secret.execute("CREATE TABLE orders(id INTEGER, customer TEXT)")
    secret.execute("INSERT INTO orders VALUES(1, ?)", (SENTINEL,))
    secret.commit()
    secret.close()
    root = make_forest(base / "forest", {
        "data/shop": ("dataset", DATASET, SHOP_BODY),
        "data/readme": ("note", {}, "# Readme\n\nNot a dataset.\n"),
        "data/ghost": ("dataset", {"payload": "ghost.db", "payload_type": "sqlite"},
                       "# Ghost\n"),
        "data/sheet": ("dataset", {"payload": "sheet.csv", "payload_type": "csv"}, "# Sheet\n"),
        "data/remote": ("dataset", {"payload": "https://example.com/remote.db",
                                    "payload_type": "sqlite"}, "# Remote\n"),
        "data/escape": ("dataset", {"payload": "../../outside/secret.db",
                                    "payload_type": "sqlite"}, "# Escape\n"),
        "data/absolute": ("dataset", {"payload": str(outside / "secret.db"),
                                      "payload_type": "sqlite"}, "# Absolute\n"),
        "data/corrupt": ("dataset", {"payload": "corrupt.db", "payload_type": "sqlite"},
                         "# Corrupt\n"),
    })
    _build_shop(root / "data" / "shop.db")
    (root / "data" / "sheet.csv").write_text("a,b\n1,2\n")
    (root / "data" / "corrupt.db").write_bytes(b"definitely not a database " * 64)
    with Vine(root, writable=False, alpha=0) as vine:
        assert_ok(vine.query("data/shop", "SELECT 1"))   # warm up _derived/
        payload = root / "data" / "shop.db"
        yield Shop(root, outside, vine, payload, sha256(payload))


def q(shop: Shop, sql: str) -> dict[str, Any]:
    return shop.vine.query("data/shop", sql)


def direct(shop: Shop, sql: str) -> list[list[Any]]:
    """The same statement straight through sqlite3 (read-only), rows as lists."""
    conn = sqlite3.connect(f"file:{shop.payload}?mode=ro", uri=True)
    try:
        return [list(r) for r in conn.execute(sql)]
    finally:
        conn.close()


# -- happy paths -------------------------------------------------------------------------


def test_group_by_count_matches_the_data(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT region, COUNT(*) AS orders FROM orders "
                            "GROUP BY region ORDER BY region"))
    assert out["columns"] == ["region", "orders"]
    expected = sorted((r, sum(1 for i in range(1, N_ORDERS + 1) if REGIONS[i % 4] == r))
                      for r in REGIONS)
    assert out["rows"] == [list(p) for p in expected]
    assert out["row_count"] == 4
    assert out["limited"] is False


def test_count_and_sum(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT COUNT(*) AS n, SUM(value_cents) AS cents FROM orders"))
    assert out["rows"] == [[N_ORDERS, sum(_order(i)[5] for i in range(1, N_ORDERS + 1))]]
    assert out["row_count"] == 1 and out["limited"] is False


def test_with_select(shop: Shop) -> None:
    out = assert_ok(q(shop, "WITH big AS (SELECT * FROM orders WHERE value_cents > 50000) "
                            "SELECT COUNT(*) AS n FROM big"))
    assert out["rows"] == [[sum(1 for i in range(1, N_ORDERS + 1) if _order(i)[5] > 50000)]]


def test_recursive_with_that_terminates(shop: Shop) -> None:
    out = assert_ok(q(shop, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                            "WHERE x < 10) SELECT SUM(x) FROM c"))
    assert out["rows"] == [[55]]


def test_union_and_join(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT 'a' AS x UNION SELECT 'b' UNION SELECT 'a' ORDER BY x"))
    assert out["rows"] == [["a"], ["b"]]
    out = assert_ok(q(shop, "SELECT o.region, SUM(i.qty) FROM items i JOIN orders o "
                            "ON o.id = i.order_id GROUP BY o.region ORDER BY o.region"))
    assert out["rows"] == direct(shop, "SELECT o.region, SUM(i.qty) FROM items i JOIN orders o "
                                       "ON o.id = i.order_id GROUP BY o.region ORDER BY o.region")


def test_a_view_is_readable(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT COUNT(*) FROM big_orders"))
    assert out["rows"] == direct(shop, "SELECT COUNT(*) FROM big_orders")


@pytest.mark.parametrize("sql, rows", [
    ("SELECT 'update' AS x", [["update"]]),
    ("SELECT 'DROP TABLE orders' AS x", [["DROP TABLE orders"]]),
    ("SELECT 'x; DELETE FROM orders' AS x", [["x; DELETE FROM orders"]]),
    ("SELECT 'pragma_table_info' AS x", [["pragma_table_info"]]),
    ("SELECT 'ATTACH' AS attach_word", [["ATTACH"]]),
    ("SELECT COUNT(*) AS \"delete\" FROM orders WHERE customer = 'update'", [[0]]),
    ("SELECT 1 -- ; DROP TABLE orders", [[1]]),
    ("SELECT 1 /* ; DELETE FROM orders */", [[1]]),
])
def test_keywords_inside_literals_and_comments_are_still_reads(
        shop: Shop, sql: str, rows: list[list[Any]]) -> None:
    out = assert_ok(q(shop, sql))
    assert out["rows"] == rows
    assert sha256(shop.payload) == shop.digest


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM orders;",
    "SELECT COUNT(*) FROM orders ;",
    "SELECT COUNT(*) FROM orders;;",
    "SELECT COUNT(*) FROM orders;\n  \n",
    "  \n select count(*) from orders ;",
    "-- how many\nSELECT COUNT(*) FROM orders",
    "/* how many */ SELECT COUNT(*) FROM orders;",
])
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


@pytest.mark.parametrize("sql, n", [
    ("SELECT id FROM orders LIMIT 200", 200),
    ("SELECT id FROM orders ORDER BY id LIMIT 10", 10),
    ("SELECT id FROM orders ORDER BY id LIMIT 5 OFFSET 10", 5),
    ("SELECT id FROM orders UNION ALL SELECT id FROM orders LIMIT 7", 7),
    ("WITH x AS (SELECT id FROM orders) SELECT id FROM x LIMIT 3", 3),
    ("SELECT id FROM orders limit 0", 0),
])
def test_explicit_limit_is_kept_and_not_limited(shop: Shop, sql: str, n: int) -> None:
    out = assert_ok(q(shop, sql))
    assert out["row_count"] == n
    assert out["limited"] is False


def test_offset_rows_are_the_right_ones(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id FROM orders ORDER BY id LIMIT 5 OFFSET 10"))
    assert out["rows"] == [[i] for i in range(11, 16)]


@pytest.mark.parametrize("sql", [
    "SELECT * FROM (SELECT id FROM orders LIMIT 300)",
    "SELECT id FROM orders UNION ALL SELECT id FROM orders",
    "SELECT id FROM orders WHERE id IN (SELECT order_id FROM items LIMIT 400) OR id > 0",
])
def test_a_subquery_limit_does_not_stop_the_injection(shop: Shop, sql: str) -> None:
    out = assert_ok(q(shop, sql))
    assert out["row_count"] == 200
    assert out["limited"] is True


@pytest.mark.parametrize("limit", [201, 300, 1000, -1])
def test_rows_past_an_explicit_large_limit_are_never_dropped_silently(
        shop: Shop, limit: int) -> None:
    out = assert_ok(q(shop, f"SELECT id FROM orders ORDER BY id LIMIT {limit}"))
    wanted = N_ORDERS if limit < 0 else min(limit, N_ORDERS)
    assert out["rows"] == [[i] for i in range(1, out["row_count"] + 1)]
    if out["row_count"] < wanted:
        assert out["limited"] is True or out.get("truncated") is True, out


def test_blob_cells_are_described_not_returned(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT id, data FROM blobs ORDER BY id"))
    assert out["rows"] == [[1, "<blob 2 bytes>"], [2, "<blob 0 bytes>"], [3, None],
                           [4, "<blob 1024 bytes>"]]
    out = assert_ok(q(shop, "SELECT randomblob(5000) AS b, zeroblob(3) AS z"))
    assert out["rows"] == [["<blob 5000 bytes>", "<blob 3 bytes>"]]


def test_sample_brain_orders_ledger(brain: Vine) -> None:
    out = assert_ok(brain.query("sales/orders-2026",
                                "SELECT region, COUNT(*) AS n FROM orders GROUP BY region"))
    assert out["columns"] == ["region", "n"]
    total = assert_ok(brain.query("sales/orders-2026", "SELECT COUNT(*) FROM orders"))
    assert sum(r[1] for r in out["rows"]) == total["rows"][0][0] >= 1500
    # the documented gotcha: total_invoice is formatted TEXT ('USD 54.607,56')
    text = assert_ok(brain.query("sales/orders-2026",
                                 "SELECT total_invoice FROM orders LIMIT 1"))
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


def budget_ok(out: dict[str, Any]) -> bool:
    return cost(out) <= QUERY


def test_wide_rows_are_cut_by_whole_rows(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT * FROM wide ORDER BY id"))
    columns = ["id", *(f"column_{c:02d}" for c in range(WIDE_COLS))]
    _check_cut(out, columns=columns, matched=200)
    assert out["row_count"] >= 1
    assert out["limited"] is True
    truth = direct(shop, "SELECT * FROM wide ORDER BY id")
    assert out["rows"] == truth[:out["row_count"]]          # a prefix of whole rows
    # one more row would not have fitted
    bigger = dict(out, rows=truth[:out["row_count"] + 1])
    assert cost(bigger) > QUERY


def test_long_results_are_cut_and_say_so(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT * FROM orders ORDER BY id"))
    _check_cut(out, columns=["id", "customer", "region", "total_invoice", "closed_at",
                             "value_cents"], matched=200)
    assert out["rows"] == [list(_order(i)) for i in range(1, out["row_count"] + 1)]


def test_when_no_row_fits_the_hint_prices_a_row(shop: Shop) -> None:
    sql = "SELECT id, hex(zeroblob(6000)) AS big FROM orders ORDER BY id LIMIT 3"
    out = assert_ok(q(shop, sql))
    _check_cut(out, columns=["id", "big"], matched=3)
    assert out["rows"] == [] and out["row_count"] == 0
    m = re.search(r"(\d+) tokens", out["hint"].split("column(s)")[-1])
    assert m, out["hint"]
    row_cost = tokens(dumps([1, "00" * 6000]))
    assert abs(int(m.group(1)) - row_cost) <= 2


def test_an_aggregate_is_never_cut(shop: Shop) -> None:
    out = assert_ok(q(shop, "SELECT region, SUM(value_cents), COUNT(*) FROM wide "
                            "JOIN orders USING (id) GROUP BY region"))
    assert "truncated" not in out and "hint" not in out


@pytest.mark.parametrize("sql", [
    # one column whose name alone is bigger than the budget
    "SELECT id AS \"" + "n" * 9000 + "\" FROM orders LIMIT 1",
    # so many columns that their names alone are bigger than the budget
    "SELECT " + ", ".join(f"id AS c{i:04d}_{'x' * 30}" for i in range(300)) + " FROM orders",
])
def test_response_fits_even_when_the_columns_alone_do_not(shop: Shop, sql: str) -> None:
    out = q(shop, sql)
    assert budget_ok(out), f"query answered {cost(out)} tokens, budget {QUERY}"
    if "error" in out:
        assert out["error"]["code"] == "E_QUERY_INVALID", out
        assert "column" in out["error"]["message"] + out["error"].get("hint", "")
    else:
        assert out.get("truncated") is True


@pytest.mark.parametrize("sql", [
    "SELECT * FROM wide",
    "SELECT * FROM orders",
    "SELECT * FROM items",
    "SELECT id, data FROM blobs",
    "SELECT a.*, b.* FROM wide a JOIN wide b ON a.id = b.id LIMIT 5",
    "SELECT group_concat(customer, ', ') FROM orders",
    "SELECT hex(randomblob(3000)) FROM nums LIMIT 2",
    "SELECT n, printf('%.*c', n, 'x') FROM nums ORDER BY n DESC LIMIT 50",
])
def test_every_response_fits_2000_tokens(shop: Shop, sql: str) -> None:
    out = q(shop, sql)
    assert budget_ok(out), cost(out)
    if "error" not in out and out.get("truncated"):
        assert out["row_count"] == len(out["rows"])


# -- errors ------------------------------------------------------------------------------


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


@pytest.mark.parametrize("sql", [
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
])
def test_syntax_errors_are_invalid(shop: Shop, sql: str) -> None:
    assert_error(q(shop, sql), "E_QUERY_INVALID")


@pytest.mark.parametrize("sql, line, column", [
    ("hello world", 1, 1),
    ("hello", 1, 1),
    ("42", 1, 1),
    ("region = 'South'", 1, 1),
    ("SELEC region FROM orders", 1, 1),
    ("SELECT region FROM orders WHERE id = 1 1", 1, 40),
    ("SELECT region\nFROM orders\nWHERE id = = 1", 3, 12),
    ("SELECT region FROM orders WHERE", 1, 32),
])
def test_text_that_is_no_statement_is_invalid_where_it_breaks(shop: Shop, sql: str,
                                                              line: int, column: int) -> None:
    """Forbidden means a real statement the caller may not run; text that SQLite cannot
    read as a statement is invalid, at the line and column where reading stops."""
    err = assert_error(q(shop, sql), "E_QUERY_INVALID")
    assert (err["line"], err["column"]) == (line, column), err
    assert f"line {line}, column {column}" in err["message"]


@pytest.mark.parametrize("sql, verb", [
    ("DROP TABLE orders", "DROP"),
    ("PRAGMA table_info(orders)", "PRAGMA"),
    ("ATTACH 'x.db' AS x", "ATTACH"),
    ("VACUUM", "VACUUM"),
    ("REPLACE INTO orders (id) VALUES (1)", "REPLACE"),
    ("DELETE FROM orders WHERE 1", "DELETE"),
])
def test_real_writes_stay_forbidden_and_named(shop: Shop, sql: str, verb: str) -> None:
    err = assert_error(q(shop, sql), "E_QUERY_FORBIDDEN")
    assert verb in err["message"]


@pytest.mark.parametrize("sql", [
    "SELECT * FROM orders WHERE id = ?",
    "SELECT :name",
    "SELECT @x",
    "SELECT CAST(x'ff' AS TEXT)",
    "SELECT 1 / 0, abs(-9223372036854775808)",
    "SELECT no_such_function(1)",
    "SELECT * FROM orders o1 JOIN orders o2 USING (nope)",
])
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


@pytest.mark.parametrize("sql", [
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT MAX(x) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "SELECT x FROM c WHERE x < 0",
    "SELECT COUNT(*) FROM nums a, nums b, nums c",
])
def test_runaway_statement_times_out(shop: Shop, sql: str) -> None:
    started = time.monotonic()
    out = q(shop, sql)
    elapsed = time.monotonic() - started
    assert_error(out, "E_TIMEOUT")
    assert elapsed < 6, elapsed
    # the next statement runs normally
    assert assert_ok(q(shop, "SELECT COUNT(*) FROM nums"))["rows"] == [[1000]]


# -- the hostile corpus --------------------------------------------------------------------
# @OUT@ is a folder beside the forest, @FOREST@ the forest root, @DATA@ the payload's folder.

ATTACH_TARGETS = ("evil.db", "@FOREST@/evil.db", "@DATA@/evil.db", "@OUT@/evil.db",
                  "file:evil.db?mode=rwc", "file:@OUT@/evil-uri.db?mode=rwc",
                  "file:@DATA@/evil-uri.db?mode=rwc&cache=shared", ":memory:", "",
                  "@OUT@/secret.db", "file::memory:?cache=shared")

WRITES = (
    "INSERT INTO orders(id) VALUES (9999)",
    "INSERT INTO orders SELECT * FROM orders",
    "INSERT INTO orders DEFAULT VALUES",
    "INSERT OR REPLACE INTO orders(id, region) VALUES (1, 'X')",
    "INSERT INTO orders(id) VALUES (1) ON CONFLICT(id) DO UPDATE SET region = 'X'",
    "REPLACE INTO orders(id) VALUES (1)",
    "UPDATE orders SET region = 'X'",
    "UPDATE orders SET region = 'X' WHERE id = 1",
    "UPDATE OR IGNORE orders SET region = 'X' WHERE 1",
    "UPDATE orders SET id = id RETURNING id",
    "DELETE FROM orders",
    "DELETE FROM orders WHERE id = 1",
    "DELETE FROM orders RETURNING *",
    "DROP TABLE orders",
    "DROP TABLE IF EXISTS orders",
    "DROP VIEW big_orders",
    "DROP INDEX IF EXISTS idx",
    "DROP TRIGGER IF EXISTS tr",
    "ALTER TABLE orders RENAME TO orders_old",
    "ALTER TABLE orders ADD COLUMN x TEXT",
    "ALTER TABLE orders RENAME COLUMN region TO area",
    "ALTER TABLE orders DROP COLUMN region",
    "CREATE TABLE x(a)",
    "CREATE TABLE x AS SELECT * FROM orders",
    "CREATE TEMP TABLE x(a)",
    "CREATE TEMPORARY TABLE x AS SELECT 1",
    "CREATE INDEX idx ON orders(region)",
    "CREATE UNIQUE INDEX IF NOT EXISTS idx ON orders(id)",
    "CREATE VIEW v AS SELECT * FROM orders",
    "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE TRIGGER tr AFTER INSERT ON orders BEGIN DELETE FROM orders; END",
    "CREATE TEMP TRIGGER tr BEFORE DELETE ON orders BEGIN SELECT 1; END",
    "CREATE VIRTUAL TABLE f USING fts5(a)",
    "DELETE FROM \"orders\"",
    "DELETE FROM [orders]",
    "DELETE FROM `orders`",
    "DELETE FROM main.orders",
    "UPDATE \"orders\" SET \"region\" = 'x' WHERE 1",
    "INSERT INTO 'orders'(id) VALUES (9998)",
)


def _mixed(text: str) -> str:
    return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(text))


def _corpus() -> list[str]:
    out: list[str] = []
    for w in WRITES:
        out += [w, w.lower(), "/* note */ " + w, "-- note\n" + w, "SELECT 1; " + w,
                w + "; SELECT 1"]
    out += [
        "WITH x AS (SELECT 1) DELETE FROM orders",
        "WITH x AS (SELECT 1) INSERT INTO orders(id) SELECT 1 FROM x",
        "WITH x AS (SELECT 1) UPDATE orders SET region = 'X'",
        "WITH RECURSIVE x(n) AS (SELECT 1) DELETE FROM orders WHERE id IN (SELECT n FROM x)",
        "WITH x AS (DELETE FROM orders RETURNING id) SELECT * FROM x",
        "WITH x AS (SELECT 1) REPLACE INTO orders(id) VALUES (1)",
        "with x as (select 1) delete from orders",
    ]
    for target in ATTACH_TARGETS:
        out += [f"ATTACH DATABASE '{target}' AS evil", f"ATTACH '{target}' AS evil",
                f"attach '{target}' as evil",
                f"SELECT 1; ATTACH '{target}' AS evil",
                f"VACUUM INTO '{target}'", f"vacuum main into '{target}'"]
    out += ["DETACH DATABASE evil", "DETACH evil", "detach main", "DETACH temp"]
    pragmas = ("table_info(orders)", "writable_schema", "journal_mode", "user_version",
               "query_only", "database_list", "compile_options", "integrity_check",
               "schema_version", "foreign_keys", "mmap_size", "temp_store_directory")
    for name in pragmas:
        out += [f"PRAGMA {name}", f"pragma {name}", _mixed(f"PRAGMA {name}"),
                f"/* c */ PRAGMA {name}", f"-- c\nPRAGMA {name}", f"PRAGMA main.{name}",
                f"SELECT 1; PRAGMA {name}"]
    out += ["PRAGMA writable_schema = 1", "PRAGMA writable_schema=ON",
            "PRAGMA journal_mode = DELETE", "pragma journal_mode=wal", "PRAGMA user_version = 7",
            "PrAgMa query_only = 0", "PRAGMA query_only=OFF", "PRAGMA main.user_version=1",
            "PRAGMA temp_store_directory = '@OUT@'", "PRAGMA schema_version = 99",
            "/* x */\n-- y\n  PRAGMA user_version = 3"]
    out += [
        "SELECT * FROM pragma_table_info('orders')",
        "SELECT * FROM PRAGMA_TABLE_INFO('orders')",
        "SELECT name FROM pragma_database_list",
        "SELECT * FROM pragma_compile_options()",
        "SELECT (SELECT COUNT(*) FROM pragma_table_list)",
        "SELECT id FROM orders WHERE id IN (SELECT cid FROM pragma_table_info('orders'))",
        "WITH p AS (SELECT * FROM pragma_user_version) SELECT * FROM p",
        "SELECT * FROM main.pragma_table_info('orders')",
        "SELECT * FROM \"pragma_table_info\"('orders')",
        "SELECT * FROM Pragma_Index_List('orders')",
        "SELECT load_extension('x')",
        "SELECT LOAD_EXTENSION('/tmp/evil.so')",
        "SELECT load_extension('x', 'sqlite3_evil_init')",
        "SELECT * FROM orders WHERE load_extension('x')",
        "WITH a AS (SELECT load_extension('x')) SELECT * FROM a",
        "SELECT \"load_extension\"('x')",
        "SELECT writefile('@OUT@/written.txt', 'x')",
        "SELECT readfile('/etc/passwd')",
        "SELECT fts3_tokenizer('simple')",
        "SELECT edit('x', 'vi')",
    ]
    out += ["VACUUM", "vacuum", "VACUUM main", "REINDEX", "REINDEX orders", "reindex nocase",
            "ANALYZE", "ANALYZE orders", "analyze main", "BEGIN", "BEGIN TRANSACTION",
            "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "begin deferred", "COMMIT", "END",
            "END TRANSACTION", "ROLLBACK", "SAVEPOINT a", "RELEASE a", "RELEASE SAVEPOINT a",
            "ROLLBACK TO a", "ROLLBACK TRANSACTION TO SAVEPOINT a", "EXPLAIN DELETE FROM orders",
            "EXPLAIN QUERY PLAN DELETE FROM orders", "EXPLAIN SELECT 1"]
    out += [
        "SELECT 1; SELECT 2",
        "SELECT ';'; DELETE FROM orders",
        "SELECT '--'; DELETE FROM orders",
        "SELECT 1 /* ; */ ; DELETE FROM orders",
        "SELECT 1 -- ;\n; DELETE FROM orders",
        "SELECT \"a;b\" FROM orders; DROP TABLE orders",
        "SELECT [x;y]; DROP TABLE orders",
        "SELECT `x;y`; DROP TABLE orders",
        "SELECT 'it''s'; DROP TABLE orders",
        "SELECT 'x' /* ' */; DELETE FROM orders",
        "SELECT 1;\u200bDROP TABLE orders",
        "SELECT 1;\u00a0DROP TABLE orders",
        "SELECT 1;\nDROP TABLE orders",
        "SELECT 1;\tDROP TABLE orders",
        "SELECT 1;/**/DROP TABLE orders",
        "SELECT * FROM orders; DROP TABLE orders --",
        "SELECT * FROM orders; DROP TABLE orders;",
        "SELECT 1;;DROP TABLE orders",
        "SELECT * FROM orders WHERE id = 1; DELETE FROM orders WHERE 1 = 1",
        "SELECT 1 UNION SELECT 2; DELETE FROM orders",
        "WITH x AS (SELECT 1) SELECT * FROM x; DROP TABLE orders",
        "SELECT 1\u037e DROP TABLE orders",
        "\uff24\uff32\uff2f\uff30 TABLE orders",
        "DROP\u00a0TABLE orders",
        "DR\u200bOP TABLE orders",
        "\ufeffDROP TABLE orders",
        "DELETE\u2028FROM orders",
        "\u1d30\u1d3f\u1d3c\u1d3e TABLE orders",
        "SELECT * FROM orders UNION ALL DELETE FROM orders",
        "(DELETE FROM orders)",
        "SELECT (DELETE FROM orders)",
        "SELECT * FROM (DELETE FROM orders RETURNING *)",
    ]
    return out


HOSTILE = _corpus()


def test_the_hostile_corpus_is_big_enough() -> None:
    assert len(HOSTILE) >= 150
    assert len(set(HOSTILE)) == len(HOSTILE)


def _fill(shop: Shop, sql: str) -> str:
    return (sql.replace("@FOREST@", str(shop.root)).replace("@DATA@", str(shop.payload.parent))
            .replace("@OUT@", str(shop.outside)))


@pytest.mark.parametrize("sql", HOSTILE, ids=[f"h{i:03d}" for i in range(len(HOSTILE))])
def test_hostile_statement_is_refused_and_changes_nothing(
        shop: Shop, sql: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)              # where a relative ATTACH/VACUUM would write
    before = shop.files()
    out = q(shop, _fill(shop, sql))
    assert set(out) == {"error"}, (sql, out)
    assert out["error"]["code"] in GUARD_CODES, (sql, out)
    assert sha256(shop.payload) == shop.digest
    after = shop.files()
    new = {p for p in after - before
           if not p.startswith(("forest/_derived/traces/", "forest/_derived/catalog.db",
                                "forest/_derived/trails.db"))}
    assert not new, (sql, new)
    assert list(tmp_path.iterdir()) == []
    assert SENTINEL not in dumps(out)


def test_the_connection_still_works_after_the_corpus(shop: Shop) -> None:
    assert assert_ok(q(shop, "SELECT COUNT(*) FROM orders"))["rows"] == [[N_ORDERS]]
    assert direct(shop, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") \
        == [[t] for t in sorted(TABLES)]


# -- fuzz: arbitrary token soup never crashes the guard ------------------------------------

_TOKENS = ["SELECT", "select", "FROM", "orders", "wide", "WHERE", "id", "=", "1", "'x'",
           "'", '"', "`", "[", "]", ";", "--", "/*", "*/", "(", ")", ",", "*", "LIMIT",
           "200", "UNION", "ALL", "WITH", "RECURSIVE", "AS", "x", "PRAGMA", "ATTACH",
           "DETACH", "DELETE", "INSERT", "INTO", "UPDATE", "SET", "DROP", "TABLE", "CREATE",
           "VALUES", "load_extension", "pragma_table_info", "\n", " ", "\u200b", "?", ":x",
           "x'00'", "NULL", "CAST", "GROUP", "BY", "ORDER", "VACUUM", "INTO", "'e.db'",
           "RETURNING", "OR", "REPLACE", "BEGIN", "END", "CASE", "WHEN", "THEN"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=14).map(" ".join))
def test_fuzzed_sql_is_an_answer_or_a_guard_error(shop: Shop, sql: str) -> None:
    out = q(shop, sql)
    if "error" in out:
        assert set(out) == {"error"}
        assert out["error"]["code"] in GUARD_CODES, (sql, out)
    else:
        assert set(out) >= {"columns", "rows", "row_count", "limited", "elapsed_ms"}
        assert budget_ok(out)
    assert sha256(shop.payload) == shop.digest


def test_refusing_opaque_syntax_logs_nothing(shop: Shop,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """sqlglot parses ``VACUUM INTO`` as an opaque command and would log a warning about
    it; a refusal is the whole answer (nothing reaches a CLI's or a server's stderr)."""
    with caplog.at_level("DEBUG"):
        assert_error(shop.vine.query("data/shop", "VACUUM INTO 'elsewhere.db'"),
                     "E_QUERY_FORBIDDEN")
    assert [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")] == []
