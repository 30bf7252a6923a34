"""tend: one guarded INSERT, UPDATE ... WHERE or DELETE ... WHERE into a dataset payload,
then a markdown-only commit of the refreshed passport."""

from __future__ import annotations

import datetime
import hashlib
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from .forestkit import PROSPECTING, age, assert_error, assert_ok, git, head, meta_of, node, status

TODAY = datetime.date.today().isoformat()
OLD = "2025-01-01"
DS = "clients/prospecting-2026"


# -- helpers -------------------------------------------------------------------------


def rows_of(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT * FROM clients ORDER BY name").fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The contract's dataset planted under clients/_index, plus a note; aged files."""
    root = tmp_path_factory.mktemp("tend") / "f"
    with Vine.init(root, "Title") as v:
        for spec in (
            node("clients", "_index", "Clients", "Clients and prospects.", type="branch"),
            dict(PROSPECTING),
            node("clients/memo", "clients", "Memo", "A note, not a dataset."),
        ):
            assert_ok(v.plant(spec))
    age(root, TODAY, OLD)
    return root


class Forest:
    def __init__(self, vine: Vine) -> None:
        self.vine = vine
        self.root = vine.root
        self.md = vine.root / "clients" / "prospecting-2026.md"
        self.db = vine.root / "clients" / "prospecting-2026.db"

    def check_tended(self, out: dict[str, Any], verb: str, n: int, before: str) -> None:
        assert set(out) == {"id", "rows_affected", "payload_hash", "commit", "elapsed_ms"}
        assert out["id"] == DS and out["rows_affected"] == n
        assert isinstance(out["elapsed_ms"], int | float) and out["elapsed_ms"] >= 0
        digest = hashlib.sha256(self.db.read_bytes()).hexdigest()
        assert out["payload_hash"] == digest
        meta = meta_of(self.md)
        assert meta["payload_hash"] == digest and meta["updated"] == TODAY
        assert out["commit"] == head(self.root)
        assert git(self.root, "rev-parse", "HEAD~1").strip() == before
        log = git(self.root, "log", "-1", "--format=%s|%an <%ae>|%cn <%ce>").strip()
        assert log == (
            f"tend({DS}): {verb} {n} row(s)|vine <vine@monkeyllm.local>|vine <vine@monkeyllm.local>"
        )
        assert git(self.root, "show", "--name-only", "--format=", "HEAD").split() == [
            "clients/prospecting-2026.md"
        ]
        assert status(self.root) == ""

    def refused(self, sql: str, code: str, node_id: str = DS) -> dict[str, Any]:
        before, data, md = head(self.root), self.db.read_bytes(), self.md.read_bytes()
        err = assert_error(self.vine.tend(node_id, sql), code)
        assert self.db.read_bytes() == data and self.md.read_bytes() == md
        assert head(self.root) == before and status(self.root) == ""
        return err

    def change_outside(self) -> None:
        """A row written to the payload beside the engine: its hash drifts."""
        conn = sqlite3.connect(self.db)
        try:
            with conn:
                conn.execute("INSERT INTO clients VALUES ('Side', 's', 's', 'd')")
        finally:
            conn.close()


def _open(template: Path, root: Path) -> Vine:
    shutil.copytree(template, root, ignore=shutil.ignore_patterns("_derived", ".vine.lock"))
    return Vine(root)


@pytest.fixture
def forest(template: Path, tmp_path: Path) -> Iterator[Forest]:
    with _open(template, tmp_path / "f") as v:
        yield Forest(v)


@pytest.fixture(scope="module")
def shared(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forest]:
    """One forest for the refusals, which must leave it untouched."""
    with _open(template, tmp_path_factory.mktemp("tend-refusals") / "f") as v:
        yield Forest(v)


# -- the contract's examples ---------------------------------------------------------


def test_seed_examples(forest: Forest) -> None:
    vine = forest.vine
    before = head(forest.root)
    out = assert_ok(
        vine.tend(
            DS, "INSERT INTO clients VALUES ('Globex', 'globex.example', 'retail', '2026-08-14')"
        )
    )
    forest.check_tended(out, "INSERT", 1, before)
    assert rows_of(forest.db) == [
        ("Acme", "acme.example", "industry", "2026-01-14"),
        ("Globex", "globex.example", "retail", "2026-08-14"),
    ]
    before = head(forest.root)
    out = assert_ok(vine.tend(DS, "UPDATE clients SET segment = 'industry' WHERE name = 'Globex'"))
    forest.check_tended(out, "UPDATE", 1, before)
    assert rows_of(forest.db)[1][2] == "industry"
    # query sees the rows at once, in this Vine and in a new read-only one.
    sql = "SELECT name, segment FROM clients ORDER BY name"
    expected = [["Acme", "industry"], ["Globex", "industry"]]
    assert assert_ok(vine.query(DS, sql))["rows"] == expected
    with Vine(forest.root, writable=False) as reader:
        assert assert_ok(reader.query(DS, sql))["rows"] == expected
        assert assert_ok(reader.look(DS))["updated"] == TODAY
    assert not [f for f in git(forest.root, "ls-files").split() if f.endswith(".db")]


def test_query_then_tend_then_query(forest: Forest) -> None:
    """A pooled read connection neither blocks tend nor serves stale rows."""
    vine = forest.vine
    assert assert_ok(vine.query(DS, "SELECT COUNT(*) FROM clients"))["rows"] == [[1]]
    assert_ok(vine.tend(DS, "INSERT INTO clients VALUES ('B', 'b.example', 'x', '2026')"))
    assert assert_ok(vine.query(DS, "SELECT COUNT(*) FROM clients"))["rows"] == [[2]]
    assert_ok(vine.tend(DS, "DELETE FROM clients WHERE name = 'B'"))
    assert assert_ok(vine.query(DS, "SELECT COUNT(*) FROM clients"))["rows"] == [[1]]


@pytest.mark.parametrize(
    "sql, verb, n, names",
    [
        (
            "INSERT INTO clients VALUES ('B', 'b', 's', 'd'), ('C', 'c', 's', 'd')",
            "INSERT",
            2,
            ["Acme", "B", "C"],
        ),
        ("INSERT INTO clients (name, site) VALUES ('Z', 'z.example');", "INSERT", 1, ["Acme", "Z"]),
        (
            "INSERT INTO clients SELECT name || '2', site, segment, collected_at FROM clients",
            "INSERT",
            1,
            ["Acme", "Acme2"],
        ),
        ("update clients set site = 'new.example' where name = 'Acme'", "UPDATE", 1, ["Acme"]),
        ("DELETE FROM clients WHERE name = 'Acme'", "DELETE", 1, []),
        ("DELETE FROM clients WHERE 1=1", "DELETE", 1, []),
    ],
)
def test_dml(forest: Forest, sql: str, verb: str, n: int, names: list[str]) -> None:
    before = head(forest.root)
    out = assert_ok(forest.vine.tend(DS, sql))
    forest.check_tended(out, verb, n, before)
    assert [r[0] for r in rows_of(forest.db)] == names


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE clients SET site = 'x' WHERE name = 'Nobody'",
        "DELETE FROM clients WHERE name = 'Nobody'",
        "INSERT OR IGNORE INTO clients VALUES ('Acme', 'a', 'b', 'c')",
    ],
)
def test_a_statement_that_changes_no_row_makes_no_commit(forest: Forest, sql: str) -> None:
    """Like a graft that changes no file: commit null, the passport and history alone."""
    before, md, data = head(forest.root), forest.md.read_bytes(), forest.db.read_bytes()
    out = assert_ok(forest.vine.tend(DS, sql))
    assert out["rows_affected"] == 0 and out["commit"] is None
    assert out["payload_hash"] == hashlib.sha256(data).hexdigest()
    assert forest.md.read_bytes() == md and forest.db.read_bytes() == data
    assert head(forest.root) == before and status(forest.root) == ""


