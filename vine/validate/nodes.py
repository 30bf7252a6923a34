"""The checks of one node: keys, values, links, summary, wikilinks, payloads."""

from __future__ import annotations

import datetime
import os
import posixpath
import re
from pathlib import Path
from typing import Any

from .. import budget, ids
from ..errors import VineError
from ..indexing import clean_target
from ..nodes import REQUIRED, Node, blockquote_summary
from ..writes import rules
from .model import (
    ERROR,
    FENCE,
    NOTE,
    SKIP_DIRS,
    WARNING,
    WIKILINK,
    Finding,
    NodeFile,
    ValidationRun,
)
from .tree import entry_spans

# -- one node ----------------------------------------------------------------------


def check_node(run: ValidationRun, f: NodeFile) -> None:
    """Every check of one parsed node file outside ``_meta/``."""
    _check_required(run, f)
    _check_values(run, f)
    _check_links(run, f)
    _check_summary(run, f)
    _check_wikilinks(run, f)
    _check_payload(run, f)


def _check_required(run: ValidationRun, f: NodeFile) -> None:
    """Required keys present and of the right shape; ``id`` and ``type`` right."""
    assert f.node is not None
    meta = f.node.meta
    branch = meta.get("type") == "branch"
    for key in REQUIRED:
        if meta.get(key) is None and not (branch and _branch_fallback(f.node, key)):
            run.add(
                f,
                ERROR,
                "frontmatter.missing-key",
                f"required key '{key}' is missing",
                f"Add '{key}:' to the frontmatter.",
                line=1,
            )
    node_id, ntype = meta.get("id"), meta.get("type")
    if node_id is not None and node_id != f.id:
        run.add(
            f,
            ERROR,
            "frontmatter.id-mismatch",
            f"id is {node_id!r} but the file's path makes it {f.id!r}",
            f"Set 'id: {f.id}', or move the file to {node_id}.md (ids are paths).",
            line=f.key_line("id"),
        )
    if ntype is not None and ntype not in run.dialect.types:
        run.add(
            f,
            ERROR,
            "schema.unknown-type",
            f"type {ntype!r} is not declared",
            "Use a declared type ("
            + ", ".join(run.dialect.types)
            + "), or declare it in _meta/schema.md.",
            line=f.key_line("type"),
        )
    for key in ("title", "summary"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            _invalid(run, f, key, f"{key}: a string is required")
    if isinstance(meta.get("title"), str) and not meta["title"].strip():
        _invalid(run, f, "title", "title: a non-empty string is required")
    for key in ("created", "updated"):
        if meta.get(key) is not None and not _is_date(meta[key]):
            _invalid(run, f, key, f"{key}: a date (YYYY-MM-DD) is required, got {meta[key]!r}")


def _branch_fallback(node: Node, key: str) -> bool:
    """A branch may leave title, summary and created to its H1, blockquote and updated."""
    if key == "title":
        return any(h.level == 1 for h in node.headers)
    if key == "summary":
        return bool(blockquote_summary(node.lines))
    return key == "created" and node.meta.get("updated") is not None


def _is_date(value: Any) -> bool:
    if isinstance(value, datetime.date):
        return True
    if not isinstance(value, str):
        return False
    try:
        datetime.date.fromisoformat(value[:10])
        return len(value) == 10 or bool(datetime.datetime.fromisoformat(value))
    except ValueError:
        return False


def _invalid(run: ValidationRun, f: NodeFile, key: str, message: str) -> None:
    run.add(
        f,
        ERROR,
        "frontmatter.invalid",
        message,
        f"Correct '{key}' in the frontmatter (see the forest format, frontmatter keys).",
        line=f.key_line(key),
    )


def _check_values(run: ValidationRun, f: NodeFile) -> None:
    """Optional keys through the same rules plant and graft apply."""
    assert f.node is not None
    meta = f.node.meta
    checks = [
        ("confidence", rules.check_confidence),
        ("tags", rules.check_tags),
        ("origin", rules.check_origin),
    ]
    for key, check in checks:
        if meta.get(key) is not None:
            try:
                check(meta[key])
            except VineError as exc:
                _invalid(run, f, key, exc.message)
    aliases = meta.get("aliases")
    if aliases is not None and not (
        isinstance(aliases, list) and all(isinstance(a, str | int | float) for a in aliases)
    ):
        _invalid(run, f, "aliases", "aliases: a list of strings is required")
    try:
        rules.check_enums(meta)
    except VineError as exc:
        key = exc.message.split(":", 1)[0]
        _invalid(run, f, key if key in meta else "type", exc.message)


def _check_links(run: ValidationRun, f: NodeFile) -> None:
    """Shape, declared rels, the cap, and targets that exist."""
    assert f.node is not None
    links = f.node.meta.get("links")
    if links is None:
        return
    if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
        _invalid(run, f, "links", "links: a list of {rel, target} objects is required")
        return
    if len(links) > rules.MAX_LINKS:
        run.add(
            f,
            ERROR,
            "links.too-many",
            f"{len(links)} links, a node holds at most {rules.MAX_LINKS}",
            "Move some relations to a hub node, or drop the weakest.",
            line=f.key_line("links"),
        )
    for link in links:
        rel, target = link.get("rel"), clean_target(link.get("target"))
        if not isinstance(rel, str) or target is None:
            _invalid(run, f, "links", "links: every link needs a string rel and target")
            continue
        if rel not in run.dialect.rels:
            run.add(
                f,
                ERROR,
                "schema.unknown-rel",
                f"rel {rel!r} is not declared",
                "Use a declared rel ("
                + ", ".join(run.dialect.rels)
                + "), or declare it in _meta/schema.md.",
                line=f.find_line(re.compile(rf"\brel:\s*['\"]?{re.escape(rel)}"), front=True),
            )
        if "confidence" in link:
            try:
                rules.check_confidence(link["confidence"])
            except VineError as exc:
                _invalid(run, f, "links", f"links: {exc.message}")
        if target not in run.files:
            line = f.find_line(
                re.compile(rf"\btarget:\s*['\"]?{re.escape(str(link['target']))}"), front=True
            )
            run.add(
                f,
                ERROR,
                "links.dangling",
                _absent(run, target, "link target"),
                _retarget(run, target, "Point the link at an existing node or remove it."),
                line=line,
            )


def _absent(run: ValidationRun, target: str, what: str) -> str:
    moved = run.moves.get(target)
    return f"{what} {target!r} does not exist" + (f" (it moved to {moved!r})" if moved else "")


def _retarget(run: ValidationRun, target: str, otherwise: str) -> str:
    moved = run.moves.get(target)
    return f"Replace {target!r} with {moved!r}." if moved else otherwise


def _check_summary(run: ValidationRun, f: NodeFile) -> None:
    """The scent rules, as warnings: non-empty, at most 60 tokens, no boilerplate."""
    assert f.node is not None
    raw = f.node.meta.get("summary")
    if raw is None and f.node.meta.get("type") == "branch":
        raw = blockquote_summary(f.node.lines)
    if not isinstance(raw, str):
        return
    if not raw.strip():
        run.add(
            f,
            WARNING,
            "summary.empty",
            "the summary is empty",
            "Write 1 to 3 sentences saying what the node holds.",
            line=f.key_line("summary"),
        )
        return
    size = budget.tokens(raw)
    if size > budget.SUMMARY_MAX:
        run.add(
            f,
            WARNING,
            "summary.too-long",
            f"the summary is {size} tokens, the limit is {budget.SUMMARY_MAX}",
            "Keep the scent to 1-3 sentences; the body holds the rest.",
            line=f.key_line("summary"),
        )
    try:
        rules.check_summary(raw, length=False)
    except VineError:
        run.add(
            f,
            WARNING,
            "summary.boilerplate",
            f"the summary opens with boilerplate ({raw.strip()[:24]!r}...)",
            "Lead with the subject: say what the node holds.",
            line=f.key_line("summary"),
        )


def _check_wikilinks(run: ValidationRun, f: NodeFile) -> None:
    """``[[id]]``, ``[[id|text]]`` and ``[[id#anchor]]`` must name a node."""
    assert f.node is not None
    body = f.node.body
    if "[[" not in body:
        return
    broken = [
        m
        for m in WIKILINK.finditer(body)
        if (clean_target(m.group(1)) or m.group(1)) not in run.files
    ]
    if not broken:
        return
    skip = _fenced_lines(f.node.lines) | _entry_lines(f)
    for m in broken:
        index = body.count("\n", 0, m.start())
        if index in skip or _in_code_span(body, m.start()):
            continue
        target = clean_target(m.group(1)) or m.group(1)
        run.add(
            f,
            WARNING,
            "body.broken-wikilink",
            _absent(run, target, "wikilink to"),
            _retarget(run, target, "Link an existing id, or remove the brackets."),
            line=f.body_line(index),
        )


def _in_code_span(body: str, at: int) -> bool:
    """True when ``at`` is inside an inline code span (`` `[[id]]` `` is an example,
    not a link): an odd number of backticks before it on its line."""
    start = body.rfind("\n", 0, at) + 1
    return body.count("`", start, at) % 2 == 1


def _fenced_lines(lines: list[str]) -> set[int]:
    """Body lines inside fenced code blocks."""
    inside: set[int] = set()
    fence: str | None = None
    for i, line in enumerate(lines):
        marker = FENCE.match(line)
        if fence is not None:
            inside.add(i)
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
        elif marker:
            fence = marker.group(1)
            inside.add(i)
    return inside


def _entry_lines(f: NodeFile) -> set[int]:
    """A branch's entry lines (the index checks report those)."""
    assert f.node is not None
    if not ids.is_index(f.id):
        return set()
    out: set[int] = set()
    for _, start, end in entry_spans(f.node):
        out.update(i for i in range(start + 1, end) if f.node.lines[i].startswith("- [["))
    return out


def _check_payload(run: ValidationRun, f: NodeFile) -> None:
    """A local payload inside the forest, present, with the hash it declares."""
    assert f.node is not None
    meta = f.node.meta
    payload = meta.get("payload")
    dataset = meta.get("type") == "dataset" or meta.get("payload_type") == "sqlite"
    if payload is None:
        if meta.get("type") == "dataset":
            run.add(
                f,
                ERROR,
                "payload.undeclared",
                "a dataset with no 'payload' key",
                f"Add 'payload: {f.id.rsplit('/', 1)[-1]}.db' naming its SQLite file.",
                line=f.key_line("type"),
            )
        return
    if isinstance(payload, str) and "://" in payload:
        return
    rel = payload_rel(run.root, f.id, payload)
    if rel is None:
        run.add(
            f,
            ERROR,
            "payload.invalid",
            f"payload {payload!r} is not a file inside "
            "the forest (or it is inside _derived/ or .git/)",
            "Name a file relative to the node's folder, such as 'name.db'.",
            line=f.key_line("payload"),
        )
        return
    run.referenced.add(rel)
    if run.payloads:
        _check_payload_file(run, f, rel, dataset)


def payload_rel(root: Path, node_id: str, payload: Any) -> str | None:
    """The payload's POSIX path relative to the root, or None when it is not allowed."""
    if (
        not isinstance(payload, str)
        or not payload.strip()
        or payload.startswith("/")
        or "\\" in payload
    ):
        return None
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(node_id), payload.strip()))
    first = rel.split("/", 1)[0]
    if rel.startswith("..") or rel == "." or first in SKIP_DIRS:
        return None
    real = os.path.realpath(root / rel)
    return rel if real.startswith(str(root) + os.sep) else None


