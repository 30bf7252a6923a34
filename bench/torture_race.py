"""Many writers and readers at once, on the engine, the CLI and the Station: every write
is committed or answers E_LOCKED, none is lost, and a forest held open for writing
refuses the others at once."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.torture_crash import forest_faults, prepare_writes
from bench.torture_kit import BRANCH, REPO, git, http, serve_station
from monkeyllm import Vine

# An engine writer: a process with one Vine(lock="per-write") kept open, as a bot or a
# notebook keeps one, every third write through a Vine opened for it alone; every other
# write a graft of the hub every writer edits (its summary is carried to the branch's
# index, which every plant rewrites too). One JSON line per operation, with its time.
ENGINE_WRITER = """
import json, sys, time
from monkeyllm import Vine
from monkeyllm.errors import VineError
root, tag, until = sys.argv[1], sys.argv[2], float(sys.argv[3])
kept = Vine(root, lock="per-write")
j, planted, linked = 0, None, []
while time.time() < until:
    nid = f"torture/c{tag}-{j}"
    if j % 2:
        # Each writer keeps one link on the hub: the newest node it planted.
        link = [{"rel": "related-to", "target": planted}] if planted and j % 4 == 1 else []
        patch = {"set_frontmatter": {"summary": f"Node hub, last edited by {nid}."}}
        if link:
            patch.update(add_links=link, remove_links=linked)
        target, write = "torture/hub", lambda v: v.graft("torture/hub", patch)
    else:
        target, write = nid, lambda v: v.plant({
            "id": nid, "type": "note", "parent": "torture", "title": nid,
            "summary": f"Node {nid} written concurrently.", "body": "# T\\n\\n## Log\\n\\nx"})
    started = time.perf_counter()
    try:
        if j % 3 == 2:
            with Vine(root, lock="per-write") as vine:
                out = write(vine)
        else:
            out = write(kept)
    except VineError as exc:
        out = exc.envelope()
    ms = (time.perf_counter() - started) * 1000
    print(json.dumps({"op": "write", "id": target, "out": out, "ms": ms}), flush=True)
    if "error" in out:
        time.sleep(0.05)
    elif target == nid:
        planted = nid
    elif patch.get("add_links"):
        linked = patch["add_links"]
    j += 1
kept.close()
"""


# An engine reader: one read-only Vine, looking at every node it can list.
ENGINE_READER = """
import json, random, sys, time
from monkeyllm import Vine
root, until = sys.argv[1], float(sys.argv[2])
rnd = random.Random()
with Vine(root, writable=False) as vine:
    while time.time() < until:
        page = vine.scan("torture", fields=["id", "summary"], limit=50)
        print(json.dumps({"op": "scan", "out": {"error": page["error"]} if "error" in page
                          else {"n": len(page["nodes"])}}), flush=True)
        for node in rnd.sample(page.get("nodes", []), min(5, len(page.get("nodes", [])))):
            out = vine.look(node["id"])
            bad = "error" in out or out.get("summary") != node["summary"] and not \\
                out.get("summary", "").startswith("Node ")
            print(json.dumps({"op": "look", "id": node["id"],
                              "out": out if bad else {}}), flush=True)
        out = vine.locate("written concurrently", k=5)
        print(json.dumps({"op": "locate", "out": {"error": out["error"]} if "error" in out
                          else {}}), flush=True)
