"""The scale table: every figure of the 100,000-node targets, measured on one forest.

Run from the repository root (it takes minutes on a 100k forest; it is not part of
``.ci/run``)::

    python -m bench.scale                          # 100k nodes (generated once, with git)
    python -m bench.scale --nodes 10000 --nodes 100000   # both, side by side, with ratios
    python -m bench.scale --nodes 100000 --json
    python -m bench.scale --only look --only writes     # some figures (after the build)

For each size it generates ``bench/out/forest-N-s7-git`` once (``bench.generate --git``),
copies it to a scratch folder (the writes below commit there) and measures, in order:

- the cold catalog build, in a process of its own: wall time, CPU time (user + system)
  and peak memory (max RSS) of that process, and of the worker processes that parse
  files for it (the largest of them);
- opening the built catalog in a fresh process (import, ``Vine(writable=False)``,
  close), and the whole process beside ``python -c pass``;
- per-call medians and p95 on one warm ``Vine``: ``locate`` (title words, which share
  the generator's common words), ``look``, ``move``, ``pick``, ``scan`` recursive at the
  root with a type filter; ``harvest`` on questions drawn from the forest's leaves;
- ``sniff`` with three words of a random body on first use: a fresh ``Vine`` per query,
  while a keeper (``vine watch``) keeps the catalog fresh, so its first sync asks the
  keeper; and the first call of a fresh ``Vine`` without a keeper, which walks the files
  first (what every new process pays on its own);
- ``vine look ID`` from a shell, whole processes, with a keeper and without;
- noticing 1,000 node files changed by ``git pull`` (a fast-forward to a commit that
  edits them): the next call of a ``Vine`` that was open (inotify), and of a new one
  (a walk);
- ``plant``, ``graft`` and ``tend``, each with its commit; then again with git's split
  index turned on (``git config core.splitIndex true``), which large forests use;
- the size of ``_derived/`` against the markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.run import (
    OUT,
    Workload,
    check,
    ensure_forest,
    folder_bytes,
    read_plans,
    summary,
    time_plans,
    time_writes,
    timed,
    write_calls,
)
from bench.startup import ENV, WALKING, a_leaf, vine_command, wall

# The targets on the 100k forest (ms unless said): (target, how it compares).
TARGETS: dict[str, float] = {
    "cold catalog build (s)": 25.0,
    "cold build peak memory (MB)": 400.0,
    "open of a built catalog, fresh process (ms)": 150.0,
    "notice 1,000 files changed by git pull, open Vine (ms)": 3000.0,
    "notice 1,000 files changed by git pull, new Vine (ms)": 3000.0,
    "locate": 4.0,
    "locate p95": 15.0,
    "look": 1.0,
    "move": 1.0,
    "pick": 1.0,
    "scan, recursive at the root with a filter": 10.0,
    "sniff, 3 terms, first use (keeper)": 40.0,
    "harvest, keywords": 100.0,
    "harvest, question": 100.0,
    "plant": 20.0,
    "graft": 20.0,
    "tend": 20.0,
    "plant, split index": 20.0,
    "graft, split index": 20.0,
    "tend, split index": 20.0,
    "vine look ID, keeper running": 120.0,
    "vine look ID, no keeper": 400.0,
    "_derived / markdown": 1.0,
}
BUILD = """\
import json, os, resource, sys, time
t0 = time.perf_counter()
from monkeyllm import Vine
vine = Vine(sys.argv[1], writable=False)
vine.close()
usage = resource.getrusage(resource.RUSAGE_SELF)
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
from monkeyllm.bulkbuild import BulkBuilder
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024,
                  "workers_cpu": workers.ru_utime + workers.ru_stime,
                  "workers_rss_mb": workers.ru_maxrss / 1024, "phases": BulkBuilder.last}))
