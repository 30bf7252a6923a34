"""``graft``: edit a node's frontmatter, links, a section or its body, in one commit;
a summary change is carried to every index that lists the node."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .. import hints, ids
from ..catalog import parse_coverage
from ..errors import Conflict, NotFound, ReadOnly, SchemaError
from ..forest import coverage_phrase
from ..heat import STRONG_DEPOSIT
from ..nodes import Node, headers_of, parse_text
from . import render, rules
from .context import WriteContext
from .transaction import fault

PATCH_KEYS = (
    "set_frontmatter",
    "add_links",
    "remove_links",
    "append_section",
    "replace_section",
    "replace_body",
    "if_revision",
)
# A revision as reads give it, or more of the blob id (as git prints it).
_REVISION = re.compile(r"^[0-9a-f]{7,40}$", re.IGNORECASE)
MUTABLE = ("title", "summary", "tags", "confidence", "aliases", "origin")


def graft(ctx: WriteContext, node_id: str, patch: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a patch; commit only when a file changed."""
    _check_patch(patch)
    row = ctx.forest.resolve(node_id)
    node_id = row["id"]
    if "if_revision" in patch:
        _check_revision(ctx, node_id, patch["if_revision"].lower())
    if ids.is_index(node_id) and "replace_body" in patch:
        raise SchemaError(
            "replace_body cannot target an index",
            hint="Indexes are edited by plant and summary changes; use "
            "append_section or replace_section.",
        )
    node = ctx.forest.read(node_id)
    meta = dict(node.meta)
    body = node.body
    parts: list[str] = []
    changed_keys = _set_frontmatter(meta, patch.get("set_frontmatter"))
    if changed_keys:
        parts.append("set " + ",".join(sorted(changed_keys)))
    links, added, fortified = _add_links(ctx, meta, patch.get("add_links"), node_id)
    removed = _remove_links(links, patch.get("remove_links"))
    if added:
        parts.append(f"+{added} links")
    if removed:
        parts.append(f"-{removed} links")
    if added or removed:
        if links:
            meta["links"] = links
        else:
            meta.pop("links", None)
    body_changed = False
    removed_by_body: list[str] = []
    if "replace_body" in patch:
        body = patch["replace_body"]
        body_changed = body.strip() != node.body.strip()
        removed_by_body = _lost(
            [h.text for h in node.headers if h.level > 1], [h.text for h in headers_of(body)]
        )
    replaced = None
    sections: dict[str, list[str]] = {"replaced": [], "removed": []}
    if "replace_section" in patch:
        header, text = _section_arg(patch["replace_section"], "replace_section")
        current = Node(node_id, meta, body)
        new = render.replace_section(current, header, text)
        if new is None:
            raise NotFound(
                f"section not found: {header!r} in {node_id}",
                hint="Outline: " + "; ".join(current.outline),
            )
        matched, below = render.subsections(current, header)
        sections["replaced"].append(matched)
        sections["removed"] += _lost(below, [h.text for h in headers_of(text)])
        body_changed = body_changed or new.strip() != body.strip()
        body = new
        replaced = f"replace '{header}'"
    if "append_section" in patch:
        header, text = _section_arg(patch["append_section"], "append_section")
        body = render.append_section(body, header, text)
        body_changed = True
        parts.append(f"append '{header}'")
    if replaced:
        parts.append(replaced)
    if "replace_body" in patch:
        parts.append(f"replace body ({len(body.split())} words)")
    new_text = render.render(meta, body)
    old_text = (ctx.root / (node_id + ".md")).read_text(encoding="utf-8")
    trail = ids.trail_of(node_id)
    if fortified:
        ctx.forest.heat.deposit([node_id, *[f["target"] for f in fortified]], STRONG_DEPOSIT)
    nothing = not changed_keys and not added and not removed and not body_changed
    if not nothing:
        meta["updated"] = render.today()
        new_text = render.render(meta, body)
    if nothing or new_text == old_text:
        return {
            "id": node_id,
            "commit": None,
            "fortified": fortified,
            "trail": trail,
            "revision": ctx.forest.revision(node_id),
        }
    try:
        parse_text(node_id, new_text)
    except ValueError as exc:
        raise SchemaError(f"the edited node would not parse: {exc}") from None
    summary_changed = "summary" in changed_keys and meta.get("summary") != node.meta.get("summary")
    path = ctx.root / (node_id + ".md")
    with ctx.transaction() as txn:
        if summary_changed:
            txn.touch(
                path,
                *(ctx.root / (b + ".md") for b in ctx.forest.catalog.listing_branches(node_id)),
            )
        txn.write(path, new_text)
        fault("after-node")
        if summary_changed:
            _propagate(ctx, txn, node_id, meta)
        fault("after-propagation")
        sha = txn.commit(f"graft({node_id}): {'; '.join(parts) or 'noop'}")
    out: dict[str, Any] = {
        "id": node_id,
        "commit": sha,
        "fortified": fortified,
        "trail": trail,
        "revision": ctx.forest.revision(node_id),
    }
    if body_changed and "summary" not in (patch.get("set_frontmatter") or {}):
        out["summary_stale"] = True
    sections["removed"] += removed_by_body
    _say_sections(out, sections, f"{node_id}.md")
    before = {
        (link.get("rel"), link.get("target"))
        for link in node.meta.get("links") or []
        if isinstance(link, dict)
    }
    new_links = [link for link in links if (link.get("rel"), link.get("target")) not in before]
    return rules.say_dangling(out, rules.dangling(ctx.root, new_links))


