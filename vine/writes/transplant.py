"""``transplant``: move (rename) one leaf, rewriting every backlink, in one commit; the
old address stays as a waymark (``moved_from`` and an alias)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import hints, ids
from ..errors import Anchored, Forbidden, NotFound, SchemaError
from ..text import counted
from . import backlinks, render, rules
from .backlinks import Doc, Docs
from .context import WriteContext
from .prune import (
    move_payload,
    payload_file,
    refuse_system,
    shared_with,
    unparsed_refusal,
    write_docs,
)
from .transaction import fault

# How many linking nodes a dry run names (its count is exact).
SOURCES_SHOWN = 50


def transplant(ctx: WriteContext, node_id: str, new_id: str, dry_run: bool) -> dict[str, Any]:
    """Check, then move the node and rewrite what points at it, in one commit
    ``transplant(<id> -> <new_id>)``."""
    forest = ctx.forest
    row = forest.resolve(node_id)
    node_id = row["id"]
    refuse_system(node_id, "transplant")
    if row["kind"] == "branch":
        raise SchemaError(
            f"transplant: {node_id} is a branch; only leaves move",
            hint="Move a branch's nodes one at a time into a branch planted where it should be.",
        )
    new_id = _destination(ctx, node_id, new_id)
    payload = payload_file(forest, row)
    if payload is not None:
        other = shared_with(forest, row, payload)
        if other is not None:
            raise SchemaError(
                f"transplant: {node_id} shares its payload with {other}",
                hint="Give each node its own payload before moving one.",
            )
    target = _payload_target(ctx, row, node_id, new_id, payload)
    unparsed = backlinks.unparsed_mentions(forest, node_id)
    if unparsed:
        # Such a file holds no edge and no write can edit it: moving the node would
        # leave its link pointing at the old id, unseen.
        seen = ctx.visibility
        anchors = backlinks.anchors(forest, node_id)
        visible = [a for a in anchors if seen.sees(a[0])]
        raise unparsed_refusal(
            "transplant", node_id, unparsed, visible, len(anchors) - len(visible), seen
        )

    docs = Docs(forest)
    node = docs.get(node_id)
    rewritten, sources, hidden = _rewrite_backlinks(ctx, docs, node_id, new_id)
    if hidden:
        seen = ctx.visibility
        pairs = [(s, r) for s, r in backlinks.anchors(forest, node_id) if seen.sees(s)]
        pairs += [(s, "wikilink") for s in sources if s not in {p for p, _ in pairs}]
        raise Anchored(
            f"{node_id} is linked from {counted(len(hidden), 'node')} outside what this caller may "
            "see: their links cannot be rewritten, so it does not move",
            hint="Ask someone who sees them to move it, or to remove their links first.",
            anchors=backlinks.shown(pairs),
            anchor_count=len(pairs),
            out_of_scope=len(hidden),
        )
    moved = _new_document(node, node_id, new_id, target)
    _reindex(docs, node_id, new_id, moved)
    trail = ids.trail_of(new_id)
    moved_to = os.path.relpath(target, ctx.root).replace(os.sep, "/") if target else None
    if dry_run:
        ctx.check_repository()
        out = {
            "id": node_id,
            "new_id": new_id,
            "dry_run": True,
            "backlinks_rewritten": rewritten,
            "sources": sources[:SOURCES_SHOWN],
            "source_count": len(sources),
            "trail": trail,
        }
        if moved_to:
            out["payload_moved"] = moved_to
        return out
    old_path = ctx.root / (node_id + ".md")
    new_path = ctx.root / (new_id + ".md")
    changed = [d for d in docs.changed() if d.id != node_id]
    with ctx.transaction() as txn:
        txn.touch(old_path, new_path, *(ctx.root / (d.id + ".md") for d in changed))
        move_payload(txn, payload, target)
        txn.write(new_path, moved.text())
        txn.remove(old_path)
        fault("after-node")
        write_docs(txn, ctx.root, changed)
        sha = txn.commit(f"transplant({node_id} -> {new_id})")
    forest.heat.move(node_id, new_id)
    out = {
        "id": node_id,
        "new_id": new_id,
        "commit": sha,
        "backlinks_rewritten": rewritten,
        "trail": trail,
    }
    if moved_to:
        out["payload_moved"] = moved_to
    return out


def _destination(ctx: WriteContext, node_id: str, raw: str) -> str:
    """``new_id`` under the rules plant applies: a valid leaf id, free, whose parent
    branch exists; not the old address of another node."""
    if isinstance(raw, str) and raw.strip().endswith("/") and raw.strip().strip("/"):
        # A folder (as a shell completes one), not an id: check_new_id would take the
        # folder's name itself as the new leaf id.
        leaf = node_id.rsplit("/", 1)[-1]
        into = raw.strip().strip("/") + "/" + leaf
        raise SchemaError(
            f"transplant: {raw.strip()!r} names a folder, not the node's new id",
            hint=f"Give the whole new id: {hints.call('transplant', id=node_id, new_id=into)}.",
        )
    if isinstance(raw, str) and not raw.strip():
        # Named as the caller typed it (NEW_ID on the command line), as the schema
        # check names an empty one; check_new_id would name the frontmatter's ``id``.
        name = hints.parameter("transplant", "new_id")
        again = hints.call("transplant", "new_id", id=node_id)
        raise SchemaError(
            f"transplant: {name} must not be blank, got string {raw!r}",
            hint=f"{name} accepts the id it moves to: {again}.",
        )
    new_id = rules.check_new_id(raw)
    if new_id == node_id:
        raise SchemaError(
            f"transplant: {node_id} is already at that id", hint="Give the id it should move to."
        )
    if ids.is_index(new_id):
        raise SchemaError("_index is reserved for branches", hint="Give the leaf another name.")
    if new_id.startswith("_meta/") or new_id == "_meta":
        raise SchemaError("transplant: _meta/ holds the forest's own files")
    forest = ctx.forest
    if forest.catalog.row(new_id) is not None or (ctx.root / (new_id + ".md")).exists():
        raise SchemaError(
            f"id already exists: {new_id}",
            hint="Choose a free id, or prune the node that holds it first.",
        )
    parent = ids.parent_of(new_id) or ids.ROOT_INDEX
    prow = forest.catalog.row(parent)
    if prow is None or prow["kind"] != "branch":
        raise NotFound(
            f"parent branch not found: {parent}",
            hint="Plant the branch first (type 'branch', id '<folder>/_index').",
        )
    holder = forest.catalog.moved_to(new_id)
    if holder is not None and holder != node_id:
        raise SchemaError(
            f"{new_id} is the old address of {holder} (a waymark)",
            hint=f"Choose another id; reads of {new_id} lead to {holder}.",
        )
    if not ctx.visibility.sees(new_id) or not ctx.visibility.sees(parent):
        raise Forbidden(f"{new_id} is outside the subtrees this caller may write")
    return new_id


def _payload_target(
    ctx: WriteContext, row: Any, node_id: str, new_id: str, payload: Path | None
) -> Path | None:
    """Where a local payload goes: beside the new file, renamed when it was named after
    the old leaf (``orders.db`` for ``orders``), else under its own name."""
    if payload is None:
        return None
    old_leaf, new_leaf = node_id.rsplit("/", 1)[-1], new_id.rsplit("/", 1)[-1]
    rel = row["payload"]
    head, name = os.path.split(rel)
    stem, ext = os.path.splitext(name)
    if stem == old_leaf:
        name = new_leaf + ext
    target = ctx.root / os.path.dirname(new_id) / head / name
    real = os.path.realpath(target)
    inside = os.path.relpath(real, ctx.root).split(os.sep)[0]
    if not real.startswith(str(ctx.root) + os.sep) or inside in (".git", "_derived", ".."):
        raise SchemaError(
            f"transplant: the payload of {node_id} would leave the forest",
            hint="Give the dataset a payload beside its node first.",
        )
    if target.exists() and real != str(payload):
        raise SchemaError(
            f"transplant: {os.path.relpath(target, ctx.root)} already exists; "
            "the payload would overwrite it",
            hint="Choose another id, or move that file away first.",
        )
    return target


def _rewrite_backlinks(
    ctx: WriteContext, docs: Docs, node_id: str, new_id: str
) -> tuple[int, list[str], list[str]]:
    """Point every frontmatter link and wikilink at ``new_id``: how many were rewritten,
    the visible nodes that hold them, and the hidden ones (which refuse the move)."""
    forest = ctx.forest
    linking = {src for src, _ in backlinks.anchors(forest, node_id)}
    wiki = set(backlinks.wikilink_sources(forest, node_id))
    wiki |= set(forest.catalog.listing_branches(node_id))
    rewritten = 0
    sources: list[str] = []
    hidden: list[str] = []
    for source in sorted(linking | wiki | {node_id}):
        doc = docs.get(source)
        links, matched = backlinks.retarget(doc.meta.get("links"), node_id, new_id)
        body, prose, entries = backlinks.rewrite_wikilinks(doc.body, node_id, new_id)
        if not (matched or prose or entries):
            continue
        if matched:
            doc.meta["links"] = links
        doc.body = body
        doc.changed = True
        if source == node_id:
            continue
        if matched or prose:
            rewritten += matched + prose
            if ctx.visibility.sees(source):
                sources.append(source)
            else:
                hidden.append(source)
    return rewritten, sources, hidden


def _new_document(node: Doc, node_id: str, new_id: str, target: Path | None) -> Doc:
    """The node's file under its new id: everything kept, the waymark added."""
    meta = dict(node.meta)
    meta["id"] = new_id
    trail = _strings(meta.get("moved_from"))
    back = new_id in trail
    trail = [x for x in trail if x not in (node_id, new_id)] + [node_id]
    meta["moved_from"] = trail
    aliases = [a for a in _strings(meta.get("aliases")) if not (back and a == new_id)]
    if (
        node_id not in aliases
        and len(aliases) < rules.MAX_ALIASES
        and len(node_id) <= rules.ALIAS_CHARS
    ):
        aliases.append(node_id)
    if aliases or "aliases" in meta:
        meta["aliases"] = aliases
    if target is not None:
        head, _ = os.path.split(str(meta.get("payload", "")))
        meta["payload"] = os.path.join(head, target.name).replace(os.sep, "/")
    return Doc(new_id, meta, node.body, changed=True)