"""
# The build's phases, as BulkBuilder.last names them.
PHASES = {
    "files": "parsing and inserting the files",
    "... inserting": "inserting",
    "indexes": "secondary indexes",
    "... merging and counting the first part early": "... of which merging its first part early",
    "merge": "merging the body index",
    "part": "waiting for and copying the worker's part of it",
    "vocabulary": "vocabularies",
    "commit": "commit",
    "checkpoint": "checkpoint",
}
OPEN = """\
import json, sys, time
t0 = time.perf_counter()
from monkeyllm import Vine
t1 = time.perf_counter()
vine = Vine(sys.argv[1], writable=False)
t2 = time.perf_counter()
vine.close()
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "close": time.perf_counter() - t2}))
"""


def scratch_copy(source: Path, nodes: int) -> Path:
    """A scratch copy of the git-backed forest, without its derived state."""
    dest = OUT / f"scale-{nodes}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(
        source, dest, symlinks=True, ignore=shutil.ignore_patterns("_derived", ".vine.lock")
    )
    # No background `git gc` started by the git commands below may run beside a figure.
    git(dest, "config", "gc.auto", "0")
    # The copy's gigabyte or so of dirty pages is written out now, not by the kernel
    # during the cold build that follows (which it slowed by a third).
    os.sync()
    return dest


def python(code: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; its last output line, as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        check=True,
        capture_output=True,
        text=True,
        env=env or WALKING,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def cold_build(root: Path) -> dict[str, Any]:
    """The catalog built from nothing, in a process of its own."""
    shutil.rmtree(root / "_derived", ignore_errors=True)
    out = python(BUILD, str(root))
    return {
        "cold catalog build (s)": round(out["wall"], 2),
        "cold build CPU (s)": round(out["cpu"], 2),
        "... CPU of its parsing workers (s)": round(out["workers_cpu"], 2),
        **{f"... {PHASES[k]} (s)": v for k, v in out["phases"].items() if k in PHASES},
        "cold build peak memory (MB)": round(out["rss_mb"], 1),
        "... peak memory of the largest worker (MB)": round(out["workers_rss_mb"], 1),
    }


def open_built(root: Path, runs: int) -> dict[str, Any]:
    """A fresh process importing the engine and opening the built catalog."""
    inside, whole, bare = [], [], []
    python(OPEN, str(root))
    for _ in range(runs):
        bare.append(timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))[0])
        ms, out = timed(lambda: python(OPEN, str(root)))
        whole.append(ms)
        inside.append((out["import"] + out["open"] + out["close"]) * 1000)
    return {
        "open of a built catalog, fresh process (ms)": round(statistics.median(whole), 1),
        "... import, open and close inside it (ms)": round(statistics.median(inside), 1),
        "... python -c pass (ms)": round(statistics.median(bare), 1),
    }


def calls(root: Path, rounds: int, seed: int) -> dict[str, Any]:
    """Warm per-call figures on one Vine (heat off, so no call's ranking depends on the
    calls before it)."""
    from bench.quality import synthetic_questions
    from monkeyllm import Vine

    out: dict[str, Any] = {}
    with Vine(root, writable=False, alpha=0) as vine:
        for _ in range(2):  # the walks: the second starts inotify
            vine.look("_index")
        work = Workload(vine, seed)
        plans = read_plans(vine, work)
        plans["scan, recursive at the root with a filter"] = plans.pop("filtered")
        out.update(time_plans(plans, rounds))
        questions = synthetic_questions(vine, seed, max(10, rounds // 4))
        for style in ("keywords", "question"):
            vine.harvest(questions[0][style], k=3)
            samples = []
            for q in questions:
                ms, result = timed(lambda q=q, s=style: vine.harvest(q[s], k=3))
                check(result, "harvest")
                samples.append(ms)
            out[f"harvest, {style}"] = summary(samples)
        out["sniff terms"] = work.sniff_terms(max(8, min(25, rounds // 3)))
    return out


@contextmanager
def keeper(root: Path) -> Iterator[bool]:
    """``vine watch`` on the forest for the block (False where there is none)."""
    from monkeyllm import keeper as keepers

    vine = vine_command()
    proc = subprocess.Popen(
        [*vine, "watch", "-f", str(root), "--idle", "600", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 300
        while not keepers.ask(root) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        yield keepers.ask(root)
    finally:
        subprocess.run([*vine, "watch", "--stop", "--quiet", "-f", str(root)], env=ENV)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def sniff_first_use(root: Path, queries: list[list[str]]) -> dict[str, Any]:
    """sniff on a fresh Vine per query: with a keeper (the first sync asks it), and the
    first call of a fresh Vine without one (which walks the files first)."""
    from monkeyllm import Vine

    out: dict[str, Any] = {}
    with keeper(root) as up:
        if up:
            samples = []
            for terms in queries:
                with Vine(root, writable=False, alpha=0) as fresh:
                    ms, result = timed(lambda t=terms, v=fresh: v.sniff(t, k=5))
                    check(result, "sniff")
                    if fresh._forest.catalog.last_sync != "keeper":
                        raise SystemExit("the keeper did not answer the sniff's sync")
                    samples.append(ms)
            out["sniff, 3 terms, first use (keeper)"] = summary(samples)
    samples = []
    for terms in queries[: max(3, len(queries) // 3)]:
        with Vine(root, writable=False, alpha=0) as fresh:
            ms, result = timed(lambda t=terms, v=fresh: v.sniff(t, k=5))
            check(result, "sniff")
            samples.append(ms)
    out["sniff, 3 terms, first call of a new Vine (walk)"] = summary(samples)
    return out


def shell_look(root: Path, runs: int) -> dict[str, Any]:
    """``vine look ID`` as a shell loop runs it: with a keeper, and walking."""
    leaf = a_leaf(root)
    look = [*vine_command(), "look", leaf, "-f", str(root)]
    out = {"vine look ID, no keeper": wall(look, runs)}
    with keeper(root) as up:
        if up:
            out["vine look ID, keeper running"] = wall(look, runs, ENV)
    out["... python -c pass, as a process"] = wall([sys.executable, "-c", "pass"], runs)
    return out


def git(root: Path, *args: str) -> str:
    """A git command in ``root`` (a fixed identity; no hooks, no prompts)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
        "GIT_TERMINAL_PROMPT": "0",
    }
    return subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout


def notice_pull(root: Path, files: int, seed: int) -> dict[str, Any]:
    """1,000 node files changed by ``git pull``: a clone commits an edit of each, the
    forest pulls it (a fast-forward), and the next call must see every edit."""
    from monkeyllm import Vine

    upstream = root.parent / (root.name + "-upstream")
    shutil.rmtree(upstream, ignore_errors=True)
    git(root.parent, "clone", "-q", "--no-hardlinks", str(root), str(upstream))
    git(upstream, "config", "gc.auto", "0")
    tracked = [
        p
        for p in git(upstream, "ls-files", "*.md").split("\n")
        if p and not p.startswith("_meta/") and not p.endswith("_index.md")
    ]
    chosen = random.Random(seed).sample(tracked, files)
    stamp = "2031-03-04"
    for path in chosen:
        file = upstream / path
        text = file.read_text(encoding="utf-8")
        file.write_text(
            re.sub(r"(?m)^updated: .*$", f"updated: '{stamp}'", text, count=1), encoding="utf-8"
        )
    git(upstream, "commit", "-q", "-a", "--no-verify", "-m", f"edit {files} nodes")
    first = chosen[0][:-3]
    out: dict[str, Any] = {}
    with Vine(root, writable=False, alpha=0) as vine:
        for _ in range(2):
            vine.look("_index")
        git(root, "pull", "-q", "--ff-only", str(upstream), "HEAD")
        ms, result = timed(lambda: vine.look(first, fields=["updated"]))
        if result.get("updated") != stamp:
            raise SystemExit(f"the pulled edit of {first} was not seen: {result}")
        out["notice 1,000 files changed by git pull, open Vine (ms)"] = round(ms, 1)
        out["... how"] = vine._forest.catalog.last_sync
    git(root, "reset", "-q", "--hard", "HEAD~1")
    # The same pull again, seen by a process that opens the forest after it (a walk).
    with Vine(root, writable=False, alpha=0) as vine:
        vine.look("_index")
    git(root, "pull", "-q", "--ff-only", str(upstream), "HEAD")
    with Vine(root, writable=False, alpha=0) as vine:
        ms, result = timed(lambda: vine.look(first, fields=["updated"]))
        if result.get("updated") != stamp:
            raise SystemExit(f"the pulled edit of {first} was not seen by a new Vine")
        out["notice 1,000 files changed by git pull, new Vine (ms)"] = round(ms, 1)
    shutil.rmtree(upstream, ignore_errors=True)
    return out


def writes(root: Path, rounds: int, seed: int) -> dict[str, Any]:
    """plant, graft (a summary, carried to the parent index) and tend, with commits;
    then the same with git's split index."""
    from monkeyllm import Vine

    rng = random.Random(seed)
    out: dict[str, Any] = {}
    with Vine(root) as vine:
        plant, graft, tend = write_calls(vine, rng, "scale", "scale benchmark")
        calls = {"plant": plant, "graft": graft, "tend": tend}
        out.update(time_writes(calls, rounds, warm=10_000))
    git(root, "config", "core.splitIndex", "true")
    git(root, "update-index", "--split-index")
    with Vine(root) as vine:
        plant, graft, tend = write_calls(vine, rng, "split", "scale benchmark")
        calls = {"plant, split index": plant, "graft, split index": graft}
        calls["tend, split index"] = tend
        out.update(time_writes(calls, rounds, warm=10_000))
    return out