def _check_payload_file(run: ValidationRun, f: NodeFile, rel: str, dataset: bool) -> None:
    assert f.node is not None
    full = run.root / rel
    if not full.is_file():
        run.add(
            f,
            ERROR,
            "payload.missing",
            f"payload file {rel} is missing",
            "Restore the file (payloads never enter git: copy it from where the forest "
            "was written), or run validate with --no-payloads on a checkout.",
            line=f.key_line("payload"),
        )
        return
    declared = f.node.meta.get("payload_hash")
    if declared is None and not dataset:
        return
    actual = payload_sha256(run, rel)
    settled = declared is not None and str(declared).strip().lower() == actual
    if dataset and not settled:
        # About to say "record this hash": only for a payload that is sound.
        problem = _damage(f, full)
        if problem:
            run.add(
                f,
                ERROR,
                "payload.damaged",
                f"payload {rel} is damaged: {problem}",
                "Restore the file from where the forest was written (or re-create it); "
                "--fix never records the hash of a damaged payload.",
                line=f.key_line("payload_hash") or f.key_line("payload"),
            )
            return
    if declared is None:
        run.add(
            f,
            NOTE,
            "payload.hash-missing",
            f"payload {rel} has no payload_hash",
            f"Add 'payload_hash: {actual}' (vine validate --fix does).",
            line=f.key_line("payload"),
            fixable=True,
        )
    elif str(declared).strip().lower() != actual:
        run.add(
            f,
            WARNING,
            "payload.hash-drift",
            f"payload {rel} has sha256 {actual[:12]}..., payload_hash says {str(declared)[:12]}...",
            "Set payload_hash to the file's sha256 if the change was intended "
            "(vine validate --fix does), else restore the file.",
            line=f.key_line("payload_hash"),
            fixable=True,
        )


def _damage(f: NodeFile, full: Path) -> str | None:
    from ..datasets import damage, manual_tables

    assert f.node is not None
    manual = f.node.section("Query manual")
    return damage(full, manual_tables(manual[1]) if manual else [])


def payload_sha256(run: ValidationRun, rel: str) -> str:
    """The sha256 of a payload file, hashed once per run."""
    if rel not in run.hashes:
        from ..writes.dataset import sha256_of

        run.hashes[rel] = sha256_of(run.root / rel)
    return run.hashes[rel]


def check_orphans(run: ValidationRun) -> None:
    """Warn of each payload or asset file that no node names."""
    for rel in sorted(run.others):
        if rel in run.referenced:
            continue
        run.findings.append(
            Finding(
                WARNING,
                "payload.orphan",
                None,
                rel,
                None,
                f"{rel} is not the payload of any node",
                "Delete it, or name it in a node's 'payload' key.",
            )
        )
