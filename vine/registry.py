"""The one registry of calls: every surface is generated from it.

A call is a :class:`~monkeyllm.Vine` method decorated with :func:`call`; its
Python signature (names, type hints, defaults) and docstring are the contract.
The decorator also makes the boundary: arguments are checked against the
signature (nothing coerced; a bool is not an integer), expected failures come
back as the error envelope, and anything unexpected as ``E_INTERNAL``.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import Internal, SchemaError, VineError

_MISSING = inspect.Parameter.empty
# Integers travel as JSON numbers and reach SQLite: keep them within 64 bits.
INT_LIMIT = 2**63 - 1


@dataclass(frozen=True)
class Param:
    """One parameter of a call, as every surface spells it."""

    name: str
    hint: Any
    required: bool
    default: Any
    doc: str = ""

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The allowed values of an enum parameter."""
        for option in _options(self.hint):
            if typing.get_origin(option) is Literal:
                return tuple(typing.get_args(option))
        return None

    def schema(self) -> dict[str, Any]:
        """A JSON Schema for the parameter's value."""
        options = [o for o in _options(self.hint) if o is not type(None)]
        schemas = [_schema(o) for o in options]
        out: dict[str, Any] = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        if self.doc:
            out = {**out, "description": self.doc}
        if not self.required and self.default is not None:
            out = {**out, "default": self.default}
        return out


@dataclass(frozen=True)
class Call:
    """A registered call: name, kind, budget, parameters, docs and the method."""

    name: str
    kind: str                      # "read", "write" or "composite"
    budget: int | None
    params: tuple[Param, ...]
    summary: str
    doc: str
    method: Callable[..., Any] = field(repr=False)

    @property
    def read_only(self) -> bool:
        """True for calls that never change the forest's files."""
        return self.kind != "write"

    def input_schema(self) -> dict[str, Any]:
        """JSON Schema of the argument object."""
        return {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


CALLS: dict[str, Call] = {}


def _options(hint: Any) -> tuple[Any, ...]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin is Literal:
        return {"type": "string", "enum": list(typing.get_args(hint))}
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return {"type": "array", "items": _schema(item)}
    if origin is dict or hint is dict:
        return {"type": "object"}
    return {
        str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
        bool: {"type": "boolean"},
    }.get(hint, {})


def _accepts(hint: Any, value: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(option, value) for option in typing.get_args(hint))
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if origin is Literal:
        return isinstance(value, str) and value in typing.get_args(hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_accepts(item, v) for v in value)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool) and \
            -INT_LIMIT <= value <= INT_LIMIT
    if isinstance(hint, type):
        return isinstance(value, hint)
    return False


def _describe(hint: Any) -> str:
    parts = []
    for option in _options(hint):
        if option is type(None):
            continue
        origin = typing.get_origin(option)
        if origin is Literal:
            parts.append("one of " + ", ".join(repr(a) for a in typing.get_args(option)))
        elif origin is list:
            (item,) = typing.get_args(option) or (Any,)
            parts.append(f"a list of {_describe(item)}s")
        elif origin is dict or option is dict:
            parts.append("an object")
        else:
            parts.append({str: "string", int: "integer (64-bit)", float: "number",
                          bool: "boolean"}.get(option, str(option)))
    return " or ".join(parts)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string",
            list: "list", dict: "object"}.get(type(value), type(value).__name__)


def _clip(text: str, limit: int = 60) -> str:
    """``text`` shortened to ``limit`` characters: an envelope echoes what it was given
    and must stay small whatever that was."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_args(spec: Call, args: dict[str, Any]) -> dict[str, Any]:
    """Validate an argument object against a call; ``None`` means absent."""
    if not isinstance(args, dict):
        raise SchemaError(f"{spec.name}: arguments must be an object, got {_kind_of(args)}")
    names = {p.name for p in spec.params}
    unknown = sorted(set(args) - names)
    if unknown:
        raise SchemaError(
            f"{spec.name}: unknown parameter {_clip(repr(unknown[0]))}",
            hint=f"{spec.name} takes: {', '.join(p.name for p in spec.params)}.")
    clean: dict[str, Any] = {}
    for p in spec.params:
        value = args.get(p.name)
        if value is None:
            if p.required:
                raise SchemaError(f"{spec.name}: missing required parameter {p.name!r}",
                                  hint=f"{p.name} is {_describe(p.hint)}.")
            continue
        if not _accepts(p.hint, value):
            shown = _clip(repr(value))
            raise SchemaError(
                f"{spec.name}: {p.name} must be {_describe(p.hint)}, got {_kind_of(value)} "
                f"{shown}",
                hint=f"{p.name} accepts {_describe(p.hint)}.")
        clean[p.name] = value
    return clean


def _param_docs(doc: str) -> dict[str, str]:
    """Google-style ``Args:`` entries of a docstring."""
    out: dict[str, str] = {}
    lines = doc.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Args:")
    except StopIteration:
        return out
    current = None
    for line in lines[start + 1:]:
        if not line.strip():
            break
        stripped = line.strip()
        head, sep, rest = stripped.partition(":")
        if sep and " " not in head and line.startswith(" " * 4) \
                and not line.startswith(" " * 12):
            current = head
            out[current] = rest.strip()
        elif current:
            out[current] += " " + stripped
    return out


def spec_of(fn: Callable[..., Any], kind: str, budget: int | None = None) -> Call:
    """The :class:`Call` a method describes (its first parameter, ``self``, skipped),
    without registering it: hosts describe their own calls (the Station's ``answer``)
    exactly as the engine's are described."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    doc = inspect.getdoc(fn) or ""
    docs = _param_docs(doc)
    params = tuple(
        Param(name, hints.get(name, Any), p.default is _MISSING,
              None if p.default is _MISSING else p.default, docs.get(name, ""))
        for name, p in list(sig.parameters.items())[1:]
    )
    return Call(fn.__name__, kind, budget, params, doc.split("\n", 1)[0], doc, fn)


def call(kind: str, budget: int | None = None) -> Callable[[Callable[..., Any]], Any]:
    """Register a Vine method as a call and wrap it with the call boundary."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        spec = spec_of(fn, kind, budget)
        params = spec.params
        CALLS[spec.name] = spec

        @functools.wraps(fn)
        def boundary(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
            try:
                try:
                    bound = sig.bind(self, *args, **kwargs)
                except TypeError as exc:
                    raise SchemaError(f"{spec.name}: {exc}", hint=(
                        f"{spec.name} takes: {', '.join(p.name for p in params)}.")) from None
                given = dict(list(bound.arguments.items())[1:])
                clean = check_args(spec, given)
                return self._run(spec, clean)
            except VineError as exc:
                return exc.envelope()

        boundary.__vine_call__ = spec  # type: ignore[attr-defined]
        return boundary

    return register


def internal(spec_name: str, exc: BaseException) -> dict[str, Any]:
    """The envelope of an unexpected exception: names the call and the type only."""
    return Internal(f"{spec_name} failed unexpectedly ({type(exc).__name__})",
                    hint="This is a bug in monkeyllm: please report it with the call "
                         "and its arguments.").envelope()
