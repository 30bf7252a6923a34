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
import contextlib
import hashlib
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monkeyllm import Vine
from monkeyllm.registry import CALLS
from monkeyllm.validate import validate

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-brain"
DATASET = "sales/orders-2026"
TABLE = "orders"
# E_SCHEMA: the call's signature refuses it before any SQL is read (an empty statement).
ALLOWED = {"E_QUERY_FORBIDDEN", "E_QUERY_INVALID", "E_TIMEOUT", "E_SCHEMA"}
LIMIT_S = 2.0 + 1.5          # the guard's 2-second limit plus this machine's slack
SECRET = "TORTURE-SECRET-7f3a9c"

# Statements that write, or reach outside the payload, on their own.
WRITES = [
    f"INSERT INTO {TABLE}(id) VALUES ('X-1')",
    f"INSERT OR REPLACE INTO {TABLE}(id) VALUES ('X-1')",
    f"REPLACE INTO {TABLE}(id) VALUES ('X-1')",
    f"INSERT INTO {TABLE} SELECT * FROM {TABLE}",
    f"UPDATE {TABLE} SET region = 'X'",
    f"UPDATE {TABLE} SET region = 'X' WHERE 1",
    f"DELETE FROM {TABLE}",
    f"DELETE FROM {TABLE} WHERE rowid > 0",
    f"DROP TABLE {TABLE}",
    f"DROP TABLE IF EXISTS {TABLE}",
    f"ALTER TABLE {TABLE} ADD COLUMN evil TEXT",
    f"ALTER TABLE {TABLE} RENAME TO gone",
    "CREATE TABLE evil(a)",
    "CREATE TEMP TABLE evil(a)",
    f"CREATE INDEX evil ON {TABLE}(region)",
    "CREATE VIEW evil AS SELECT 1",
    f"CREATE TRIGGER evil AFTER INSERT ON {TABLE} BEGIN DELETE FROM {TABLE}; END",
    f"CREATE TRIGGER evil BEFORE DELETE ON {TABLE} BEGIN SELECT 1; END",
    "CREATE VIRTUAL TABLE evil USING fts5(a)",
    "VACUUM",
    "VACUUM INTO 'copy.db'",
    "REINDEX",
    "ANALYZE",
    "ATTACH DATABASE 'evil.db' AS evil",
    "ATTACH ':memory:' AS evil",
    "ATTACH DATABASE 'file:evil.db?mode=rwc' AS evil",
    "DETACH DATABASE main",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA user_version = 7",
    "PRAGMA query_only = 0",
    "PRAGMA foreign_keys = OFF",
    "BEGIN",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "END",
    "ROLLBACK",
    "SAVEPOINT evil",
    "RELEASE evil",
    "SELECT load_extension('evil')",
    "SELECT load_extension('/usr/lib/evil.so', 'entry')",
    "SELECT writefile('evil.txt', 'x')",
    "SELECT readfile('/etc/passwd')",
    "SELECT edit('x', 'vi')",
    "SELECT fts3_tokenizer('simple', x'00')",
    f"SELECT * FROM pragma_table_info('{TABLE}')",
    "SELECT * FROM pragma_database_list",
    "SELECT * FROM pragma_compile_options()",
    "SELECT pragma_user_version",
    f"WITH w AS (SELECT 1) DELETE FROM {TABLE}",
    f"WITH w AS (SELECT 1) INSERT INTO {TABLE}(id) SELECT 'X' FROM w",
    f"WITH w AS (SELECT 1) UPDATE {TABLE} SET region = 'X'",
    f"DELETE FROM {TABLE} RETURNING *",
    f"INSERT INTO {TABLE}(id) VALUES ('X') RETURNING id",
]

# Ways to hide a write inside something that looks like a read.
WRAPPERS = [
    "{w}",
    "{w};",
    "SELECT 1; {w}",
    "{w}; SELECT 1",
    "SELECT 1;{w};SELECT 2",
    "/* comment */ {w}",
    "-- a comment\n{w}",
    "SELECT 1 /* ; */; {w}",
    "SELECT ';'; {w}",
    "SELECT '--'; {w}",
    'SELECT "x"; {w}',
    "SELECT 1 -- ;\n; {w}",
    "\n\t  {w}  \n",
    "{w_lower}",
    "{w_upper}",
]

# Statements that must fail on their own merits (invalid, or too slow).
EXTRA = [
    "SELECT 1；DROP TABLE orders",                         # a full-width semicolon
    "SELECT 1\u037e DROP TABLE orders",                    # a Greek question mark
    "SELECT * FROM orders WHERE id = 'x\\'; DROP TABLE orders; --'",
    "SELECT " + "1+" * 30000 + "1",
    "SELECT " + "(" * 2000 + "1" + ")" * 2000,
    "SELECT '" + "x" * 2_000_000 + "' ||",
    "",
    "   ",
    ";",
    ";;",
    "--",
    "/*",
    "SELEC 1",
    "SELECT FROM",
    "SELECT * FROM no_such_table",
    "SELECT \x00 1",
]

SLOW = [
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x FROM c) SELECT max(x) FROM c",
    f"SELECT count(*) FROM {TABLE} a, {TABLE} b, {TABLE} c, {TABLE} d",
]


def sql_corpus(*, slow: bool = True) -> list[str]:
    """Every hostile statement: each write through each wrapper, the extras, and (with
    ``slow``) the ones that must be stopped by the time limit."""
    out = []
    for w in WRITES:
        for wrapper in WRAPPERS:
            out.append(wrapper.format(w=w, w_lower=w.lower(), w_upper=w.upper()))
    out += EXTRA
    if slow:
        out += SLOW
    return list(dict.fromkeys(out))