def test_no_row_changed_still_records_a_drifted_hash(forest: Forest) -> None:
    """A payload changed outside the engine: even a statement that changes no row
    records the file's real hash (the drift is healed in a commit)."""
    forest.change_outside()
    before = head(forest.root)
    out = assert_ok(forest.vine.tend(DS, "DELETE FROM clients WHERE name = 'Nobody'"))
    forest.check_tended(out, "DELETE", 0, before)


def test_many_rows_counted(forest: Forest) -> None:
    values = ", ".join(f"('n{i:03d}', 's', 'seg', '2026')" for i in range(120))
    assert (
        assert_ok(forest.vine.tend(DS, f"INSERT INTO clients VALUES {values}"))["rows_affected"]
        == 120
    )
    before = head(forest.root)
    out = assert_ok(forest.vine.tend(DS, "UPDATE clients SET segment = 'big' WHERE name LIKE 'n%'"))
    forest.check_tended(out, "UPDATE", 120, before)


def test_with_clause_counts_its_rows(forest: Forest) -> None:
    """A DML statement led by a CTE is still one INSERT; its count must be real."""
    before = head(forest.root)
    out = assert_ok(
        forest.vine.tend(
            DS,
            "WITH n(x) AS (SELECT 'Initech') "
            "INSERT INTO clients SELECT x, 'initech.example', 'tech', '2026-09-01' FROM n",
        )
    )
    assert [r[0] for r in rows_of(forest.db)] == ["Acme", "Initech"]
    forest.check_tended(out, "INSERT", 1, before)


