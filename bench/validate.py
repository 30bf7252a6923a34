"""How long ``vine validate`` takes on a whole forest.

Run from the repository root::

    python -m bench.validate                      # the 10k forest, 3 runs
    python -m bench.validate --forest path/to/forest --runs 5

Each run is a fresh interpreter that imports the engine, validates every file of the
forest (payload hashes included) and exits, so the figure is what a CI job pays: the
wall time of the process. The time spent inside ``validate()`` is shown beside it.
The target is 4 s on the 10k forest; the existing MonkeyLLM validator takes 11 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.run import ensure_forest

TARGET_S = 4.0
UPSTREAM_S = 11.0
_CHILD = """
import json, sys, time
started = time.perf_counter()
from monkeyllm.validate import validate
found = validate(sys.argv[1])
elapsed = time.perf_counter() - started
errors = sum(1 for f in found if f.severity == "error")
print(json.dumps({"seconds": elapsed, "errors": errors, "warnings": len(found) - errors}))
"""


def one_run(forest: Path) -> dict[str, float]:
    """Validate ``forest`` in a fresh process: its wall time, inner time and counts."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(forest)], check=True, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    inner = json.loads(done.stdout)
    return {"wall": wall, **inner}


def main(argv: list[str] | None = None) -> int:
    """Measure and print the median of ``--runs`` fresh processes."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forest", type=Path, help="a forest (default: the 10k one)")
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    forest = args.forest or ensure_forest(args.nodes, args.seed)
    runs = [one_run(forest) for _ in range(max(1, args.runs))]
    result = {
        "forest": str(forest),
        "runs": len(runs),
        "wall_s": round(statistics.median(r["wall"] for r in runs), 2),
        "validate_s": round(statistics.median(r["seconds"] for r in runs), 2),
        "errors": int(runs[-1]["errors"]),
        "warnings": int(runs[-1]["warnings"]),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"vine validate on {forest} (median of {len(runs)} fresh processes)")
    print(
        f"  wall time      {result['wall_s']:.2f} s   (target <= {TARGET_S:.0f} s, "
        f"upstream {UPSTREAM_S:.0f} s)"
    )
    print(f"  in validate()  {result['validate_s']:.2f} s")
    print(f"  findings       {result['errors']} error(s), {result['warnings']} warning(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
