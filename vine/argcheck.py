"""Checks for the arguments of the public methods that are not calls (``visibility``,
``trailers``, ``reinforce``, ``near``, ``ingest``, ...), which the registry's schema does
not see: a None or a value of the wrong type is ``E_SCHEMA`` naming the argument and
what it takes, never a bare ``TypeError`` from deep inside (or, for a string where a
list belongs, its characters taken one by one)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import SchemaError


def _got(value: Any) -> str:
    return f"got {type(value).__name__} {value!r:.60}"


def strings(value: Any, name: str, what: str) -> list[str]:
    """``value`` as a list of strings: a list or tuple of them (``what`` says what each
    is, for the message)."""
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    hint = f"Wrap one in a list: [{value!r:.60}]." if isinstance(value, str) else None
    raise SchemaError(f"{name} must be a list of {what}, {_got(value)}", hint=hint)


def function(value: Any, name: str, what: str) -> None:
    """Refuse ``value`` unless it is None or callable (``what`` says how it is called)."""
    if value is not None and not callable(value):
        raise SchemaError(f"{name} must be {what}, or None, {_got(value)}")


def text_pairs(value: Any, name: str) -> dict[str, str]:
    """``value`` as a dict of strings to strings."""
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        return value
    raise SchemaError(f"{name} must be a dict of str keys to str values, {_got(value)}")


def paths(value: Any, name: str) -> list[Path]:
    """``value`` as a list of paths: a list or tuple of str or ``os.PathLike``."""
    if isinstance(value, list | tuple) and all(
        isinstance(v, str | os.PathLike) and not isinstance(os.fspath(v), bytes) for v in value
    ):
        return [Path(v) for v in value]
    hint = f"Wrap one in a list: [{value!r:.60}]." if isinstance(value, str | os.PathLike) else None
    raise SchemaError(
        f"{name} must be a list of paths (str or pathlib.Path), {_got(value)}", hint=hint
    )


def flag(value: Any, name: str) -> bool:
    """``value`` when it is True or False."""
    if isinstance(value, bool):
        return value
    raise SchemaError(f"{name} must be True or False, {_got(value)}")


def count_or_none(value: Any, name: str, least: int) -> int | None:
    """``value`` when it is None or an int of at least ``least`` (not a bool)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= least):
        return value
    raise SchemaError(f"{name} must be an integer >= {least}, or None, {_got(value)}")