def _check_revision(ctx: WriteContext, node_id: str, given: str) -> None:
    """Refuse the graft when the node is no longer the revision the caller read."""
    now = ctx.forest.blob_id(node_id)
    if now.startswith(given):
        return
    short = ctx.forest.revision(node_id)
    raise Conflict(
        f"{node_id} changed since revision {given} was read (it is {short} now); "
        "nothing was written",
        revision=short,
        hint=f"Read it again ({hints.call('pick', 'id')} or "
        f"{hints.call('look', 'id')} gives its revision), redo the edit on "
        "what it holds now, and graft with that revision.",
    )


def _lost(before: list[str], after: list[str]) -> list[str]:
    """Headers of ``before`` that ``after`` no longer holds (each occurrence counted)."""
    left = list(after)
    lost = []
    for text in before:
        if text in left:
            left.remove(text)
        else:
            lost.append(text)
    return lost


def _say_sections(out: dict[str, Any], sections: dict[str, list[str]], path: str) -> None:
    """Name the sections the write replaced and removed; say plainly when replacing a
    section took away subsections its new text does not hold."""
    if sections["replaced"]:
        out["sections_replaced"] = sections["replaced"]
    if not sections["removed"]:
        return
    out["sections_removed"] = sections["removed"]
    names = ", ".join(repr(h) for h in sections["removed"])
    if sections["replaced"]:
        what = f"Replacing section {sections['replaced'][0]!r} removed its subsections"
    else:
        what = "The new body no longer holds the sections"
    out["hint"] = (
        f"{what} {names}: the new text does not hold them. If they were "
        f"wanted, their old text is in `git show {out['commit'][:12]}^:{path}`."
    )


def _check_patch(patch: Any) -> None:
    if not isinstance(patch, dict) or not patch:
        raise SchemaError(
            "graft: patch must be a non-empty object", hint="Keys: " + ", ".join(PATCH_KEYS) + "."
        )
    unknown = sorted(set(patch) - set(PATCH_KEYS))
    if unknown:
        raise SchemaError(
            f"graft: unknown patch key {unknown[0]!r}", hint="Keys: " + ", ".join(PATCH_KEYS) + "."
        )
    empty = sorted(k for k, v in patch.items() if v is None)
    if empty:
        raise SchemaError(
            f"graft: patch key {empty[0]} is null", hint="Leave out what does not change."
        )
    if "if_revision" in patch:
        given = patch["if_revision"]
        if not isinstance(given, str) or not _REVISION.match(given):
            raise SchemaError(
                f"if_revision: a revision (7 to 40 hex digits) is required, "
                f"got {str(given)[:60]!r}",
                hint="look and pick answer a node's revision.",
            )
    if "replace_body" in patch and ({"append_section", "replace_section"} & set(patch)):
        raise SchemaError("replace_body cannot be combined with a section operation")
    if "replace_body" in patch and not isinstance(patch["replace_body"], str):
        raise SchemaError("replace_body: a markdown string is required")


