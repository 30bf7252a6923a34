"""Repairs of what is safe to repair mechanically, in one commit.

A repair is made only from committed content: the file it rewrites and every file the
new text depends on (the child an index entry lists, with its summary) must be exactly
what HEAD holds. So the commit is consistent on its own, and a clone of it validates;
a repair that would copy an uncommitted edit, list an untracked file or drop the entry
of a file whose deletion is not committed is skipped and reported instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from ..writes import render
from .model import EntryIssue, Finding, NodeFile, ValidationRun
from .nodes import payload_rel, payload_sha256
from .run import check_all, load_run
from .tree import coverage_finding, index_issues, issue_finding

# How a file differs from HEAD (None when it does not): Repository.uncommitted.
Uncommitted = Callable[[str], str | None]

# -- repairs -----------------------------------------------------------------------


def fix(
    root: str | os.PathLike[str],
    *,
    payloads: bool = True,
    on_lock_wait: Callable[[dict[str, object]], None] | None = None,
) -> dict[str, Any]:
    """Repair what needs no judgement, in one commit ``validate(fix): N repairs``.

    Index entries (missing, extra, duplicate, misplaced, stale), coverage strings and
    payload hashes (when ``payloads``); every rewritten file gets ``updated`` = today.
    Repairs are made from committed content only (see the module's docstring); the
    ones that depend on uncommitted changes are listed in ``skipped``. It takes the
    forest's writer lock while it checks and repairs, and writes through the engine's
    transaction, so a failure leaves every file as it was. Nothing to repair: no commit.

    Args:
        root: The forest.
        payloads: Also refresh the payload hashes of datasets.
        on_lock_wait: Called with the holder's card when another writer keeps this one
            waiting for a moment.

    Returns:
        ``{"commit": sha or None, "repairs": [{code, id, path, message}], "files": [...],
        "skipped": [{code, id, path, message, reason}]}``.
    """
    from ..vine import Vine

    # Checked and repaired in one turn of the writer lock: nothing changes in between.
    with Vine(root, lock="per-write", on_lock_wait=on_lock_wait) as vine, vine.writing() as ctx:
        run = check_all(load_run(vine.root, payloads))
        plan, skipped = _plan(run, ctx.repo.uncommitted)
        if not plan:
            return {"commit": None, "repairs": [], "files": [], "skipped": skipped}
        repairs = [r for _, done in plan.values() for r in done]
        with ctx.transaction() as txn:
            paths = [vine.root / path for path in plan]
            txn.touch(*paths)
            for path, (text, _) in plan.items():
                txn.write(vine.root / path, text)
            sha = txn.commit(f"validate(fix): {len(repairs)} repairs")
    return {"commit": sha, "repairs": repairs, "files": sorted(plan), "skipped": skipped}


def _record(x: Finding, reason: str | None = None) -> dict[str, Any]:
    out = {"code": x.code, "id": x.id, "path": x.path, "message": x.message}
    if reason is not None:
        out["reason"] = reason
    return out


def _plan(
    run: ValidationRun, uncommitted: Uncommitted
) -> tuple[dict[str, tuple[str, list[dict[str, Any]]]], list[dict[str, Any]]]:
    """Each file to rewrite (its new text and the repairs it carries), and the repairs
    skipped because they depend on uncommitted changes."""
    fixable: dict[str, list[Finding]] = {}
    for finding in run.findings:
        if finding.fixable and finding.id is not None:
            fixable.setdefault(finding.id, []).append(finding)
    plan = {}
    skipped: list[dict[str, Any]] = []
    for node_id, found in fixable.items():
        f = run.files[node_id]
        assert f.node is not None
        changed = uncommitted(f.path)
        if changed is not None:
            skipped += [
                _record(x, f"{f.path} {changed}; commit it, then run --fix again") for x in found
            ]
            continue
        meta, body = dict(f.node.meta), f.node.body
        codes = {x.code for x in found}
        done: list[dict[str, Any]] = []
        if any(code.startswith("index.") for code in codes):
            body = _entries(run, f, uncommitted, done, skipped)
            reported = [x for x in found if x.code == "index.coverage"]
            cover = reported or [x for x in [coverage_finding(f, body)] if x is not None]
            if cover:
                meta["coverage"] = render.coverage(body)
                done.append(_record(cover[0]))
        if codes & {"payload.hash-drift", "payload.hash-missing"}:
            rel = payload_rel(run.root, node_id, meta.get("payload"))
            assert rel is not None
            meta["payload_hash"] = payload_sha256(run, rel)
            done += [_record(x) for x in found if x.code.startswith("payload.")]
        if not done:
            continue
        meta["updated"] = render.today()
        plan[f.path] = (render.render(meta, body), done)
    return plan, skipped


def _entries(
    run: ValidationRun,
    f: NodeFile,
    uncommitted: Uncommitted,
    done: list[dict[str, Any]],
    skipped: list[dict[str, Any]],
) -> str:
    """Branch ``f``'s body with the entry repairs whose child is committed as it is."""
    assert f.node is not None
    issues: list[EntryIssue] = []
    for issue in index_issues(run, f):
        finding = issue_finding(f, issue)
        if not finding.fixable:
            continue
        changed = uncommitted(issue.child + ".md")
        if changed is None:
            issues.append(issue)
            done.append(_record(finding))
        else:
            skipped.append(
                _record(finding, f"{issue.child}.md {changed}; commit it, then run --fix again")
            )
    return _repair_entries(f.node.body, issues)


def _repair_entries(body: str, issues: list[EntryIssue]) -> str:
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