def _digest_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` except the engine's own derived state."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or "_derived" in rel.parts or ".git" in rel.parts:
            continue
        out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@dataclass
class SqlFigures:
    """What the SQL probes found."""

    tried: int = 0
    escaped: int = 0                 # a statement that ran, or changed a byte
    slow: int = 0                    # over its time limit
    codes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def probe_sql(workdir: Path, statements: list[str]) -> SqlFigures:
    """Run every statement through ``query`` on a copy of sample-brain in ``workdir``."""
    forest = workdir / "forest"
    before = _digest_tree(workdir)
    figures = SqlFigures()
    cwd = os.getcwd()
    os.chdir(workdir)        # relative ATTACH / VACUUM INTO targets would land here
    try:
        with Vine(forest, writable=False) as vine:
            for sql in statements:
                figures.tried += 1
                started = time.perf_counter()
                out = vine.query(DATASET, sql)
                took = time.perf_counter() - started
                code = out.get("error", {}).get("code") if isinstance(out, dict) else None
                figures.codes[code or "ran"] = figures.codes.get(code or "ran", 0) + 1
                if code not in ALLOWED:
                    figures.escaped += 1
                    figures.failures.append(f"{code or 'ran'}: {sql[:120]!r}")
                if took > LIMIT_S:
                    figures.slow += 1
                    figures.failures.append(f"{took:.1f} s: {sql[:120]!r}")
    finally:
        os.chdir(cwd)
    after = _digest_tree(workdir)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        figures.escaped += len(changed)
        figures.failures += [f"file changed: {c}" for c in changed]
    return figures


# -- leaving the forest ----------------------------------------------------------------

ESCAPES = [
    "..", "../outside/secret", "../../etc/passwd", "/etc/passwd", "/outside/secret",
    "sales/../../outside/secret", "sales/../../../etc/passwd", "./../outside/secret",
    "sales/..", "sales/./../..", "%2e%2e/outside/secret", "..%2foutside%2fsecret",
    "..\\outside\\secret", "sales\\..\\..\\outside", "\x00", "sales/exchange-policy\x00",
    "a" * 5000, "/".join(["a"] * 800), "sales/" + "é" * 300,
    "\u2025/outside/secret", "\uff0e\uff0e/outside/secret", "sales\u2215..\u2215..",
    "~", "~/secret", "$HOME/secret", "link-out", "link-out/secret", "sales/link-dir/secret",
    "_derived/catalog", ".git/config", ".vine", "_assets/x", " ../outside/secret ",
]


def scope_probes() -> Iterator[tuple[str, dict[str, Any]]]:
    """(call, arguments) pairs that aim each escaping string at every parameter that
    names a node, a section, a scope or a parent."""
    for bad in ESCAPES:
        yield "look", {"id": bad}
        yield "look", {"id": ["sales/exchange-policy", bad]}
        yield "move", {"id": bad}
        yield "pick", {"id": bad}
        yield "pick", {"id": "sales/exchange-policy", "section": bad}
        yield "scan", {"parent_id": bad}
        yield "sniff", {"terms": ["secret"], "scope": bad}
        yield "query", {"id": bad, "sql": "SELECT 1"}
        yield "harvest", {"query": "secret", "terms": ["secret"]}
        yield "plant", {"node": {"id": bad, "type": "note", "parent": "_index",
                                 "title": "T", "summary": "S."}}
        yield "plant", {"node": {"id": "sales/ok-note", "type": "note", "parent": bad,
                                 "title": "T", "summary": "S."}}
        yield "graft", {"id": bad, "patch": {"set_frontmatter": {"summary": "S."}}}
        yield "graft", {"id": "sales/exchange-policy",
                        "patch": {"add_links": [{"rel": "related-to", "target": bad}]}}
        yield "tend", {"id": bad, "sql": "DELETE FROM orders WHERE 1"}
        yield "prune", {"id": bad}
        yield "prune", {"id": bad, "force": True, "dry_run": True}
        yield "transplant", {"id": bad, "new_id": "sales/moved-probe"}
        yield "transplant", {"id": "sales/exchange-policy", "new_id": bad, "dry_run": True}
        yield "history", {"id": bad}
        yield "calendar", {"scope": bad}
        yield "coverage", {"scope": bad}


@dataclass
class ScopeFigures:
    """What the scope probes found."""

    tried: int = 0
    leaked: int = 0                  # a response carrying the outside secret
    internal: int = 0                # an E_INTERNAL (a bug)
    written: int = 0                 # files outside the forest changed
    failures: list[str] = field(default_factory=list)


def _outside(workdir: Path) -> Path:
    return workdir / "outside"


def prepare_outside(workdir: Path) -> None:
    """A secret beside the forest, and symlinks inside the forest pointing at it."""
    outside = _outside(workdir)
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text(
        f"---\nid: secret\ntype: note\ntitle: Secret {SECRET}\nsummary: {SECRET}.\n---\n\n"
        f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    forest = workdir / "forest"
    for name, target in (("link-out.md", outside / "secret.md"),
                         ("sales/link-dir", outside)):
        link = forest / name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(target)


def probe_scopes(workdir: Path) -> ScopeFigures:
    """Every scope probe through ``Vine.call`` on a writable copy."""
    prepare_outside(workdir)
    outside_before = _digest_tree(_outside(workdir))
    figures = ScopeFigures()
    with Vine(workdir / "forest") as vine:
        for call, args in scope_probes():
            figures.tried += 1
            out = vine.call(call, args)
            text = json.dumps(out, ensure_ascii=False, default=str)
            if SECRET in text:
                figures.leaked += 1
                figures.failures.append(f"leak: {call} {str(args)[:100]}")
            if out.get("error", {}).get("code") == "E_INTERNAL":
                figures.internal += 1
                figures.failures.append(f"E_INTERNAL: {call} {str(args)[:100]}")
    if _digest_tree(_outside(workdir)) != outside_before:
        figures.written += 1
        figures.failures.append("a file outside the forest changed")
    return figures


def probe_scopes_station(workdir: Path) -> ScopeFigures:
    """Every scope probe again over the real Station's REST (``vine station serve`` over
    ``workdir``, whose forest is ``forest``), once with an admin key and once with a key
    scoped to ``sales/``: never a 5xx or ``E_INTERNAL``, always a JSON body whose status
    its envelope maps to, never the outside secret, nothing written outside."""
    import httpx

    from monkeyllm.serve.station import keys
    from monkeyllm.serve.station.store import Store

    prepare_outside(workdir)
    outside_before = _digest_tree(_outside(workdir))
    figures = ScopeFigures()
    with Store(workdir) as store:
        scoped = keys.add(store, "torture-sales", STATION_FOREST, ["sales"], [],
                          keys.parse_caps("read,query,write,tend"))[1]
    with serve_station(workdir) as (url, admin), httpx.Client(timeout=120) as client:
        for who, key in (("admin", admin), ("sales", scoped)):
            for call, args in scope_probes():
                figures.tried += 1
                out = _http(client, url, key, call, args)
                text = json.dumps(out, ensure_ascii=False, default=str)
                where = f"station/{who}: {call} {str(args)[:100]}"
                if SECRET in text:
                    figures.leaked += 1
                    figures.failures.append(f"leak: {where}")
                if not isinstance(out, dict) or \
                        out.get("error", {}).get("code") == "E_INTERNAL":
                    figures.internal += 1
                    figures.failures.append(f"{where}: {text[:200]}")
    if _digest_tree(_outside(workdir)) != outside_before:
        figures.written += 1
        figures.failures.append("a file outside the forest changed (Station pass)")
    return figures


# -- crashes inside writes -------------------------------------------------------------

BRANCH = "torture"
SHA_LINE = re.compile(r"^[0-9a-f]{40}$")
DATA_SCHEMA = {"t": {"columns": {"id": "INTEGER", "v": "INTEGER"}, "primary_key": ["id"]}}


def git(root: Path, *args: str) -> str:
    """Run git in ``root``; its standard output."""
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all")


def prepare_writes(forest: Path) -> None:
    """The branch every write of the crash and concurrency families lands in: a hub
    note that gathers links and a dataset that counts."""
    with Vine(forest) as vine:
        if "error" not in vine.look(f"{BRANCH}/_index"):
            return
        for node in (
            {"id": BRANCH, "type": "branch", "parent": "_index", "title": "Torture",
             "summary": "Nodes written by writers that crash, get killed or race."},
            {"id": f"{BRANCH}/hub", "type": "note", "parent": BRANCH, "title": "Hub",
             "summary": "The note every writer links from."},
            {"id": f"{BRANCH}/data", "type": "dataset", "parent": BRANCH, "title": "Data",
             "summary": "A counter every writer bumps.", "schema": DATA_SCHEMA,
             "rows": {"t": [[1, 0]]}},
        ):
            out = vine.plant(node)
            if "error" in out:
                raise RuntimeError(f"cannot prepare the forest: {out}")


def mixed_writes(vine: Vine, tag: str) -> Iterator[tuple[str, Any]]:
    """An endless mix of every kind of write, as ``(kind, thunk)`` pairs: plant of a
    note, a branch and a dataset, each graft operation, tend. Ids carry ``tag``."""
    hub = f"{BRANCH}/hub"
    stale = [{"rel": e["rel"], "target": e["target"]}
             for e in vine.look(hub).get("edges_out", [])]
    j = 0
    while True:
        nid = f"{BRANCH}/n{tag}-{j}"
        yield "plant-note", lambda nid=nid: vine.plant({
            "id": nid, "type": "note", "parent": BRANCH, "title": nid,
            "summary": f"Node {nid} as planted.", "body": f"# {nid}\n\n## Log\n\nPlanted."})
        yield "graft-frontmatter+section", lambda nid=nid: vine.graft(nid, {
            "set_frontmatter": {"summary": f"Node {nid} revised."},
            "append_section": {"header": "More", "body": "Appended."}})
        # The hub keeps about one link, so it never reaches the 50-link cap.
        yield "graft-links", lambda nid=nid, stale=stale: vine.graft(hub, {
            "add_links": [{"rel": "related-to", "target": nid}],
            "remove_links": stale, "set_frontmatter": {"summary": f"Hub at {nid}."}})
        stale = [{"rel": "related-to", "target": nid}]
        yield "graft-body", lambda nid=nid: vine.graft(nid, {
            "replace_section": {"header": "Log", "body": "Rewritten."}})
        yield "tend", lambda: vine.tend(f"{BRANCH}/data",
                                        "UPDATE t SET v = v + 1 WHERE id = 1")
        # The hub links to the note: the move rewrites that link, the forced prune
        # drops it (every other round, so the branch keeps some of them).
        yield "transplant-note", lambda nid=nid: vine.transplant(nid, nid + "-moved")
        stale = [{"rel": "related-to", "target": nid + "-moved"}]
        if j % 2 == 0:
            yield "prune-note", lambda nid=nid: vine.prune(nid + "-moved", force=True)
        if j % 3 == 0:
            yield "plant-branch", lambda j=j: vine.plant({
                "id": f"{BRANCH}/b{tag}-{j}", "type": "branch", "parent": BRANCH,
                "title": "Sub", "summary": "A sub-branch planted under fire."})
        if j % 4 == 1:
            dataset = f"{BRANCH}/d{tag}-{j}"
            yield "plant-dataset", lambda dataset=dataset, j=j: vine.plant({
                "id": dataset, "type": "dataset", "parent": BRANCH,
                "title": "D", "summary": "A dataset planted under fire.",
                "schema": DATA_SCHEMA, "rows": {"t": [[1, j], [2, j]]}})
            # Its payload is renamed beside the moved node, then goes to the graveyard.
            yield "transplant-dataset", lambda dataset=dataset: vine.transplant(
                dataset, dataset + "-moved")
            yield "prune-dataset", lambda dataset=dataset: vine.prune(dataset + "-moved")
        j += 1


def forest_faults(vine: Vine, root: Path) -> list[str]:
    """What is wrong with a forest after a crash, as messages ("" list when sound): a
    dirty tree, a validate error, a catalog that disagrees with the files."""
    out = []
    dirty = _status(root)
    if dirty:
        out.append(f"working tree not clean: {dirty[:200]!r}")
    errors = [f for f in validate(root) if f.severity == "error"]
    out += [f"validate: {f.code} {f.path}: {f.message}" for f in errors[:5]]
    out += catalog_mismatches(vine, root)
    return out


def catalog_mismatches(vine: Vine, root: Path) -> list[str]:
    """Differences between the catalog and the node files: every id on each side, and
    each node's summary as the catalog and its frontmatter give it."""
    from monkeyllm.nodes import parse_text

    on_disk: dict[str, str] = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", "_derived"):
            continue
        try:
            node = parse_text(rel.as_posix()[:-3], path.read_text(encoding="utf-8"))
        except Exception as exc:  # noqa: BLE001 - an unreadable node is a finding
            return [f"unreadable node file {rel}: {exc}"]
        on_disk[rel.as_posix()[:-3]] = str(node.meta.get("summary", ""))
    listed: dict[str, str] = {}
    after = ""
    while True:
        page = vine.scan("_index", fields=["id", "summary"], recursive=True, limit=50,
                         after=after)
        if "error" in page:
            return [f"scan failed: {page['error']}"]
        listed.update({n["id"]: n.get("summary", "") for n in page["nodes"]})
        if not page.get("next"):
            break
        after = page["next"]
    listed.setdefault("_index", on_disk.get("_index", ""))
    out = [f"on disk, not in the catalog: {i}" for i in sorted(set(on_disk) - set(listed))]
    out += [f"in the catalog, not on disk: {i}" for i in sorted(set(listed) - set(on_disk))]
    out += [f"catalog summary of {i} differs from its file" for i in sorted(on_disk)
            if i in listed and i != "_index" and not ids_is_branch_fallback(i)
            and listed[i] != on_disk[i]]
    return out


def ids_is_branch_fallback(node_id: str) -> bool:
    """Branches may take their summary from the body; their catalog summary is not
    compared with the frontmatter."""
    return node_id.endswith("_index")


@dataclass
class CrashFigures:
    """What the crash families found."""

    attempted: int = 0               # writes started
    committed: int = 0               # writes that answered a commit
    faults: int = 0                  # exceptions injected at a named write step
    kills: int = 0                   # SIGKILLs of a writer process
    kills_mid_write: int = 0         # kills that left a journal behind
    lost: int = 0                    # answered commits missing from history
    kinds: list[str] = field(default_factory=list)   # kinds of write faults were put in
    failures: list[str] = field(default_factory=list)


WRITE_KINDS = ("plant-note", "graft-frontmatter+section", "graft-links", "graft-body", "tend",
               "transplant-note", "prune-note", "plant-branch", "plant-dataset",
               "transplant-dataset", "prune-dataset")
# The writes each kind needs first (from the same tag, so the ids line up).
PREREQUISITES = {"graft-frontmatter+section": ("plant-note",), "graft-links": ("plant-note",),
                 "graft-body": ("plant-note",), "tend": ("plant-note",),
                 "transplant-note": ("plant-note",),
                 "prune-note": ("plant-note", "transplant-note"),
                 "transplant-dataset": ("plant-dataset",),
                 "prune-dataset": ("plant-dataset", "transplant-dataset")}


class Injected(RuntimeError):
    """An unexpected failure in the middle of a write."""


def fault_matrix(forest: Path, figures: CrashFigures | None = None) -> CrashFigures:
    """An exception at every named step of every kind of write, on ``forest``."""
    from monkeyllm.writes import transaction

    figures = figures or CrashFigures()
    prepare_writes(forest)
    with Vine(forest) as vine:
        kinds: dict[str, list[str]] = {}
        reached: list[str] = []
        transaction.FAULT = reached.append
        try:
            for kind, thunk in mixed_writes(vine, "steps"):
                if kind in kinds:
                    if len(kinds) == len(WRITE_KINDS):
                        break
                    continue
                reached.clear()
                figures.attempted += 1
                out = thunk()
                figures.committed += bool(out.get("commit"))
                kinds[kind] = list(dict.fromkeys(reached))
        finally:
            transaction.FAULT = None
        figures.kinds = sorted(kinds)
        for kind, steps in kinds.items():
            for step in steps:
                figures.faults += 1
                _fault_once(vine, forest, kind, step, figures)
    return figures


def _fault_once(vine: Vine, forest: Path, kind: str, step: str,
                figures: CrashFigures) -> None:
    from monkeyllm.writes import transaction

    def hook(name: str) -> None:
        if name == step:
            raise Injected(f"injected at {name}")

    tag = f"f{figures.faults}"
    thunk = next(t for k, t in mixed_writes(vine, tag) if k == kind)
    # A graft needs its note, a move or a prune the node it acts on: those writes
    # first, without a fault.
    for needed in PREREQUISITES.get(kind, ()):
        next(t for k, t in mixed_writes(vine, tag) if k == needed)()
    before = git(forest, "rev-parse", "HEAD").strip()
    transaction.FAULT = hook
    try:
        figures.attempted += 1
        out = thunk()
    finally:
        transaction.FAULT = None
    where = f"{kind} at {step}"
    now = git(forest, "rev-parse", "HEAD").strip()
    if out.get("commit"):
        figures.committed += 1
        if out["commit"] not in git(forest, "rev-list", "HEAD").split():
            figures.lost += 1
            figures.failures.append(f"{where}: the answered commit is not in history")
    elif now != before and step != "after-commit":
        figures.failures.append(f"{where}: answered {out} but HEAD moved")
    code = out.get("error", {}).get("code")
    if code not in (None, "E_INTERNAL"):
        figures.failures.append(f"{where}: answered {code}, not the injected failure")
    figures.failures += [f"{where}: {m}" for m in forest_faults(vine, forest)]


# The writer a kill round forks: it reports each write before it starts ("try KIND")
# and each commit once answered, through a pipe the parent drains after the kill.
def _kill_child(forest: Path, wfd: int, tag: str) -> None:
    def say(text: str) -> None:
        os.write(wfd, (text + "\n").encode())

    try:
        vine = Vine(forest)
        say("ready")
        for kind, thunk in mixed_writes(vine, tag):
            say(f"try {kind}")
            out = thunk()
            if "error" in out:
                say(f"ERR {kind} {out['error'].get('code')} {out['error'].get('message')}")
            elif out.get("commit"):
                say(out["commit"])
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        say(f"ERR exception {exc!r}")
    finally:
        os._exit(0)


def _read_until(rfd: int, needle: bytes, timeout: float) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while needle not in data and b"ERR" not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if ready:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            data += chunk
    return data


def kill_loop(forest: Path, kills: int = 200, seed: int = 20260,
              figures: CrashFigures | None = None, *, max_wait: float = 0.4) -> CrashFigures:
    """``kills`` rounds: fork a writer looping over mixed writes, SIGKILL it at a random
    moment, reopen the forest (recovery runs) and check it. Needs ``os.fork``."""
    figures = figures or CrashFigures()
    prepare_writes(forest)
    rnd = random.Random(seed)
    reported: list[str] = []
    for round_no in range(kills):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(rfd)
            _kill_child(forest, wfd, f"k{round_no}")
        os.close(wfd)
        try:
            data = _read_until(rfd, b"ready\n", timeout=30)
            time.sleep(rnd.uniform(0.0, max_wait))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            while chunk := os.read(rfd, 65536):
                data += chunk
        finally:
            os.close(rfd)
        figures.kills += 1
        figures.kills_mid_write += (forest / "_derived" / "journal.json").exists()
        lines = data.decode(errors="replace").split("\n")[:-1]   # complete lines only
        if not lines or lines[0] != "ready":
            figures.failures.append(f"round {round_no}: the writer never got ready: {lines}")
        figures.failures += [f"round {round_no}: {x}" for x in lines if x.startswith("ERR")]
        figures.attempted += sum(x.startswith("try ") for x in lines)
        shas = [x for x in lines if SHA_LINE.match(x)]
        figures.committed += len(shas)
        reported += shas
        try:
            with Vine(forest) as vine:                    # recovery runs here
                history = set(git(forest, "rev-list", "HEAD").split())
                lost = [s for s in shas if s not in history]
                figures.lost += len(lost)
                figures.failures += [f"round {round_no}: commit {s} lost" for s in lost]
                figures.failures += [f"round {round_no}: {m}"
                                     for m in forest_faults(vine, forest)]
        except Exception as exc:  # noqa: BLE001 - a forest that will not open is a finding
            figures.failures.append(f"round {round_no}: reopening failed: {exc!r}")
    history = set(git(forest, "rev-list", "HEAD").split())
    late = [s for s in reported if s not in history]
    if late:
        figures.failures.append(f"{len(late)} reported commits gone by the end")
    return figures


# -- derived state -----------------------------------------------------------------------


def _damage_truncate(forest: Path) -> None:
    db = forest / "_derived" / "catalog.db"
    with open(db, "r+b") as fh:
        fh.truncate(max(db.stat().st_size // 3, 100))


def _damage_empty(forest: Path) -> None:
    (forest / "_derived" / "catalog.db").write_bytes(b"")


def _damage_delete(forest: Path) -> None:
    for name in ("catalog.db", "catalog.db-wal", "catalog.db-shm"):
        (forest / "_derived" / name).unlink(missing_ok=True)


def _damage_header(forest: Path) -> None:
    with open(forest / "_derived" / "catalog.db", "r+b") as fh:
        fh.write(b"this is not SQLite at all")


def _damage_garbage(forest: Path) -> None:
    db = forest / "_derived" / "catalog.db"
    data = bytearray(db.read_bytes())
    rnd = random.Random(7)
    for _ in range(200):
        at = rnd.randrange(100, len(data))
        data[at] = rnd.randrange(256)
    db.write_bytes(bytes(data))


def _damage_stale_lock(forest: Path) -> None:
    import socket

    dead = subprocess.Popen(["true"])
    dead.wait()
    (forest / ".vine.lock").write_text(json.dumps(
        {"pid": dead.pid, "host": socket.gethostname(), "since": "2026-01-01T00:00:00Z"}))


DAMAGE = {
    "catalog.db truncated to a third": _damage_truncate,
    "catalog.db emptied": _damage_empty,
    "catalog.db deleted": _damage_delete,
    "catalog.db header overwritten": _damage_header,
    "catalog.db pages scrambled": _damage_garbage,
    ".vine.lock of a dead process": _damage_stale_lock,
}


def _node_ids(forest: Path) -> list[str]:
    return sorted(p.relative_to(forest).as_posix()[:-3] for p in forest.rglob("*.md")
                  if p.relative_to(forest).parts[0] not in (".git", "_derived", "_meta"))


def _heat_rows(forest: Path) -> dict[str, float]:
    """The stored heat of every node, read beside the engine."""
    import sqlite3

    db = forest / "_derived" / "trails.db"
    if not db.exists():
        return {}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {f"{s}:{n}": round(h, 9) for s, n, h in
                con.execute("SELECT scope, node_id, heat FROM heat")}
    finally:
        con.close()


def _snapshot(vine: Vine, node_ids: list[str]) -> dict[str, Any]:
    out = {}
    for node_id in node_ids:
        look = vine.look(node_id, fields=["id", "title", "summary", "outline"])
        out[node_id] = look["error"].get("code") if "error" in look else look
    return out


@dataclass
class RepairFigures:
    """What the derived-state probes found."""

    tried: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)


def repair_probes(forest: Path) -> RepairFigures:
    """Damage the derived state in each way of ``DAMAGE`` and reopen: every node reads as
    before, heat survives, the catalog agrees with the files and the forest is writable."""
    figures = RepairFigures()
    node_ids = _node_ids(forest)
    with Vine(forest) as vine:
        for node_id in node_ids[::3]:               # heat to keep across rebuilds
            vine.look(node_id)
        before = _snapshot(vine, node_ids)
    for name, damage in DAMAGE.items():
        figures.tried += 1
        heat = _heat_rows(forest)
        damage(forest)
        try:
            with Vine(forest) as vine:
                if _heat_rows(forest) != heat:
                    raise AssertionError("heat changed across the repair")
                after = _snapshot(vine, node_ids)
                wrong = [i for i in node_ids if after[i] != before[i]]
                if wrong:
                    raise AssertionError(f"{len(wrong)} nodes differ, e.g. {wrong[0]}: "
                                         f"{before[wrong[0]]} -> {after[wrong[0]]}")
                mismatched = catalog_mismatches(vine, forest)
                if mismatched:
                    raise AssertionError(mismatched[0])
                out = vine.graft(node_ids[-1], {"set_frontmatter": {
                    "summary": f"Summary after {name}."}})
                if "error" in out:
                    raise AssertionError(f"not writable after the repair: {out}")
                before = _snapshot(vine, node_ids)
        except Exception as exc:  # noqa: BLE001 - each case reports its own failure
            figures.failed += 1
            figures.failures.append(f"{name}: {exc!r}"[:300])
    return figures


# -- many writers and readers at once ----------------------------------------------------

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
    failed: int = 0                  # anything but a commit, E_LOCKED or a clean read
    lost: int = 0
    surfaces: dict[str, dict[str, int]] = field(default_factory=dict)
    latency: dict[str, list[float]] = field(default_factory=dict)
    locked_examples: list[str] = field(default_factory=list)
    held_writes: int = 0
    held_refused: int = 0            # E_LOCKED naming the holder, before any timeout
    held_slowest_ms: float = 0.0
    failures: list[str] = field(default_factory=list)

    def count(self, surface: str, what: str) -> None:
        row = self.surfaces.setdefault(surface, {"writes": 0, "committed": 0, "locked": 0,
                                                 "reads": 0, "failed": 0})
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


def _judge_write(figures: ConcurrencyFigures, surface: str, out: Any,
                 commits: list[tuple[str, str]], node_id: str, ms: float = 0.0,
                 hold: _Hold | None = None) -> None:
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
                f"{surface} after {ms:.0f} ms: {out['error'].get('message', '')[:200]}")
    else:
        figures.failed += 1
        figures.count(surface, "failed")
        figures.failures.append(f"{surface} write of {node_id}: {str(out)[:200]}")


def _judge_held(figures: ConcurrencyFigures, surface: str, out: Any, node_id: str,
                ms: float, pid: int) -> None:
    from monkeyllm.lock import DEFAULT_TIMEOUT_S

    figures.operations += 1
    figures.held_writes += 1
    err = out.get("error", {}) if isinstance(out, dict) else {}
    # A CLI write's time includes starting its process; a refusal that waited the
    # timeout out would take at least that long on any surface.
    if err.get("code") == "E_LOCKED" and f"pid {pid}" in err.get("message", "") \
            and "per-write" in err.get("hint", "") and ms < DEFAULT_TIMEOUT_S * 1000:
        figures.held_refused += 1
        figures.held_slowest_ms = max(figures.held_slowest_ms, round(ms, 1))
        return
    figures.failed += 1
    figures.failures.append(f"{surface} write of {node_id} beside a holder for life "
                            f"({ms:.0f} ms): {str(out)[:200]}")


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
    done = subprocess.run([*_vine_command(), "call", call, json.dumps(args),
                           "--forest", str(forest), "--json"],
                          capture_output=True, text=True, timeout=120)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return (f"exit {done.returncode}, unparsable: {done.stdout[:80]!r} "
                f"{done.stderr[-200:]!r}")


def _cli_writer(forest: Path, tag: str, until: float, figures: ConcurrencyFigures,
                commits: list[tuple[str, str]], guard: threading.Lock,
                hold: _Hold | None = None) -> None:
    j = 0
    while time.time() < until:
        nid = f"{BRANCH}/c{tag}-{j}"
        node = {"id": nid, "type": "note", "parent": BRANCH, "title": nid,
                "summary": f"Node {nid} written concurrently."}
        started = time.perf_counter()
        out = _vine_call(forest, "plant", {"node": node})
        ms = (time.perf_counter() - started) * 1000
        with guard:
            _judge_write(figures, "cli", out, commits, nid, ms, hold)
        j += 1


def _cli_reader(forest: Path, until: float, figures: ConcurrencyFigures,
                guard: threading.Lock) -> None:
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


def _http(client: Any, url: str, key: str, call: str, args: dict[str, Any]) -> Any:
    """One Station call: its JSON body, or a string saying what went wrong (a 5xx, a
    status that disagrees with the body, a transport failure, a body that is not JSON)."""
    try:
        got = client.post(f"{url}/v1/forests/{STATION_FOREST}/{call}", json=args,
                          headers={"Authorization": f"Bearer {key}"})
        body = got.json()
    except Exception as exc:  # noqa: BLE001 - every failure is judged, never raised
        return f"{call}: {exc!r}"
    from monkeyllm.serve.station.status import status_of

    if not isinstance(body, dict) or got.status_code != status_of(body):
        return f"{call}: HTTP {got.status_code} with {str(body)[:150]}"
    return body


def _station_writer(url: str, key: str, tag: str, until: float,
                    figures: ConcurrencyFigures, commits: list[tuple[str, str]],
                    guard: threading.Lock, hold: _Hold | None = None) -> None:
    import httpx

    with httpx.Client(timeout=120) as client:
        j = 0
        while time.time() < until:
            nid = f"{BRANCH}/s{tag}-{j}"
            node = {"id": nid, "type": "note", "parent": BRANCH, "title": nid,
                    "summary": f"Node {nid} written concurrently.",
                    "body": "# T\n\n## Log\n\nx"}
            started = time.perf_counter()
            out = _http(client, url, key, "plant", {"node": node})
            ms = (time.perf_counter() - started) * 1000
            with guard:
                _judge_write(figures, "station", out, commits, nid, ms, hold)
            j += 1


def _station_reader(url: str, key: str, until: float, figures: ConcurrencyFigures,
                    guard: threading.Lock) -> None:
    import httpx

    rnd = random.Random()
    with httpx.Client(timeout=120) as client:
        while time.time() < until:
            page = _http(client, url, key, "scan", {"parent_id": BRANCH,
                                                    "fields": ["id", "summary"], "limit": 50})
            with guard:
                _judge_read(figures, "station", "scan", page)
            nodes = page.get("nodes", []) if isinstance(page, dict) else []
            for node in rnd.sample(nodes, min(5, len(nodes))):
                out = _http(client, url, key, "look", {"id": node["id"]})
                # A half-written node: unreadable, or a summary neither the listed one
                # nor one a writer writes.
                if isinstance(out, dict) and "error" not in out and \
                        out.get("summary") != node["summary"] and \
                        not str(out.get("summary", "")).startswith("Node "):
                    out = {"error": f"half-written {node['id']}: {out.get('summary')!r}"}
                with guard:
                    _judge_read(figures, "station", f"look {node['id']}", out)
            out = _http(client, url, key, "locate", {"query": "written concurrently", "k": 5})
            with guard:
                _judge_read(figures, "station", "locate", out)


STATION_FOREST = "forest"      # scratch() names the copy forest/, the Station's id of it


@contextlib.contextmanager
def serve_station(root: Path) -> Iterator[tuple[str, str]]:
    """``vine station serve`` over the folder ``root`` in a process of its own, with a
    fresh admin key: (base URL, key). The Station takes a forest's writer lock for each
    write alone, as every long-lived server does."""
    import httpx

    from monkeyllm.serve.station import keys
    from monkeyllm.serve.station.store import Store

    from .station_load import station

    with Store(root) as store:
        key = keys.add(store, "torture", STATION_FOREST, [], [],
                       keys.parse_caps("read,query,write,tend,admin"))[1]
    log = root / ".station" / f"serve-{time.time_ns()}.log"
    with station(root, log) as (url, _pid), httpx.Client(timeout=120) as client:
        first = _http(client, url, key, "look", {"id": "_index"})   # opens the forest
        if not isinstance(first, dict) or "error" in first:
            raise RuntimeError(f"the Station's first call failed: {first}")
        yield url, key


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _race(forest: Path, until: float, plan: dict[str, tuple[int, int]],
          figures: ConcurrencyFigures, commits: list[tuple[str, str]],
          guard: threading.Lock, phase: str, station: tuple[str, str] | None = None,
          hold: _Hold | None = None) -> None:
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
    threads += [threading.Thread(target=_cli_writer, args=(
        forest, f"{phase}x{n}", until, figures, commits, guard, hold))
        for n in range(writers)]
    threads += [threading.Thread(target=_cli_reader, args=(forest, until, figures, guard))
                for _ in range(readers)]
    writers, readers = plan.get("station", (0, 0))
    if station is not None:
        url, key = station
        threads += [threading.Thread(target=_station_writer, args=(
            url, key, f"{phase}{n}", until, figures, commits, guard, hold))
            for n in range(writers)]
        threads += [threading.Thread(target=_station_reader, args=(
            url, key, until, figures, guard)) for _ in range(readers)]
    for t in threads:
        t.start()
    left = max(0.0, until - time.time())
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=left + 300)
        if proc.returncode != 0:
            figures.failed += 1
            figures.failures.append(f"engine process exit {proc.returncode}: "
                                    f"{stderr[-300:]}")
        for line in stdout.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                figures.failed += 1
                figures.failures.append(f"engine: unparsable line {line[:100]!r}")
                continue
            with guard:
                if record["op"] == "write":
                    _judge_write(figures, "engine", record["out"], commits, record["id"],
                                 record.get("ms", 0.0), hold)
                else:
                    _judge_read(figures, "engine", record["op"], record["out"] or {})
    for t in threads:
        t.join(timeout=left + 300)


def _split(total: int, surfaces: int = 3) -> list[int]:
    """``total`` racers over the surfaces (Station first), as evenly as they go."""
    return [total // surfaces + (1 if i < total % surfaces else 0) for i in range(surfaces)]


def concurrency(forest: Path, seconds: float = 60.0, writers: int = 8,
                readers: int = 8, station: bool = True) -> ConcurrencyFigures:
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
        _race(forest, time.time() + racing,
              {"station": (sw, sr), "cli": (cw, cr), "engine": (ew, er)},
              figures, commits, guard, "a", station=served)
        holder = _spawn(HOLDER, str(forest), str(held_for + 1.0))
        try:
            assert holder.stdout is not None
            if holder.stdout.readline().strip() != "holding":
                raise RuntimeError(f"the holder did not start: {holder.communicate()[1]}")
            before = git(forest, "rev-parse", "HEAD").strip()
            _race(forest, time.time() + held_for - 0.5,
                  {"station": (max(1, sw // 2), 1) if station else (0, 0),
                   "cli": (1, 1), "engine": (1, 1)},
                  figures, commits, guard, "h", station=served, hold=_Hold(holder.pid))
            if git(forest, "rev-parse", "HEAD").strip() != before:
                figures.failed += 1
                figures.failures.append("a write committed while a process held the "
                                        "forest open for writing")
        finally:
            holder.communicate(timeout=60)
    history = set(git(forest, "rev-list", "HEAD").split())
    with Vine(forest, writable=False) as vine:
        for sha, node_id in commits:
            if sha not in history or "error" in vine.look(node_id):
                figures.lost += 1
                figures.failures.append(f"committed {node_id} ({sha[:10]}) is gone")
        problems = forest_faults(vine, forest)
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=forest, capture_output=True,
                          text=True)
    if fsck.returncode != 0:
        problems.append(f"git fsck: {fsck.stderr[-300:]}")
    figures.failures += problems
    figures.failed += len(problems)
    return figures


# -- a file system that refuses writes ----------------------------------------------------

# A writer under a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored): every write that
# grows a file past the limit fails with EFBIG, as one past the free space fails with
# ENOSPC. Each kind of write is made large enough to cross the limit.
DISK_FULL_CHILD = """
import json, resource, signal, sys
from monkeyllm import Vine
root, limit = sys.argv[1], int(sys.argv[2])
big = "x" * (2 * limit)
vine = Vine(root)
vine.look("sales/exchange-policy")          # the catalog is open before the limit
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
writes = [
    ("plant-note", lambda: vine.plant({"id": "torture/huge", "type": "note",
        "parent": "torture", "title": "Huge", "summary": "Too large to write.",
        "body": "# Huge\\n\\n" + big})),
    ("plant-dataset", lambda: vine.plant({"id": "torture/huge-data", "type": "dataset",
        "parent": "torture", "title": "Huge data", "summary": "Too many rows to write.",
        "schema": {"t": {"columns": {"id": "INTEGER", "v": "TEXT"}, "primary_key": ["id"]}},
        "rows": {"t": [[n, "y" * 1000] for n in range(2 * limit // 1000)]}})),
    ("graft-append", lambda: vine.graft("sales/exchange-policy",
        {"append_section": {"header": "Huge", "body": big}})),
    ("graft-body", lambda: vine.graft("torture/hub", {"replace_body": "# Hub\\n\\n" + big})),
    ("graft-frontmatter", lambda: vine.graft("torture/hub",
        {"set_frontmatter": {"summary": "The hub, grown past the limit."}, "append_section":
         {"header": "Bulk", "body": big}})),
    ("tend", lambda: vine.tend("torture/data",
        f"UPDATE t SET v = zeroblob({2 * limit}) WHERE id = 1")),
    # Both rewrite torture/bulky (past the limit), which links to the hub.
    ("prune-forced", lambda: vine.prune("torture/hub", force=True)),
    ("transplant", lambda: vine.transplant("torture/hub", "torture/hub-moved")),
]
out = {}
for kind, thunk in writes:
    try:
        out[kind] = thunk()
    except BaseException as exc:
        out[kind] = f"raised {exc!r}"
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
out["after"] = vine.look("sales/exchange-policy", fields=["summary"])
vine.close()
print(json.dumps(out))
"""


@dataclass
class DiskFullFigures:
    """What the refused-write probe found."""

    attempted: int = 0
    readonly: int = 0                 # answered E_READONLY
    other: int = 0                    # answered another envelope (a misleading code)
    internal: int = 0                 # answered E_INTERNAL, or no envelope at all
    changed: int = 0                  # files, HEAD or the working tree not as before
    codes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def _forest_bytes(root: Path) -> dict[str, str]:
    return {k: v for k, v in _digest_tree(root).items() if k != ".vine.lock"}


def disk_full(forest: Path, limit: int = 200_000) -> DiskFullFigures:
    """Every kind of write under a file-size limit that refuses it: each must answer an
    envelope and leave the forest (its files, HEAD, a clean tree) exactly as it was."""
    figures = DiskFullFigures()
    prepare_writes(forest)
    with Vine(forest) as vine:
        vine.look("_index")
        if "error" in vine.look(f"{BRANCH}/bulky"):
            out = vine.plant({"id": f"{BRANCH}/bulky", "type": "note", "parent": BRANCH,
                              "title": "Bulky", "summary": "A note larger than the limit.",
                              "links": [{"rel": "related-to", "target": f"{BRANCH}/hub"}],
                              "body": "# Bulky\n\n" + "z" * (2 * limit)})
            if "error" in out:
                raise RuntimeError(f"cannot prepare the disk-full probe: {out}")
    before, head = _forest_bytes(forest), git(forest, "rev-parse", "HEAD").strip()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", DISK_FULL_CHILD, str(forest), str(limit)],
                          capture_output=True, text=True, timeout=300, env=env)
    try:
        out = json.loads(done.stdout)
    except ValueError:
        figures.failures.append(f"disk-full writer exit {done.returncode}: "
                                f"{done.stderr[-300:]}")
        return figures
    after = out.pop("after")
    for kind, answer in out.items():
        figures.attempted += 1
        code = answer.get("error", {}).get("code") if isinstance(answer, dict) else None
        figures.codes[code or "no envelope"] = figures.codes.get(code or "no envelope", 0) + 1
        if code == "E_READONLY":
            figures.readonly += 1
        elif code and code != "E_INTERNAL":
            figures.other += 1
        else:
            figures.internal += 1
            figures.failures.append(f"disk full, {kind}: {str(answer)[:200]}")
    if "error" in after:
        figures.failures.append(f"disk full: a read after the refusals failed: {after}")
    now = _forest_bytes(forest)
    moved = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    dirty = _status(forest)
    if moved or dirty or git(forest, "rev-parse", "HEAD").strip() != head:
        figures.changed = len(moved) or 1
        figures.failures.append(f"disk full: the forest changed: {moved[:5]} {dirty[:200]!r}")
    return figures


# -- malformed forests -------------------------------------------------------------------


def _note(node_id: str, summary: str, body: str, links: list[str] = ()) -> str:
    linked = "".join(f"- rel: related-to\n  target: {t}\n" for t in links)
    return (f"---\nid: {node_id}\ntype: note\ntitle: {node_id.rsplit('/', 1)[-1]}\n"
            f"summary: {summary}\ncreated: '2026-01-05'\nupdated: '2026-01-05'\n"
            + (f"links:\n{linked}" if linked else "") + f"---\n\n{body}\n")


# Each defect planted by hand (outside the engine), with the validate codes it must draw.
DEFECTS: dict[str, tuple[str, bytes, set[str]]] = {
    "bad YAML": ("sales/bad-yaml.md", b"---\nid: sales/bad-yaml\ntitle: [unclosed\n"
                 b"summary: : :\n---\n\nBody.\n", {"file.unparseable"}),
    "binary file named .md": ("sales/binary.md", bytes(range(256)) * 64,
                              {"file.unparseable"}),
    "not UTF-8": ("sales/latin.md", "---\nid: sales/latin\n---\n\ncaf\u00e9\n"
                  .encode("latin-1"), {"file.unparseable"}),
    "no frontmatter": ("sales/plain.md", b"# Just text\n\nNo frontmatter.\n",
                       {"file.unparseable"}),
    "id claimed twice": ("sales/impostor.md", _note(
        "sales/exchange-policy", "An impostor claiming the exchange policy's id.",
        "# Impostor").encode(), {"frontmatter.id-mismatch"}),
    "link to nowhere": ("sales/dangling.md", _note(
        "sales/dangling", "A note whose link leads nowhere.", "# Dangling",
        ["sales/no-such-node"]).encode(), {"links.dangling"}),
}
# Hostile but healthy: they must be served like any other node.
HEALTHY_EXTRAS = {
    "sales/huge.md": _note("sales/huge", "A note with a 5 MB body.",
                           "# Huge\n\n## Bulk\n\n" + ("lorem ipsum dolor " * 60 + "\n") * 4700),
    "sales/cycle-a.md": _note("sales/cycle-a", "Half of a link cycle, A.", "# A",
                              ["sales/cycle-b"]),
    "sales/cycle-b.md": _note("sales/cycle-b", "Half of a link cycle, B.", "# B",
                              ["sales/cycle-a"]),
}


@dataclass
class MalformedFigures:
    """What the malformed-forest probe found."""

    defects: int = 0
    named: int = 0                   # defects validate names with the expected code
    healthy: int = 0
    served: int = 0                  # healthy nodes answering look, pick and locate
    failures: list[str] = field(default_factory=list)


def plant_defects(forest: Path) -> None:
    """Write every defect and hostile-but-healthy node into ``forest``'s files."""
    for path, data, _ in DEFECTS.values():
        (forest / path).write_bytes(data)
    for path, text in HEALTHY_EXTRAS.items():
        (forest / path).write_text(text, encoding="utf-8")


def probe_malformed(forest: Path) -> MalformedFigures:
    """Plant the defects in ``forest`` (a copy), then: every healthy node answers look,
    pick and locate within budget, and ``validate`` names each defect."""
    from monkeyllm import budget

    healthy = {i: None for i in _node_ids(forest)}
    plant_defects(forest)
    healthy.update({p[:-3]: None for p in HEALTHY_EXTRAS})
    figures = MalformedFigures(defects=len(DEFECTS), healthy=len(healthy))
    findings = validate(forest)
    for name, (path, _, codes) in DEFECTS.items():
        found = {f.code for f in findings if f.path == path}
        if codes <= found:
            figures.named += 1
        else:
            figures.failures.append(f"validate does not name {name}: {sorted(found)}")
    with Vine(forest, writable=False) as vine:
        for node_id in healthy:
            answers = {"look": vine.look(node_id), "pick": vine.pick(node_id),
                       "move": vine.move(node_id)}
            title = answers["look"].get("title") or node_id
            answers["locate"] = vine.locate(str(title), k=5)
            wrong = [f"{call}: {str(out)[:160]}" for call, out in answers.items()
                     if "error" in out or budget.cost(out) > CALLS[call].budget]
            if "error" not in answers["locate"] and not any(
                    r["id"] == node_id for r in answers["locate"]["results"]) \
                    and not node_id.endswith("_index"):
                wrong.append(f"locate {title!r} does not find it")
            if wrong:
                figures.failures.append(f"{node_id}: " + "; ".join(wrong))
            else:
                figures.served += 1
        own = vine.look("sales/exchange-policy")
        if own.get("summary", "").startswith("An impostor"):
            figures.failures.append("the impostor took over sales/exchange-policy")
    return figures


def scratch(base: Path) -> Path:
    """A git-backed copy of sample-brain (payloads included) under ``base``."""
    forest = base / "forest"
    subprocess.run(["git", "clone", "-q", str(REPO / "tests" / "sample_data" /
                                               "sample-brain.bundle"), str(forest)],
                   check=True, capture_output=True)
    for payload in SAMPLE.rglob("*.db"):
        if "_derived" not in payload.parts:
            shutil.copy2(payload, forest / payload.relative_to(SAMPLE))
    return forest


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
        "writes attempted": crash.attempted, "writes committed": crash.committed,
        "crashes injected": crash.faults + crash.kills,
        "... by an exception at a write step": crash.faults,
        "... by SIGKILL of the writer": crash.kills,
        "... of which inside a write": crash.kills_mid_write,
        "writes lost": crash.lost, "crash checks failed": len(crash.failures),
        "derived-state damages": repair.tried, "... not repaired": repair.failed,
        "hostile statements tried": sql.tried, "hostile statements escaped": sql.escaped,
        "hostile statements over their limit": sql.slow,
        "scope probes tried": scopes.tried, "scope probes leaked": scopes.leaked,
        "scope probes E_INTERNAL": scopes.internal, "files outside written": scopes.written,
        "scope probes over the Station (admin and scoped keys)": rest.tried,
        "... leaked (Station)": rest.leaked,
        "... 5xx, E_INTERNAL or not JSON (Station)": rest.internal,
        "... files outside written (Station)": rest.written,
        "concurrent operations run": race.operations,
        "... writes racing (Station, CLI and engine at once)": race.writes,
        "... writes committed": race.committed, "... writes E_LOCKED": race.locked,
        "... E_LOCKED share of the racing writes (%)": race.locked_share,
        "... reads": race.reads,
        **{f"... {surface}: writes / committed / E_LOCKED / reads": "{} / {} / {} / {}".format(
            row["writes"], row["committed"], row["locked"], row["reads"])
           for surface, row in sorted(race.surfaces.items())},
        **{f"... {surface}: median write (ms)": race.median_ms(surface)
           for surface in sorted(race.latency)},
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
        "failures": (crash.failures + repair.failures + race.failures + malformed.failures
                     + sql.failures + scopes.failures + rest.failures + full.failures),
    }


MUST_BE_ZERO = ("writes lost", "crash checks failed", "... not repaired",
                "hostile statements escaped", "hostile statements over their limit",
                "scope probes leaked", "scope probes E_INTERNAL", "files outside written",
                "concurrent operations failed unexpectedly", "concurrent commits lost",
                "... leaked (Station)", "... 5xx, E_INTERNAL or not JSON (Station)",
                "... files outside written (Station)",
                "... answered E_INTERNAL or no envelope", "... forest changed")


def render(figures: dict[str, Any]) -> str:
    lines = [f"{'figure':54} {'value':>14}   must be"]
    must = {key: 0 for key in MUST_BE_ZERO}
    must["... named by validate"] = figures.get("malformed-forest defects", "")
    must["... served (look, pick, move, locate)"] = figures.get("healthy nodes beside them", "")
    for key, value in figures.items():
        if key in ("answers", "disk-full answers", "failures",
                   "E_LOCKED answers while racing"):
            continue
        lines.append(f"{key:54} {value:>14}   {must.get(key, '')}")
    lines.append("answers: " + ", ".join(f"{k} {v}" for k, v in sorted(figures["answers"].items())))
    lines.append("disk-full answers: " + ", ".join(
        f"{k} {v}" for k, v in sorted(figures.get("disk-full answers", {}).items())))
    lines += ["E_LOCKED while racing: " + text
              for text in figures.get("E_LOCKED answers while racing", [])]
    lines += ["FAIL " + f for f in figures["failures"][:50]]
    if len(figures["failures"]) > 50:
        lines.append(f"FAIL ... and {len(figures['failures']) - 50} more")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-slow", action="store_true",
                        help="skip the statements that only the time limit stops")
    parser.add_argument("--kills", type=int, default=200,
                        help="SIGKILLs of a writer at random moments (default 200)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="how long 8 writers and 8 readers race (default 60)")
    args = parser.parse_args()
    figures = run(slow=not args.no_slow, kills=args.kills, seconds=args.seconds)
    print(json.dumps(figures, indent=2) if args.json else render(figures))
    raise SystemExit(1 if figures["failures"] else 0)


if __name__ == "__main__":
    main()
