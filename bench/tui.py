"""How long ``vine browse`` takes to a first usable screen.

Run from the repository root::

    python -m bench.tui                         # the 10k forest, 7 runs
    python -m bench.tui --forest path/to/forest --runs 10 --json

Each run starts a fresh ``BrowseApp`` headless (Textual's ``run_test``) and times from
the app's construction (which opens the forest) to the first screen a person can use:
the tree's first level listed and the root's digest drawn. The forest is only read.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.run import ensure_forest, forest_parser

TARGET_MS = 1500.0


async def first_screen(root: Path) -> float:
    """Milliseconds from constructing the app to its first usable screen."""
    from monkeyllm.tui.app import BrowseApp

    started = time.perf_counter()
    app = BrowseApp(root)
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.is_ready:
            await pilot.pause(0.005)
        elapsed = (time.perf_counter() - started) * 1000
        await app.workers.wait_for_complete()
    return elapsed


def run(root: Path, runs: int) -> dict[str, Any]:
    import_started = time.perf_counter()
    import monkeyllm.tui.app  # noqa: F401

    imports = (time.perf_counter() - import_started) * 1000
    samples = sorted(asyncio.run(first_screen(root)) for _ in range(runs))
    return {
        "forest": str(root),
        "runs": runs,
        "import_ms": round(imports, 1),
        "median_ms": round(statistics.median(samples), 1),
        "max_ms": round(samples[-1], 1),
        "min_ms": round(samples[0], 1),
        "target_ms": TARGET_MS,
    }


def main() -> None:
    parser = forest_parser(__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = (args.forest or ensure_forest(args.nodes, args.seed)).resolve()
    figures = run(root, args.runs)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"forest: {figures['forest']}\n"
        f"importing the app (once): {figures['import_ms']} ms\n"
        f"first usable screen, {figures['runs']} runs: median {figures['median_ms']} ms "
        f"(min {figures['min_ms']}, max {figures['max_ms']}); target <= {TARGET_MS:g} ms"
    )


if __name__ == "__main__":
    main()
