"""What a call's type hints say, as every surface reads them.

A parameter's limits ride on its type hint as ``Annotated`` metadata
(``Annotated[int, Range(1, 50)]``, ``Annotated[str, MinLen(1)]``); closed sets are
``Literal``; nested objects are ``TypedDict``. From one hint come the engine's check
of a value (:func:`problem`), its JSON Schema (:func:`schema`, for MCP tools and the
Station's OpenAPI document) and its words (:func:`describe`, for errors and help).
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Callable
from functools import cached_property
from typing import Annotated, Any, Literal, Union

# Integers travel as JSON numbers and reach SQLite: keep them within 64 bits.
INT_LIMIT = 2**63 - 1


class Limit:
    """A limit on a value of the hint it annotates (plain classes, not dataclasses:
    every ``vine`` start builds them, and a dataclass costs a compile each)."""

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{k}={v!r}" for k, v in vars(self).items() if k not in ("compiled", "whole")
        )
        return f"{type(self).__name__}({fields})"

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (already of the right type), or None."""
        raise NotImplementedError

    def keywords(self, base: Any) -> dict[str, Any]:
        """The JSON Schema keywords saying the same."""
        raise NotImplementedError

    def words(self, base: Any) -> str:
        """The limit in words, for help and hints."""
        raise NotImplementedError


def _value(bound: int | float | Callable[[], int] | None) -> int | float | None:
    return bound() if callable(bound) else bound


class Range(Limit):
    """Inclusive bounds of a number; ``hi`` may be a function (a limit set by the
    environment, read when it is used)."""

    def __init__(
        self, lo: int | float | None = None, hi: int | float | Callable[[], int] | None = None
    ) -> None:
        self.lo, self.hi = lo, hi

    def bounds(self) -> tuple[int | float | None, int | float | None]:
        """The bounds now."""
        return _value(self.lo), _value(self.hi)

    def problem(self, value: Any) -> str | None:
        lo, hi = self.bounds()
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return "must be " + self.words(None)
        return None

    def keywords(self, base: Any) -> dict[str, Any]:
        lo, hi = self.bounds()
        out: dict[str, Any] = {}
        if lo is not None:
            out["minimum"] = lo
        if hi is not None:
            out["maximum"] = hi
        return out

    def words(self, base: Any) -> str:
        lo, hi = self.bounds()
        if lo is not None and hi is not None:
            return f"from {lo:g} to {hi:g}"
        return f"at least {lo:g}" if lo is not None else f"at most {hi:g}"


def _size_keyword(base: Any, end: str) -> str:
    """minLength/maxLength of a string, minProperties/... of an object, else items."""
    if base is str:
        return end + "Length"
    if base is dict or typing.get_origin(base) is dict or typing.is_typeddict(base):
        return end + "Properties"
    return end + "Items"


def _counted(base: Any, n: int) -> str:
    if base is str:
        unit = "character"
    elif base is dict or typing.get_origin(base) is dict or typing.is_typeddict(base):
        unit = "key"
    else:
        unit = "item"
    return f"{n} {unit}{'' if n == 1 else 's'}"


class MinLen(Limit):
    """The fewest characters of a string, items of a list or keys of an object."""

    def __init__(self, n: int) -> None:
        self.n = n

    def problem(self, value: Any) -> str | None:
        if len(value) >= self.n:
            return None
        if self.n == 1:
            return "must not be empty"
        return "must have " + self.words(str if isinstance(value, str) else type(value))

    def keywords(self, base: Any) -> dict[str, Any]:
        return {_size_keyword(base, "min"): self.n}

    def words(self, base: Any) -> str:
        return "at least " + _counted(base, self.n)


class MaxLen(Limit):
    """The most characters of a string, items of a list or keys of an object."""

    def __init__(self, n: int) -> None:
        self.n = n

    def problem(self, value: Any) -> str | None:
        return None if len(value) <= self.n else "must have " + self.words(type(value))

    def keywords(self, base: Any) -> dict[str, Any]:
        return {_size_keyword(base, "max"): self.n}

    def words(self, base: Any) -> str:
        return "at most " + _counted(base, self.n)


