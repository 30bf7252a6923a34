"""Benchmark the Canopy (the vector index) on a synthetic forest with the local model.

Run from the repository root::

    python -m bench.canopy --nodes 10000            # builds the Canopy the first time
    python -m bench.canopy --nodes 10000 --json

Figures, in one sitting:

- the build (wall and CPU seconds, nodes per second), when the forest has no Canopy yet
  or with ``--rebuild``;
- locate median and p95, lexical (``hybrid=false``) against hybrid with a new question
  each time (so every hybrid call embeds its query) and hybrid with a cached query,
  alternating A/B in rounds, plus harvest lexical against hybrid;
- the incremental re-embed of one node: an outside edit of one node's tags, then the next
  hybrid locate (what it costs above a warm hybrid locate), and the Canopy's own sync;
- a write (plant) with and without a Canopy on a git copy of sample-brain, alternating;
- memory: the RSS a process adds on its first hybrid locate (numpy, the model, the
  matrix), in a fresh interpreter, and the matrix itself;
- the Canopy's size on disk against the forest's markdown.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.quality import synthetic_questions
from bench.run import ensure_forest
from monkeyllm import Vine
from monkeyllm.canopy import hybrid

SAMPLE = Path(__file__).resolve().parent.parent / "sample-brain"
TARGETS = {
    "build (s)": 60.0,
    "re-embed one node (ms)": 20.0,
    "hybrid locate median (ms)": 8.0,
    "hybrid locate p95 (ms)": 15.0,
    "size / markdown": 0.5,
    "RSS added (MB)": 60.0,
}


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median": round(statistics.median(ordered), 2),
        "p95": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
        "n": len(ordered),
    }


def _ms(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def build(root: Path, rebuild: bool) -> dict[str, Any] | None:
    """The build's figures (None when the forest already had a Canopy)."""
    with Vine(root, writable=False, alpha=0) as vine:
        if vine.canopy_status()["index"] and not rebuild:
            return None
        cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        started = time.perf_counter()
        out = vine.canopy_build(rebuild=rebuild)
        wall = time.perf_counter() - started
        cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "nodes_per_s": round(out["built"]["embedded"] / wall, 1),
        "embedded": out["built"]["embedded"],
    }


