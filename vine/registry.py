"""The one registry of calls: every surface is generated from it.

A call is a :class:`~monkeyllm.Vine` method decorated with :func:`call`; its
Python signature (names, type hints with their limits as ``Annotated`` metadata,
defaults) and docstring are the contract, read here once for every surface (see
:mod:`monkeyllm.limits`). The decorator also makes the boundary: arguments are
checked against the signature (nothing coerced but JSON's integral numbers; a bool
is not an integer), expected failures come back as the error envelope, and
anything unexpected as ``E_INTERNAL``.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from . import hints as spelling
from .errors import Internal, SchemaError, VineError
from .limits import (
    INT_LIMIT,
    Apart,
    describe,
    integral,
    limits_in_words,
    merge,
    nullable,
    options,
    problem,
    schema,
    strip,
)

__all__ = ["CALLS", "INT_LIMIT", "Call", "Param", "call", "check_args", "internal", "spec_of"]

_MISSING = inspect.Parameter.empty


@dataclass(frozen=True)
class Param:
    """One parameter of a call, as every surface spells it.

    ``annotated`` is the hint as written, limits included (``Annotated[int,
    Range(1, 50)]``); ``hint`` is its plain type (``int``).
    """

    name: str
    annotated: Any
    required: bool
    default: Any
    doc: str = ""

    @property
    def hint(self) -> Any:
        """The plain type, limits removed."""
        return strip(self.annotated)

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The allowed values of an enum parameter."""
        for option in options(self.hint):
            if typing.get_origin(option) is Literal:
                return tuple(typing.get_args(option))
        return None

    def limits(self) -> str:
        """The parameter's limits in words (``"from 1 to 50"``), for help."""
        return limits_in_words(self.annotated)

    def schema(self) -> dict[str, Any]:
        """A JSON Schema for the parameter's value; an optional one also takes null,
        which means "absent" (its default applies) on every surface."""
        out = schema(self.annotated)
        if not self.required:
            out = nullable(out)
        if self.doc:
            out = {**out, "description": self.doc}
        if not self.required and self.default is not None:
            out = {**out, "default": self.default}
        return out


@dataclass(frozen=True)
class Call:
    """A registered call: name, kind, budget, parameters, docs and the method."""

    name: str
    kind: str  # "read", "write" or "composite"
    budget: int | None
    params: tuple[Param, ...]
    summary: str
    doc: str
    method: Callable[..., Any] = field(repr=False)
    returns: dict[str, Any] | None = field(default=None, repr=False)
    apart: tuple[Apart, ...] = ()

    @property
    def read_only(self) -> bool:
        """True for calls that never change the forest's files."""
        return self.kind != "write"

    def input_schema(self) -> dict[str, Any]:
        """JSON Schema of the argument object."""
        out: dict[str, Any] = {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }
        for rule in self.apart:
            out = merge(out, rule.keywords(dict))
        return out

    def output_schema(self) -> dict[str, Any]:
        """JSON Schema of the call's result (the error envelope aside: see
        :data:`monkeyllm.shapes.ENVELOPE`); a call without a shape yet is an object."""
        if self.returns is not None:
            return self.returns
        from .shapes import RESULTS

        return RESULTS.get(self.name, {"type": "object"})


CALLS: dict[str, Call] = {}


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "object",
    }.get(type(value), type(value).__name__)


