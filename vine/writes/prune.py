"""``prune``: remove one node in one commit; its payload goes to the graveyard."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import hints, ids
from ..errors import Anchored, Forbidden, SchemaError
from ..forest import Forest
from ..text import counted
from . import backlinks
from .backlinks import Doc, Docs
from .context import WriteContext
from .transaction import Transaction, fault

GRAVEYARD = "graveyard"
# What SQLite may keep beside a database file; it travels with the file.
SIDECARS = ("-wal", "-shm", "-journal")


def refuse_system(node_id: str, call: str) -> None:
    """The root index and ``_meta/*`` never move or go (``E_SCHEMA``)."""
    if node_id == ids.ROOT_INDEX or node_id.startswith("_meta/"):
        raise SchemaError(
            f"{call}: {node_id} is part of the forest's frame and cannot be "
            f"{'pruned' if call == 'prune' else 'moved'}",
            hint="The root _index and _meta/* are kept by the engine.",
        )


def prune(ctx: WriteContext, node_id: str, force: bool, dry_run: bool) -> dict[str, Any]:
    """Check, then remove the node, its index entries and (under ``force``) the links
    that point at it, in one commit ``prune(<id>)``."""
    forest = ctx.forest
    row = forest.resolve(node_id)
    node_id = row["id"]
    refuse_system(node_id, "prune")
    seen = ctx.visibility
    parent = ids.parent_of(node_id) or ids.ROOT_INDEX
    if not seen.sees(parent):
        raise Forbidden(
            f"{node_id} heads a subtree this caller may see, but its parent index is outside it",
            hint=f"Prune it with a key that sees {parent}.",
        )
    if row["kind"] == "branch":
        _refuse_children(forest, node_id, seen)
    anchors = backlinks.anchors(forest, node_id)
    visible = [a for a in anchors if seen.sees(a[0])]
    hidden = len(anchors) - len(visible)
    unparsed = backlinks.unparsed_mentions(forest, node_id)
    if unparsed:
        raise unparsed_refusal("prune", node_id, unparsed, visible, hidden, seen)
    if anchors and (not force or hidden):
        raise _anchored(node_id, visible, hidden, force)
    payload = local_payload(forest, row)
    grave = graveyard_path(ctx.root, node_id, payload) if payload is not None else None
    docs = Docs(forest)
    for branch in dict.fromkeys([parent, *forest.catalog.listing_branches(node_id)]):
        if forest.catalog.row(branch) is not None:
            backlinks.drop_entry(docs.get(branch), node_id)
    removed = 0
    for source in dict.fromkeys(src for src, _ in anchors):
        doc = docs.get(source)
        links, matched = backlinks.retarget(doc.meta.get("links"), node_id, None)
        if matched:
            removed += matched
            if links:
                doc.meta["links"] = links
            else:
                doc.meta.pop("links", None)
            doc.changed = True
    moved = os.path.relpath(grave, ctx.root).replace(os.sep, "/") if grave else None
    if dry_run:
        ctx.check_repository()
        return {
            "id": node_id,
            "pruned": False,
            "dry_run": True,
            "type": row["type"],
            "title": row["title"],
            "backlinks_removed": removed,
            "anchors": backlinks.shown(visible),
            "anchor_count": len(visible),
            "indexes": sorted(
                d.id
                for d in docs.docs.values()
                if d.changed and d.id not in {s for s, _ in anchors}
            ),
            "payload_moved": moved,
        }
    path = ctx.root / (node_id + ".md")
    changed = docs.changed()
    with ctx.transaction() as txn:
        txn.touch(path, *(ctx.root / (d.id + ".md") for d in changed))
        move_payload(txn, payload, grave)
        txn.remove(path)
        fault("after-node")
        write_docs(txn, ctx.root, changed)
        sha = txn.commit(f"prune({node_id})")
    forest.heat.forget([node_id])
    return {
        "id": node_id,
        "pruned": True,
        "backlinks_removed": removed,
        "payload_moved": moved,
        "commit": sha,
    }


def _refuse_children(forest: Forest, node_id: str, seen: Any) -> None:
    below = backlinks.children(forest, node_id)
    if not below:
        return
    visible = [c for c in below if seen.sees(c)]
    hidden = len(below) - len(visible)
    extras: dict[str, Any] = {"children": len(visible)}
    if hidden:
        extras["out_of_scope"] = hidden
    raise Anchored(
        f"{node_id} is a branch that still holds "
        f"{counted(len(visible), 'node') if visible else 'some nodes'}; a branch is pruned "
        "once it is empty",
        hint="Prune (or transplant) its nodes first, one at a time; "
        f"{hints.call('scan', parent_id=node_id, recursive=True)} lists them.",
        **extras,
    )


def _anchored(node_id: str, visible: list[tuple[str, str]], hidden: int, force: bool) -> Anchored:
    extras: dict[str, Any] = {"anchors": backlinks.shown(visible), "anchor_count": len(visible)}
    if hidden:
        extras["out_of_scope"] = hidden
        return Anchored(
            f"{node_id} is linked from {counted(hidden, 'node')} outside what this caller "
            "may see" + (f" (and {counted(len(visible), 'link')} it may)" if visible else ""),
            hint="Those links cannot be dropped from here: ask someone who sees them to "
            "prune it, or to remove their links first.",
            **extras,
        )
    return Anchored(
        f"{node_id} is linked from {counted(len(visible), 'link')} in other nodes",
        hint=f"{hints.call('prune', id=node_id, force=True)} removes it anyway and "
        "drops exactly those links, in the same commit."
        if not force
        else None,
        **extras,
    )


def unparsed_refusal(
    call: str,
    node_id: str,
    files: list[tuple[str, str]],
    visible: list[tuple[str, str]],
    hidden: int,
    seen: Any,
) -> Anchored:
    """Files that link to the node but cannot be parsed (from
    :func:`backlinks.unparsed_mentions`): their links can be neither counted as anchors
    nor dropped (prune, under ``force``) nor rewritten (transplant), so the node stays.
    Outside the caller's scope, files and anchors alike are only counted."""
    named = [(p, r) for p, r in files if seen.sees(p[: -len(".md")])]
    extras: dict[str, Any] = {
        "unparsed": [{"path": p, "reason": r[:200]} for p, r in named[: backlinks.ANCHORS_SHOWN]],
        "unparsed_count": len(named),
        "anchors": backlinks.shown(visible),
        "anchor_count": len(visible),
    }
    if hidden or len(named) < len(files):
        extras["out_of_scope"] = hidden + len(files) - len(named)
    which = ", ".join(p for p, _ in named[:3]) + (", ..." if len(named) > 3 else "")
    outcome = (
        "neither checked nor dropped, so it is not pruned (force or not)"
        if call == "prune"
        else "neither checked nor rewritten, so it does not move"
    )
    return Anchored(
        f"{node_id} is linked from {counted(len(files), 'file')} whose frontmatter cannot "
        f"be parsed{f' ({which})' if which else ''}: their links can be {outcome}",
        hint=f"Repair {'that file' if len(files) == 1 else 'those files'} first "
        f"(`vine validate` says what is wrong), then {call} again.",
        **extras,
    )


def move_payload(txn: Transaction, payload: Path | None, dest: Path | None) -> None:
    """Move a SQLite payload within the transaction ``txn``, with whichever of its
    sidecar files (``-wal``, ``-shm``, ``-journal``) exist; nothing when either is None."""
    if payload is None or dest is None:
        return
    for suffix in ("", *SIDECARS):
        side = Path(str(payload) + suffix)
        if side.exists():
            txn.move(side, Path(str(dest) + suffix))
    fault("after-payload")


def write_docs(txn: Transaction, root: Path, docs: list[Doc]) -> None:
    """Write the nodes whose links or entries the change rewrote (parents, backlinks)."""
    for doc in docs:
        txn.write(root / (doc.id + ".md"), doc.text())
    fault("after-parent")


def payload_file(forest: Forest, row: Any) -> Path | None:
    """A node's payload when it is a local file inside the forest (not a URI, not inside
    ``_derived`` or ``.git``) that exists."""
    payload = row["payload"]
    if not payload or "://" in payload:
        return None
    full = os.path.realpath(os.path.join(forest.root, os.path.dirname(row["id"]), payload))
    base = str(forest.root)
    if not full.startswith(base + os.sep):
        return None
    if os.path.relpath(full, base).split(os.sep)[0] in (".git", "_derived"):
        return None
    return Path(full) if os.path.isfile(full) else None


def shared_with(forest: Forest, row: Any, path: Path) -> str | None:
    """Another node that names the same payload file, if one does."""
    for other in forest.catalog.rows(
        "SELECT id, payload FROM nodes WHERE payload IS NOT NULL AND payload != '' AND id != ?",
        (row["id"],),
    ):
        if "://" in other["payload"]:
            continue
        there = os.path.realpath(
            os.path.join(forest.root, os.path.dirname(other["id"]), other["payload"])
        )
        if there == str(path):
            return str(other["id"])
    return None


def local_payload(forest: Forest, row: Any) -> Path | None:
    """The payload file a prune moves to the graveyard: local, present, and named by
    no other node (a shared one stays for the node that still uses it)."""
    path = payload_file(forest, row)
    if path is None or shared_with(forest, row, path) is not None:
        return None
    return path


def graveyard_path(root: Path, node_id: str, payload: Path) -> Path:
    """Where a pruned node's payload goes: ``_derived/graveyard/<id>/<name>``, with
    ``-2``, ``-3``... before the extension when an earlier prune of the id left one."""
    folder = root / "_derived" / GRAVEYARD / node_id
    stem, ext = os.path.splitext(payload.name)
    target = folder / payload.name
    n = 2
    while target.exists():
        target = folder / f"{stem}-{n}{ext}"
        n += 1
    return target