def _reindex(docs: Docs, node_id: str, new_id: str, moved: Doc) -> None:
    """The old parent loses the entry and the new one gains it (the same line, already
    pointing at the new id, when both are one index), each with its coverage counted
    again. Entries elsewhere (Landmarks) were rewritten like any wikilink."""
    old_parent = ids.parent_of(node_id) or ids.ROOT_INDEX
    new_parent = ids.parent_of(new_id) or ids.ROOT_INDEX
    line = render.entry_line(new_id, str(moved.meta.get("summary") or ""))
    if old_parent != new_parent and docs.forest.catalog.row(old_parent) is not None:
        old = docs.get(old_parent)
        old.body = _drop_listed(old.body, new_id)
        old.meta["coverage"] = render.coverage(old.body)
        old.changed = True
    new = docs.get(new_parent)
    if old_parent != new_parent or not _listed(new.body, new_id):
        new.body = render.insert_entry(new.body, render.DIRECT_BANANAS, line)
    new.meta["coverage"] = render.coverage(new.body)
    new.changed = True


def _entry_sections(body: str) -> list[tuple[int, int]]:
    spans = [
        render.section_span(body, name) for name in (render.SUB_BRANCHES, render.DIRECT_BANANAS)
    ]
    return [s for s in spans if s is not None]


def _listed(body: str, node_id: str) -> bool:
    """True when an entry section (Sub-branches, Direct bananas) lists ``node_id``."""
    lines = body.split("\n")
    pattern = render.entry_pattern(node_id)
    return any(
        pattern.match(lines[i])
        for start, end in _entry_sections(body)
        for i in range(start + 1, end)
    )


def _drop_listed(body: str, node_id: str) -> str:
    """``body`` without the entry lines of ``node_id`` in its entry sections."""
    lines = body.split("\n")
    pattern = render.entry_pattern(node_id)
    drop = {
        i
        for start, end in _entry_sections(body)
        for i in range(start + 1, end)
        if pattern.match(lines[i])
    }
    kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
    return re.sub(r"\n{3,}", "\n\n", kept)


def _strings(value: Any) -> list[str]:
    """A frontmatter list of strings (one string counts as a list of one)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [
            str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool)
        ]
    return []
