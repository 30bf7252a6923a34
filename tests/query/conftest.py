"""Fixtures the query tests share: a forest holding the shop dataset."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..forestkit import assert_ok, leaf, make_forest, reader
from .kit import N_ORDERS, SENTINEL, WIDE_COLS, Shop, _order, sha256


def _build_shop(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT, region TEXT, "
        "total_invoice TEXT, closed_at TEXT, value_cents INTEGER)"
    )
    conn.executemany(
        "INSERT INTO orders VALUES(?,?,?,?,?,?)", [_order(i) for i in range(1, N_ORDERS + 1)]
    )
    conn.execute(
        "CREATE TABLE items(id INTEGER PRIMARY KEY, order_id INTEGER, sku TEXT, "
        "qty INTEGER, price REAL)"
    )
    conn.executemany(
        "INSERT INTO items VALUES(?,?,?,?,?)",
        [(i, i % N_ORDERS + 1, f"SKU-{i:05d}", i % 5 + 1, i / 4) for i in range(1, 301)],
    )
    conn.execute("CREATE TABLE blobs(id INTEGER PRIMARY KEY, data BLOB)")
    conn.executemany(
        "INSERT INTO blobs VALUES(?,?)",
        [(1, b"\x00\x01"), (2, b""), (3, None), (4, bytes(range(256)) * 4)],
    )
    cols = ", ".join(f"column_{c:02d} TEXT" for c in range(WIDE_COLS))
    conn.execute(f"CREATE TABLE wide(id INTEGER PRIMARY KEY, {cols})")
    marks = ", ".join("?" for _ in range(WIDE_COLS + 1))
    conn.executemany(
        f"INSERT INTO wide VALUES({marks})",
        [
            (
                r,
                *(
                    f"row {r:03d} col {c:02d} " + "lorem ipsum dolor sit amet"
                    for c in range(WIDE_COLS)
                ),
            )
            for r in range(1, 301)
        ],
    )
    conn.execute("CREATE TABLE nums(n INTEGER)")
    conn.executemany("INSERT INTO nums VALUES(?)", [(n,) for n in range(1, 1001)])
    conn.execute("CREATE VIEW big_orders AS SELECT * FROM orders WHERE value_cents > 50000")
    conn.commit()
    conn.close()


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
    root = make_forest(
        base / "forest",
        {
            "data/shop": ("dataset", DATASET, SHOP_BODY),
            "data/readme": leaf("# Readme\n\nNot a dataset.\n"),
            "data/ghost": leaf("# Ghost\n", "dataset", payload="ghost.db", payload_type="sqlite"),
            "data/sheet": leaf("# Sheet\n", "dataset", payload="sheet.csv", payload_type="csv"),
            "data/remote": leaf(
                "# Remote\n",
                "dataset",
                payload="https://example.com/remote.db",
                payload_type="sqlite",
            ),
            "data/escape": leaf(
                "# Escape\n", "dataset", payload="../../outside/secret.db", payload_type="sqlite"
            ),
            "data/absolute": leaf(
                "# Absolute\n", "dataset", payload=str(outside / "secret.db"), payload_type="sqlite"
            ),
            "data/corrupt": leaf(
                "# Corrupt\n", "dataset", payload="corrupt.db", payload_type="sqlite"
            ),
        },
    )
    _build_shop(root / "data" / "shop.db")
    (root / "data" / "sheet.csv").write_text("a,b\n1,2\n")
    (root / "data" / "corrupt.db").write_bytes(b"definitely not a database " * 64)
    with reader(root) as vine:
        assert_ok(vine.query("data/shop", "SELECT 1"))  # warm up _derived/
        payload = root / "data" / "shop.db"
        yield Shop(root, outside, vine, payload, sha256(payload))
