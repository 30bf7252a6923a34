"""MCP over streamable HTTP (the initialize era), server against server: what each
``vine serve --transport http`` costs per call beyond its own engine time.

    python -m bench.mcp_ab main=.venv/bin/vine base=/tmp/venv130/bin/vine
    python -m bench.mcp_ab --forest PATH --rounds 300 --sessions 4 A=VINE B=VINE
    python -m bench.mcp_ab main=.venv/bin/vine new=.venv/bin/vine --path new=/tmp/pkg

Each NAME=VINE is a ``vine`` executable (another checkout's virtualenv, another SDK);
each serves its own copy of the forest (``--readonly``: only heat is written), one at a
time, in alternating order, one session of the SDK's own client (this Python's) per
server per round, 20 warm-up calls, then ``locate`` and ``look`` interleaved. Per call
it takes the round trip, the server's own time for the call (the milliseconds of its
per-call stderr line, so engines of different ages subtract their own), and the time the
client spends checking the result against the tool's ``outputSchema``
(``ClientSession.validate_tool_result``, zero for a server that declares none); per
session the server's CPU time per call (engine included; Linux). Figures are medians
of the sessions' medians, with each server's ratio to the first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from .mcp import DEFAULT_FOREST, _arguments
from .run import check, ensure_forest

LINE = re.compile(r"^vine serve: (\S+) forest=\S+ ([\d.]+)ms (\S+)$")
CALLS = ("look", "locate")
COLUMNS = ("round trip", "server", "protocol", "schema check", "server CPU")


def server_cpu(pid: int) -> float | None:
    """Seconds of CPU (user and system) the process has used, or None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def serving(
    vine: str, forest: Path, log: Path, path: str | None = None
) -> Iterator[tuple[str, int]]:
    """``VINE serve --transport http`` on ``forest``, with ``path`` as its PYTHONPATH
    (none by default); yields its URL and process id."""
    from tests.mcpkit import TIMEOUT, free_port, stop

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if path:
        env["PYTHONPATH"] = path
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [vine, "serve", "--transport", "http", "--port", str(port), "-f", str(forest)]
            + ["--readonly"],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
        try:
            deadline = time.monotonic() + TIMEOUT
            while True:
                with contextlib.suppress(OSError):
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{vine} serve did not start: {log.read_text()}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp", proc.pid
        finally:
            stop(proc)


async def _session(url: str, pid: int, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    from tests.mcpkit import http_session

    checks: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in CALLS}
    schema: dict[str, list[float]] = {name: [] for name in CALLS}
    async with http_session(url, checked=False) as session:
        validate = session.validate_tool_result

        async def timed_validate(name: str, result: Any) -> None:
            start = time.perf_counter()
            try:
                await validate(name, result)
            finally:
                checks.append((time.perf_counter() - start) * 1000)

        session.validate_tool_result = timed_validate  # type: ignore[method-assign]
        for name, args in calls[:20]:
            await session.call_tool(name, args)
        cpu_before = server_cpu(pid)
        for name, args in calls:
            checks.clear()
            start = time.perf_counter()
            result = await session.call_tool(name, args)
            times[name].append((time.perf_counter() - start) * 1000)
            schema[name].append(sum(checks))
            check(result.structured_content, name)
        cpu_after = server_cpu(pid)
    cpu = None
    if cpu_before is not None and cpu_after is not None:
        cpu = (cpu_after - cpu_before) * 1000 / len(calls)
    return {"times": times, "schema": schema, "cpu": cpu}


