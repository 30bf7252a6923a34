"""Hostile SQL through ``query``, and ids and paths that try to leave the forest, through
the engine and over the Station's REST (admin and scoped keys)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.torture_kit import STATION_FOREST, digest_tree, http, serve_station
from monkeyllm import Vine

DATASET = "sales/orders-2026"
TABLE = "orders"


# E_SCHEMA: the call's signature refuses it before any SQL is read (an empty statement).
ALLOWED = {"E_QUERY_FORBIDDEN", "E_QUERY_INVALID", "E_TIMEOUT", "E_SCHEMA"}
LIMIT_S = 2.0 + 1.5  # the guard's 2-second limit plus this machine's slack
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
    "SELECT 1；DROP TABLE orders",  # a full-width semicolon
    "SELECT 1\u037e DROP TABLE orders",  # a Greek question mark
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


@dataclass
class SqlFigures:
    """What the SQL probes found."""

    tried: int = 0
    escaped: int = 0  # a statement that ran, or changed a byte
    slow: int = 0  # over its time limit
    codes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def probe_sql(workdir: Path, statements: list[str]) -> SqlFigures:
    """Run every statement through ``query`` on a copy of sample-brain in ``workdir``."""
    forest = workdir / "forest"
    before = digest_tree(workdir)
    figures = SqlFigures()
    cwd = os.getcwd()
    os.chdir(workdir)  # relative ATTACH / VACUUM INTO targets would land here
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
    after = digest_tree(workdir)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        figures.escaped += len(changed)
        figures.failures += [f"file changed: {c}" for c in changed]
    return figures


ESCAPES = [
    "..",
    "../outside/secret",
    "../../etc/passwd",
    "/etc/passwd",
    "/outside/secret",
    "sales/../../outside/secret",
    "sales/../../../etc/passwd",
    "./../outside/secret",
    "sales/..",
    "sales/./../..",
    "%2e%2e/outside/secret",
    "..%2foutside%2fsecret",
    "..\\outside\\secret",
    "sales\\..\\..\\outside",
    "\x00",
    "sales/exchange-policy\x00",
    "a" * 5000,
    "/".join(["a"] * 800),
    "sales/" + "é" * 300,
    "\u2025/outside/secret",
    "\uff0e\uff0e/outside/secret",
    "sales\u2215..\u2215..",
    "~",
    "~/secret",
    "$HOME/secret",
    "link-out",
    "link-out/secret",
    "sales/link-dir/secret",
    "_derived/catalog",
    ".git/config",
    ".vine",
    "_assets/x",
    " ../outside/secret ",
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
        yield (
            "plant",
            {
                "node": {
                    "id": bad,
                    "type": "note",
                    "parent": "_index",
                    "title": "T",
                    "summary": "S.",
                }
            },
        )
        yield (
            "plant",
            {
                "node": {
                    "id": "sales/ok-note",
                    "type": "note",
                    "parent": bad,
                    "title": "T",
                    "summary": "S.",
                }
            },
        )
        yield "graft", {"id": bad, "patch": {"set_frontmatter": {"summary": "S."}}}
        yield (
            "graft",
            {
                "id": "sales/exchange-policy",
                "patch": {"add_links": [{"rel": "related-to", "target": bad}]},
            },
        )
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
    leaked: int = 0  # a response carrying the outside secret
    internal: int = 0  # an E_INTERNAL (a bug)
    written: int = 0  # files outside the forest changed
    failures: list[str] = field(default_factory=list)

    def judge(self, out: Any, where: str, internal: str | None = None) -> None:
        """Count one probe's answer: a leak of the secret, or E_INTERNAL (or no JSON
        object at all), each a failure named by ``where`` (``internal``, when given,
        names the second)."""
        self.tried += 1
        text = json.dumps(out, ensure_ascii=False, default=str)
        if SECRET in text:
            self.leaked += 1
            self.failures.append(f"leak: {where}")
        if not isinstance(out, dict) or out.get("error", {}).get("code") == "E_INTERNAL":
            self.internal += 1
            self.failures.append(internal or f"{where}: {text[:200]}")

    def judge_outside(self, workdir: Path, before: dict[str, str], message: str) -> None:
        """Count a change to the files outside the forest since ``before``."""
        if digest_tree(_outside(workdir)) != before:
            self.written += 1
            self.failures.append(message)


def _outside(workdir: Path) -> Path:
    return workdir / "outside"


def prepare_outside(workdir: Path) -> None:
    """A secret beside the forest, and symlinks inside the forest pointing at it."""
    outside = _outside(workdir)
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text(
        f"---\nid: secret\ntype: note\ntitle: Secret {SECRET}\nsummary: {SECRET}.\n---\n\n"
        f"# Secret\n\n{SECRET}\n",
        encoding="utf-8",
    )
    forest = workdir / "forest"
    for name, target in (("link-out.md", outside / "secret.md"), ("sales/link-dir", outside)):
        link = forest / name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(target)


def probe_scopes(workdir: Path) -> ScopeFigures:
    """Every scope probe through ``Vine.call`` on a writable copy."""
    prepare_outside(workdir)
    outside_before = digest_tree(_outside(workdir))
    figures = ScopeFigures()
    with Vine(workdir / "forest") as vine:
        for call, args in scope_probes():
            out = vine.call(call, args)
            where = f"{call} {str(args)[:100]}"
            figures.judge(out, where, f"E_INTERNAL: {where}")
    figures.judge_outside(workdir, outside_before, "a file outside the forest changed")
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
    outside_before = digest_tree(_outside(workdir))
    figures = ScopeFigures()
    with Store(workdir) as store:
        scoped = keys.add(
            store,
            "torture-sales",
            STATION_FOREST,
            ["sales"],
            [],
            keys.parse_caps("read,query,write,tend"),
        )[1]
    with serve_station(workdir) as (url, admin), httpx.Client(timeout=120) as client:
        for who, key in (("admin", admin), ("sales", scoped)):
            for call, args in scope_probes():
                out = http(client, url, key, call, args)
                where = f"station/{who}: {call} {str(args)[:100]}"
                figures.judge(out, where)
    figures.judge_outside(
        workdir, outside_before, "a file outside the forest changed (Station pass)"
    )
    return figures