def test_returning_clause_is_handled(forest: Forest) -> None:
    """INSERT ... RETURNING passes the guard; it must then either work or be refused as
    forbidden, never fail inside the engine with the payload half-done."""
    data = forest.db.read_bytes()
    out = forest.vine.tend(DS, "INSERT INTO clients VALUES ('R', 'r', 's', 'd') RETURNING name")
    if "error" in out:
        assert_error(out, "E_QUERY_FORBIDDEN")
        assert forest.db.read_bytes() == data
    else:
        assert out["rows_affected"] == 1
        assert [r[0] for r in rows_of(forest.db)] == ["Acme", "R"]
    assert status(forest.root) == ""


def test_hash_drift_is_healed_by_the_next_tend(forest: Forest) -> None:
    forest.change_outside()
    assert meta_of(forest.md)["payload_hash"] != hashlib.sha256(forest.db.read_bytes()).hexdigest()
    before = head(forest.root)
    out = assert_ok(forest.vine.tend(DS, "DELETE FROM clients WHERE name = 'Side'"))
    forest.check_tended(out, "DELETE", 1, before)


def test_frontmatter_and_body_otherwise_kept(forest: Forest) -> None:
    old_meta = meta_of(forest.md)
    old_body = forest.md.read_text(encoding="utf-8").partition("\n---\n\n")[2]
    assert_ok(forest.vine.tend(DS, "DELETE FROM clients WHERE name = 'Acme'"))
    meta = meta_of(forest.md)
    assert {k: v for k, v in meta.items() if k not in ("payload_hash", "updated")} == {
        k: v for k, v in old_meta.items() if k not in ("payload_hash", "updated")
    }
    assert list(meta) == list(old_meta)
    assert forest.md.read_text(encoding="utf-8").partition("\n---\n\n")[2] == old_body


# -- refusals ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM clients",
        "WITH a AS (SELECT 1) SELECT * FROM a",
        "UPDATE clients SET segment = 'x'",
        "DELETE FROM clients",
        "DELETE FROM clients WHERE name IN (SELECT name FROM clients WHERE 1=1) OR 1; "
        "DELETE FROM clients",
        "INSERT INTO clients VALUES ('A1', 'a', 'b', 'c'); INSERT INTO clients VALUES "
        "('A2', 'a', 'b', 'c')",
        "ATTACH DATABASE 'other.db' AS other",
        "DETACH DATABASE other",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = WAL",
        "DROP TABLE clients",
        "CREATE TABLE other (a TEXT)",
        "CREATE INDEX i ON clients(site)",
        "ALTER TABLE clients ADD COLUMN x TEXT",
        "VACUUM",
        "REINDEX clients",
        "BEGIN",
        "COMMIT",
        "REPLACE INTO clients VALUES ('Acme', 'a', 'b', 'c')",
        "INSERT INTO clients SELECT name, type, 'x', 'y' FROM pragma_table_info('clients')",
        "INSERT INTO clients VALUES (load_extension('evil'), 'a', 'b', 'c')",
    ],
    ids=[
        "select",
        "with-select",
        "update-no-where",
        "delete-no-where",
        "two-deletes",
        "two-inserts",
        "attach",
        "detach",
        "pragma",
        "pragma-journal",
        "drop",
        "create",
        "create-index",
        "alter",
        "vacuum",
        "reindex",
        "begin",
        "commit",
        "replace",
        "pragma-function",
        "load-extension",
    ],
)
def test_forbidden_statements(shared: Forest, sql: str) -> None:
    shared.refused(sql, "E_QUERY_FORBIDDEN")


def test_text_that_is_no_statement_is_invalid(shared: Forest) -> None:
    err = shared.refused("hello world", "E_QUERY_INVALID")
    assert (err["line"], err["column"]) == (1, 1)
    err = shared.refused("INSRT INTO clients VALUES (1)", "E_QUERY_INVALID")
    assert 'near "INSRT"' in err["message"]


def test_not_a_dataset(shared: Forest) -> None:
    sql = "INSERT INTO clients VALUES ('N', 'n', 'n', 'n')"
    shared.refused(sql, "E_QUERY_FORBIDDEN", "clients/memo")
    shared.refused(sql, "E_QUERY_FORBIDDEN", "clients/_index")
    shared.refused(sql, "E_NOT_FOUND", "clients/nothing")


