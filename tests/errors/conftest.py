"""Fixtures the argument-boundary tests share: the forest, a read-only Vine on it, and the
audit hook armed for each test."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from ..forestkit import leaf, make_forest
from .kit import SENTINEL

POLICY = """# Exchange policy

## Channels

Retail exchanges happen at the counter.

## Deadlines

Retail returns close 30 days after the invoice date.
"""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the forest and, beside it, files that must never be read."""
    base = tmp_path_factory.mktemp("errors")
    make_forest(
        base / "forest",
        {
            "sales/policy": leaf(POLICY, tags=["sales"], links=[("related-to", "people/ana")]),
            "sales/orders": leaf(
                "# Orders\n\n## Notes\n\nOne row per order.\n",
                "dataset",
                payload="orders.db",
                payload_type="sqlite",
            ),
            "people/ana": leaf("# Ana\n\nDeadline owner.\n", "entity", summary="Ana runs sales."),
        },
    )
    conn = sqlite3.connect(base / "forest" / "sales" / "orders.db")
    conn.execute("CREATE TABLE orders(id INTEGER, region TEXT)")
    conn.execute("INSERT INTO orders VALUES (1, 'South')")
    conn.commit()
    conn.close()
    secret = (
        f"---\nid: secret\ntype: note\ntitle: {SENTINEL}\nsummary: {SENTINEL}\n"
        f"created: 2026-01-01\nupdated: 2026-01-01\n---\n\n# {SENTINEL}\n\n"
        f"## Deadlines\n\n{SENTINEL} deadline\n"
    )
    (base / "secret.md").write_text(secret)
    (base / "etc").mkdir()
    (base / "etc" / "passwd.md").write_text(secret)
    (base / "outside").mkdir()
    (base / "outside" / "_index.md").write_text(secret)
    (base / "outside" / "x.md").write_text(secret)
    leak = sqlite3.connect(base / "outside" / "orders.db")
    leak.execute("CREATE TABLE orders(id TEXT)")
    leak.execute("INSERT INTO orders VALUES (?)", (SENTINEL,))
    leak.commit()
    leak.close()
    forest = base / "forest"
    os.symlink(base / "secret.md", forest / "leak.md")
    os.symlink(base / "outside", forest / "linked", target_is_directory=True)
    os.symlink(base / "outside", forest / "sales" / "linked", target_is_directory=True)
    return base


@pytest.fixture(scope="module")
def vine(base: Path) -> Iterator[Vine]:
    with Vine(base / "forest", writable=False, alpha=0) as v:
        yield v


@pytest.fixture(autouse=True)
def never_internal(monkeypatch: pytest.MonkeyPatch) -> None:
    """No call made by a test in this file may answer ``E_INTERNAL``: fail on the spot."""
    original = Vine._run

    def run(self: Vine, spec: Any, args: dict[str, Any]) -> dict[str, Any]:
        out = original(self, spec, args)
        if isinstance(out.get("error"), dict) and out["error"].get("code") == "E_INTERNAL":
            shown = {k: (repr(v)[:80]) for k, v in args.items()}
            raise AssertionError(f"E_INTERNAL from {spec.name}({shown}): {out['error']}")
        return out

    monkeypatch.setattr(Vine, "_run", run)
