"""Derived state damaged on disk (the catalog truncated, emptied, deleted, garbled;
a stale lock): the next open repairs it and loses no heat."""

from __future__ import annotations

import json
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.torture_crash import catalog_mismatches
from monkeyllm import Vine


def _damage_truncate(forest: Path) -> None:
    db = forest / "_derived" / "catalog.db"
    with open(db, "r+b") as fh:
        fh.truncate(max(db.stat().st_size // 3, 100))


def _damage_empty(forest: Path) -> None:
    (forest / "_derived" / "catalog.db").write_bytes(b"")


def _damage_delete(forest: Path) -> None:
    for name in ("catalog.db", "catalog.db-wal", "catalog.db-shm"):
        (forest / "_derived" / name).unlink(missing_ok=True)


def _damage_header(forest: Path) -> None:
    with open(forest / "_derived" / "catalog.db", "r+b") as fh:
        fh.write(b"this is not SQLite at all")


def _damage_garbage(forest: Path) -> None:
    db = forest / "_derived" / "catalog.db"
    data = bytearray(db.read_bytes())
    rnd = random.Random(7)
    for _ in range(200):
        at = rnd.randrange(100, len(data))
        data[at] = rnd.randrange(256)
    db.write_bytes(bytes(data))


def _damage_stale_lock(forest: Path) -> None:
    import socket

    dead = subprocess.Popen(["true"])
    dead.wait()
    (forest / ".vine.lock").write_text(
        json.dumps({"pid": dead.pid, "host": socket.gethostname(), "since": "2026-01-01T00:00:00Z"})
    )


DAMAGE = {
    "catalog.db truncated to a third": _damage_truncate,
    "catalog.db emptied": _damage_empty,
    "catalog.db deleted": _damage_delete,
    "catalog.db header overwritten": _damage_header,
    "catalog.db pages scrambled": _damage_garbage,
    ".vine.lock of a dead process": _damage_stale_lock,
}


def node_ids_of(forest: Path) -> list[str]:
    return sorted(
        p.relative_to(forest).as_posix()[:-3]
        for p in forest.rglob("*.md")
        if p.relative_to(forest).parts[0] not in (".git", "_derived", "_meta")
    )


def _heat_rows(forest: Path) -> dict[str, float]:
    """The stored heat of every node, read beside the engine."""
    import sqlite3

    db = forest / "_derived" / "trails.db"
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            f"{s}:{n}": round(h, 9)
            for s, n, h in con.execute("SELECT scope, node_id, heat FROM heat")
        }
    finally:
        con.close()


def _snapshot(vine: Vine, node_ids: list[str]) -> dict[str, Any]:
    out = {}
    for node_id in node_ids:
        look = vine.look(node_id, fields=["id", "title", "summary", "outline"])
        out[node_id] = look["error"].get("code") if "error" in look else look
    return out


@dataclass
class RepairFigures:
    """What the derived-state probes found."""

    tried: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)


def repair_probes(forest: Path) -> RepairFigures:
    """Damage the derived state in each way of ``DAMAGE`` and reopen: every node reads as
    before, heat survives, the catalog agrees with the files and the forest is writable."""
    figures = RepairFigures()
    node_ids = node_ids_of(forest)
    with Vine(forest) as vine:
        for node_id in node_ids[::3]:  # heat to keep across rebuilds
            vine.look(node_id)
        before = _snapshot(vine, node_ids)
    for name, damage in DAMAGE.items():
        figures.tried += 1
        heat = _heat_rows(forest)
        damage(forest)
        try:
            with Vine(forest) as vine:
                if _heat_rows(forest) != heat:
                    raise AssertionError("heat changed across the repair")
                after = _snapshot(vine, node_ids)
                wrong = [i for i in node_ids if after[i] != before[i]]
                if wrong:
                    raise AssertionError(
                        f"{len(wrong)} nodes differ, e.g. {wrong[0]}: "
                        f"{before[wrong[0]]} -> {after[wrong[0]]}"
                    )
                mismatched = catalog_mismatches(vine, forest)
                if mismatched:
                    raise AssertionError(mismatched[0])
                out = vine.graft(
                    node_ids[-1], {"set_frontmatter": {"summary": f"Summary after {name}."}}
                )
                if "error" in out:
                    raise AssertionError(f"not writable after the repair: {out}")
                before = _snapshot(vine, node_ids)
        except Exception as exc:  # noqa: BLE001 - each case reports its own failure
            figures.failed += 1
            figures.failures.append(f"{name}: {exc!r}"[:300])
    return figures
