"""``plant``: create a node (or a dataset with its payload) and its parent index entry,
in one commit."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .. import hints, ids
from ..errors import ERRORS, FrontmatterError, NotFound, SchemaError, VineError
from ..heat import STRONG_DEPOSIT
from ..nodes import parse_text
from . import dataset, render, rules
from .context import WriteContext
from .transaction import fault

# Keys plant sets itself, or that only a transplant writes.
_COMPUTED = ("created", "updated")
_SPEC_ONLY = ("parent", "body", "schema", "rows")


def plant(
    ctx: WriteContext, node: Mapping[str, Any], if_absent: bool, dry_run: bool
) -> dict[str, Any]:
    """Validate, then write the node and its parent entry in one commit."""
    if dry_run:
        _rehearse(ctx, node)
    spec = validate_node(ctx, node)
    node_id = spec["id"]
    trail = ids.trail_of(node_id)
    path = ctx.root / (node_id + ".md")
    refuse_waymark(ctx, node_id)
    if ctx.forest.catalog.row(node_id) is not None or path.exists():
        if if_absent:
            return {"id": node_id, "created": False, "trail": trail}
        raise SchemaError(
            f"id already exists: {node_id}",
            hint=f"Use {hints.call('graft', 'id', 'patch')} to change it, or "
            f"{hints.option('plant', 'if_absent', True)} to make plant "
            "idempotent.",
        )
    parent_id = spec["parent"]
    parent_path = ctx.root / (parent_id + ".md")
    parent_row = ctx.forest.catalog.row(parent_id)
    if parent_row is None or parent_row["kind"] != "branch":
        raise NotFound(
            f"parent branch not found: {parent_id}",
            hint="Plant the branch first (type 'branch', id '<folder>/_index').",
        )
    payload = _payload_path(ctx, spec)
    if dry_run:
        ctx.check_repository()
        return {"id": node_id, "valid": True, "dry_run": True}

    with ctx.transaction() as txn:
        txn.touch(path, parent_path)
        if payload is not None:
            txn.created(payload)
            fault("before-payload")
            spec["meta"]["payload_hash"] = dataset.birth(payload, spec["schema"], spec.get("rows"))
            fault("after-payload")
            if "## Query manual" not in spec["body"]:
                spec["body"] = (
                    spec["body"].rstrip("\n")
                    + "\n\n"
                    + dataset.manual(payload, with_samples=bool(spec.get("rows")))
                )
        txn.write(path, render.render(spec["meta"], spec["body"]))
        fault("after-node")
        parent = ctx.forest.read(parent_id)
        section = render.SUB_BRANCHES if spec["meta"]["type"] == "branch" else render.DIRECT_BANANAS
        body = render.add_entry(
            parent.body, section, render.entry_line(node_id, spec["meta"]["summary"]), node_id
        )
        meta = dict(parent.meta)
        meta["coverage"] = render.coverage(body)
        meta["updated"] = render.today()
        txn.write(parent_path, render.render(meta, body))
        fault("after-parent")
        source = spec["meta"].get("source", "agent")
        title = " ".join(str(spec["meta"]["title"]).split())  # a subject is one line
        sha = txn.commit(f"plant({node_id}): {title} [source={source}]")
    ctx.forest.heat.deposit([node_id], STRONG_DEPOSIT)
    out = {"id": node_id, "created": True, "commit": sha, "trail": trail}
    return rules.say_dangling(out, rules.dangling(ctx.root, spec["meta"].get("links") or []))


def refuse_waymark(ctx: WriteContext, node_id: str) -> None:
    """An id a transplant left as a waymark is not free: reads of it lead to the node
    that moved (``E_SCHEMA``)."""
    holder = ctx.forest.catalog.moved_to(node_id)
    if holder is not None and ctx.forest.catalog.row(node_id) is None:
        raise SchemaError(
            f"{node_id} is the old address of {holder} (a waymark)",
            hint=f"Plant under another id; reads of {node_id} lead to "
            f"{holder}, which transplant can move back.",
        )


def validate_node(ctx: WriteContext, node: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's order: rows/schema, dataset schema, origin and waymarks, the
    frontmatter, types and rels, enums, the summary."""
    if "rows" in node and "schema" not in node:
        raise SchemaError("rows given without a schema")
    ntype = node.get("type")
    if not isinstance(ntype, str) or not ntype:
        raise FrontmatterError("type: a node type is required")
    schema = None
    if "schema" in node:
        if ntype != "dataset":
            raise SchemaError("schema is only for datasets")
        schema = dataset.check_schema(node["schema"], node.get("rows"))
    if "moved_from" in node:
        raise SchemaError("moved_from is written by transplant only")
    node_id = rules.check_new_id(node.get("id"))
    if ntype == "branch" and not ids.is_index(node_id):
        node_id = node_id + "/" + ids.INDEX_LEAF
    if ntype != "branch" and ids.is_index(node_id):
        raise SchemaError(
            "_index is reserved for branches",
            hint="Give a leaf another name, or plant it with type 'branch'.",
        )
    dialect = ctx.forest.dialect
    if ntype not in dialect.types:
        raise SchemaError(
            f"unknown type: {ntype}", hint="Declared types: " + ", ".join(dialect.types) + "."
        )
    title = rules.check_title(node.get("title"))
    summary = node.get("summary")
    parent = node.get("parent")
    expected_parent = ids.parent_of(node_id)
    if not isinstance(parent, str) or not parent.strip():
        raise SchemaError(
            "parent: the destination branch is required",
            hint=f"For {node_id} that is {expected_parent!r}.",
        )
    parent = ids.branch_id(parent.strip().strip("/").removesuffix(".md"))
    if parent != expected_parent:
        raise SchemaError(
            f"parent {parent!r} does not hold {node_id!r}",
            hint=f"The parent is derived from the id: {expected_parent!r}.",
        )
    meta: dict[str, Any] = {"id": node_id, "type": ntype, "title": title, "summary": summary}
    today = render.today()
    meta["created"] = today
    meta["updated"] = today
    for key, value in node.items():
        if key in meta or key in _COMPUTED or key in _SPEC_ONLY or value is None:
            continue
        meta[key] = value
    if "links" in meta:
        meta["links"] = rules.check_links(meta["links"], dialect)
    if "tags" in meta:
        rules.check_tags(meta["tags"])
    if "aliases" in meta and not isinstance(meta["aliases"], list):
        raise SchemaError("aliases: a list of strings is required")
    if "origin" in meta:
        rules.check_origin(meta["origin"])
    if "confidence" in meta:
        if rules.check_confidence(meta["confidence"]) == 1.0:
            del meta["confidence"]
    meta.setdefault("source", "agent")
    if schema is not None:
        meta.setdefault("payload", ids.id_of(node_id).rsplit("/", 1)[-1] + ".db")
        meta.setdefault("payload_type", "sqlite")
        if (
            not isinstance(meta["payload"], str)
            or "/" in meta["payload"]
            or not meta["payload"].endswith(".db")
        ):
            raise SchemaError("payload: a bare '<name>.db' file name is required")
        if meta["payload_type"] != "sqlite":
            raise SchemaError("payload_type: a declared dataset is 'sqlite'")
    rules.check_enums(meta)
    summary = rules.check_summary(summary)
    body = node.get("body", "")
    if not isinstance(body, str):
        raise SchemaError("body: a markdown string is required")
    body = _body(ntype, title, summary, body)
    if ntype == "branch":
        meta["coverage"] = render.coverage(body)
    try:
        parse_text(node_id, render.render(meta, body))
    except ValueError as exc:
        raise FrontmatterError(f"the node would not parse back: {exc}") from None
    return {
        "id": node_id,
        "parent": parent,
        "meta": meta,
        "body": body,
        "schema": schema,
        "rows": node.get("rows"),
    }