def session_figures(
    vine: str,
    forest: Path,
    calls: list[tuple[str, dict[str, Any]]],
    log: Path,
    path: str | None = None,
) -> dict[str, dict[str, float | None]]:
    """One session's medians: {call: {column: ms}}."""
    with serving(vine, forest, log, path) as (url, pid):
        got = anyio.run(_session, url, pid, calls)
    served: dict[str, list[float]] = {name: [] for name in CALLS}
    lines = [m for m in map(LINE.match, log.read_text(encoding="utf-8").splitlines()) if m]
    for match in lines[-len(calls) :]:
        served[match.group(1)].append(float(match.group(2)))
    out: dict[str, dict[str, float | None]] = {}
    for name in CALLS:
        times, own = got["times"][name], served[name]
        if len(own) != len(times):
            raise RuntimeError(f"{vine}: {len(own)} {name} lines in its log for {len(times)} calls")
        out[name] = {
            "round trip": statistics.median(times),
            "server": statistics.median(own),
            "protocol": statistics.median(t - s for t, s in zip(times, own, strict=True)),
            "schema check": statistics.median(got["schema"][name]),
            "server CPU": got["cpu"],
        }
    return out


def measure(
    servers: dict[str, str],
    root: Path,
    rounds: int,
    sessions: int,
    seed: int,
    paths: dict[str, str] | None = None,
) -> dict[str, list[dict[str, dict[str, float | None]]]]:
    """{name: [one session's figures, ...]}, the servers alternating (``paths``: a
    server's PYTHONPATH, by name)."""
    calls = _arguments(root, rounds, seed)
    results: dict[str, list[dict[str, dict[str, float | None]]]] = {n: [] for n in servers}
    with tempfile.TemporaryDirectory(prefix="mcp-ab-") as scratch:
        copies = {}
        for name in servers:
            copies[name] = Path(scratch) / name / root.name
            shutil.copytree(root, copies[name], symlinks=True)
        names = list(servers)
        for n in range(sessions):
            for name in names if n % 2 == 0 else names[::-1]:
                log = Path(scratch) / f"{name}.log"
                path = (paths or {}).get(name)
                figures = session_figures(servers[name], copies[name], calls, log, path)
                results[name].append(figures)
                sys.stderr.write(f"session {n + 1} {name}: {_brief(figures)}\n")
    return results


def _brief(figures: dict[str, dict[str, float | None]]) -> str:
    return ", ".join(f"{c} {figures[c]['round trip']:.2f} ms" for c in CALLS)


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def render(results: dict[str, list[dict[str, dict[str, float | None]]]]) -> str:
    """A table per call: each server's medians of session medians, ratio to the first."""
    lines = []
    first = next(iter(results))
    for call in CALLS:
        lines += [
            f"\n{call} (ms; protocol = round trip less the server's own time)",
            "| server | " + " | ".join(COLUMNS) + " | protocol ratio |",
            "|---|" + "---|" * (len(COLUMNS) + 1),
        ]
        base = _median([s[call]["protocol"] for s in results[first]])
        for name, runs in results.items():
            cells = [_median([s[call][c] for s in runs]) for c in COLUMNS]
            text = ["-" if v is None else f"{v:.2f}" for v in cells]
            ratio = cells[2] / base if base and cells[2] is not None else None
            lines.append(f"| {name} | " + " | ".join(text) + f" | {ratio or 0:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_ab", description=__doc__)
    parser.add_argument("servers", nargs="+", metavar="NAME=VINE", help="vine executables")
    parser.add_argument("--forest", type=Path, default=None, help="default: the 10k forest")
    parser.add_argument("--rounds", type=int, default=300, help="calls of each kind a session")
    parser.add_argument("--sessions", type=int, default=4, help="sessions per server")
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="the PYTHONPATH server NAME runs with (none by default)",
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    servers = dict(spec.split("=", 1) for spec in args.servers if "=" in spec)
    if len(servers) != len(args.servers) or not all(servers.values()):
        parser.error("give each server as NAME=VINE, every NAME once")
    paths = dict(spec.split("=", 1) for spec in args.path if "=" in spec)
    if len(paths) != len(args.path) or not set(paths) <= set(servers):
        parser.error("give --path as NAME=DIR for a NAME among the servers")
    root = args.forest or (DEFAULT_FOREST if DEFAULT_FOREST.exists() else ensure_forest(10000, 7))
    results = measure(servers, root.resolve(), args.rounds, args.sessions, args.seed, paths)
    sys.stdout.write(f"{root}, {args.sessions} sessions of {args.rounds} calls of each\n")
    sys.stdout.write(render(results) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
