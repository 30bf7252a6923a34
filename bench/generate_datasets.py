"""The datasets of synthetic forests: a schema per dataset, rows drawn column by column
into a SQLite payload, and the Query-manual sections and summary of its node."""

from __future__ import annotations

import math
import random
import sqlite3
from pathlib import Path

from bench.generate_format import clip, day
from bench.generate_plan import ORG_SUFFIX
from bench.generate_vocab import Vocab
from bench.generate_words import CITIES, DATE_SPAN, DATE_START, FIRST_NAMES, LAST_NAMES

REGIONS = ["Norte", "Nordeste", "Sudeste", "Sul", "Centro-Oeste", "EMEA", "APAC", "LATAM"]
REGION_W = [6, 14, 30, 16, 8, 12, 8, 6]
STATUSES = ["open", "closed", "pending", "cancelled", "refunded"]
CHANNELS = ["direct", "partner", "online", "tender"]


# name -> [(column, SQL type, generator key)], first column is the key
TEMPLATES: dict[str, list[tuple[str, str, str]]] = {
    "orders": [
        ("order_id", "INTEGER", "seq"),
        ("region", "TEXT", "region"),
        ("customer", "TEXT", "customer"),
        ("value_cents", "INTEGER", "cents"),
        ("closed_at", "TEXT", "date"),
        ("channel", "TEXT", "channel"),
        ("product_sku", "TEXT", "sku"),
        ("quantity", "INTEGER", "qty"),
        ("discount", "REAL", "ratio"),
        ("status", "TEXT", "status"),
        ("sales_rep", "TEXT", "person"),
        ("currency", "TEXT", "currency"),
    ],
    "invoices": [
        ("invoice_no", "TEXT", "invoice"),
        ("customer", "TEXT", "customer"),
        ("amount_cents", "INTEGER", "cents"),
        ("issued_at", "TEXT", "date"),
        ("status", "TEXT", "status"),
        ("due_days", "INTEGER", "qty"),
        ("tax_rate", "REAL", "ratio"),
        ("region", "TEXT", "region"),
    ],
    "inventory": [
        ("sku", "TEXT", "sku"),
        ("product", "TEXT", "word"),
        ("warehouse", "TEXT", "city"),
        ("qty_on_hand", "INTEGER", "qty"),
        ("unit_price", "REAL", "price"),
        ("counted_at", "TEXT", "date"),
        ("reorder_level", "INTEGER", "qty"),
        ("supplier", "TEXT", "customer"),
    ],
    "shipments": [
        ("shipment_id", "INTEGER", "seq"),
        ("origin", "TEXT", "city"),
        ("destination", "TEXT", "city"),
        ("weight_kg", "REAL", "price"),
        ("shipped_at", "TEXT", "datetime"),
        ("carrier", "TEXT", "customer"),
        ("status", "TEXT", "status"),
        ("cost_cents", "INTEGER", "cents"),
    ],
    "tickets": [
        ("ticket_id", "INTEGER", "seq"),
        ("opened_at", "TEXT", "datetime"),
        ("severity", "INTEGER", "sev"),
        ("product", "TEXT", "word"),
        ("summary", "TEXT", "phrase"),
        ("resolved", "INTEGER", "bool"),
        ("assignee", "TEXT", "person"),
        ("region", "TEXT", "region"),
    ],
    "sensor_readings": [
        ("reading_id", "INTEGER", "seq"),
        ("device", "TEXT", "sku"),
        ("read_at", "TEXT", "datetime"),
        ("temperature", "REAL", "temp"),
        ("humidity", "REAL", "ratio"),
        ("battery", "REAL", "ratio"),
        ("site", "TEXT", "city"),
    ],
    "employees": [
        ("employee_id", "INTEGER", "seq"),
        ("name", "TEXT", "person"),
        ("department", "TEXT", "word"),
        ("city", "TEXT", "city"),
        ("hired_at", "TEXT", "date"),
        ("salary_cents", "INTEGER", "cents"),
        ("active", "INTEGER", "bool"),
        ("manager", "TEXT", "person"),
    ],
    "payments": [
        ("payment_id", "INTEGER", "seq"),
        ("invoice_no", "TEXT", "invoice"),
        ("paid_at", "TEXT", "date"),
        ("amount_cents", "INTEGER", "cents"),
        ("method", "TEXT", "channel"),
        ("currency", "TEXT", "currency"),
    ],
    "experiments": [
        ("run_id", "INTEGER", "seq"),
        ("variant", "TEXT", "word"),
        ("started_at", "TEXT", "datetime"),
        ("score", "REAL", "ratio"),
        ("samples", "INTEGER", "qty"),
        ("notes", "TEXT", "phrase"),
        ("owner", "TEXT", "person"),
    ],
}


