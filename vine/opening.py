"""What ``Vine(...)`` checks before it touches a forest: the folder is a forest's root,
and each option is of its type and range. Every refusal is a :class:`VineError`, raised
before the writer lock is taken, so a mistyped option never leaves the lock held."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from . import hints
from .errors import NotFound, SchemaError


def forest_root(path: object) -> Path:
    """The forest's root folder ``path`` names (``~`` expanded, resolved).

    Raises ``E_SCHEMA`` for a path that is not a string or a path, ``E_NOT_FOUND`` for a
    folder without ``_index.md``, or one whose ``_index.md`` is a branch of a larger
    forest (``brain/sales``): opened as a forest of its own, its ids would lose their
    prefix and its links point nowhere."""
    if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
        raise SchemaError(
            f"path must be a str or a pathlib.Path, got {type(path).__name__} {path!r:.60}",
            hint="Pass the forest's root folder, e.g. Vine('./brain').",
        )
    root = Path(path).expanduser().resolve()
    if not (root / "_index.md").is_file():
        raise NotFound(
            f"no forest at {root} (no _index.md)",
            hint=f"Point at a forest's root folder, or create one with {hints.create_forest()}.",
        )
    branch = _branch_id(root / "_index.md")
    if branch is not None:
        depth = branch.count("/")
        above = root.parents[depth - 1] if depth <= len(root.parents) else None
        where = (
            f"open the forest's root, {above}, and read the branch there: scan({branch!r})"
            if above is not None and (above / "_index.md").is_file()
            else "open the forest's root folder, the one whose _index.md has id '_index'"
        )
        raise NotFound(
            f"{root} is the branch {branch} of a forest, not a forest's root",
            hint=f"Its ids would lose their '{branch[: -len('_index')]}' prefix: {where}.",
        )
    return root


def _branch_id(index: Path) -> str | None:
    """The id a root ``_index.md`` declares when it is a branch's (``sales/_index``);
    None for a root's (``_index``), or when it cannot be read (the catalog says why)."""
    from .nodes import ParseError, parse_bytes

    try:
        declared = parse_bytes("_index", index.read_bytes()).meta.get("id")
    except (OSError, ParseError):
        return None
    if isinstance(declared, str) and declared.endswith("/_index") and declared != "/_index":
        return declared.strip("/")
    return None


def check_options(
    writable: Any, alpha: Any, half_life_days: Any, watch: Any, on_lock_wait: Any
) -> None:
    """Raise ``E_SCHEMA`` for an option of the wrong type or out of range (a NaN alpha
    made every score NaN, which is not JSON; a NaN half-life failed every call)."""
    for name, value in (("writable", writable), ("watch", watch)):
        if not isinstance(value, bool):
            raise SchemaError(
                f"{name} must be True or False, got {type(value).__name__} {value!r:.60}"
            )
    if not _number(alpha) or alpha < 0:
        raise SchemaError(f"alpha must be a finite number >= 0, got {alpha!r:.60}")
    if not _number(half_life_days) or half_life_days <= 0:
        raise SchemaError(
            f"half_life_days must be a finite number of days > 0, got {half_life_days!r:.60}"
        )
    if on_lock_wait is not None and not callable(on_lock_wait):
        raise SchemaError(
            f"on_lock_wait must be a function of the lock card, or None, got "
            f"{type(on_lock_wait).__name__}"
        )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
