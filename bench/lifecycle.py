"""Benchmark prune, transplant, history, calendar and coverage on a synthetic forest.

Run from the repository root::

    python -m bench.lifecycle --nodes 10000            # the git-backed 10k forest, once
    python -m bench.lifecycle --nodes 10000 --rounds 80 --json

On a scratch copy of the git-backed forest (``bench.run --writes`` uses the same one),
in alternating rounds so that the machine's noise falls on every figure alike: a
``plant`` (the reference write), a ``prune`` of a leaf nothing links to, a forced
``prune`` of a linked leaf, and a ``transplant`` of a random leaf into another branch,
each with its commit; then ``history`` of moved nodes (several paths, a few commits)
and of untouched ones (the whole history walked), with plain ``git log`` beside it,
and ``calendar`` and ``coverage`` over the whole forest and random branches. A
transplant's cost grows with the links it rewrites: the figures give the medians by
how many, and the least-squares line through every sample (fixed part and cost per
backlink).
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from monkeyllm import Vine

from .run import (
    BRANCHES,
    LEAVES,
    check,
    ensure_forest,
    forest_parser,
    node_ids,
    note_under,
    summary,
    timed,
)

TARGETS = {
    "prune": 30.0,
    "transplant (fixed part)": 30.0,
    "transplant per backlink": 3.0,
    "history": 25.0,
    "calendar": 10.0,
    "coverage": 10.0,
}
BUCKETS = ((0, 0), (1, 3), (4, 10), (11, 10**9))
# A node another node links to (a prune of it needs --force).
LINKED = "EXISTS (SELECT 1 FROM edges e WHERE e.dst = n.id AND e.src != n.id)"


def _line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares ``ms = a + b * backlinks``."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in points) / var if var else 0.0
    return my - b * mx, b


def bench(root: Path, rounds: int, seed: int) -> dict[str, Any]:
    """Every figure, on a scratch copy of ``root`` (a git-backed forest)."""
    scratch = root.with_name(root.name + "-lifecycle-scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(
        root, scratch, ignore=shutil.ignore_patterns("_derived", ".vine.lock"), symlinks=True
    )
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {
        k: [] for k in ("plant (reference)", "prune", "prune --force", "transplant")
    }
    moves: list[tuple[int, float]] = []
    forced_links: list[int] = []
    with Vine(scratch) as vine:
        branches = node_ids(vine, BRANCHES)
        free = node_ids(vine, LEAVES + " AND NOT " + LINKED)
        linked = node_ids(vine, "kind = 'banana' AND type != 'dataset' AND " + LINKED)
        leaves = free + linked
        rng.shuffle(free)
        rng.shuffle(linked)
        rng.shuffle(leaves)
        used: set[str] = set()

        def pick(pool: list[str]) -> str:
            while pool:
                node = pool.pop()
                if node not in used:
                    used.add(node)
                    return node
            raise SystemExit("the forest ran out of leaves for the benchmark")

        def plant(i: int) -> Any:
            branch = rng.choice(branches)
            summary = f"A note planted by the lifecycle benchmark, {i}."
            return vine.plant(note_under(branch, f"bench-life-{i}", f"Bench {i}", summary))

        moved: list[str] = []
        plans: list[tuple[str, Callable[[int], Any]]] = [
            ("plant (reference)", plant),
            ("prune", lambda i: vine.prune(pick(free))),
            ("prune --force", lambda i: vine.prune(pick(linked), force=True)),
            (
                "transplant",
                lambda i: vine.transplant(
                    (node := pick(leaves)),
                    rng.choice(branches)[: -len("_index")] + node.rsplit("/", 1)[-1] + f"-m{i}",
                ),
            ),
        ]
        for i in range(rounds + 2):
            for name, fn in plans:
                ms, out = timed(lambda fn=fn, i=i: fn(i))
                check(out, name)
                if i < 2:
                    continue  # warm-up rounds
                samples[name].append(ms)
                if name == "transplant":
                    moves.append((out["backlinks_rewritten"], ms))
                    moved.append(out["new_id"])
                elif name == "prune --force":
                    forced_links.append(out["backlinks_removed"])
        reads = _reads(
            vine, scratch, rng, moved, [n for n in leaves if n not in used], branches, rounds
        )
    shutil.rmtree(scratch, ignore_errors=True)
    a, b = _line(moves)
    by_links = {}
    for lo, hi in BUCKETS:
        picked = [ms for n, ms in moves if lo <= n <= hi]
        if picked:
            label = f"{lo}" if lo == hi else (f"{lo}-{hi}" if hi < 10**9 else f"{lo}+")
            by_links[label] = summary(picked)
    figures: dict[str, Any] = {name: summary(v) for name, v in samples.items()}
    figures["prune --force, links dropped (median)"] = statistics.median(forced_links)
    figures["transplant by backlinks rewritten"] = by_links
    figures["transplant (fixed part)"] = round(a, 3)
    figures["transplant per backlink"] = round(b, 3)
    figures["transplant / plant (medians)"] = round(
        statistics.median(samples["transplant"]) / statistics.median(samples["plant (reference)"]),
        2,
    )
    figures["prune / plant (medians)"] = round(
        statistics.median(samples["prune"]) / statistics.median(samples["plant (reference)"]), 2
    )
    figures["transplant backlinks (median, max)"] = [
        statistics.median(n for n, _ in moves),
        max(n for n, _ in moves),
    ]
    figures.update(reads)
    return figures


def _reads(
    vine: Vine,
    root: Path,
    rng: random.Random,
    moved: list[str],
    untouched: list[str],
    branches: list[str],
    rounds: int,
) -> dict[str, Any]:
    """history, calendar and coverage, alternating, with ``git log`` beside history."""
    tops = [b for b in branches if b.count("/") == 1]
    plans: dict[str, Callable[[], Any]] = {
        "history (moved node)": lambda: vine.history(rng.choice(moved)),
        "history (untouched node)": lambda: vine.history(rng.choice(untouched)),
        "calendar (whole forest)": lambda: vine.calendar(
            granularity=rng.choice(["day", "week", "month", "year"])
        ),
        "calendar (whole forest, windowed)": lambda: vine.calendar(
            since="2025", until="2026-06", granularity=rng.choice(["day", "week", "month"])
        ),
        "calendar (a branch)": lambda: vine.calendar(
            scope=rng.choice(branches), granularity=rng.choice(["week", "month"])
        ),
        "coverage (whole forest)": lambda: vine.coverage(),
        "coverage (a top region)": lambda: vine.coverage(scope=rng.choice(tops)),
    }
    git_log: list[float] = []
    out: dict[str, list[float]] = {k: [] for k in plans}
    for name, fn in plans.items():
        check(fn(), name)
    for _ in range(rounds):
        for name, fn in plans.items():
            ms, result = timed(fn)
            check(result, name)
            out[name].append(ms)
        node = rng.choice(untouched)
        git_log.append(
            timed(
                lambda n=node: subprocess.run(
                    ["git", "log", "--format=%H %s", "-n", "21", "--", n + ".md"],
                    cwd=root,
                    capture_output=True,
                    check=True,
                )
            )[0]
        )
    figures: dict[str, Any] = {name: summary(v) for name, v in out.items()}
    figures["history"] = summary(out["history (moved node)"] + out["history (untouched node)"])
    figures["calendar"] = summary(
        [ms for k, v in out.items() if k.startswith("calendar") for ms in v]
    )
    figures["coverage"] = summary(out["coverage (whole forest)"] + out["coverage (a top region)"])
    figures["git log -n 21 -- path, alone"] = summary(git_log)
    figures["commits in the forest"] = int(
        subprocess.run(
            ["git", "rev-list", "--count", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    return figures


def render(figures: dict[str, Any]) -> str:
    """A plain table for people."""
    lines = [f"{'figure':40} {'median':>10} {'p95':>10}   target"]
    for name, value in figures.items():
        if isinstance(value, dict) and "median" in value:
            read = name.startswith(("history", "calendar", "coverage"))
            target = TARGETS.get(name.split(" (")[0] if read else name)
            lines.append(
                f"{name + ' (ms)':40} {value['median']:>10.3f} {value['p95']:>10.3f}"
                + (f"   <= {target:g}" if target else "")
            )
        elif isinstance(value, dict):
            for links, s in value.items():
                lines.append(
                    f"{'  transplant, ' + links + ' backlink(s) (ms)':40} "
                    f"{s['median']:>10.3f} {s['p95']:>10.3f}   (n={s['n']})"
                )
        else:
            target = TARGETS.get(name)
            lines.append(f"{name:40} {value!s:>10}" + (f"   <= {target:g}" if target else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.lifecycle``."""
    parser = forest_parser(__doc__, "an existing git-backed forest instead")
    parser.add_argument("--rounds", type=int, default=60, help="calls per figure")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    root = args.forest.resolve() if args.forest else ensure_forest(args.nodes, args.seed, git=True)
    figures = bench(root, args.rounds, args.seed)
    print(json.dumps(figures, indent=2) if args.json else render(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
