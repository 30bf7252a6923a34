"""Fixtures the ingest tests share: a source folder of files to ingest and a forest to ingest
them into."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from monkeyllm import Vine

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x08\x08\x02\x00\x00\x00"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A mixed folder as a person keeps one."""
    src = tmp_path / "My Notes"
    (src / "Projects" / "Mixer LLM").mkdir(parents=True)
    (src / "nota-fiscal").mkdir()
    (src / "Projects" / "Mixer LLM" / "architecture.md").write_text(
        "# Mixer architecture\n\nThe mixer routes prompts to three models. It keeps a cache "
        "of answers.\n\n## Details\n\nMore text.\n",
        encoding="utf-8",
    )
    (src / "Projects" / "plan.txt").write_text(
        "Ship the beta in March. Then gather feedback.\n", encoding="utf-8"
    )
    (src / "own.md").write_text(
        "---\ntitle: Exchange policy\nsummary: Return windows per channel.\ntags: [policy]\n"
        "---\n\nCustomers may return goods within 30 days.\n",
        encoding="utf-8",
    )
    (src / "Own.md").write_text("A second file slugging to the same id.\n", encoding="utf-8")
    (src / "sales.csv").write_text(
        "Region,Month,Total ($),Code\nSouth,2026-01-05,10.5,007\nNorth,2026-02-01,3,008\n"
        "broken,row\nEast,2026-03-01,7,009\n",
        encoding="utf-8",
    )
    (src / "stock.tsv").write_text("sku\tqty\nA1\t4\nB2\t9\n", encoding="utf-8")
    (src / "people.json").write_text(
        json.dumps([{"name": "Ana", "age": 31, "active": True}, {"name": "Bo", "age": None}]),
        encoding="utf-8",
    )
    (src / "config.json").write_text(
        json.dumps({"mode": "fast", "nested": {"a": [1, 2]}}), encoding="utf-8"
    )
    conn = sqlite3.connect(src / "shop.db")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, ?)", [(1, "pen", 1.5), (2, "ink", 4.0), (3, "pad", 2.25)]
    )
    conn.commit()
    conn.close()
    (src / "logo.png").write_bytes(PNG)
    (src / "nota-fiscal" / "4412.md").write_text("Invoice paid.\n", encoding="utf-8")
    (src / "archive.xyz").write_bytes(b"whatever")
    (src / "latin.txt").write_bytes(b"caf\xe9 au lait\n")
    (src / "bad.json").write_text("{not json", encoding="utf-8")
    outside = tmp_path / "secret.md"
    outside.write_text("secret\n", encoding="utf-8")
    (src / "leak.md").symlink_to(outside)
    (src / ".hidden.md").write_text("skipped\n", encoding="utf-8")
    return src


@pytest.fixture
def vine(tmp_path: Path):  # noqa: ANN201
    with Vine.init(tmp_path / "forest", "Ingest forest") as v:
        yield v
