"""How long the ``vine`` command takes to start, answer and exit.

Run from the repository root::

    python -m bench.startup                      # the 10k forest, 20 runs each
    python -m bench.startup --runs 40 --json

Shell scripts call ``vine`` in loops, so what counts is the wall time of a whole
process: interpreter start-up, imports, opening the forest, the call and exit. Each
figure is the median (and p95) wall time of fresh processes, beside the plain
``python -c pass`` start-up of the same interpreter for reference.

``vine look <id>`` is what a loop gets: the first call walks the files and starts a
keeper (``vine watch --idle 600``), which the following calls ask instead of walking.
The ``walking`` rows are with ``VINE_WATCH=0``: every call stats every file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.run import ensure_forest, forest_parser

# Targets on this machine (the CLI issue's), and what the existing MonkeyLLM CLI takes.
TARGETS = {"vine --help": (200.0, 260.0), "vine look <id>": (200.0, None)}


def vine_command() -> list[str]:
    """The installed console script beside this interpreter (else the module)."""
    script = Path(sys.executable).with_name("vine")
    if script.exists():
        return [str(script)]
    found = shutil.which("vine")
    return [found] if found else [sys.executable, "-m", "monkeyllm.commands"]


# As installed software runs: bytecode cached (a machine that sets
# PYTHONDONTWRITEBYTECODE would otherwise recompile every module on every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# Every call walks the files: no keeper is started or asked for (VINE_WATCH=0).
WALKING = {**ENV, "VINE_WATCH": "0"}


def wall(argv: list[str], runs: int, env: dict[str, str] = WALKING) -> dict[str, float]:
    """Median and p95 wall time (ms) of ``runs`` fresh processes (after one warm-up run
    that also writes the bytecode); output discarded."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        samples.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    samples.sort()
    return {
        "median": round(statistics.median(samples), 1),
        "p95": round(samples[min(len(samples) - 1, int(len(samples) * 0.95))], 1),
    }


def a_leaf(root: Path) -> str:
    """A leaf id of the forest (its catalog is built by one open beforehand)."""
    with sqlite3.connect(root / "_derived" / "catalog.db") as conn:
        row = conn.execute(
            "SELECT id FROM nodes WHERE kind='banana' AND id NOT LIKE "
            "'\\_meta/%' ESCAPE '\\' ORDER BY id LIMIT 1 OFFSET 500"
        ).fetchone()
    return row[0]


def run(root: Path, runs: int) -> dict[str, Any]:
    vine = vine_command()
    if not (root / "_derived" / "catalog.db").exists():
        # Build the catalog first: the figures are of a forest in use, not a cold one.
        subprocess.run([*vine, "reindex", "-f", str(root)], check=True, stdout=subprocess.DEVNULL)
    leaf = a_leaf(root)
    look = [*vine, "look", leaf, "-f", str(root)]
    locate = [*vine, "locate", "working notes", "-f", str(root)]
    subprocess.run([*vine, "watch", "--stop", "--quiet", "-f", str(root)], env=ENV)
    figures = {
        "forest": str(root),
        "python -c pass": wall([sys.executable, "-c", "pass"], runs),
        "vine --help": wall([*vine, "--help"], runs),
        "vine look <id>, walking": wall(look, runs),
        "vine locate <query>, walking": wall(locate, runs),
    }
    with kept(vine, root, look) as up:
        if up:
            figures["vine look <id>"] = wall(look, runs, ENV)
            figures["vine locate <query>"] = wall(locate, runs, ENV)
    return figures


@contextlib.contextmanager
def kept(vine: list[str], root: Path, first: list[str]) -> Iterator[bool]:
    """The keeper a first call starts by itself (as it does for any user), up for the
    block and stopped after it (False where there is none)."""
    from monkeyllm import keeper

    subprocess.run(first, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        deadline = time.monotonic() + 120
        while not keeper.ask(root) and time.monotonic() < deadline:
            time.sleep(0.1)
        yield keeper.ask(root)
    finally:
        subprocess.run([*vine, "watch", "--stop", "--quiet", "-f", str(root)], env=ENV)


def render(figures: dict[str, Any]) -> str:
    lines = [
        f"forest: {figures['forest']}",
        "",
        f"{'process':30} {'median':>9} {'p95':>9}   target [upstream]",
    ]
    for name, value in figures.items():
        if name == "forest":
            continue
        target = TARGETS.get(name)
        note = ""
        if target:
            note = f"<= {target[0]:g} ms" + (f" [{target[1]:g}]" if target[1] else "")
        lines.append(f"{name:30} {value['median']:>7} ms {value['p95']:>6} ms   {note}")
    return "\n".join(lines)


def main() -> None:
    parser = forest_parser(__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = args.forest or ensure_forest(args.nodes, args.seed)
    figures = run(root.resolve(), args.runs)
    print(json.dumps(figures, indent=2) if args.json else render(figures))


if __name__ == "__main__":
    main()
