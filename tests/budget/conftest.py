"""Fixtures the budget properties share: the stress forest, built once per module, and its
model."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from monkeyllm import Vine

from ..forestkit import make_forest
from .kit import SEED, WIDE_COLS, Model, _nodes, parent_of


def _wide_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    cols = ", ".join(f"c{c:02d}_{'x' * 10} TEXT" for c in range(WIDE_COLS))
    conn.execute(f"CREATE TABLE wide(id INTEGER PRIMARY KEY, {cols})")
    marks = ", ".join("?" for _ in range(WIDE_COLS + 1))
    conn.executemany(
        f"INSERT INTO wide VALUES({marks})",
        [(r, *(f"r{r:03d}c{c:02d} value text" for c in range(WIDE_COLS))) for r in range(1, 301)],
    )
    conn.commit()
    conn.close()


def _many_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    for t in range(30):
        cols = ", ".join(f"column_{c:02d}_of_table_{t:02d} TEXT" for c in range(20))
        conn.execute(f"CREATE TABLE table_{t:02d}({cols})")
    conn.commit()
    conn.close()


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Model]:
    root = make_forest(tmp_path_factory.mktemp("budgets") / "forest", _nodes(random.Random(SEED)))
    _wide_db(root / "data" / "wide.db")
    _many_db(root / "data" / "many.db")
    # heat evaporates at once, so repeated calls see the same forest (stable examples)
    with Vine(root, writable=False, alpha=0, half_life_days=1e-9) as vine:
        m = Model(root, vine)
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith("_derived/"):
                continue
            node_id = rel[:-3]
            text = path.read_text(encoding="utf-8")
            _, fm, rest = text.split("---\n", 2)
            m.meta[node_id] = yaml.safe_load(fm)
            m.body[node_id] = rest.strip()
            m.text[node_id] = text
        for node_id in m.ids:
            parent = parent_of(node_id)
            m.children.setdefault(node_id, [])
            if parent is not None:
                m.children.setdefault(parent, []).append(node_id)
            m.out_links.setdefault(node_id, [])
            m.in_links.setdefault(node_id, [])
        for node_id in m.ids:
            for link in m.meta[node_id].get("links") or []:
                m.out_links[node_id].append((link["rel"], link["target"]))
                m.in_links.setdefault(link["target"], []).append((link["rel"], node_id))
        yield m
