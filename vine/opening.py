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
    root = as_path(path).expanduser().resolve()
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


def as_path(path: object, name: str = "path") -> Path:
    """``path`` as a :class:`~pathlib.Path`; ``E_SCHEMA`` for anything but a str or an
    ``os.PathLike`` of one (pathlib's own ``TypeError`` names neither the argument nor
    what to pass)."""
    if not isinstance(path, str | os.PathLike) or isinstance(os.fspath(path), bytes):
        raise SchemaError(
            f"{name} must be a str or a pathlib.Path, got {type(path).__name__} {path!r:.60}",
            hint="Pass a forest's root folder, e.g. Vine('./brain').",
        )
    return Path(path)


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


def check_open_options(opener: Any, options: dict[str, Any]) -> None:
    """Raise ``E_SCHEMA`` for options ``opener(path, **options)`` (a Vine class) would
    refuse: what ``Vine.init`` and ``Vine.copy`` ask before they create anything, so a
    mistyped option does not leave behind a new forest that the corrected retry then
    finds in its way ("a forest already exists")."""
    import inspect

    from .canopy.methods import embedder_of
    from .lock import timeout_from_env
    from .writepath import check_hold

    signature = inspect.signature(opener)
    try:
        given = signature.bind(".", **options)
    except TypeError as exc:
        takes = ", ".join(signature.parameters)
        raise SchemaError(
            f"{opener.__name__}: {exc}", hint=f"{opener.__name__} takes: {takes}."
        ) from None
    given.apply_defaults()
    args = given.arguments
    check_options(
        args["writable"], args["alpha"], args["half_life_days"], args["watch"], args["on_lock_wait"]
    )
    embedder_of(args["embedder"])
    check_hold(args["lock"])
    timeout_from_env(args["lock_timeout"])
