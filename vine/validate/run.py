"""A validation run: walk the forest, read every file, run every check."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import hints, ids
from ..dialect import parse_dialect
from ..errors import NotFound
from ..nodes import ParseError, parse_text
from .model import (
    ERROR,
    PAYLOAD_SUFFIXES,
    SCHEMA_ID,
    SKIP_DIRS,
    YAML_LINE,
    Finding,
    NodeFile,
    ValidationRun,
    is_private,
)
from .nodes import check_node, check_orphans
from .tree import check_index, check_tree
from .waymarks import check_waymarks


def validate(root: str | os.PathLike[str], *, payloads: bool = True) -> list[Finding]:
    """Every finding in the forest at ``root``, sorted by file and line.

    Reads the files only: nothing is written, not even the catalog.

    Args:
        root: The forest's root folder (it holds ``_index.md``).
        payloads: Check payload files (missing, hash drift, orphans); False for a
            checkout that lacks them.

    Raises:
        NotFound: ``root`` holds no ``_index.md``.
    """
    return check_all(load_run(Path(root), payloads)).findings


def load_run(root: Path, payloads: bool) -> ValidationRun:
    """A run over the forest at ``root`` with every node file read (NotFound without
    ``_index.md``)."""
    root = root.expanduser().resolve()
    if not (root / "_index.md").is_file():
        raise NotFound(
            f"no forest at {root} (no _index.md)",
            hint=f"Point at a forest's root folder, or create one with {hints.create_forest()}.",
        )
    run = ValidationRun(root, payloads)
    nodes, run.others = _walk(root)
    for path in sorted(nodes):
        f = _read(root, path)
        run.files[f.id] = f
    schema = run.files.get(SCHEMA_ID)
    if schema is not None and schema.node is not None:
        run.dialect = parse_dialect(schema.node.body)
    for f in run.files.values():
        if f.node is not None:
            for old in _str_list(f.node.meta.get("moved_from")):
                run.moves[old] = f.id
        if f.id != ids.ROOT_INDEX and not is_private(f.id):
            run.children.setdefault(ids.parent_of(f.id) or "", []).append(f.id)
    return run


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """Node files (``.md`` outside private and hidden folders) and payload-like files
    (SQLite files anywhere outside ``_derived``/``.git``, everything under ``_assets``)."""
    nodes: list[str] = []
    others: list[str] = []
    stack: list[tuple[str, bool]] = [("", False)]
    while stack:
        rel, assets = stack.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                        stack.append((child, assets or entry.name == "_assets"))
                elif not entry.is_file(follow_symlinks=False):
                    continue
                elif assets or entry.name.endswith(PAYLOAD_SUFFIXES):
                    others.append(child)
                elif entry.name.endswith(".md"):
                    nodes.append(child)
            except OSError:
                continue
    return nodes, others


def _read(root: Path, path: str) -> NodeFile:
    f = NodeFile(path, ids.id_of(path))
    try:
        with open(os.path.join(root, path), "rb") as fh:
            data = fh.read()
    except OSError as exc:
        f.error = f"unreadable: {exc.strerror}"
        return f
    if b"\x00" in data:
        f.error = "binary content (NUL bytes)"
        return f
    try:
        f.text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        f.error = f"not UTF-8 text (byte {exc.start})"
        return f
    try:
        f.node = parse_text(f.id, f.text)
    except ParseError as exc:
        f.error = str(exc)
    return f


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def check_all(run: ValidationRun) -> ValidationRun:
    """Run every check over a loaded run and return it with its findings."""
    for f in run.files.values():
        if f.node is None:
            run.add(
                f,
                ERROR,
                "file.unparseable",
                f"{f.path} is not a node: {f.error}",
                "Give the file a '---' YAML frontmatter block closed by '---', or move "
                "it out of the forest.",
                line=_error_line(f),
            )
        elif not f.id.startswith("_meta/"):
            check_node(run, f)
    check_tree(run)
    check_waymarks(run)
    for f in run.files.values():
        if f.node is not None and ids.is_index(f.id) and not is_private(f.id):
            check_index(run, f)
    if run.payloads:
        check_orphans(run)
    run.findings.sort(key=lambda x: (x.path, x.line or 0, x.code))
    return run


def _error_line(f: NodeFile) -> int:
    """The file line a parse error names (counted from the first '---'), else 1."""
    found = YAML_LINE.search(f.error or "")
    if found is None:
        return 1
    text = f.text.lstrip("\ufeff")
    return int(found.group(1)) + text[: len(text) - len(text.lstrip())].count("\n")
