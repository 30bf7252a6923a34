"""A load run of the REST Station: 32 concurrent clients of mixed reads for 30 s while
one client writes every 100 ms; throughput, p50, p95 and p99 (overall and per call),
and errors by code.

    python -m bench.station_load                         # sample-brain, 32 clients, 30 s
    python -m bench.station_load --forest 10k --seconds 60 --json
    python -m bench.station_load --clients 8 --write-every 0.05

The Station runs in a process of its own (``vine station serve --root DIR --port P``,
the console script beside this interpreter) over a scratch git copy of the forest (the
sample forest, or the synthetic 10k forest of ``bench.generate``); the clients run in
this process on one asyncio loop, each closed-loop: it sends its next request when the
last one answered. Each client speaks HTTP/1.1 by hand on a keep-alive connection of
its own (``--client raw``, the default), because ``httpx.AsyncClient`` (``--client
httpx``) costs the measuring process more CPU per request than the Station spends
serving it, on the same two cores. Reads are drawn from the forest's own catalog
(locate, look, move, pick, scan, sniff, harvest, and query on a dataset); the writer
alternates a plant of a new note and a graft of one it planted.

Errors: any 5xx, any read that does not answer 200, any transport failure (a refused
connection, a timeout) and any write that answers neither a commit nor ``E_LOCKED``;
a write answering ``E_LOCKED`` is counted apart. Every commit a write answered must be
in the forest's history at the end. Target: 0 errors, p99 < 250 ms.

The machine running the clients also runs the server, so the clients' own CPU (the
event loop, JSON and HTTP parsing) competes with the Station for the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monkeyllm import Vine

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-brain"
BUNDLE = REPO / "tests" / "sample_data" / "sample-brain.bundle"
FOREST = "load"
BRANCH = "station-load"
TARGET_P99_MS = 250.0
READS = ("locate", "look", "move", "pick", "scan", "sniff", "harvest", "query")
# How often each read is drawn (a plausible agent session: many cheap lookups, some
# searches, fewer sweeps).
WEIGHTS = {
    "locate": 20,
    "look": 25,
    "move": 10,
    "pick": 12,
    "scan": 10,
    "sniff": 8,
    "harvest": 5,
    "query": 10,
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _vine_command() -> list[str]:
    exe = Path(sys.executable).parent / "vine"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "monkeyllm.commands"]


def copy_forest(kind: str, dest: Path) -> Path:
    """A git-backed scratch copy of the forest at ``dest``."""
    if kind == "sample":
        subprocess.run(
            ["git", "clone", "-q", str(BUNDLE), str(dest)], check=True, capture_output=True
        )
        for payload in SAMPLE.rglob("*.db"):
            if "_derived" not in payload.parts:
                shutil.copy2(payload, dest / payload.relative_to(SAMPLE))
        return dest
    from .run import ensure_forest

    source = ensure_forest(10000, 7, git=True)
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".vine.lock"))
    return dest


@dataclass
class Plan:
    """The arguments the clients draw from, taken from the forest's own catalog."""

    leaves: list[str]
    small: list[str]
    branches: list[str]
    queries: list[str]
    terms: list[list[str]]
    datasets: list[tuple[str, str]]  # (id, a table)

    @classmethod
    def of(cls, forest: Path, seed: int) -> Plan:
        from .run import Workload

        with Vine(forest) as vine:  # writable: builds the catalog and plants the branch
            if "error" in vine.look(f"{BRANCH}/_index"):
                out = vine.plant(
                    {
                        "id": BRANCH,
                        "type": "branch",
                        "parent": "_index",
                        "title": "Station load",
                        "summary": "Notes planted by the Station load run.",
                    }
                )
                if "error" in out:
                    raise SystemExit(f"cannot prepare the forest: {out['error']}")
            work = Workload(vine, seed)
            terms = work.sniff_terms(min(40, len(work.small)))
            datasets = []
            for ds in work.datasets[:50]:
                tables = (vine.look(ds).get("query_manual") or {}).get("tables") or {}
                if tables:
                    datasets.append((ds, sorted(tables)[0]))
        return cls(
            leaves=work.leaves,
            small=work.small or work.leaves,
            branches=work.branches,
            queries=work.queries,
            terms=terms,
            datasets=datasets,
        )

    def draw(self, rng: random.Random) -> tuple[str, dict[str, Any]]:
        name = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        if name == "query" and not self.datasets or name == "sniff" and not self.terms:
            name = "look"
        if name == "locate":
            return name, {"query": rng.choice(self.queries), "k": 5}
        if name == "look":
            return name, {"id": rng.choice(self.leaves)}
        if name == "move":
            return name, {"id": rng.choice(self.leaves), "direction": "both"}
        if name == "pick":
            return name, {"id": rng.choice(self.small)}
        if name == "scan":
            return name, (
                {"parent_id": rng.choice(self.branches)}
                if rng.random() < 0.7
                else {"parent_id": rng.choice(self.branches), "recursive": True, "limit": 20}
            )
        if name == "sniff":
            return name, {"terms": rng.choice(self.terms), "k": 5}
        if name == "harvest":
            return name, {"query": rng.choice(self.queries), "k": 3}
        ds, table = rng.choice(self.datasets)
        sql = rng.choice([f"SELECT COUNT(*) FROM {table}", f"SELECT * FROM {table} LIMIT 5"])
        return "query", {"id": ds, "sql": sql}