def _known_type(ntype: Any, types: tuple[str, ...]) -> None:
    if ntype not in types:
        raise SchemaError(
            f"unknown type: {ntype}", hint="Declared types: " + ", ".join(types) + "."
        )


def _rehearse(ctx: WriteContext, node: Mapping[str, Any]) -> None:
    """A dry run reports every problem it can find at once: the first one's envelope,
    with all of them in ``errors``."""
    dialect = ctx.forest.dialect
    ntype = node.get("type")
    checks = [
        lambda: validate_node(ctx, node),
        lambda: rules.check_new_id(node.get("id")),
        lambda: rules.check_title(node.get("title")),
        lambda: rules.check_summary(node.get("summary")),
        lambda: rules.check_enums(node),
        lambda: _known_type(ntype, dialect.types),
        lambda: rules.check_links(node["links"], dialect) if "links" in node else None,
        lambda: rules.check_tags(node["tags"]) if "tags" in node else None,
        lambda: rules.check_origin(node["origin"]) if "origin" in node else None,
        lambda: rules.check_confidence(node["confidence"]) if "confidence" in node else None,
        lambda: (
            dataset.check_schema(node["schema"], node.get("rows")) if "schema" in node else None
        ),
    ]
    problems: list[VineError] = []
    for check in checks:
        try:
            check()
        except VineError as exc:
            if not any(p.code == exc.code and p.message == exc.message for p in problems):
                problems.append(exc)
    if problems:
        first = problems[0]
        first.extras["errors"] = [
            {"code": p.code, "message": p.message, **({"hint": p.hint} if p.hint else {})}
            for p in problems
        ]
        raise first


def _body(ntype: str, title: str, summary: str, body: str) -> str:
    """Empty: the title (a branch gets the index sections); no header: the title first."""
    text = body.strip("\n")
    if not text.strip():
        return f"# {title}\n"
    if text.startswith("#"):
        return text + "\n"
    return f"# {title}\n\n{text}\n"


def _payload_path(ctx: WriteContext, spec: dict[str, Any]):  # noqa: ANN202
    if spec["schema"] is None:
        return None
    folder = os.path.dirname(spec["id"])
    path = ctx.root / folder / spec["meta"]["payload"]
    if path.exists():
        raise SchemaError(
            f"payload {spec['meta']['payload']} already exists; a newborn "
            "dataset never overwrites a payload"
        )
    return path


