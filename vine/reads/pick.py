"""``pick``: a node's body, one named section, several sections, or a page."""

from __future__ import annotations

import re
from typing import Any

from .. import budget, hints
from ..errors import NotFound, SchemaError
from ..forest import Forest
from ..hints import Hole
from ..nodes import Node
from .batch import batch

_CURSOR = re.compile(r"^b(\d{1,12})(?::(\d{1,12}))?$")
_BLOCKS = re.compile(r".*?(?:\n{2,}|\Z)", re.DOTALL)


def pick(
    forest: Forest, id: str | list[str], section: str | list[str] | None, after: str | None
) -> dict[str, Any]:
    """Dispatch on the shape of the request."""
    if after is not None and section is not None:
        raise SchemaError(
            "pick: after and section cannot be combined",
            hint=f"Use {hints.option('pick', 'section')} to read one section, "
            f"or {hints.option('pick', 'after')} to page.",
        )
    if isinstance(id, list):
        if after is not None:
            raise SchemaError("pick: after cannot be used with a list of ids")
        return _batch(forest, id, section)
    out = _one(forest, id, section, after)
    forest.read_deposit([out["id"]])
    return out


def _one(
    forest: Forest, raw: str, section: str | list[str] | None, after: str | None
) -> dict[str, Any]:
    row = forest.resolve(raw)
    node = forest.read(row["id"])
    # What a graft's if_revision names to refuse an edit of a node changed since.
    revision = forest.revision(node.id)
    body = forest.body(node)
    if isinstance(section, list):
        return _sections(node, body, section, revision)
    if section is not None:
        return _section(node, body, section, revision)
    if after is not None:
        return _page(node, body, after, revision)
    out: dict[str, Any] = {
        "id": node.id,
        "title": node.title,
        "body": body,
        "body_tokens": budget.tokens(body),
        "truncated": False,
        "revision": revision,
    }
    if budget.cost(out) <= budget.PICK:
        return out
    return _map(node, body, revision)


def _view(node: Node, body: str) -> Node:
    return node if body is node.body else Node(node.id, node.meta, body)


def _map(node: Node, body: str, revision: str) -> dict[str, Any]:
    """A body over budget answers with its outline, never a slice."""
    outline = _view(node, body).outline
    out: dict[str, Any] = {
        "id": node.id,
        "title": node.title,
        "outline": outline,
        "body_tokens": budget.tokens(body),
        "truncated": True,
        "hint": (
            f"Body is {budget.tokens(body)} tokens, over the {budget.PICK}-token budget. "
            f"Use {hints.option('pick', 'section', Hole('header'))} to harvest one "
            f"section (sections have no cap), or {hints.option('pick', 'after', '')} to "
            "read it page by page."
        ),
        "revision": revision,
    }
    budget.shrink_list(out, "outline", budget.PICK)
    return out


def _section(node: Node, body: str, name: str, revision: str) -> dict[str, Any]:
    view = _view(node, body)
    found = view.section(name)
    if found is None:
        raise NotFound(
            f"section not found: {name!r} in {node.id}",
            hint="Outline: " + "; ".join(h.text for h in view.headers)
            if view.headers
            else f"{node.id} has no sections; pick it without section.",
        )
    header, text = found
    return {
        "id": node.id,
        "title": node.title,
        "section": header.text,
        "body": text,
        "body_tokens": budget.tokens(text),
        "truncated": False,
        "revision": revision,
    }