@dataclass
class Tally:
    """Everything the clients saw."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    locked: int = 0
    committed: int = 0
    writes: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, call: str, ms: float) -> None:
        self.samples.setdefault(call, []).append(ms)

    def error(self, key: str, what: str) -> None:
        self.errors[key] += 1
        if len(self.examples) < 10:
            self.examples.append(what[:300])


class RawConnection:
    """One keep-alive HTTP/1.1 connection spoken by hand over asyncio streams: a client
    that costs the measuring process a small fraction of what ``httpx`` does, so the
    clients take less of the machine's CPU away from the Station."""

    def __init__(self, url: str, key: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port, self.key = host, int(port), key
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def call(self, name: str, args: dict[str, Any]) -> tuple[int, Any]:
        body = json.dumps(args).encode()
        head = (
            f"POST /v1/forests/{FOREST}/{name} HTTP/1.1\r\n"
            f"Host: {self.host}:{self.port}\r\nAuthorization: Bearer {self.key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        try:
            writer.write(head.encode() + body)
            await writer.drain()
            status = int((await reader.readline()).split(b" ", 2)[1])
            length, close = None, False
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name_, _, value = line.decode("latin-1").partition(":")
                if name_.lower() == "content-length":
                    length = int(value)
                elif name_.lower() == "connection" and value.strip().lower() == "close":
                    close = True
            if length is None:
                raise ConnectionError("a response without Content-Length")
            data = await reader.readexactly(length)
        except BaseException:
            await self.close()
            raise
        if close:
            await self.close()
        return status, json.loads(data)

    async def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


class HttpxClient:
    """The same calls through one shared ``httpx.AsyncClient`` (``--client httpx``)."""

    def __init__(self, client: Any, key: str) -> None:
        self.client, self.key = client, key

    async def call(self, name: str, args: dict[str, Any]) -> tuple[int, Any]:
        got = await self.client.post(
            f"/v1/forests/{FOREST}/{name}",
            json=args,
            headers={"Authorization": f"Bearer {self.key}"},
        )
        return got.status_code, got.json()

    async def close(self) -> None:
        return None


async def _send(
    client: Any, call: str, args: dict[str, Any], tally: Tally
) -> tuple[int, dict[str, Any] | None]:
    started = time.perf_counter()
    try:
        status, body = await asyncio.wait_for(client.call(call, args), 60)
    except Exception as exc:  # noqa: BLE001 - a transport failure is an error, counted
        tally.add(call, (time.perf_counter() - started) * 1000)
        tally.error(f"transport {type(exc).__name__}", f"{call} {args}: {exc!r}")
        return 0, None
    tally.add(call, (time.perf_counter() - started) * 1000)
    return status, body


async def _reader(client: Any, plan: Plan, seed: int, until: float, tally: Tally) -> None:
    rng = random.Random(seed)
    while time.monotonic() < until:
        call, args = plan.draw(rng)
        status, body = await _send(client, call, args, tally)
        if status == 0:
            continue
        if status != 200:
            code = (body or {}).get("error", {}).get("code", "?")
            tally.error(
                f"{status} {code}", f"{call} {json.dumps(args)[:150]}: {json.dumps(body)[:200]}"
            )


async def _writer(client: Any, every: float, until: float, tally: Tally) -> None:
    planted: list[str] = []
    n = 0
    next_at = time.monotonic()
    while time.monotonic() < until:
        if planted and n % 2:
            nid = planted[n // 2 % len(planted)]
            call, args = (
                "graft",
                {
                    "id": nid,
                    "patch": {"set_frontmatter": {"summary": f"Node {nid}, revised at write {n}."}},
                },
            )
        else:
            nid = f"{BRANCH}/w{n}"
            call, args = (
                "plant",
                {
                    "node": {
                        "id": nid,
                        "type": "note",
                        "parent": BRANCH,
                        "title": f"Load note {n}",
                        "summary": f"Planted by the Station load run, write {n}.",
                        "body": f"# Load note {n}\n\n## Log\n\nPlanted under load.\n",
                    }
                },
            )
        tally.writes += 1
        status, body = await _send(client, call, args, tally)
        if status and isinstance(body, dict) and body.get("commit"):
            tally.committed += 1
            if call == "plant":
                planted.append(nid)
        elif status and (body or {}).get("error", {}).get("code") == "E_LOCKED":
            tally.locked += 1
        elif status:
            code = (body or {}).get("error", {}).get("code", "?")
            tally.error(f"{status} {code}", f"{call} {nid}: {json.dumps(body)[:200]}")
        n += 1
        # Every ``every`` seconds; a write slower than that is followed at once by the
        # next (never a burst to catch up).
        next_at = max(next_at + every, time.monotonic())
        await asyncio.sleep(next_at - time.monotonic())


async def _load(
    url: str,
    key: str,
    plan: Plan,
    clients: int,
    seconds: float,
    every: float,
    seed: int,
    warmup: float,
    kind: str = "raw",
) -> tuple[Tally, float, int]:
    import httpx

    # Idle connections are dropped by the client before uvicorn's 5 s keep-alive closes
    # them, so a request never races the server closing its connection.
    limits = httpx.Limits(
        max_connections=clients + 8, max_keepalive_connections=clients + 8, keepalive_expiry=2.0
    )
    async with httpx.AsyncClient(base_url=url, timeout=30.0, limits=limits) as shared:

        def client() -> Any:  # raw: one connection per client, as separate clients
            return RawConnection(url, key) if kind == "raw" else HttpxClient(shared, key)

        made = [client() for _ in range(clients + 1)]
        spare = Tally()
        if warmup > 0:  # page cache, imports and each call's first use, untimed
            until = time.monotonic() + warmup
            await asyncio.gather(
                *(
                    _reader(made[n], plan, seed + 1000 + n, until, spare)
                    for n in range(min(clients, 8))
                )
            )
        tally = Tally()
        started = time.monotonic()
        until = started + seconds
        await asyncio.gather(
            _writer(made[-1], every, until, tally),
            *(_reader(made[n], plan, seed + n, until, tally) for n in range(clients)),
        )
        took = time.monotonic() - started
        for one in made:
            await one.close()
        return tally, took, sum(len(v) for v in spare.samples.values())


def percentile(ordered: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) of sorted samples, nearest rank."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50": round(percentile(ordered, 0.50), 2),
        "p95": round(percentile(ordered, 0.95), 2),
        "p99": round(percentile(ordered, 0.99), 2),
        "max": round(ordered[-1], 2) if ordered else 0.0,
    }


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds a process has used so far (Linux; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def station(root: Path, log: Path) -> Iterator[tuple[str, int]]:
    """``vine station serve`` over ``root`` in a process of its own: its base URL and
    process id."""
    import httpx

    port = _free_port()
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [*_vine_command(), "station", "serve", "--root", str(root), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the Station exited: {log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("the Station did not start within 60 s")
            time.sleep(0.1)
        yield url, proc.pid
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _commits(forest: Path) -> int:
    done = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"],
        cwd=forest,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def measure(
    kind: str,
    clients: int,
    seconds: float,
    every: float,
    seed: int = 7,
    warmup: float = 3.0,
    client: str = "raw",
) -> dict[str, Any]:
    """One load run; the figures as a dict."""
    from monkeyllm.serve.station import keys
    from monkeyllm.serve.station.store import Store

    with tempfile.TemporaryDirectory(prefix="station-load-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        forest = copy_forest(kind, root / FOREST)
        plan = Plan.of(forest, seed)
        with Store(root) as store:
            key = keys.add(store, "load", FOREST, [], [], keys.parse_caps("read,query,write,tend"))[
                1
            ]
        log = Path(tmp) / "station.log"
        commits_before = _commits(forest)
        with station(root, log) as (url, pid):
            server_cpu, client_cpu = cpu_seconds(pid), time.process_time()
            tally, took, warm = asyncio.run(
                _load(url, key, plan, clients, seconds, every, seed, warmup, client)
            )
            server_cpu = cpu_seconds(pid) - server_cpu
            client_cpu = time.process_time() - client_cpu
        added = _commits(forest) - commits_before
        server_log = log.read_text(errors="replace")[-2000:]
    every_sample = [ms for samples in tally.samples.values() for ms in samples]
    requests = len(every_sample)
    reads = sum(len(v) for k, v in tally.samples.items() if k in READS)
    return {
        "forest": kind,
        "clients": clients,
        "client": client,
        "seconds": round(took, 1),
        "write every s": every,
        "requests": requests,
        "reads": reads,
        "throughput req/s": round(requests / took, 1) if took else 0.0,
        # CPU per request over the warm-up and the timed run together.
        "server cpu ms/request": round(server_cpu * 1000 / max(1, requests + warm), 2),
        "client cpu ms/request": round(client_cpu * 1000 / max(1, requests + warm), 2),
        "overall": _stats(every_sample),
        "reads only": _stats([ms for k, v in tally.samples.items() if k in READS for ms in v]),
        "per call": {k: _stats(v) for k, v in sorted(tally.samples.items())},
        "errors": sum(tally.errors.values()),
        "errors by code": dict(tally.errors),
        "writes": tally.writes,
        "writes committed": tally.committed,
        "writes E_LOCKED": tally.locked,
        "commits added to history": added,
        "commits missing": max(0, tally.committed - added),
        "examples": tally.examples,
        "server stderr": server_log if tally.errors else "",
        "target met": not tally.errors
        and tally.committed == added
        and _stats(every_sample)["p99"] < TARGET_P99_MS,
    }


def render(fig: dict[str, Any]) -> str:
    lines = [
        f"{fig['forest']} forest, {fig['clients']} readers + 1 writer ({fig['client']}) "
        f"(every {fig['write every s'] * 1000:.0f} ms), {fig['seconds']} s",
        f"requests {fig['requests']}  throughput {fig['throughput req/s']} req/s  "
        f"errors {fig['errors']}  writes {fig['writes']} (committed "
        f"{fig['writes committed']}, E_LOCKED {fig['writes E_LOCKED']}, missing "
        f"from history {fig['commits missing']})",
        f"CPU per request: server {fig['server cpu ms/request']} ms, clients "
        f"{fig['client cpu ms/request']} ms",
        "",
        "| call | n | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|",
    ]
    rows = {"overall": fig["overall"], "reads only": fig["reads only"], **fig["per call"]}
    for name, s in rows.items():
        lines.append(f"| {name} | {s['n']} | {s['p50']} | {s['p95']} | {s['p99']} | {s['max']} |")
    if fig["errors by code"]:
        lines.append(
            "errors: " + ", ".join(f"{k} {v}" for k, v in sorted(fig["errors by code"].items()))
        )
        lines += ["  " + e for e in fig["examples"]]
    lines.append(
        f"target (0 errors, p99 < {TARGET_P99_MS:.0f} ms): "
        + ("met" if fig["target met"] else "NOT met")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.station_load", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--forest", choices=("sample", "10k"), default="sample")
    parser.add_argument(
        "--write-every",
        type=float,
        default=0.1,
        help="seconds between the writer's writes (default 0.1)",
    )
    parser.add_argument(
        "--warmup", type=float, default=3.0, help="untimed seconds of reads first (default 3)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--client",
        choices=("raw", "httpx"),
        default="raw",
        help="raw: one hand-spoken keep-alive HTTP/1.1 connection per "
        "client (cheap); httpx: one shared httpx.AsyncClient",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    fig = measure(
        args.forest,
        args.clients,
        args.seconds,
        args.write_every,
        args.seed,
        args.warmup,
        args.client,
    )
    sys.stdout.write((json.dumps(fig, indent=2) if args.json else render(fig)) + "\n")
    return 0 if fig["errors"] == 0 and fig["commits missing"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