class ColumnGen:
    """Column generators producing whole lists (fast bulk rows for executemany)."""

    def __init__(self, rng: random.Random, v: Vocab):
        self.r, self.v = rng, v
        self.customers = [f"{p} {s}" for p in v.proper[:300] for s in ORG_SUFFIX[:2]]
        self.people = [f"{f} {ln}" for f in FIRST_NAMES[:40] for ln in LAST_NAMES[:25]]
        self.dates = [day(DATE_START + i) for i in range(DATE_SPAN)]

    def column(self, key: str, n: int, start: int) -> list:
        r = self.r
        if key == "seq":
            return list(range(start + 1, start + n + 1))
        if key == "region":
            return r.choices(REGIONS, REGION_W, k=n)
        if key in ("customer", "person", "city", "word", "channel", "status", "currency"):
            pool = {
                "customer": self.customers,
                "person": self.people,
                "city": CITIES,
                "word": self.v.idents,
                "channel": CHANNELS,
                "status": STATUSES,
                "currency": ["BRL", "EUR", "USD"],
            }[key]
            return [pool[int(len(pool) * r.random() ** 2)] for _ in range(n)]
        if key == "cents":
            return [int(r.lognormvariate(9.5, 1.1)) for _ in range(n)]
        if key == "date":
            return r.choices(self.dates, k=n)
        if key == "datetime":
            return [
                f"{d}T{r.randrange(24):02d}:{r.randrange(60):02d}:00"
                for d in r.choices(self.dates, k=n)
            ]
        if key == "sku":
            return [f"SKU-{r.randint(10000, 99999)}" for _ in range(n)]
        if key == "invoice":
            return [f"INV-{2022 + (start + i) % 5}-{(start + i) % 10000:04d}" for i in range(n)]
        return self._numeric(key, n)

    def _numeric(self, key: str, n: int) -> list:
        r = self.r
        if key == "qty":
            return [r.randint(0, 500) for _ in range(n)]
        if key == "ratio":
            return [round(r.random(), 3) for _ in range(n)]
        if key == "price":
            return [round(r.uniform(0.5, 2500.0), 2) for _ in range(n)]
        if key == "temp":
            return [round(r.gauss(24.0, 6.0), 2) for _ in range(n)]
        if key == "sev":
            return [r.randint(1, 4) for _ in range(n)]
        if key == "bool":
            return [int(r.random() < 0.7) for _ in range(n)]
        if key == "phrase":
            return [" ".join(r.choices(self.v.en_table, k=r.randint(3, 9))) for _ in range(n)]
        raise KeyError(key)


def plan_dataset(rng: random.Random, big: bool, first: bool, max_rows: int) -> list[dict]:
    """1-3 tables of 3-12 columns; a big dataset has one table of exactly ``max_rows``."""
    names = rng.sample(sorted(TEMPLATES), rng.randint(1, 3))
    if first:
        names = ["orders"] + [n for n in names if n != "orders"][:2]
    cap = min(max_rows, 5000)
    tables = []
    for i, name in enumerate(names):
        cols = TEMPLATES[name]
        lo = 5 if name == "orders" and first else 3
        k = rng.randint(lo, len(cols))
        rows = round(math.exp(rng.uniform(math.log(10), math.log(max(10, cap)))))
        if big and i == 0:
            rows = max_rows
        tables.append({"name": name, "columns": cols[:k], "rows": max(10, min(rows, max_rows))})
    return tables


def build_sqlite(path: Path, tables: list[dict], gen: ColumnGen) -> list[list[tuple]]:
    """Create the payload in one transaction; returns the first 3 rows of each table."""
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path, isolation_level=None)
    samples = []
    try:
        con.execute("PRAGMA journal_mode=MEMORY")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("BEGIN")
        for t in tables:
            cols = ", ".join(f"{c} {ty}" for c, ty, _ in t["columns"])
            con.execute(f"CREATE TABLE {t['name']} ({cols})")
            marks = ", ".join("?" * len(t["columns"]))
            sql = f"INSERT INTO {t['name']} VALUES ({marks})"
            for start in range(0, t["rows"], 50_000):
                n = min(50_000, t["rows"] - start)
                data = [gen.column(key, n, start) for _, _, key in t["columns"]]
                con.executemany(sql, zip(*data, strict=True))
        con.execute("COMMIT")
        for t in tables:
            samples.append(con.execute(f"SELECT * FROM {t['name']} LIMIT 3").fetchall())
    finally:
        con.close()
    return samples


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return f"<blob {len(value)} bytes>"
    text = " ".join(str(value).split())
    if len(text) > 120:
        text = text[:120] + "…"
    return text.replace("|", "\\|")


def dataset_sections(tables: list[dict], samples: list[list[tuple]]) -> str:
    """The generated ``## Query manual`` and ``## Sample rows`` sections."""
    lines = ["## Query manual", "", "Tables:"]
    for t in tables:
        cols = ", ".join(f"{c} {ty}" for c, ty, _ in t["columns"])
        lines.append(f"- `{t['name']}({cols})`")
    lines += ["", "Example queries:"]
    for t in tables:
        lines.append(f"- `SELECT * FROM {t['name']} LIMIT 5`")
        lines.append(f"- `SELECT COUNT(*) FROM {t['name']}`")
    lines += ["", "## Sample rows"]
    for t, rows in zip(tables, samples, strict=True):
        n = t["rows"]
        cols = [c for c, _, _ in t["columns"]][:12]
        lines += ["", f"### {t['name']} — {n} {'row' if n == 1 else 'rows'}", ""]
        if not rows:
            lines.append("_No rows._")
            continue
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("| " + " | ".join("---" for _ in cols) + " |")
        for row in rows:
            lines.append("| " + " | ".join(_cell(x) for x in row[:12]) + " |")
    return "\n".join(lines)


def dataset_summary(title: str, tables: list[dict], topics: list[str]) -> str:
    total = sum(t["rows"] for t in tables)
    names = ", ".join(t["name"] for t in tables)
    cols = ", ".join(c for c, _, _ in tables[0]["columns"][1:4])
    return clip(
        f"{title}: {total} rows in {names}, with {cols}; "
        f"used for {topics[0]} and {topics[1]} analysis."
    )