def latency(root: Path, queries: int, rounds: int, seed: int) -> dict[str, Any]:
    """locate and harvest, lexical against hybrid, alternating in rounds."""
    with Vine(root, writable=False, alpha=0) as vine:
        qs = synthetic_questions(vine, seed, queries * rounds)
        texts = [q["question"] for q in qs]
        vine.locate(texts[0], hybrid=True)  # loads numpy, the model, the matrix
        samples: dict[str, list[float]] = {
            "locate lexical": [],
            "locate hybrid (new query)": [],
            "locate hybrid (cached query)": [],
            "query embedding": [],
            "harvest lexical": [],
            "harvest hybrid": [],
        }
        embedder = hybrid.embedder(hybrid.resolve(vine._forest))
        ran = 0
        for r in range(rounds):
            batch = texts[r * queries : (r + 1) * queries]
            for text in batch:
                samples["locate lexical"].append(_ms(lambda t=text: vine.locate(t, hybrid=False)))
                got: dict[str, Any] = {}
                samples["locate hybrid (new query)"].append(
                    _ms(lambda t=text, g=got: g.update(vine.locate(t, hybrid=True)))
                )
                ran += bool(got["hybrid"]["ran"])
                samples["locate hybrid (cached query)"].append(
                    _ms(lambda t=text: vine.locate(t, hybrid=True))
                )
                samples["query embedding"].append(
                    _ms(lambda t=text: embedder.embed([t + " ?"], query=True))
                )
            for text in batch[: max(1, queries // 4)]:
                samples["harvest lexical"].append(_ms(lambda t=text: vine.harvest(t, hybrid=False)))
                samples["harvest hybrid"].append(_ms(lambda t=text: vine.harvest(t, hybrid=True)))
    out = {name: _summary(values) for name, values in samples.items()}
    out["hybrid ran"] = f"{ran} of {len(texts)}"
    return out


def incremental(root: Path, tries: int, seed: int) -> dict[str, Any]:
    """One node's tags edited outside the engine, then the next hybrid locate: what
    it costs above a warm one, and the Canopy's sync alone (the node's re-embed)."""
    rng = random.Random(seed)
    with Vine(root, writable=False, alpha=0) as vine:
        leaves = [
            r[0]
            for r in vine._forest.catalog.conn.execute(
                "SELECT id FROM nodes WHERE kind = 'banana' AND type = 'note' ORDER BY id"
            )
        ]
        index = vine._forest.canopy
        made = hybrid.embedder(hybrid.resolve(vine._forest))
        vine.locate("warm up the canopy", hybrid=True)
        after, warm, sync = [], [], []
        n = 0
        while len(sync) < tries:
            n += 1
            node_id = rng.choice(leaves)
            path = root / f"{node_id}.md"
            original = path.read_text(encoding="utf-8")
            if "\ntags:\n- " not in original:
                continue
            try:
                path.write_text(
                    original.replace("\ntags:\n", f"\ntags:\n- revised{n}\n", 1), encoding="utf-8"
                )
                vine._forest.catalog.sync()
                started = time.perf_counter()
                done = index.sync(made)
                sync.append((time.perf_counter() - started) * 1000)
                if done.embedded != 1:
                    raise RuntimeError(f"one edit re-embedded {done.embedded} nodes")
                path.write_text(
                    original.replace("\ntags:\n", f"\ntags:\n- again{n}\n", 1), encoding="utf-8"
                )
                query = f"revised summary number {n}"
                after.append(_ms(lambda q=query: vine.locate(q, hybrid=True)))
                warm.append(_ms(lambda q=query: vine.locate(q, hybrid=True)))
            finally:
                path.write_text(original, encoding="utf-8")
                vine._forest.catalog.sync()
                index.sync(made)
    return {
        "canopy sync, one node": _summary(sync),
        "hybrid locate after an outside edit": _summary(after),
        "the same locate again (warm)": _summary(warm),
    }


def writes(tries: int) -> dict[str, Any]:
    """plant on a git copy of sample-brain with a Canopy and without, alternating."""
    with tempfile.TemporaryDirectory(prefix="bench-canopy-") as tmp:
        roots = {}
        for name in ("without", "with"):
            roots[name] = root = Path(tmp) / name
            shutil.copytree(
                SAMPLE, root, ignore=shutil.ignore_patterns("_derived", ".vine.lock", ".git")
            )
            for cmd in (
                ["init", "-q"],
                ["add", "-A"],
                [
                    "-c",
                    "user.name=bench",
                    "-c",
                    "user.email=bench@example.com",
                    "commit",
                    "-qm",
                    "copy",
                ],
            ):
                subprocess.run(["git", *cmd], cwd=root, check=True, capture_output=True)
        with Vine(roots["with"], writable=False) as vine:
            vine.canopy_build()
        vines = {name: Vine(root, alpha=0) for name, root in roots.items()}
        samples: dict[str, list[float]] = {name: [] for name in vines}
        try:
            for n in range(tries):
                for name, vine in vines.items():
                    node = {
                        "id": f"sales/bench-{n}",
                        "type": "note",
                        "parent": "sales/_index",
                        "title": f"Bench note {n}",
                        "summary": f"A note planted by the benchmark, number {n}.",
                    }
                    samples[name].append(_ms(lambda v=vine, nd=node: v.plant(nd)))
        finally:
            for vine in vines.values():
                vine.close()
    out = {f"plant, {name} a Canopy": _summary(values) for name, values in samples.items()}
    out["ratio (with / without)"] = round(
        statistics.median(samples["with"]) / statistics.median(samples["without"]), 3
    )
    return out


def memory(root: Path) -> dict[str, Any]:
    """RSS of a fresh process before and after its first hybrid locate."""
    script = (
        "import json, sys\n"
        "def rss():\n"
        "    return int(open('/proc/self/statm').read().split()[1]) * 4096 / 1e6\n"
        "from monkeyllm import Vine\n"
        f"v = Vine({str(root)!r}, writable=False, alpha=0)\n"
        "v.locate('exchange policy deadlines', hybrid=False)\n"
        "before = rss()\n"
        "out = v.locate('what does the warranty ledger say about margins', hybrid=True)\n"
        "after = rss()\n"
        "idx = v._forest.canopy\n"
        "print(json.dumps({'before_mb': round(before, 1), 'after_mb': round(after, 1),\n"
        "                  'ran': out['hybrid']['ran'],\n"
        "                  'matrix_mb': round(idx.count * idx.dim * 4 / 1e6, 1)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    got["added_mb"] = round(got["after_mb"] - got["before_mb"], 1)
    return got


def size(root: Path) -> dict[str, Any]:
    markdown = sum(p.stat().st_size for p in root.rglob("*.md") if "_derived" not in p.parts)
    with Vine(root, writable=False) as vine:
        canopy = vine._forest.canopy.size_bytes()
    return {
        "canopy_mb": round(canopy / 1e6, 1),
        "markdown_mb": round(markdown / 1e6, 1),
        "ratio": round(canopy / markdown, 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.canopy``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--forest", type=Path, help="a forest instead of the synthetic one")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writes", type=int, default=15)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    root = args.forest or ensure_forest(args.nodes, args.seed)
    out: dict[str, Any] = {"forest": str(root), "targets": TARGETS}
    out["build"] = build(root, args.rebuild)
    out["latency"] = latency(root, args.queries, args.rounds, args.seed)
    out["incremental"] = incremental(root, 10, args.seed)
    out["writes"] = writes(args.writes)
    out["memory"] = memory(root)
    out["size"] = size(root)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for section, figures in out.items():
        if isinstance(figures, dict):
            print(f"{section}:")
            for name, value in figures.items():
                print(f"  {name}: {value}")
        else:
            print(f"{section}: {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