def generated(nodes: int, seed: int) -> Path:
    """The git-backed synthetic forest, generated once (what the generator prints goes
    to standard error, so that ``--json`` prints JSON alone)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        return ensure_forest(nodes, seed, git=True)
    finally:
        os.dup2(saved, 1)
        os.close(saved)


# Groups of figures, for --only (the cold build always runs: the others need its catalog).
GROUPS = ("build", "open", "calls", "sniff", "look", "pull", "writes", "size")


def measure(
    nodes: int, rounds: int, seed: int, only: frozenset[str] = frozenset(GROUPS)
) -> dict[str, Any]:
    """Every figure for one forest size (or the groups in ``only``)."""
    source = generated(nodes, seed)
    root = scratch_copy(source, nodes)
    load = os.getloadavg()
    figures: dict[str, Any] = {"nodes": nodes, "forest": str(root)}
    built = cold_build(root)
    if "build" in only:
        figures.update(built)
    if "open" in only:
        figures.update(open_built(root, max(5, rounds // 4)))
    if only & {"calls", "sniff"}:
        per_call = calls(root, rounds, seed)
        queries = per_call.pop("sniff terms")
        if "calls" in only:
            figures.update(per_call)
        if "sniff" in only:
            figures.update(sniff_first_use(root, queries))
    if "look" in only:
        figures.update(shell_look(root, max(5, rounds // 4)))
    if "pull" in only:
        figures.update(notice_pull(root, 1000 if nodes >= 5000 else nodes // 5, seed))
    if "writes" in only:
        figures.update(writes(root, max(10, rounds // 2), seed))
    if "size" in only:
        markdown = folder_bytes(root, ".md", skip="_derived")
        derived = folder_bytes(root / "_derived")
        figures["markdown (MB)"] = round(markdown / 1e6, 1)
        figures["_derived (MB)"] = round(derived / 1e6, 1)
        figures["_derived / markdown"] = round(derived / markdown, 3)
    figures["load average (start / end)"] = [round(load[0], 2), round(os.getloadavg()[0], 2)]
    figures["peak memory of this process (MB)"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
    )
    shutil.rmtree(root, ignore_errors=True)
    return figures


def value(figure: Any, p95: bool = False) -> float | None:
    """A figure's number: a median (or p95) of a summary, else the number itself."""
    if isinstance(figure, dict):
        return figure.get("p95" if p95 else "median")
    return figure if isinstance(figure, int | float) else None


def rows(figures: dict[str, Any]) -> Iterator[tuple[str, float | None, float | None]]:
    """(name, value, target) in print order, a p95 row after each summary."""
    for name, figure in figures.items():
        if name in ("nodes", "forest") or isinstance(figure, list | str):
            continue
        yield name, value(figure), TARGETS.get(name)
        if isinstance(figure, dict):
            yield f"{name} p95", value(figure, p95=True), TARGETS.get(f"{name} p95")


def render(runs: list[dict[str, Any]]) -> str:
    """One table: a column per forest size, the growth ratio, the target at the largest."""
    header = f"{'figure':56}" + "".join(f"{r['nodes']:>12,}" for r in runs)
    if len(runs) > 1:
        header += f"{'ratio':>9}"
    lines = [header + f"{'target':>10}  met"]
    names = [name for name, _, _ in rows(runs[-1])]
    tables = [{name: v for name, v, _ in rows(r)} for r in runs]
    for name in names:
        cells = [t.get(name) for t in tables]
        line = f"{name:56}" + "".join(
            f"{'':>12}" if c is None else f"{c:>12,.{3 if abs(c) < 10 else 1}f}" for c in cells
        )
        if len(runs) > 1:
            first, last = cells[0], cells[-1]
            line += f"{last / first:>9.2f}" if first and last is not None else f"{'':>9}"
        target = TARGETS.get(name)
        if target is not None and cells[-1] is not None:
            line += f"{target:>10g}  {'yes' if cells[-1] <= target else 'NO'}"
        lines.append(line)
    for r in runs:
        lines.append(f"{r['nodes']:,} nodes: load average {r['load average (start / end)']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m bench.scale``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--nodes",
        type=int,
        action="append",
        help="forest size (repeat for a side-by-side table); 100000 by default",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=40, help="calls per figure")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--only",
        action="append",
        choices=GROUPS,
        help="measure only these groups of figures (repeatable; the cold build runs anyway)",
    )
    args = parser.parse_args(argv)
    only = frozenset(args.only or GROUPS)
    runs = [measure(n, args.rounds, args.seed, only) for n in (args.nodes or [100_000])]
    print(json.dumps(runs, indent=2) if args.json else render(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
