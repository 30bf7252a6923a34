"""Repairs of what is safe to repair mechanically, in one commit."""

from __future__ import annotations

import os
import re
from typing import Any

from ..writes import render
from .model import Finding, _Issue, _Run
from .nodes import _payload_rel, _sha256
from .run import _check, _load
from .tree import _index_issues

# -- repairs -----------------------------------------------------------------------


def fix(root: str | os.PathLike[str], *, payloads: bool = True) -> dict[str, Any]:
    """Repair what needs no judgement, in one commit ``validate(fix): N repairs``.

    Index entries (missing, extra, duplicate, misplaced, stale), coverage strings and
    payload hashes (when ``payloads``); every rewritten file gets ``updated`` = today.
    It opens the forest writable (taking its lock) and writes through the engine's
    transaction, so a failure leaves every file as it was. Nothing to repair: no commit.

    Returns:
        ``{"commit": sha or None, "repairs": [{code, id, path, message}], "files": [...]}``.
    """
    from ..vine import Vine

    with Vine(root) as vine:
        run = _check(_load(vine.root, payloads))
        plan = _plan(run)
        if not plan:
            return {"commit": None, "repairs": [], "files": []}
        repairs = [r for _, done in plan.values() for r in done]
        ctx = vine._writing()
        with ctx.transaction() as txn:
            paths = [vine.root / path for path in plan]
            txn.touch(*paths)
            for path, (text, _) in plan.items():
                txn.write(vine.root / path, text)
            sha = txn.commit(f"validate(fix): {len(repairs)} repairs")
    return {"commit": sha, "repairs": repairs, "files": sorted(plan)}


def _plan(run: _Run) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each file to rewrite: its new text and the repairs it carries."""
    fixable: dict[str, list[Finding]] = {}
    for finding in run.findings:
        if finding.fixable and finding.id is not None:
            fixable.setdefault(finding.id, []).append(finding)
    plan = {}
    for node_id, found in fixable.items():
        f = run.files[node_id]
        assert f.node is not None
        meta, body = dict(f.node.meta), f.node.body
        codes = {x.code for x in found}
        if any(code.startswith("index.") for code in codes):
            body = _repair_entries(body, _index_issues(run, f))
            meta["coverage"] = render.coverage(body)
        if codes & {"payload.hash-drift", "payload.hash-missing"}:
            rel = _payload_rel(run.root, node_id, meta.get("payload"))
            assert rel is not None
            meta["payload_hash"] = _sha256(run, rel)
        meta["updated"] = render.today()
        done = [{"code": x.code, "id": x.id, "path": x.path, "message": x.message}
                for x in found]
        plan[f.path] = (render.render(meta, body), done)
    return plan


def _repair_entries(body: str, issues: list[_Issue]) -> str:
    """The body with extra, duplicate and misplaced lines gone, stale ones rewritten and
    missing ones added at the end of their section."""
    lines: list[str | None] = list(body.split("\n"))
    for issue in issues:
        if issue.line is None:
            continue
        if issue.kind == "stale" and issue.new is not None:
            lines[issue.line] = issue.new
        elif issue.kind in ("extra", "duplicate") or (issue.kind == "misplaced" and issue.new):
            lines[issue.line] = None
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(line for line in lines if line is not None))
    for issue in issues:
        if issue.kind in ("missing", "misplaced") and issue.new is not None:
            text = render.insert_entry(text, issue.section, issue.new)
    return text