BATCH_MAX = 20


def plant_batch(
    ctx: WriteContext, nodes: list[Any], if_absent: bool, dry_run: bool
) -> dict[str, Any]:
    """Up to 20 nodes in one commit, rehearsed in order so a branch can ship with its
    children; any problem refuses the whole batch."""
    if not nodes or len(nodes) > BATCH_MAX:
        raise SchemaError(f"plant: a batch takes 1 to {BATCH_MAX} nodes, got {len(nodes)}")
    specs: list[dict[str, Any]] = []
    existing: list[str] = []
    errors: list[dict[str, Any]] = []
    branches: set[str] = set()
    seen: set[str] = set()
    for index, node in enumerate(nodes):
        try:
            spec = _batch_spec(ctx, node, branches, seen)
        except VineError as exc:
            label = node.get("id") if isinstance(node, dict) else None
            errors.append(
                {
                    "id": label,
                    "index": index,
                    "code": exc.code,
                    "message": f"{label}: {exc.message}",
                    **({"hint": exc.hint} if exc.hint else {}),
                }
            )
            if not dry_run:
                raise type(exc)(f"{label}: {exc.message}", hint=exc.hint) from None
            continue
        if spec is None:
            if not if_absent:
                taken = SchemaError(
                    f"{node['id']}: id already exists",
                    hint=f"Pass {hints.option('plant', 'if_absent', True)} "
                    "to skip the ones that exist.",
                )
                if not dry_run:
                    raise taken
                errors.append(
                    {"id": node["id"], "index": index, "code": taken.code, "message": taken.message}
                )
            else:
                existing.append(str(node["id"]))
            continue
        specs.append(spec)
        seen.add(spec["id"])
        if spec["meta"]["type"] == "branch":
            branches.add(spec["id"])
    if errors:
        first = errors[0]
        raise ERRORS[first["code"]](first["message"], hint=first.get("hint"), errors=errors)
    extra = {"existing": existing} if existing else {}
    if dry_run:
        ctx.check_repository()
        return {"valid": True, "count": len(specs), "dry_run": True, **extra}
    if not specs:
        return {"created": [], "count": 0, **extra}
    with ctx.transaction() as txn:
        texts = _lay_out(ctx, specs)
        txn.touch(*texts)
        for path, text in texts.items():
            txn.write(path, text)
        fault("after-node")
        sha = txn.commit(f"plant(batch): {len(specs)} nodes")
    ctx.forest.heat.deposit([s["id"] for s in specs], STRONG_DEPOSIT)
    out = {"created": [s["id"] for s in specs], "commit": sha, "count": len(specs), **extra}
    links = [link for s in specs for link in s["meta"].get("links") or []]
    return rules.say_dangling(out, rules.dangling(ctx.root, links, {s["id"] for s in specs}))


def _batch_spec(
    ctx: WriteContext, node: Any, branches: set[str], seen: set[str]
) -> dict[str, Any] | None:
    """One node of a batch checked against the forest plus the batch so far (None: it
    exists already)."""
    if not isinstance(node, dict):
        raise SchemaError("every node of a batch is an object")
    if node.get("type") == "dataset" or "schema" in node:
        raise SchemaError("datasets are planted one at a time, not in a batch")
    spec = validate_node(ctx, node)
    node_id = spec["id"]
    if node_id in seen:
        raise SchemaError(f"{node_id} appears twice in the batch")
    refuse_waymark(ctx, node_id)
    if ctx.forest.catalog.row(node_id) is not None or (ctx.root / (node_id + ".md")).exists():
        return None
    parent = spec["parent"]
    row = ctx.forest.catalog.row(parent)
    if parent not in branches and (row is None or row["kind"] != "branch"):
        raise NotFound(
            f"parent branch not found: {parent}",
            hint="Plant the branch first, or earlier in the same batch.",
        )
    return spec


def _lay_out(ctx: WriteContext, specs: list[dict[str, Any]]) -> dict[Any, str]:
    """Every file the batch writes: the new nodes, and each parent with its entries."""
    docs: dict[str, tuple[dict[str, Any], str]] = {s["id"]: (s["meta"], s["body"]) for s in specs}
    for spec in specs:
        parent = spec["parent"]
        if parent not in docs:
            node = ctx.forest.read(parent)
            docs[parent] = (dict(node.meta), node.body)
        meta, body = docs[parent]
        section = render.SUB_BRANCHES if spec["meta"]["type"] == "branch" else render.DIRECT_BANANAS
        body = render.add_entry(
            body, section, render.entry_line(spec["id"], spec["meta"]["summary"]), spec["id"]
        )
        meta = dict(meta, coverage=render.coverage(body), updated=render.today())
        docs[parent] = (meta, body)
    return {
        ctx.root / (node_id + ".md"): render.render(meta, body)
        for node_id, (meta, body) in docs.items()
    }
