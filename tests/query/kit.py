"""Helpers the query tests share: the shop dataset built here, so every number can be
asserted exactly."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monkeyllm import Vine
from monkeyllm.budget import QUERY, cost

from ..forestkit import sql_rows

REGIONS = ("North", "South", "East", "West")
N_ORDERS = 500
WIDE_COLS = 50
SENTINEL = "SENTINEL-outside-4b1d9e"
GUARD_CODES = {"E_QUERY_FORBIDDEN", "E_QUERY_INVALID", "E_TIMEOUT"}
TABLES = ("orders", "items", "blobs", "wide", "nums")


def _order(i: int) -> tuple[Any, ...]:
    cents = (i * 7919) % 100_000 + 100
    invoice = f"USD {cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"
    return (
        i,
        f"Customer {i % 37}",
        REGIONS[i % 4],
        invoice,
        f"2026-{(i % 12) + 1:02d}-{(i % 28) + 1:02d}",
        cents,
    )


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


def q(shop: Shop, sql: str) -> dict[str, Any]:
    return shop.vine.query("data/shop", sql)


def direct(shop: Shop, sql: str) -> list[list[Any]]:
    """The same statement straight through sqlite3 (read-only), rows as lists."""
    return sql_rows(shop.payload, sql)


def budget_ok(out: dict[str, Any]) -> bool:
    return cost(out) <= QUERY