"""


# A script that holds the forest open for writing (a plain Vine(path), which holds the
# writer lock while open) for a while.
HOLDER = """
import sys, time
from monkeyllm import Vine
with Vine(sys.argv[1]) as vine:
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@dataclass
class ConcurrencyFigures:
    """What the concurrency family found (``surfaces``: the same counts per surface,
    engine, CLI and Station; ``held_*``: the writes made while a process held the forest
    open for writing, each of which must be refused at once, naming it)."""

    operations: int = 0
    writes: int = 0
    committed: int = 0
    locked: int = 0
    reads: int = 0
    failed: int = 0  # anything but a commit, E_LOCKED or a clean read
    lost: int = 0
    surfaces: dict[str, dict[str, int]] = field(default_factory=dict)
    latency: dict[str, list[float]] = field(default_factory=dict)
    locked_examples: list[str] = field(default_factory=list)
    held_writes: int = 0
    held_refused: int = 0  # E_LOCKED naming the holder, before any timeout
    held_slowest_ms: float = 0.0
    failures: list[str] = field(default_factory=list)

    def count(self, surface: str, what: str) -> None:
        row = self.surfaces.setdefault(
            surface, {"writes": 0, "committed": 0, "locked": 0, "reads": 0, "failed": 0}
        )
        row[what] += 1

    @property
    def locked_share(self) -> float:
        """E_LOCKED answers as a percentage of the writes that raced (not counting the
        writes made while a process held the forest open)."""
        return round(100 * self.locked / self.writes, 2) if self.writes else 0.0

    def median_ms(self, surface: str) -> float:
        """The median time of a write on ``surface`` (a CLI write includes its process)."""
        ms = sorted(self.latency.get(surface, []))
        return round(ms[len(ms) // 2], 1) if ms else 0.0


def _vine_command() -> list[str]:
    exe = Path(sys.executable).parent / "vine"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "monkeyllm.commands.app"]


@dataclass
class _Hold:
    """While set, writes are judged as made beside a process that holds the forest open
    (pid): each must answer E_LOCKED naming it, without waiting out the timeout."""

    pid: int = 0


def _judge_write(
    figures: ConcurrencyFigures,
    surface: str,
    out: Any,
    commits: list[tuple[str, str]],
    node_id: str,
    ms: float = 0.0,
    hold: _Hold | None = None,
) -> None:
    if hold is not None and hold.pid:
        _judge_held(figures, surface, out, node_id, ms, hold.pid)
        return
    figures.operations += 1
    figures.writes += 1
    figures.count(surface, "writes")
    figures.latency.setdefault(surface, []).append(ms)
    if isinstance(out, dict) and out.get("commit"):
        figures.committed += 1
        figures.count(surface, "committed")
        commits.append((out["commit"], node_id))
    elif isinstance(out, dict) and out.get("error", {}).get("code") == "E_LOCKED":
        figures.locked += 1
        figures.count(surface, "locked")
        if len(figures.locked_examples) < 5:
            figures.locked_examples.append(
                f"{surface} after {ms:.0f} ms: {out['error'].get('message', '')[:200]}"
            )
    else:
        figures.failed += 1
        figures.count(surface, "failed")
        figures.failures.append(f"{surface} write of {node_id}: {str(out)[:200]}")


def _judge_held(
    figures: ConcurrencyFigures, surface: str, out: Any, node_id: str, ms: float, pid: int
) -> None:
    from monkeyllm.lock import DEFAULT_TIMEOUT_S

    figures.operations += 1
    figures.held_writes += 1
    err = out.get("error", {}) if isinstance(out, dict) else {}
    # A CLI write's time includes starting its process; a refusal that waited the
    # timeout out would take at least that long on any surface.
    if (
        err.get("code") == "E_LOCKED"
        and f"pid {pid}" in err.get("message", "")
        and "per-write" in err.get("hint", "")
        and ms < DEFAULT_TIMEOUT_S * 1000
    ):
        figures.held_refused += 1
        figures.held_slowest_ms = max(figures.held_slowest_ms, round(ms, 1))
        return
    figures.failed += 1
    figures.failures.append(
        f"{surface} write of {node_id} beside a holder for life ({ms:.0f} ms): {str(out)[:200]}"
    )


def _judge_read(figures: ConcurrencyFigures, surface: str, what: str, out: Any) -> None:
    figures.operations += 1
    figures.reads += 1
    figures.count(surface, "reads")
    if not isinstance(out, dict) or "error" in out:
        figures.failed += 1
        figures.count(surface, "failed")
        figures.failures.append(f"{surface} {what}: {str(out)[:200]}")


def _vine_call(forest: Path, call: str, args: dict[str, Any]) -> Any:
    """``vine call CALL ARGS --json`` in a process of its own: the parsed answer, or a
    string saying why it could not be parsed (judged as a failure)."""
    done = subprocess.run(
        [*_vine_command(), "call", call, json.dumps(args), "--forest", str(forest), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        return json.loads(done.stdout)
    except ValueError:
        return f"exit {done.returncode}, unparsable: {done.stdout[:80]!r} {done.stderr[-200:]!r}"


def _concurrent_note(nid: str) -> dict[str, Any]:
    """The note a racing writer plants under BRANCH."""
    return {
        "id": nid,
        "type": "note",
        "parent": BRANCH,
        "title": nid,
        "summary": f"Node {nid} written concurrently.",
    }


def _writer(
    surface: str,
    tag: str,
    plant: Callable[[str], Any],
    until: float,
    figures: ConcurrencyFigures,
    commits: list[tuple[str, str]],
    guard: threading.Lock,
    hold: _Hold | None = None,
) -> None:
    """Plant note after note under BRANCH through ``plant(id)`` until ``until``, judging
    each write as made on ``surface``."""
    j = 0
    while time.time() < until:
        nid = f"{BRANCH}/{tag}-{j}"
        started = time.perf_counter()
        out = plant(nid)
        ms = (time.perf_counter() - started) * 1000
        with guard:
            _judge_write(figures, surface, out, commits, nid, ms, hold)
        j += 1


def _cli_writer(forest: Path, tag: str, *race: Any) -> None:
    def plant(nid: str) -> Any:
        return _vine_call(forest, "plant", {"node": _concurrent_note(nid)})

    _writer("cli", f"c{tag}", plant, *race)


def _cli_reader(
    forest: Path, until: float, figures: ConcurrencyFigures, guard: threading.Lock
) -> None:
    rnd = random.Random()
    while time.time() < until:
        page = _vine_call(forest, "scan", {"parent_id": BRANCH, "fields": ["id"], "limit": 50})
        with guard:
            _judge_read(figures, "cli", "scan", page)
        nodes = page.get("nodes", []) if isinstance(page, dict) else []
        if not nodes:
            continue
        node_id = rnd.choice(nodes)["id"]
        out = _vine_call(forest, "look", {"id": node_id})
        with guard:
            _judge_read(figures, "cli", f"look {node_id}", out)


def _station_writer(url: str, key: str, tag: str, *race: Any) -> None:
    import httpx

    with httpx.Client(timeout=120) as client:

        def plant(nid: str) -> Any:
            node = {**_concurrent_note(nid), "body": "# T\n\n## Log\n\nx"}
            return http(client, url, key, "plant", {"node": node})

        _writer("station", f"s{tag}", plant, *race)


def _station_reader(
    url: str, key: str, until: float, figures: ConcurrencyFigures, guard: threading.Lock
) -> None:
    import httpx

    rnd = random.Random()
    with httpx.Client(timeout=120) as client:
        while time.time() < until:
            page = http(
                client,
                url,
                key,
                "scan",
                {"parent_id": BRANCH, "fields": ["id", "summary"], "limit": 50},
            )
            with guard:
                _judge_read(figures, "station", "scan", page)
            nodes = page.get("nodes", []) if isinstance(page, dict) else []
            for node in rnd.sample(nodes, min(5, len(nodes))):
                out = http(client, url, key, "look", {"id": node["id"]})
                # A half-written node: unreadable, or a summary neither the listed one
                # nor one a writer writes.
                if (
                    isinstance(out, dict)
                    and "error" not in out
                    and out.get("summary") != node["summary"]
                    and not str(out.get("summary", "")).startswith("Node ")
                ):
                    out = {"error": f"half-written {node['id']}: {out.get('summary')!r}"}
                with guard:
                    _judge_read(figures, "station", f"look {node['id']}", out)
            out = http(client, url, key, "locate", {"query": "written concurrently", "k": 5})
            with guard:
                _judge_read(figures, "station", "locate", out)


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _race(
    forest: Path,
    until: float,
    plan: dict[str, tuple[int, int]],
    figures: ConcurrencyFigures,
    commits: list[tuple[str, str]],
    guard: threading.Lock,
    phase: str,
    station: tuple[str, str] | None = None,
    hold: _Hold | None = None,
) -> None:
    """One phase: ``plan`` maps each surface to (writers, readers), all running until
    ``until``; engine racers are processes, CLI and Station racers threads (the CLI's
    spawn a ``vine`` process per call)."""
    procs = []
    threads = []
    writers, readers = plan.get("engine", (0, 0))
    for n in range(writers):
        procs.append(_spawn(ENGINE_WRITER, str(forest), f"{phase}e{n}", str(until)))
    for _ in range(readers):
        procs.append(_spawn(ENGINE_READER, str(forest), str(until)))
    writers, readers = plan.get("cli", (0, 0))
    threads += [
        threading.Thread(
            target=_cli_writer, args=(forest, f"{phase}x{n}", until, figures, commits, guard, hold)
        )
        for n in range(writers)
    ]
    threads += [
        threading.Thread(target=_cli_reader, args=(forest, until, figures, guard))
        for _ in range(readers)
    ]
    writers, readers = plan.get("station", (0, 0))
    if station is not None:
        url, key = station
        threads += [
            threading.Thread(
                target=_station_writer,
                args=(url, key, f"{phase}{n}", until, figures, commits, guard, hold),
            )
            for n in range(writers)
        ]
        threads += [
            threading.Thread(target=_station_reader, args=(url, key, until, figures, guard))
            for _ in range(readers)
        ]
    for t in threads:
        t.start()
    left = max(0.0, until - time.time())
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=left + 300)
        if proc.returncode != 0:
            figures.failed += 1
            figures.failures.append(f"engine process exit {proc.returncode}: {stderr[-300:]}")
        for line in stdout.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                figures.failed += 1
                figures.failures.append(f"engine: unparsable line {line[:100]!r}")
                continue
            with guard:
                if record["op"] == "write":
                    _judge_write(
                        figures,
                        "engine",
                        record["out"],
                        commits,
                        record["id"],
                        record.get("ms", 0.0),
                        hold,
                    )
                else:
                    _judge_read(figures, "engine", record["op"], record["out"] or {})
    for t in threads:
        t.join(timeout=left + 300)


def _split(total: int, surfaces: int = 3) -> list[int]:
    """``total`` racers over the surfaces (Station first), as evenly as they go."""
    return [total // surfaces + (1 if i < total % surfaces else 0) for i in range(surfaces)]


def concurrency(
    forest: Path, seconds: float = 60.0, writers: int = 8, readers: int = 8, station: bool = True
) -> ConcurrencyFigures:
    """``writers`` writers and ``readers`` readers on ``forest`` for ``seconds``, through
    a long-lived server (the REST Station), the CLI and the engine, all at once. Every
    write must commit, or answer E_LOCKED (counted: what matters is how rarely); every
    read must answer; the final forest validates and holds every commit.

    The Station and the engine writers' kept Vines hold the writer lock only while they
    write (``lock="per-write"``), and a write that finds another in progress waits its
    turn, so writers on every surface commit one after the other. In the last sixth a
    script holds the forest open for writing (``Vine(path)``, the lock for its life):
    then every write, on every surface, must answer E_LOCKED naming it, at once, and
    none may commit."""
    prepare_writes(forest)
    figures = ConcurrencyFigures()
    commits: list[tuple[str, str]] = []
    guard = threading.Lock()
    held_for = max(2.0, seconds / 6)
    racing = max(1.0, seconds - held_for)
    sw, cw, ew = _split(writers) if station else (0, *_split(writers, 2))
    sr, cr, er = _split(readers) if station else (0, *_split(readers, 2))
    with serve_station(forest.parent) if station else contextlib.nullcontext() as served:
        _race(
            forest,
            time.time() + racing,
            {"station": (sw, sr), "cli": (cw, cr), "engine": (ew, er)},
            figures,
            commits,
            guard,
            "a",
            station=served,
        )
        holder = _spawn(HOLDER, str(forest), str(held_for + 1.0))
        try:
            assert holder.stdout is not None
            if holder.stdout.readline().strip() != "holding":
                raise RuntimeError(f"the holder did not start: {holder.communicate()[1]}")
            before = git(forest, "rev-parse", "HEAD").strip()
            _race(
                forest,
                time.time() + held_for - 0.5,
                {
                    "station": (max(1, sw // 2), 1) if station else (0, 0),
                    "cli": (1, 1),
                    "engine": (1, 1),
                },
                figures,
                commits,
                guard,
                "h",
                station=served,
                hold=_Hold(holder.pid),
            )
            if git(forest, "rev-parse", "HEAD").strip() != before:
                figures.failed += 1
                figures.failures.append(
                    "a write committed while a process held the forest open for writing"
                )
        finally:
            holder.communicate(timeout=60)
    history = set(git(forest, "rev-list", "HEAD").split())
    with Vine(forest, writable=False) as vine:
        for sha, node_id in commits:
            if sha not in history or "error" in vine.look(node_id):
                figures.lost += 1
                figures.failures.append(f"committed {node_id} ({sha[:10]}) is gone")
        problems = forest_faults(vine, forest)
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=forest, capture_output=True, text=True)
    if fsck.returncode != 0:
        problems.append(f"git fsck: {fsck.stderr[-300:]}")
    figures.failures += problems
    figures.failed += len(problems)
    return figures