def _section_arg(value: Any, name: str) -> tuple[str, str]:
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("header"), str)
        or not value["header"].strip()
        or not isinstance(value.get("body"), str)
    ):
        raise SchemaError(f"{name}: {{header, body}} strings are required")
    extra = sorted(set(value) - {"header", "body"}, key=str)
    if extra:
        raise SchemaError(
            f"{name}: unknown key {str(extra[0])[:60]!r}", hint=f"{name} takes header and body."
        )
    if any(ch in value["header"] for ch in "\r\n"):
        raise SchemaError(f"{name}: a header is one line")
    return value["header"].strip().lstrip("#").strip(), value["body"]


# The frontmatter keys set_frontmatter checks before writing (confidence is normalised).
_FIELD_CHECKS: dict[str, Callable[[Any], object]] = {
    "title": rules.check_title,
    "summary": rules.check_summary,
    "tags": rules.check_tags,
    "aliases": rules.check_aliases,
    "origin": rules.check_origin,
}


def _set_frontmatter(meta: dict[str, Any], values: Any) -> set[str]:
    if values is None:
        return set()
    if not isinstance(values, dict):
        raise SchemaError("set_frontmatter: an object of fields is required")
    for key in values:
        if key not in MUTABLE:
            raise ReadOnly(f"{key} is immutable", hint="graft can set: " + ", ".join(MUTABLE) + ".")
    changed = set()
    for key, value in values.items():
        if key == "origin" and value is None:
            if "origin" in meta:
                del meta["origin"]
                changed.add(key)
            continue
        check = _FIELD_CHECKS.get(key)
        if key == "confidence":
            value = rules.check_confidence(value)
        elif check is not None:
            check(value)
        if meta.get(key) != value:
            if key == "confidence" and value == 1.0:
                meta.pop("confidence", None)
            else:
                meta[key] = value
            changed.add(key)
    return changed


def _add_links(
    ctx: WriteContext, meta: dict[str, Any], new: Any, node_id: str
) -> tuple[list[dict[str, Any]], int, list[dict[str, str]]]:
    links = [dict(link) for link in meta.get("links") or [] if isinstance(link, dict)]
    if new is None:
        return links, 0, []
    wanted = rules.check_links(new, ctx.forest.dialect)
    have = {(link.get("rel"), link.get("target")) for link in links}
    added = 0
    fortified = []
    for link in wanted:
        key = (link["rel"], link["target"])
        if key in have:
            fortified.append({"rel": link["rel"], "target": link["target"]})
            continue
        if link["rel"] == "discovered-shortcut":
            link.setdefault("confidence", 0.5)
            link.setdefault("discovered_by", "agent")
        links.append(link)
        have.add(key)
        added += 1
    if len(links) > rules.MAX_LINKS:
        raise SchemaError(
            f"a node holds at most {rules.MAX_LINKS} links; this would make {len(links)}"
        )
    return links, added, fortified


def _remove_links(links: list[dict[str, Any]], gone: Any) -> int:
    if gone is None:
        return 0
    if not isinstance(gone, list) or not all(
        isinstance(g, dict) and isinstance(g.get("rel"), str) and isinstance(g.get("target"), str)
        for g in gone
    ):
        raise SchemaError("remove_links: a list of {rel, target} objects is required")
    drop = {(g["rel"], g["target"].strip().strip("/").removesuffix(".md")) for g in gone}
    before = len(links)
    links[:] = [link for link in links if (link.get("rel"), link.get("target")) not in drop]
    return before - len(links)


def _propagate(ctx: WriteContext, txn: Any, node_id: str, meta: dict[str, Any]) -> None:
    """Rewrite the first entry line of ``node_id`` in every branch that lists it."""
    line = render.entry_line(node_id, meta["summary"])
    if meta.get("type") == "branch" and meta.get("coverage"):
        cov = parse_coverage(str(meta["coverage"]))
        if isinstance(cov, dict):
            line += " " + coverage_phrase(cov["notes"], cov["branches"])
    pattern = render.entry_pattern(node_id)
    for branch_id in ctx.forest.catalog.listing_branches(node_id):
        path = ctx.root / (branch_id + ".md")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if f"[[{node_id}" not in text:
            continue
        branch = parse_text(branch_id, text)
        body, count = pattern.subn(lambda _: line, branch.body, count=1)
        if not count or body == branch.body:
            continue
        bmeta = dict(branch.meta)
        bmeta["updated"] = render.today()
        txn.write(path, render.render(bmeta, body))