@pytest.mark.parametrize(
    "sql, hint",
    [
        ("INSERT INTO prospects VALUES ('x')", "clients"),
        ("UPDATE clients SET revenue = 1 WHERE name = 'Acme'", "collected_at"),
        ("DELETE FROM clients WHERE region = 'south'", "segment"),
        ("INSERT INTO clients VALUES ('too', 'few')", None),
        ("INSERT INTO clients VALUES ('Acme', 'dup.example', 'x', 'y')", None),
        ("INSERT INTO clients VALUES (", None),
    ],
    ids=[
        "no-table",
        "no-column-update",
        "no-column-delete",
        "wrong-width",
        "duplicate-key",
        "syntax",
    ],
)
def test_invalid_statements(shared: Forest, sql: str, hint: str | None) -> None:
    err = shared.refused(sql, "E_QUERY_INVALID")
    if hint is not None:
        assert hint in err.get("hint", ""), err
    if "prospects" in sql:
        assert "prospects" in err["message"]


def test_missing_payload(forest: Forest) -> None:
    forest.db.unlink()
    before, md = head(forest.root), forest.md.read_bytes()
    assert_error(forest.vine.tend(DS, "DELETE FROM clients WHERE 1=1"), "E_NOT_FOUND")
    assert forest.md.read_bytes() == md and head(forest.root) == before
    assert not forest.db.exists()
    assert status(forest.root) == ""


def test_constraint_violation_rolls_back_the_whole_statement(forest: Forest) -> None:
    """A multi-row INSERT whose second row collides leaves no first row behind."""
    data = forest.db.read_bytes()
    err = assert_error(
        forest.vine.tend(
            DS, "INSERT INTO clients VALUES ('New', 'n', 's', 'd'), ('Acme', 'a', 's', 'd')"
        ),
        "E_QUERY_INVALID",
    )
    assert "UNIQUE" in err["message"] or "constraint" in err["message"].lower()
    assert forest.db.read_bytes() == data
    assert [r[0] for r in rows_of(forest.db)] == ["Acme"]
    assert status(forest.root) == ""
    # A corrected statement then goes through.
    assert (
        assert_ok(forest.vine.tend(DS, "INSERT INTO clients VALUES ('New', 'n', 's', 'd')"))[
            "rows_affected"
        ]
        == 1
    )


def test_read_only_vine_refuses(forest: Forest) -> None:
    with Vine(forest.root, writable=False) as reader:
        before, data = head(forest.root), forest.db.read_bytes()
        assert_error(reader.tend(DS, "DELETE FROM clients WHERE 1=1"), "E_READONLY")
        assert forest.db.read_bytes() == data and head(forest.root) == before


def test_tend_through_call(forest: Forest) -> None:
    out = assert_ok(
        forest.vine.call("tend", {"id": DS, "sql": "DELETE FROM clients WHERE name = 'Acme'"})
    )
    assert out["rows_affected"] == 1
    assert_error(forest.vine.call("tend", {"id": DS}), "E_SCHEMA")
    assert_error(forest.vine.call("tend", {"id": DS, "sql": 3}), "E_SCHEMA")


def test_a_payload_in_the_engines_private_folder_is_refused(forest: Forest) -> None:
    """A dataset passport whose ``payload`` points into ``_derived/`` (hand-written: plant
    only takes a bare ``<name>.db``) must not let tend rewrite the engine's own files,
    just as ids under ``_derived`` are refused."""
    root = forest.root
    text = forest.md.read_text(encoding="utf-8").replace(
        "payload: prospecting-2026.db", "payload: ../_derived/trails.db"
    )
    (root / "clients" / "heat.md").write_text(
        text.replace(f"id: {DS}", "id: clients/heat"), encoding="utf-8"
    )
    assert_ok(forest.vine.look(DS))
    trails = root / "_derived" / "trails.db"
    conn = sqlite3.connect(trails)
    try:
        conn.execute(
            "INSERT OR REPLACE INTO heat(scope, node_id, heat, updated) "
            "VALUES ('', 'marker', 0.5, 0)"
        )
        conn.commit()
    finally:
        conn.close()
    out = forest.vine.tend("clients/heat", "DELETE FROM heat WHERE node_id = 'marker'")
    assert out.get("error", {}).get("code") in ("E_NOT_FOUND", "E_QUERY_FORBIDDEN"), out
    conn = sqlite3.connect(trails)
    try:
        assert conn.execute("SELECT COUNT(*) FROM heat WHERE node_id = 'marker'").fetchone() == (1,)
    finally:
        conn.close()


def test_timeout_leaves_the_payload_and_history_alone(shared: Forest) -> None:
    slow = (
        "INSERT INTO clients SELECT 'slow', 's', 's', 's' WHERE (WITH RECURSIVE "
        "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) "
        "SELECT COUNT(*) FROM c) < 0"
    )
    started = time.perf_counter()
    shared.refused(slow, "E_TIMEOUT")
    assert time.perf_counter() - started < 10
    assert not (shared.root / "clients" / "prospecting-2026.db-journal").exists()