def _clip(text: str, limit: int = 60) -> str:
    """``text`` shortened to ``limit`` characters: an envelope echoes what it was given
    and must stay small whatever that was."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ITEM = re.compile(r"item (\d+) ")


def _offending(value: Any, wrong: str) -> Any:
    """The part of ``value`` that ``wrong`` is about: the list item it names (``item 1
    must be ...``, nested as deep as it goes), else the value itself."""
    while isinstance(value, list):
        m = _ITEM.match(wrong)
        if m is None or int(m.group(1)) >= len(value):
            break
        value, wrong = value[int(m.group(1))], wrong[m.end() :]
    return value


# Half of a UTF-16 surrogate pair: a JSON escape can carry one and Python holds it,
# but it is not a character, and no file, SQLite string or UTF-8 reply can take it.
_SURROGATE = re.compile("[\\ud800-\\udfff]")


def _has_surrogate(value: Any) -> bool:
    """True when a string anywhere in ``value`` (list items, object keys and values)
    holds a lone surrogate."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, list | tuple):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def check_args(spec: Call, args: dict[str, Any]) -> dict[str, Any]:
    """Validate an argument object against a call's hints and limits; ``None`` means
    absent (an optional parameter's default applies; a required one is missing)."""
    if not isinstance(args, dict):
        raise SchemaError(f"{spec.name}: arguments must be an object, got {_kind_of(args)}")
    names = {p.name for p in spec.params}
    unknown = sorted(set(args) - names, key=str)
    if unknown:
        raise SchemaError(
            f"{spec.name}: unknown parameter {_clip(repr(unknown[0]))}",
            hint=f"{spec.name} takes: {', '.join(p.name for p in spec.params)}.",
        )
    clean: dict[str, Any] = {}
    for p in spec.params:
        # The name the caller's surface spells (``--limit``, ``NEW_ID`` on the command
        # line); Python, MCP and REST keep the parameter's own.
        name = spelling.parameter(spec.name, p.name)
        value = args.get(p.name)
        if value is None:
            if p.required:
                raise SchemaError(
                    f"{spec.name}: missing required parameter "
                    f"{repr(name) if name == p.name else name}",
                    hint=f"{name} is {describe(p.annotated)}.",
                )
            continue
        value = integral(p.annotated, value)
        wrong = problem(p.annotated, value)
        if wrong is not None:
            bad = _offending(value, wrong)
            shown = _clip(repr(bad))
            raise SchemaError(
                f"{spec.name}: {name} {_clip(wrong, 200)}, got {_kind_of(bad)} {shown}",
                hint=f"{name} accepts {_clip(describe(p.annotated), 300)}.",
            )
        if _has_surrogate(value):
            raise SchemaError(
                f"{spec.name}: {name} is not valid Unicode text: it holds a lone "
                "surrogate (U+D800 to U+DFFF)",
                hint="Send UTF-8 text: half of a surrogate pair (a string cut inside an "
                "emoji), or bytes that are not UTF-8 in a command-line argument, can be "
                "neither stored nor answered.",
            )
        clean[p.name] = value
    for rule in spec.apart:
        if rule.clash(clean):
            spelled = {n: spelling.parameter(spec.name, n) for n in (rule.first, rule.second)}
            raise SchemaError(f"{spec.name}: {rule.why.format_map(spelled)}")
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
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        stripped = line.strip()
        head, sep, rest = stripped.partition(":")
        if sep and " " not in head and line.startswith(" " * 4) and not line.startswith(" " * 12):
            current = head
            out[current] = rest.strip()
        elif current:
            out[current] += " " + stripped
    return out


def spec_of(
    fn: Callable[..., Any],
    kind: str,
    budget: int | None = None,
    returns: dict[str, Any] | None = None,
    apart: tuple[Apart, ...] = (),
) -> Call:
    """The :class:`Call` a method describes (its first parameter, ``self``, skipped),
    without registering it: hosts describe their own calls (the Station's ``answer``)
    exactly as the engine's are described."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    doc = inspect.getdoc(fn) or ""
    docs = _param_docs(doc)
    params = tuple(
        Param(
            name,
            hints.get(name, Any),
            p.default is _MISSING,
            None if p.default is _MISSING else p.default,
            docs.get(name, ""),
        )
        for name, p in list(sig.parameters.items())[1:]
    )
    return Call(fn.__name__, kind, budget, params, doc.split("\n", 1)[0], doc, fn, returns, apart)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def call(
    kind: str, budget: int | None = None, apart: tuple[Apart, ...] = ()
) -> Callable[[_Method], _Method]:
    """Register a Vine method as a call and wrap it with the call boundary; ``apart``
    names parameters that cannot be given together. The wrapped method keeps its
    signature for type checkers (a user's ``vine.locate(3)`` is a mypy error)."""

    def register(fn: _Method) -> _Method:
        sig = inspect.signature(fn)
        spec = spec_of(fn, kind, budget, apart=apart)
        params = spec.params
        CALLS[spec.name] = spec

        @functools.wraps(fn)
        def boundary(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
            try:
                try:
                    bound = sig.bind(self, *args, **kwargs)
                except TypeError as exc:
                    raise SchemaError(
                        f"{spec.name}: {exc}",
                        hint=(f"{spec.name} takes: {', '.join(p.name for p in params)}."),
                    ) from None
                given = dict(list(bound.arguments.items())[1:])
                clean = check_args(spec, given)
                return self._run(spec, clean)
            except VineError as exc:
                return exc.envelope()

        boundary.__vine_call__ = spec  # type: ignore[attr-defined]
        return cast(_Method, boundary)

    return register


def internal(spec_name: str, exc: BaseException) -> dict[str, Any]:
    """The envelope of an unexpected exception: names the call and the type only."""
    return Internal(
        f"{spec_name} failed unexpectedly ({type(exc).__name__})",
        hint="This is a bug in monkeyllm: please report it with the call and its arguments.",
    ).envelope()
