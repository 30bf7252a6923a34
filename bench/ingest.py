"""How fast ``vine ingest`` turns a folder into a forest.

Run from the repository root::

    python -m bench.ingest                  # 5,000 mixed files
    python -m bench.ingest --files 20000 --json

Generates a deterministic source tree (notes, text files, CSV and TSV tables, flat and
nested JSON, small SQLite files, PNGs and a few unsupported files, 50 files a folder
two levels deep) in a temporary folder, ingests it into a fresh forest and reports
files per second; then re-runs the unchanged source (nothing to write) and reports that
too.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from monkeyllm import Vine
from monkeyllm.ingest import ingest

WORDS = (
    "river stone ledger invoice policy mixer routing cache answer beta customer "
    "return window region total carrier contract audit budget forecast"
).split()
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x08\x08\x02\x00\x00\x00"


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 14))]
    return " ".join(words).capitalize() + "."


def generate(root: Path, files: int, seed: int = 7) -> dict[str, int]:
    """Write ``files`` mixed files under ``root``; returns the count per kind."""
    rng = random.Random(seed)
    kinds = (
        ["md"] * 40
        + ["txt"] * 15
        + ["csv"] * 15
        + ["tsv"] * 5
        + ["json"] * 8
        + ["jsondoc"] * 5
        + ["db"] * 3
        + ["png"] * 6
        + ["bin"] * 3
    )
    counts: dict[str, int] = {}
    for n in range(files):
        kind = rng.choice(kinds)
        counts[kind] = counts.get(kind, 0) + 1
        folder = root / f"area-{n // 500:02d}" / f"topic {n // 50 % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        stem = f"item-{n:05d}"
        if kind in ("md", "txt"):
            paras = [
                "\n".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
                for _ in range(rng.randint(1, 5))
            ]
            head = f"# {stem.title()}\n\n" if kind == "md" else ""
            (folder / f"{stem}.{kind}").write_text(head + "\n\n".join(paras) + "\n")
        elif kind in ("csv", "tsv"):
            sep = "," if kind == "csv" else "\t"
            rows = [sep.join(["region", "day", "total", "note"])]
            rows += [
                sep.join(
                    [
                        rng.choice(WORDS),
                        f"2026-01-{rng.randint(1, 28):02d}",
                        f"{rng.uniform(0, 999):.2f}",
                        rng.choice(WORDS),
                    ]
                )
                for _ in range(rng.randint(5, 200))
            ]
            (folder / f"{stem}.{kind}").write_text("\n".join(rows) + "\n")
        elif kind == "json":
            recs = [
                {
                    "name": rng.choice(WORDS),
                    "qty": rng.randint(0, 99),
                    "price": round(rng.uniform(1, 50), 2),
                }
                for _ in range(rng.randint(3, 60))
            ]
            (folder / f"{stem}.json").write_text(json.dumps(recs))
        elif kind == "jsondoc":
            doc = {
                "title": _sentence(rng),
                "tags": [rng.choice(WORDS) for _ in range(3)],
                "nested": {"a": rng.randint(0, 9)},
            }
            (folder / f"{stem}.json").write_text(json.dumps(doc))
        elif kind == "db":
            conn = sqlite3.connect(folder / f"{stem}.db")
            conn.execute("CREATE TABLE t (id INTEGER, word TEXT)")
            conn.executemany(
                "INSERT INTO t VALUES (?, ?)",
                [(i, rng.choice(WORDS)) for i in range(rng.randint(5, 100))],
            )
            conn.commit()
            conn.close()
        elif kind == "png":
            (folder / f"{stem}.png").write_bytes(
                PNG + bytes(rng.randint(0, 255) for _ in range(64))
            )
        else:
            (folder / f"{stem}.bin").write_bytes(bytes(rng.randint(0, 255) for _ in range(64)))
    return counts


def measure(files: int) -> dict[str, Any]:
    """Generate, ingest into a fresh forest, re-ingest; the figures."""
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        source = Path(tmp) / "source"
        counts = generate(source, files)
        with Vine.init(Path(tmp) / "forest", "Ingest bench") as vine:
            started = time.perf_counter()
            first = ingest(vine, [source])
            cold = time.perf_counter() - started
            started = time.perf_counter()
            second = ingest(vine, [source])
            warm = time.perf_counter() - started
        return {
            "files": files,
            "kinds": counts,
            "counts": first["counts"],
            "branches": len(first["branches"]),
            "ingest_s": round(cold, 2),
            "files_per_s": round(files / cold, 1),
            "rerun_s": round(warm, 2),
            "rerun_files_per_s": round(files / warm, 1),
            "rerun_commit": second["commit"],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.files)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['files']} files -> {result['counts']}, {result['branches']} branches")
    print(f"ingest: {result['ingest_s']} s, {result['files_per_s']} files/s (one commit)")
    print(
        f"re-run, unchanged: {result['rerun_s']} s, {result['rerun_files_per_s']} files/s, "
        f"commit {result['rerun_commit']}"
    )


if __name__ == "__main__":
    main()
