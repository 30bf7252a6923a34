"""Round trips through `vine serve`: median and p95 of `locate` and `look` over stdio and
over streamable HTTP (the SDK's real client, one session each, in the initialize era),
beside the same calls
made in-process, so the protocol's share is plain.

    python -m bench.mcp                          # the 10k forest, 200 rounds
    python -m bench.mcp --forest PATH --rounds 100

The servers run with --readonly: nothing is written into the forest but the heat the
reads deposit under _derived/ (as every bench read does).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from monkeyllm import Vine

from .run import Workload, check, ensure_forest, summary

HERE = Path(__file__).resolve().parent
DEFAULT_FOREST = HERE / "out" / "forest-10000-s7"


def _arguments(root: Path, rounds: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    with Vine(root, writable=False) as vine:
        work = Workload(vine, seed)
    rng = random.Random(seed)
    calls = []
    for n in range(rounds):
        calls.append(("locate", {"query": work.queries[n % len(work.queries)], "k": 5}))
        calls.append(("look", {"id": rng.choice(work.leaves)}))
    return calls


async def _timed_session(
    session: Any, calls: list[tuple[str, dict[str, Any]]]
) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"locate": [], "look": []}
    for name, args in calls[:20]:  # warm up: page cache, imports
        await session.call_tool(name, args)
    for name, args in calls:
        start = time.perf_counter()
        result = await session.call_tool(name, args)
        samples[name].append((time.perf_counter() - start) * 1000)
        check(result.structured_content, name)
    return samples


@contextlib.asynccontextmanager
async def _stdio(root: Path) -> AsyncIterator[Any]:
    from tests.mcpkit import stdio_session

    async with stdio_session("-f", str(root), "--readonly", checked=False) as session:
        yield session


def _in_process(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"locate": [], "look": []}
    with Vine(root, writable=False) as vine:
        for name, args in calls[:20]:
            vine.call(name, args)
        for name, args in calls:
            start = time.perf_counter()
            check(vine.call(name, args), name)
            samples[name].append((time.perf_counter() - start) * 1000)
    return samples


def measure(root: Path, rounds: int, seed: int) -> dict[str, dict[str, dict[str, float]]]:
    """{transport: {call: {median, p95, n}}}."""
    from tests.mcpkit import http_server, http_session

    calls = _arguments(root, rounds, seed)
    out: dict[str, dict[str, dict[str, float]]] = {}
    out["in-process"] = {k: summary(v) for k, v in _in_process(root, calls).items()}

    async def over_stdio() -> dict[str, list[float]]:
        async with _stdio(root) as session:
            return await _timed_session(session, calls)

    out["stdio"] = {k: summary(v) for k, v in anyio.run(over_stdio).items()}
    log = Path("/tmp") / f"bench-mcp-{time.time_ns()}.log"
    with http_server("-f", str(root), "--readonly", stderr=log) as url:

        async def over_http() -> dict[str, list[float]]:
            async with http_session(url, checked=False) as session:
                return await _timed_session(session, calls)

        out["http"] = {k: summary(v) for k, v in anyio.run(over_http).items()}
    log.unlink(missing_ok=True)
    return out


def render(figures: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = [
        "| transport | locate median | locate p95 | look median | look p95 |",
        "|---|---|---|---|---|",
    ]
    for transport, calls in figures.items():
        lines.append(
            f"| {transport} | {calls['locate']['median']:.2f} ms | "
            f"{calls['locate']['p95']:.2f} ms | {calls['look']['median']:.2f} ms | "
            f"{calls['look']['p95']:.2f} ms |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp", description=__doc__)
    parser.add_argument(
        "--forest", type=Path, default=None, help="the forest (default: the generated 10k forest)"
    )
    parser.add_argument("--rounds", type=int, default=200, help="calls of each kind")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    root = args.forest or (DEFAULT_FOREST if DEFAULT_FOREST.exists() else ensure_forest(10000, 7))
    figures = measure(root.resolve(), args.rounds, args.seed)
    sys.stdout.write(f"{root} ({args.rounds} rounds of each call)\n{render(figures)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
