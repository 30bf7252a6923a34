"""Reliability under hostile input, crashes and races, with figures.

Run from the repository root::

    python -m bench.torture                 # every family, each on a scratch copy of sample-brain
    python -m bench.torture --kills 200 --seconds 60 --json

The families:

- **Crashes inside writes**: an exception at every named step of every kind of write
  (plant of a note, a branch and a dataset; each graft operation; tend; transplant and
  prune of a note and of a dataset, whose payload moves), then ``--kills``
  SIGKILLs of a writer process looping over the same mix at random moments. After each,
  the forest is reopened for writing (recovery runs) and must have a clean working tree,
  no ``validate`` error, a catalog that agrees with the files, and every commit a write
  answered in git history.
- **Damaged derived state**: ``_derived/catalog.db`` truncated, emptied, deleted, with its
  header overwritten or its pages scrambled, and a ``.vine.lock`` of a dead process: each
  repaired on open, every node reading as before and heat kept.
- **Writers and readers racing**: 8 writers and 8 readers for ``--seconds`` through a
  long-lived server (the REST Station), the CLI and the engine (processes that keep a
  ``Vine(lock="per-write")`` open, or open one per write), all at once: the Station and
  the engine's Vines take the writer lock for each write alone, and a write that finds
  another in progress waits its turn. Every write commits or answers ``E_LOCKED``
  (reported as a share of the writes), every read answers and never sees a half-written
  node, the final forest validates, ``git fsck`` is clean and every commit is there. In
  the last sixth a script holds the forest open for writing (``Vine(path)``): every
  write on every surface must then answer ``E_LOCKED`` at once, naming it.
- **A full file system**: every kind of write under a file-size limit it crosses
  (``EFBIG``, as a full disk gives ``ENOSPC``) answers an envelope and leaves the forest's
  files, HEAD and working tree exactly as they were.
- **SQL that tries to write or escape through ``query``**: a corpus of 500+ statements
  (writes, CTE writes, ATTACH, PRAGMA and ``pragma_`` functions, ``load_extension`` and
  file functions, several statements, comment, case and quoting tricks, writes hidden in
  triggers and views, huge and recursive statements). Each must answer
  ``E_QUERY_FORBIDDEN``, ``E_QUERY_INVALID`` or ``E_TIMEOUT`` within its limit, and no
  byte of any payload may change, nor any file appear, in or beside the forest.
- **Ids, sections, scopes and paths that try to leave the forest** (``..``, absolute
  paths, symlinks, NUL, very long, unicode look-alikes) on every read and write: each
  answers an envelope (never ``E_INTERNAL``), no response carries the content of a file
  outside the forest, and nothing outside is written; then the same probes over a real
  Station's REST with an admin key and a key scoped to ``sales/`` (never a 5xx).
- **Malformed forests**: bad YAML, a binary file named ``.md``, a file that is not UTF-8
  or has no frontmatter, two files claiming one id, a dangling link, beside a 5 MB body
  and a link cycle: every healthy node answers look, pick, move and locate within
  budget, and ``validate`` names each defect.

Hypothesis-generated arguments for every call on every surface live in
``tests/test_fuzz_surfaces.py``. The fast part runs in the test suite (``tests/test_torture.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.torture_crash import WRITE_KINDS, fault_matrix, forest_faults, kill_loop
from bench.torture_disk import disk_full
from bench.torture_kit import scratch
from bench.torture_malformed import DEFECTS, note, probe_malformed
from bench.torture_race import concurrency
from bench.torture_repair import DAMAGE, node_ids_of, repair_probes
from bench.torture_sql import (
    ALLOWED,
    SLOW,
    prepare_outside,
    probe_scopes,
    probe_scopes_station,
    probe_sql,
    sql_corpus,
)
from monkeyllm import Vine

# What the tests and other benchmarks take from here: each family's entry points.
__all__ = [
    "ALLOWED",
    "DAMAGE",
    "DEFECTS",
    "SLOW",
    "Vine",
    "WRITE_KINDS",
    "concurrency",
    "disk_full",
    "fault_matrix",
    "forest_faults",
    "kill_loop",
    "node_ids_of",
    "note",
    "prepare_outside",
    "probe_malformed",
    "probe_scopes",
    "probe_scopes_station",
    "probe_sql",
    "repair_probes",
    "scratch",
    "sql_corpus",
]


def run(slow: bool = True, kills: int = 200, seconds: float = 60.0) -> dict[str, Any]:
    """Every family, each on its own scratch copy; the figures in table order."""
    with tempfile.TemporaryDirectory(prefix="torture-") as tmp:
        base = Path(tmp)
        for name in ("hostile", "crash", "repair", "race", "malformed", "full"):
            (base / name).mkdir()
            scratch(base / name)
        timings = {}
        started = time.perf_counter()
        crash = fault_matrix(base / "crash" / "forest")
        if hasattr(os, "fork"):
            kill_loop(base / "crash" / "forest", kills, figures=crash)
        timings["crash seconds"] = time.perf_counter() - started
        started = time.perf_counter()
        repair = repair_probes(base / "repair" / "forest")
        race = concurrency(base / "race" / "forest", seconds)
        timings["concurrency seconds"] = time.perf_counter() - started
        malformed = probe_malformed(base / "malformed" / "forest")
        full = disk_full(base / "full" / "forest")
        started = time.perf_counter()
        sql = probe_sql(base / "hostile", sql_corpus(slow=slow))
        timings["sql seconds"] = time.perf_counter() - started
        started = time.perf_counter()
        scopes = probe_scopes(base / "hostile")
        rest = probe_scopes_station(base / "hostile")
        timings["scope seconds"] = time.perf_counter() - started
    return {
        "writes attempted": crash.attempted,
        "writes committed": crash.committed,
        "crashes injected": crash.faults + crash.kills,
        "... by an exception at a write step": crash.faults,
        "... by SIGKILL of the writer": crash.kills,
        "... of which inside a write": crash.kills_mid_write,
        "writes lost": crash.lost,
        "crash checks failed": len(crash.failures),
        "derived-state damages": repair.tried,
        "... not repaired": repair.failed,
        "hostile statements tried": sql.tried,
        "hostile statements escaped": sql.escaped,
        "hostile statements over their limit": sql.slow,
        "scope probes tried": scopes.tried,
        "scope probes leaked": scopes.leaked,
        "scope probes E_INTERNAL": scopes.internal,
        "files outside written": scopes.written,
        "scope probes over the Station (admin and scoped keys)": rest.tried,
        "... leaked (Station)": rest.leaked,
        "... 5xx, E_INTERNAL or not JSON (Station)": rest.internal,
        "... files outside written (Station)": rest.written,
        "concurrent operations run": race.operations,
        "... writes racing (Station, CLI and engine at once)": race.writes,
        "... writes committed": race.committed,
        "... writes E_LOCKED": race.locked,
        "... E_LOCKED share of the racing writes (%)": race.locked_share,
        "... reads": race.reads,
        **{
            f"... {surface}: writes / committed / E_LOCKED / reads": "{} / {} / {} / {}".format(
                row["writes"], row["committed"], row["locked"], row["reads"]
            )
            for surface, row in sorted(race.surfaces.items())
        },
        **{
            f"... {surface}: median write (ms)": race.median_ms(surface)
            for surface in sorted(race.latency)
        },
        "writes while a script held the forest open": race.held_writes,
        "... refused at once with E_LOCKED naming it": race.held_refused,
        "... slowest refusal (ms)": race.held_slowest_ms,
        "concurrent operations failed unexpectedly": race.failed,
        "concurrent commits lost": race.lost,
        "writes refused by a full file system": full.attempted,
        "... answered E_READONLY": full.readonly,
        "... answered another envelope": full.other,
        "... answered E_INTERNAL or no envelope": full.internal,
        "... forest changed": full.changed,
        "malformed-forest defects": malformed.defects,
        "... named by validate": malformed.named,
        "healthy nodes beside them": malformed.healthy,
        "... served (look, pick, move, locate)": malformed.served,
        **{k: round(v, 1) for k, v in timings.items()},
        "answers": sql.codes,
        "disk-full answers": full.codes,
        "E_LOCKED answers while racing": race.locked_examples,
        "failures": (
            crash.failures
            + repair.failures
            + race.failures
            + malformed.failures
            + sql.failures
            + scopes.failures
            + rest.failures
            + full.failures
        ),
    }


MUST_BE_ZERO = (
    "writes lost",
    "crash checks failed",
    "... not repaired",
    "hostile statements escaped",
    "hostile statements over their limit",
    "scope probes leaked",
    "scope probes E_INTERNAL",
    "files outside written",
    "concurrent operations failed unexpectedly",
    "concurrent commits lost",
    "... leaked (Station)",
    "... 5xx, E_INTERNAL or not JSON (Station)",
    "... files outside written (Station)",
    "... answered E_INTERNAL or no envelope",
    "... forest changed",
)


def render(figures: dict[str, Any]) -> str:
    lines = [f"{'figure':54} {'value':>14}   must be"]
    must = {key: 0 for key in MUST_BE_ZERO}
    must["... named by validate"] = figures.get("malformed-forest defects", "")
    must["... served (look, pick, move, locate)"] = figures.get("healthy nodes beside them", "")
    for key, value in figures.items():
        if key in ("answers", "disk-full answers", "failures", "E_LOCKED answers while racing"):
            continue
        lines.append(f"{key:54} {value:>14}   {must.get(key, '')}")
    lines.append("answers: " + ", ".join(f"{k} {v}" for k, v in sorted(figures["answers"].items())))
    lines.append(
        "disk-full answers: "
        + ", ".join(f"{k} {v}" for k, v in sorted(figures.get("disk-full answers", {}).items()))
    )
    lines += [
        "E_LOCKED while racing: " + text
        for text in figures.get("E_LOCKED answers while racing", [])
    ]
    lines += ["FAIL " + f for f in figures["failures"][:50]]
    if len(figures["failures"]) > 50:
        lines.append(f"FAIL ... and {len(figures['failures']) - 50} more")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--no-slow", action="store_true", help="skip the statements that only the time limit stops"
    )
    parser.add_argument(
        "--kills",
        type=int,
        default=200,
        help="SIGKILLs of a writer at random moments (default 200)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="how long 8 writers and 8 readers race (default 60)",
    )
    args = parser.parse_args()
    figures = run(slow=not args.no_slow, kills=args.kills, seconds=args.seconds)
    print(json.dumps(figures, indent=2) if args.json else render(figures))
    raise SystemExit(1 if figures["failures"] else 0)


if __name__ == "__main__":
    main()