class Pattern(Limit):
    """A regular expression a string must contain a match of (JSON Schema's
    ``pattern``: anchor it to match the whole string)."""

    def __init__(self, regex: str, what: str) -> None:
        self.regex, self.what = regex, what

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        """The expression, compiled when first used."""
        return re.compile(self.regex)

    @cached_property
    def whole(self) -> re.Pattern[str] | None:
        """An anchored pattern as a full match: JSON Schema's ``$`` (ECMAScript's) is
        the very end, where Python's would also match before a final newline."""
        if (
            self.regex.startswith("^")
            and self.regex.endswith("$")
            and not self.regex.endswith("\\$")
        ):
            return re.compile(self.regex[1:-1])
        return None

    def matches(self, value: str) -> bool:
        """True when ``value`` matches as JSON Schema reads the pattern."""
        whole = self.whole
        return bool(whole.fullmatch(value) if whole is not None else self.compiled.search(value))

    def problem(self, value: Any) -> str | None:
        return None if self.matches(value) else "must be " + self.what

    def keywords(self, base: Any) -> dict[str, Any]:
        return {"pattern": self.regex}

    def words(self, base: Any) -> str:
        return self.what


class Shape(Limit):
    """A rule JSON Schema says in its own words (``spelled``) and the engine checks
    with ``check`` (True when the value is fine)."""

    def __init__(
        self, spelled: dict[str, Any], check: Callable[[Any], bool], what: str = ""
    ) -> None:
        self.spelled, self.check, self.what = spelled, check, what

    def problem(self, value: Any) -> str | None:
        return None if self.check(value) else "must be " + self.what

    def keywords(self, base: Any) -> dict[str, Any]:
        return dict(self.spelled)

    def words(self, base: Any) -> str:
        return self.what


class Open(Limit):
    """A ``TypedDict`` that takes keys beyond the ones it names."""

    def problem(self, value: Any) -> str | None:
        return None

    def keywords(self, base: Any) -> dict[str, Any]:
        return {"additionalProperties": True}

    def words(self, base: Any) -> str:
        return ""


class Apart(Limit):
    """Two keys of an object (or two parameters of a call) that cannot both be given;
    with ``second_is``, only when the second is of that kind (``list``)."""

    def __init__(self, first: str, second: str, why: str, second_is: type | None = None) -> None:
        self.first, self.second, self.why, self.second_is = first, second, why, second_is

    def clash(self, value: dict[str, Any]) -> bool:
        """True when ``value`` gives both."""
        if value.get(self.first) is None or value.get(self.second) is None:
            return False
        return self.second_is is None or isinstance(value[self.second], self.second_is)

    def problem(self, value: Any) -> str | None:
        return self.why if isinstance(value, dict) and self.clash(value) else None

    def keywords(self, base: Any) -> dict[str, Any]:
        second = {"type": "array"} if self.second_is is list else {"not": {"type": "null"}}
        return {
            "allOf": [
                {
                    "not": {
                        "required": [self.first, self.second],
                        "properties": {self.first: {"not": {"type": "null"}}, self.second: second},
                    }
                }
            ]
        }

    def words(self, base: Any) -> str:
        return ""


class Described(Limit):
    """A ``TypedDict`` whose keys the schema describes but the call checks itself, with
    its own codes (``E_FRONTMATTER`` for a bad summary, ``E_READONLY`` for an immutable
    key) and all its problems at once (a dry run lists every one): the boundary only
    makes sure it is an object."""

    def problem(self, value: Any) -> str | None:
        return None

    def keywords(self, base: Any) -> dict[str, Any]:
        return {}

    def words(self, base: Any) -> str:
        return ""


# -- the structure of a hint -------------------------------------------------------


def is_union(hint: Any) -> bool:
    """True for ``X | Y`` and ``Optional[X]``."""
    return typing.get_origin(hint) in (Union, types.UnionType)


def split(hint: Any) -> tuple[Any, tuple[Limit, ...]]:
    """A hint without its outer ``Annotated`` layer, and that layer's limits."""
    if typing.get_origin(hint) is Annotated:
        return hint.__origin__, tuple(m for m in hint.__metadata__ if isinstance(m, Limit))
    return hint, ()


def options(hint: Any) -> tuple[Any, ...]:
    """The alternatives of a union, each with its limits (the hint itself otherwise)."""
    base = split(hint)[0]
    return typing.get_args(base) if is_union(base) else (hint,)


def strip(hint: Any) -> Any:
    """The plain type of a hint: every ``Annotated`` layer removed, at any depth."""
    hint = split(hint)[0]
    if is_union(hint):
        return Union[tuple(strip(o) for o in typing.get_args(hint))]  # noqa: UP007
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint) or (Any,)
        return list[strip(item)]  # type: ignore[misc]
    return hint


def _is_typeddict(hint: Any) -> bool:
    return typing.is_typeddict(hint)


