"""Node ids and their paths: mapping, containment, parent and trail."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import NotFound, SchemaError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
ROOT_INDEX = "_index"
INDEX_LEAF = "_index"
# Folders under the root that never hold nodes.
PRIVATE_DIRS = frozenset({"_derived", "_assets", ".git"})


def normalize(raw: object, *, param: str = "id") -> str:
    """Canonical form of a caller's id; anything that could leave the forest is not found.

    Strips whitespace, slashes and a trailing ``.md``; refuses absolute paths,
    ``..`` and ``.`` segments, backslashes and control characters with
    ``E_NOT_FOUND`` so nothing outside the forest is ever touched.
    """
    if not isinstance(raw, str):
        raise SchemaError(f"{param} must be a string, got {type(raw).__name__}")
    text = raw.strip()
    if text.endswith(".md"):
        text = text[:-3]
    escapes = (
        not text.strip("/")
        or text.startswith(("/", "~"))
        or "\\" in text
        or _CONTROL.search(text) is not None
        or (len(text) > 1 and text[1] == ":")
    )
    text = text.strip("/")
    parts = text.split("/")
    if escapes or any(p in ("", ".", "..") for p in parts) or parts[0] in PRIVATE_DIRS:
        from . import hints

        raise NotFound(
            f"node not found: {raw}",
            hint="Ids are paths inside the forest, "
            f"like 'sales/exchange-policy'. Use {hints.call('locate', 'query')} "
            "to find one.",
        )
    return text


def path_of(root: Path, node_id: str) -> Path:
    """The file of a (normalized) id, checked to resolve inside ``root``.

    ``root`` is already resolved (a Vine resolves it on open).
    """
    path = root / (node_id + ".md")
    real = os.path.realpath(path)
    base = str(root)
    if real != base and not real.startswith(base + os.sep):
        raise NotFound(f"node not found: {node_id}", hint="The id escapes the forest.")
    return path


def id_of(rel_path: str) -> str:
    """The id of a POSIX path relative to the root."""
    return rel_path[:-3] if rel_path.endswith(".md") else rel_path


def is_index(node_id: str) -> bool:
    """True for branch index ids (``_index`` and ``*/_index``)."""
    return node_id == ROOT_INDEX or node_id.endswith("/" + INDEX_LEAF)


def parent_of(node_id: str) -> str | None:
    """The parent index id, derived from the path; None for the master index."""
    if node_id == ROOT_INDEX:
        return None
    parts = node_id.split("/")
    if parts[-1] == INDEX_LEAF:
        parts = parts[:-1]
    folders = parts[:-1]
    return "/".join([*folders, INDEX_LEAF]) if folders else ROOT_INDEX


def trail_of(node_id: str) -> list[str]:
    """Ancestor index ids from the root down, excluding the node itself.

    Folders whose name starts with ``_`` (such as ``_meta``) are skipped.
    """
    if node_id == ROOT_INDEX:
        return []
    parts = node_id.split("/")
    if parts[-1] == INDEX_LEAF:
        parts = parts[:-1]
    trail = [ROOT_INDEX]
    for depth in range(1, len(parts)):
        if parts[depth - 1].startswith("_"):
            break
        trail.append("/".join(parts[:depth]) + "/" + INDEX_LEAF)
    return trail


def branch_id(raw: str) -> str:
    """A branch given as ``x`` or ``x/_index`` (or ``_index``), as its index id."""
    if raw == ROOT_INDEX or is_index(raw):
        return raw
    return raw + "/" + INDEX_LEAF


def folder_prefix(index_id: str) -> str:
    """The id prefix of everything under a branch (``""`` for the master index)."""
    return "" if index_id == ROOT_INDEX else index_id[: -len(INDEX_LEAF)]