def _sections(node: Node, body: str, names: list[str], revision: str) -> dict[str, Any]:
    if not names or len(names) > budget.PICK_SECTIONS_MAX:
        raise SchemaError(
            f"pick: a section list takes 1 to {budget.PICK_SECTIONS_MAX} names, got {len(names)}"
        )
    view = _view(node, body)
    sections: list[dict[str, Any]] = []
    missing: list[str] = []
    for name in dict.fromkeys(names):
        found = view.section(name)
        if found is None:
            missing.append(name)
            continue
        header, text = found
        sections.append(
            {
                "section": name,
                "header": header.text,
                "body": text,
                "body_tokens": budget.tokens(text),
            }
        )
    out: dict[str, Any] = {
        "id": node.id,
        "title": node.title,
        "sections": sections,
        "missing": missing,
        "dropped": [],
        "truncated": False,
        "revision": revision,
    }
    if missing:
        out["hint"] = "Outline: " + "; ".join(view.outline)
    while out["sections"] and budget.cost(out) > budget.PICK:
        out["dropped"].insert(0, out["sections"].pop()["section"])
        out["truncated"] = True
    return out


def blocks(body: str) -> list[str]:
    """Split at runs of 2+ newlines; each block keeps its run, so they join back."""
    return [b for b in _BLOCKS.findall(body) if b]


def _page(node: Node, body: str, after: str, revision: str) -> dict[str, Any]:
    """One page of whole blocks; a block too big for any page is split into parts.

    Cursors: ``""`` starts; ``b7`` resumes after block 7; ``b7:120`` resumes inside
    block 7 at character 120. Pages join back to the exact body.
    """
    block, offset = _cursor(after)
    parts = blocks(body)
    out: dict[str, Any] = {
        "id": node.id,
        "title": node.title,
        "total": len(parts),
        "body": "",
        "body_tokens": 0,
        "returned": 0,
        "truncated": False,
        "revision": revision,
    }
    if block >= len(parts):
        return out
    # Room for the body text: the page with an empty body and its longest cursor.
    frame = dict(out, truncated=True, cut=True, next=f"b{len(parts)}:{len(body)}")
    room = budget.PICK * 4 - len(budget.dumps(frame)) - 8
    taken: list[str] = []
    used = 0
    i = block
    cut_at = None
    while i < len(parts):
        piece = parts[i][offset:] if i == block else parts[i]
        size = len(budget.dumps(piece)) - 2
        if used + size <= room:
            taken.append(piece)
            used += size
            i += 1
            continue
        if not taken:
            # A single block larger than a page: take what fits, up to a space.
            cut_at = _split_point(piece, room)
            taken.append(piece[:cut_at])
        break
    out["body"] = "".join(taken)
    out["body_tokens"] = budget.tokens(out["body"])
    if cut_at is not None:
        out["returned"] = 1
        out["cut"] = True
        out["truncated"] = True
        out["next"] = f"b{block}:{offset + cut_at}"
        return out
    out["returned"] = i - block
    out["truncated"] = i < len(parts)
    if out["truncated"]:
        out["next"] = f"b{i - 1}"
    return out


def _cursor(after: str) -> tuple[int, int]:
    if after == "":
        return 0, 0
    m = _CURSOR.match(after)
    if not m:
        raise SchemaError(
            f"pick: malformed cursor {after!r}",
            hint="Cursors look like 'b7' or 'b7:120'; pass "
            f"{hints.option('pick', 'after', '')} to start.",
        )
    if m.group(2) is not None:
        return int(m.group(1)), int(m.group(2))
    return int(m.group(1)) + 1, 0


def _split_point(text: str, room: int) -> int:
    """Where to cut ``text`` so its JSON form fits ``room`` characters: at a space
    or newline when there is one in the second half, never at zero."""
    lo, hi = 1, len(text)
    while lo < hi:  # the longest prefix whose escaped form fits
        mid = (lo + hi + 1) // 2
        if len(budget.dumps(text[:mid])) - 2 <= room:
            lo = mid
        else:
            hi = mid - 1
    space = max(text.rfind(" ", 0, lo), text.rfind("\n", 0, lo))
    return space + 1 if space >= lo // 2 else lo


def _batch(forest: Forest, ids: list[str], section: str | list[str] | None) -> dict[str, Any]:
    out = batch(
        "pick",
        ids,
        budget.PICK_BATCH_MAX,
        budget.PICK_BATCH,
        lambda i: _one(forest, i, section, None),
    )
    forest.read_deposit(n["id"] for n in out["nodes"])
    return out
