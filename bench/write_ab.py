"""Write latency, A/B in one sitting: plant, graft and tend through a Vine that holds the
writer lock while open, through one that takes it for each write (``lock="per-write"``),
and optionally through another commit's engine, taking turns in small blocks.

Run from the repository root::

    python -m bench.write_ab                          # while-open vs per-write, this tree
    python -m bench.write_ab --against main --blocks 20 --size 5

Each variant is a long-lived worker process with its own scratch copy of the git-backed
10k forest (``bench/out/forest-10000-s7-git``, generated the first time); the workers
take turns, one block of ``--size`` writes of each kind at a time, the order rotating,
so a machine that gets busier or quieter weighs on every variant alike. The figures
are the medians of every write of a kind, and each variant's difference and ratio to
the first. ``--against REF`` exports that commit's engine (``git archive``) and runs it
as the first variant, with the same driver (it must accept ``Vine(path)``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .run import ensure_forest

REPO = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, random, sys, time
from monkeyllm import Vine
root, lock = sys.argv[1], sys.argv[2]
rng = random.Random(7)
with Vine(root, **({} if lock == "default" else {"lock": lock})) as vine:
    conn = vine._forest.catalog.conn
    branches = [r[0] for r in conn.execute(
        "SELECT id FROM nodes WHERE kind='branch' AND id != '_index' ORDER BY id")]
    leaves = [r[0] for r in conn.execute(
        "SELECT id FROM nodes WHERE kind='banana' AND type != 'dataset' "
        "AND id NOT LIKE '\\_meta/%' ESCAPE '\\' ORDER BY id")]
    ledger = branches[0][:-len("_index")] + "ab-ledger"
    out = vine.plant({"id": ledger, "type": "dataset", "parent": branches[0],
                      "title": "AB ledger", "summary": "Rows written by the write A/B.",
                      "schema": {"entries": {"columns": {"n": "INTEGER", "note": "TEXT"},
                                             "primary_key": ["n"]}}})
    assert "commit" in out, out
    n = 0
    for _ in range(3):   # warm: the second walk of the files starts the watcher
        n += 1
        vine.tend(ledger, f"INSERT INTO entries VALUES ({n}, 'warm')")
    print("ready", flush=True)
    for line in sys.stdin:
        got = {"plant": [], "graft": [], "tend": []}
        for _ in range(int(line)):
            n += 1
            branch = rng.choice(branches)
            writes = (
                ("plant", lambda: vine.plant({
                    "id": f"{branch[:-len('_index')]}ab-note-{n}", "type": "note",
                    "parent": branch, "title": f"AB note {n}",
                    "summary": f"A note planted by the write A/B, number {n}.",
                    "body": f"# AB note {n}\n\n## Body\n\nTimed."})),
                ("graft", lambda: vine.graft(rng.choice(leaves), {"set_frontmatter": {
                    "summary": f"Summary rewritten by the write A/B, round {n}."}})),
                ("tend", lambda: vine.tend(ledger, f"INSERT INTO entries VALUES ({n}, 'r')")),
            )
            for kind, write in writes:
                started = time.perf_counter()
                out = write()
                got[kind].append((time.perf_counter() - started) * 1000)
                assert "commit" in out, out
        print(json.dumps(got), flush=True)
"""
KINDS = ("plant", "graft", "tend")


def export(ref: str, into: Path) -> tuple[Path, str]:
    """Another commit's tree, importable as ``monkeyllm``: (its folder, PYTHONPATH)."""
    tree = into / "tree"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", ref], cwd=REPO, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    package = into / "package"
    package.mkdir()
    (package / "monkeyllm").symlink_to(tree / "vine")
    return tree, os.pathsep.join([str(package), str(tree)])


def measure(blocks: int, size: int, against: str | None) -> dict[str, Any]:
    """Medians per variant and kind, and each variant against the first."""
    source = ensure_forest(10_000, 7, git=True)
    with tempfile.TemporaryDirectory(prefix="write-ab-", dir=source.parent) as tmp:
        variants: dict[str, tuple[Path, str, str]] = {}
        if against:
            tree, path = export(against, Path(tmp))
            variants[f"{against} (Vine(path))"] = (tree, path, "default")
        here = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
        variants["while-open"] = (REPO, here, "while-open")
        variants["per-write"] = (REPO, here, "per-write")
        procs = {}
        for i, (name, (cwd, path, lock)) in enumerate(variants.items()):
            scratch = Path(tmp) / f"forest-{i}"
            shutil.copytree(
                source,
                scratch,
                symlinks=True,
                ignore=shutil.ignore_patterns("_derived", ".vine.lock"),
            )
            procs[name] = subprocess.Popen(
                [sys.executable, "-c", WORKER, str(scratch), lock],
                cwd=cwd,
                env={**os.environ, "PYTHONPATH": path},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        for name, proc in procs.items():
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise SystemExit(f"the {name} worker did not start")
        samples: dict[str, dict[str, list[float]]] = {
            name: {kind: [] for kind in KINDS} for name in variants
        }
        names = list(variants)
        for block in range(blocks):
            for name in names[block % len(names) :] + names[: block % len(names)]:
                proc = procs[name]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(f"{size}\n")
                proc.stdin.flush()
                for kind, ms in json.loads(proc.stdout.readline()).items():
                    samples[name][kind] += ms
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=120)
    medians = {
        name: {kind: round(statistics.median(v), 2) for kind, v in kinds.items()}
        for name, kinds in samples.items()
    }
    first = names[0]
    return {
        "writes per kind and variant": blocks * size,
        "medians (ms)": medians,
        "against the first": {
            name: {
                kind: {
                    "diff_ms": round(medians[name][kind] - medians[first][kind], 2),
                    "ratio": round(medians[name][kind] / medians[first][kind], 3),
                }
                for kind in KINDS
            }
            for name in names[1:]
        },
    }


def render(figures: dict[str, Any]) -> str:
    medians = figures["medians (ms)"]
    names = list(medians)
    lines = [
        f"{figures['writes per kind and variant']} writes of each kind per variant, "
        f"medians in ms (difference and ratio to {names[0]})"
    ]
    lines.append(f"{'':8}" + "".join(f"{name:>34}" for name in names))
    for kind in KINDS:
        cells = [f"{medians[names[0]][kind]:>34.2f}"]
        for name in names[1:]:
            d = figures["against the first"][name][kind]
            cells.append(
                f"{medians[name][kind]:>14.2f} ({d['diff_ms']:+.2f}, x{d['ratio']:.3f})".rjust(34)
            )
        lines.append(f"{kind:8}" + "".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.write_ab``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=20, help="turns per variant")
    parser.add_argument("--size", type=int, default=5, help="writes of each kind per turn")
    parser.add_argument("--against", help="also time this commit's engine (git ref), first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.blocks, args.size, args.against)
    print(json.dumps(figures, indent=2) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
