"""``query`` against hostile SQL: the corpus of statements that try to write, attach, load
or run forever, and arbitrary token soup, all refused without a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monkeyllm.budget import dumps

from ..forestkit import assert_error, assert_ok
from .kit import GUARD_CODES, N_ORDERS, SENTINEL, TABLES, Shop, budget_ok, direct, q, sha256

ATTACH_TARGETS = (
    "evil.db",
    "@FOREST@/evil.db",
    "@DATA@/evil.db",
    "@OUT@/evil.db",
    "file:evil.db?mode=rwc",
    "file:@OUT@/evil-uri.db?mode=rwc",
    "file:@DATA@/evil-uri.db?mode=rwc&cache=shared",
    ":memory:",
    "",
    "@OUT@/secret.db",
    "file::memory:?cache=shared",
)

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
    'DELETE FROM "orders"',
    "DELETE FROM [orders]",
    "DELETE FROM `orders`",
    "DELETE FROM main.orders",
    'UPDATE "orders" SET "region" = \'x\' WHERE 1',
    "INSERT INTO 'orders'(id) VALUES (9998)",
)


def _mixed(text: str) -> str:
    return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(text))


def _corpus() -> list[str]:
    out: list[str] = []
    for w in WRITES:
        out += [
            w,
            w.lower(),
            "/* note */ " + w,
            "-- note\n" + w,
            "SELECT 1; " + w,
            w + "; SELECT 1",
        ]
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
        out += [
            f"ATTACH DATABASE '{target}' AS evil",
            f"ATTACH '{target}' AS evil",
            f"attach '{target}' as evil",
            f"SELECT 1; ATTACH '{target}' AS evil",
            f"VACUUM INTO '{target}'",
            f"vacuum main into '{target}'",
        ]
    out += ["DETACH DATABASE evil", "DETACH evil", "detach main", "DETACH temp"]
    pragmas = (
        "table_info(orders)",
        "writable_schema",
        "journal_mode",
        "user_version",
        "query_only",
        "database_list",
        "compile_options",
        "integrity_check",
        "schema_version",
        "foreign_keys",
        "mmap_size",
        "temp_store_directory",
    )
    for name in pragmas:
        out += [
            f"PRAGMA {name}",
            f"pragma {name}",
            _mixed(f"PRAGMA {name}"),
            f"/* c */ PRAGMA {name}",
            f"-- c\nPRAGMA {name}",
            f"PRAGMA main.{name}",
            f"SELECT 1; PRAGMA {name}",
        ]
    out += [
        "PRAGMA writable_schema = 1",
        "PRAGMA writable_schema=ON",
        "PRAGMA journal_mode = DELETE",
        "pragma journal_mode=wal",
        "PRAGMA user_version = 7",
        "PrAgMa query_only = 0",
        "PRAGMA query_only=OFF",
        "PRAGMA main.user_version=1",
        "PRAGMA temp_store_directory = '@OUT@'",
        "PRAGMA schema_version = 99",
        "/* x */\n-- y\n  PRAGMA user_version = 3",
    ]
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
    out += [
        "VACUUM",
        "vacuum",
        "VACUUM main",
        "REINDEX",
        "REINDEX orders",
        "reindex nocase",
        "ANALYZE",
        "ANALYZE orders",
        "analyze main",
        "BEGIN",
        "BEGIN TRANSACTION",
        "BEGIN IMMEDIATE",
        "BEGIN EXCLUSIVE",
        "begin deferred",
        "COMMIT",
        "END",
        "END TRANSACTION",
        "ROLLBACK",
        "SAVEPOINT a",
        "RELEASE a",
        "RELEASE SAVEPOINT a",
        "ROLLBACK TO a",
        "ROLLBACK TRANSACTION TO SAVEPOINT a",
        "EXPLAIN DELETE FROM orders",
        "EXPLAIN QUERY PLAN DELETE FROM orders",
        "EXPLAIN SELECT 1",
    ]
    out += [
        "SELECT 1; SELECT 2",
        "SELECT ';'; DELETE FROM orders",
        "SELECT '--'; DELETE FROM orders",
        "SELECT 1 /* ; */ ; DELETE FROM orders",
        "SELECT 1 -- ;\n; DELETE FROM orders",
        'SELECT "a;b" FROM orders; DROP TABLE orders',
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
    return (
        sql.replace("@FOREST@", str(shop.root))
        .replace("@DATA@", str(shop.payload.parent))
        .replace("@OUT@", str(shop.outside))
    )


@pytest.mark.parametrize("sql", HOSTILE, ids=[f"h{i:03d}" for i in range(len(HOSTILE))])
def test_hostile_statement_is_refused_and_changes_nothing(
    shop: Shop, sql: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a relative ATTACH/VACUUM would write
    before = shop.files()
    out = q(shop, _fill(shop, sql))
    assert set(out) == {"error"}, (sql, out)
    assert out["error"]["code"] in GUARD_CODES, (sql, out)
    assert sha256(shop.payload) == shop.digest
    after = shop.files()
    new = {
        p
        for p in after - before
        if not p.startswith(
            ("forest/_derived/traces/", "forest/_derived/catalog.db", "forest/_derived/trails.db")
        )
    }
    assert not new, (sql, new)
    assert list(tmp_path.iterdir()) == []
    assert SENTINEL not in dumps(out)


def test_the_connection_still_works_after_the_corpus(shop: Shop) -> None:
    assert assert_ok(q(shop, "SELECT COUNT(*) FROM orders"))["rows"] == [[N_ORDERS]]
    assert direct(shop, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == [
        [t] for t in sorted(TABLES)
    ]


_TOKENS = [
    "SELECT",
    "select",
    "FROM",
    "orders",
    "wide",
    "WHERE",
    "id",
    "=",
    "1",
    "'x'",
    "'",
    '"',
    "`",
    "[",
    "]",
    ";",
    "--",
    "/*",
    "*/",
    "(",
    ")",
    ",",
    "*",
    "LIMIT",
    "200",
    "UNION",
    "ALL",
    "WITH",
    "RECURSIVE",
    "AS",
    "x",
    "PRAGMA",
    "ATTACH",
    "DETACH",
    "DELETE",
    "INSERT",
    "INTO",
    "UPDATE",
    "SET",
    "DROP",
    "TABLE",
    "CREATE",
    "VALUES",
    "load_extension",
    "pragma_table_info",
    "\n",
    " ",
    "\u200b",
    "?",
    ":x",
    "x'00'",
    "NULL",
    "CAST",
    "GROUP",
    "BY",
    "ORDER",
    "VACUUM",
    "INTO",
    "'e.db'",
    "RETURNING",
    "OR",
    "REPLACE",
    "BEGIN",
    "END",
    "CASE",
    "WHEN",
    "THEN",
]


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


def test_refusing_opaque_syntax_logs_nothing(shop: Shop, caplog: pytest.LogCaptureFixture) -> None:
    """sqlglot parses ``VACUUM INTO`` as an opaque command and would log a warning about
    it; a refusal is the whole answer (nothing reaches a CLI's or a server's stderr)."""
    with caplog.at_level("DEBUG"):
        assert_error(
            shop.vine.query("data/shop", "VACUUM INTO 'elsewhere.db'"), "E_QUERY_FORBIDDEN"
        )
    assert [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")] == []
