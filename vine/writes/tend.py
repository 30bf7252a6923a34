"""``tend``: write rows into a dataset, then commit the refreshed passport."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from .. import sqlguard
from ..errors import NotFound, QueryForbidden
from ..heat import READ_DEPOSIT
from ..reads.query import sql_error
from . import dataset, render
from .context import WriteContext
from .transaction import fault


def _write_rows(path: Any, verdict: sqlguard.Verdict) -> int:
    """Run the statement in its own SQLite transaction; returns the rows it changed."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    try:
        deadline = sqlguard.guard_connection(conn, allow_writes=True)
        deadline[0] = time.perf_counter()
        try:
            conn.execute("BEGIN IMMEDIATE")
            cur = conn.execute(verdict.sql)
            cur.fetchall()  # a RETURNING clause's rows: read them so the statement ends
            cur.close()
            # changes() counts what the statement wrote, WITH ... INSERT included.
            affected = conn.execute("SELECT changes()").fetchone()[0]
            fault("before-payload-commit")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise sql_error(conn, exc, deadline[0]) from None
    finally:
        conn.close()
    return affected


def tend(ctx: WriteContext, node_id: str, sql: str) -> dict[str, Any]:
    """One guarded INSERT, UPDATE ... WHERE or DELETE ... WHERE on the payload; then the
    node's ``payload_hash`` and ``updated`` in a markdown-only commit (none, and
    ``commit: None``, when no row changed and the recorded hash still holds)."""
    row = ctx.forest.resolve(node_id)
    node_id = row["id"]
    if row["type"] != "dataset" or row["payload_type"] not in (None, "sqlite"):
        raise QueryForbidden(f"{node_id} is not a SQLite dataset (type {row['type']})")
    verdict = sqlguard.check_write(sql)
    path = ctx.forest.payload_path(row)
    if not path.is_file():
        raise NotFound(f"payload of {node_id} is missing: {path.name}")
    started = time.perf_counter()
    md = ctx.root / (node_id + ".md")
    # The journal names the payload first: a writer killed inside SQLite's own
    # transaction leaves a hot journal that the next writable open rolls back.
    # Should anything fail after the rows are committed, they stay written: the hash
    # drift is what validate reports and the next tend repairs.
    with ctx.transaction() as txn:
        txn.payload(path)
        affected = _write_rows(path, verdict)
        digest = dataset.sha256_of(path)
        node = ctx.forest.read(node_id)
        meta = dict(node.meta)
        sha: str | None = None
        # No row changed and the recorded hash still holds: nothing to commit, as for
        # a graft that changes no file.
        if affected or str(meta.get("payload_hash") or "").lower() != digest:
            meta["payload_hash"] = digest
            meta["updated"] = render.today()
            txn.write(md, render.render(meta, node.body))
            fault("after-node")
            sha = txn.commit(f"tend({node_id}): {verdict.verb} {affected} row(s)")
    ctx.forest.heat.deposit([node_id], READ_DEPOSIT)
    return {
        "id": node_id,
        "rows_affected": affected,
        "payload_hash": digest,
        "commit": sha,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 2),
    }