@functools.cache
def _fields(base: Any) -> dict[str, Any]:
    """A TypedDict's keys and their hints (limits kept)."""
    return typing.get_type_hints(base, include_extras=True)


def _is_open(limits: tuple[Limit, ...]) -> bool:
    return any(isinstance(m, Open) for m in limits)


# -- checking a value --------------------------------------------------------------


def _kind_matches(hint: Any, value: Any) -> bool:
    """True when ``value`` is of the hint's JSON kind (its limits aside)."""
    base = split(hint)[0]
    origin = typing.get_origin(base) or base
    if origin is Literal or base is str:
        return isinstance(value, str)
    if origin is list:
        return isinstance(value, list)
    if origin is dict or _is_typeddict(base):
        return isinstance(value, dict)
    if base is bool:
        return isinstance(value, bool)
    if base in (int, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    return False


def integral(hint: Any, value: Any) -> Any:
    """``value`` with every integral number an integer hint expects made an ``int``:
    JSON has one number type, and JSON Schema counts ``4.0`` as the integer 4."""
    base = split(hint)[0]
    if isinstance(value, float) and value.is_integer():
        kinds = {split(o)[0] for o in options(hint)}
        return int(value) if int in kinds and float not in kinds else value
    if isinstance(value, list) and typing.get_origin(base) is list:
        (item,) = typing.get_args(base) or (Any,)
        return [integral(item, v) for v in value]
    if isinstance(value, list) and is_union(base):
        lists = [o for o in typing.get_args(base) if typing.get_origin(split(o)[0]) is list]
        return integral(lists[0], value) if lists else value
    if isinstance(value, dict):
        target = next((split(o)[0] for o in options(hint) if _is_typeddict(split(o)[0])), None)
        if target is not None:
            fields = _fields(target)
            return {k: integral(fields[k], v) if k in fields else v for k, v in value.items()}
    return value


def problem(hint: Any, value: Any) -> str | None:
    """What is wrong with ``value`` for ``hint``, in words that follow the parameter's
    name (``"must be from 1 to 50"``), or None when it is fine."""
    base, limits = split(hint)
    if is_union(base):
        found = []
        for option in typing.get_args(base):
            text = problem(option, value)
            if text is None:
                return None  # the first fitting option ends it (no words for the others)
            found.append(text)
        for option, text in zip(typing.get_args(base), found, strict=True):
            if _kind_matches(option, value):
                return text
        return "must be " + describe(base)
    wrong = _type_problem(base, limits, value)
    if wrong is not None:
        return wrong
    for limit in limits:
        text = limit.problem(value)
        if text is not None:
            return text
    return None


def _type_problem(base: Any, limits: tuple[Limit, ...], value: Any) -> str | None:
    origin = typing.get_origin(base)
    if base is Any:
        return None
    if base is type(None):
        return None if value is None else "must be null"
    if origin is Literal:
        choices = typing.get_args(base)
        if isinstance(value, str) and value in choices:
            return None
        if isinstance(value, str):
            import difflib

            # Close enough to be a slip of the keys (sumary, titel), not any word.
            near = difflib.get_close_matches(value, choices, n=1, cutoff=0.75)
            if near:
                return f"must be one of its {len(choices)} values (did you mean {near[0]!r}?)"
        return "must be one of " + ", ".join(repr(c) for c in choices)
    if origin is list:
        if not isinstance(value, list):
            return "must be " + describe(base)
        (item,) = typing.get_args(base) or (Any,)
        for n, entry in enumerate(value):
            text = problem(item, entry)
            if text is not None:
                return f"item {n} {text}"
        return None
    if _is_typeddict(base):
        if any(isinstance(m, Described) for m in limits):
            return None if isinstance(value, dict) else "must be an object"
        return _object_problem(base, limits, value)
    if origin is dict or base is dict:
        return None if isinstance(value, dict) else "must be an object"
    if not _kind_matches(base, value):
        return "must be " + describe(base)
    if base is int and (not isinstance(value, int) or not -INT_LIMIT <= value <= INT_LIMIT):
        return "must be " + describe(base)
    return None


def _object_problem(base: Any, limits: tuple[Limit, ...], value: Any) -> str | None:
    if not isinstance(value, dict):
        return "must be an object"
    fields = _fields(base)
    if not _is_open(limits):
        unknown = sorted(k for k in value if k not in fields)
        if unknown:
            return (
                f"has an unknown key {str(unknown[0])[:60]!r} (it takes " + ", ".join(fields) + ")"
            )
    for key in sorted(base.__required_keys__):
        if value.get(key) is None:
            return f"needs {key!r}"
    for key, hint in fields.items():
        if key in value:
            text = problem(hint, value[key])
            if text is not None:
                return f"{key} {text}"
    return None


# -- the JSON Schema of a hint -------------------------------------------------------


def nullable(out: dict[str, Any]) -> dict[str, Any]:
    """A schema that also takes ``null``."""
    kind = out.get("type")
    if isinstance(kind, str) and "anyOf" not in out:
        out = {**out, "type": [kind, "null"]}
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list):
        return out if "null" in kind else {**out, "type": [*kind, "null"]}
    if set(out) == {"anyOf"}:
        parts = out["anyOf"]
        return out if {"type": "null"} in parts else {"anyOf": [*parts, {"type": "null"}]}
    return {"anyOf": [out, {"type": "null"}]}


def schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a hint, its limits included."""
    base, limits = split(hint)
    if is_union(base):
        choices = typing.get_args(base)
        parts = [schema(o) for o in choices if o is not type(None)]
        out = parts[0] if len(parts) == 1 else {"anyOf": parts}
        out = nullable(out) if type(None) in choices else out
    else:
        out = _plain_schema(base, limits)
    for limit in limits:
        if not isinstance(limit, Open):
            out = merge(out, limit.keywords(base))
    return out


def merge(out: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``out`` with ``more``'s keywords: ``allOf`` lists add up, and a keyword both
    set (two patterns) keeps both, the second under ``allOf``."""
    joined = dict(out)
    for key, value in more.items():
        if key == "allOf":
            joined["allOf"] = [*joined.get("allOf", []), *value]
        elif key in joined and joined[key] != value:
            joined["allOf"] = [*joined.get("allOf", []), {key: value}]
        else:
            joined[key] = value
    return joined


def _plain_schema(base: Any, limits: tuple[Limit, ...]) -> dict[str, Any]:
    origin = typing.get_origin(base)
    if origin is Literal:
        return {"type": "string", "enum": list(typing.get_args(base))}
    if origin is list:
        (item,) = typing.get_args(base) or (Any,)
        return {"type": "array", "items": schema(item)}
    if _is_typeddict(base):
        fields = _fields(base)
        required = sorted(base.__required_keys__)
        return {
            "type": "object",
            "properties": {k: schema(v) for k, v in fields.items()},
            "required": required,
            "additionalProperties": _is_open(limits),
        }
    if origin is dict or base is dict:
        return {"type": "object"}
    if base is int:
        bounded = any(isinstance(m, Range) for m in limits)
        return (
            {"type": "integer"}
            if bounded
            else {"type": "integer", "minimum": -INT_LIMIT, "maximum": INT_LIMIT}
        )
    return {str: {"type": "string"}, float: {"type": "number"}, bool: {"type": "boolean"}}.get(
        base, {}
    )


# -- a hint in words -----------------------------------------------------------------


def describe(hint: Any) -> str:
    """A hint in words: ``"an integer from 1 to 50 or a list of strings"``."""
    parts = []
    for option in options(hint):
        if option is type(None):
            continue
        base, limits = split(option)
        origin = typing.get_origin(base)
        if origin is Literal:
            text = "one of " + ", ".join(repr(a) for a in typing.get_args(base))
        elif origin is list:
            (item,) = typing.get_args(base) or (Any,)
            if typing.get_origin(split(item)[0]) is Literal:
                text = "a list of any of " + ", ".join(
                    repr(a) for a in typing.get_args(split(item)[0])
                )
            else:
                text = f"a list of {_plural(describe(item))}"
        elif origin is dict or base is dict or _is_typeddict(base):
            text = "an object"
        else:
            text = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}.get(
                base, str(base)
            )
        said = [w for w in (m.words(base) for m in limits) if w]
        parts.append(text + (" (" + ", ".join(said) + ")" if said else ""))
    return " or ".join(parts)


def _plural(text: str) -> str:
    for article in ("a ", "an "):
        if text.startswith(article):
            head, _, tail = text[len(article) :].partition(" (")
            return head + "s" + (" (" + tail if tail else "")
    return text


def limits_in_words(hint: Any) -> str:
    """The limits of a hint (not its type), for a command's help: ``"from 1 to 50"``."""
    said: list[str] = []
    for option in options(hint):
        base, limits = split(option)
        said += [w for w in (m.words(base) for m in limits) if w]
    return "; ".join(dict.fromkeys(said))
