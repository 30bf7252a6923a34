"""How a call's parameters travel on the command line, without Typer: the shapes,
the option names, and the conversion of parsed values into the engine's arguments.
Shared by the Typer commands and the hot path (:mod:`monkeyllm.commands.main`)."""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, Literal

from monkeyllm.registry import Call, Param

from . import common

# Calls that take a second argument by position (``vine transplant ID NEW_ID``).
SECOND_POSITIONAL = {"transplant": "new_id"}
# Required options that may also be given after the first argument, as people type
# them (``vine graft ID JSON``, ``vine query ID "SELECT ..."``): the option or the
# second argument, not both.
SECOND_SPELLING = {"graft": "patch", "query": "sql", "tend": "sql"}


def positionals(spec: Call) -> list[Param]:
    """The parameters given by position: the first required one (``ID``, ``QUERY``),
    and a second one for the few calls that read better so."""
    first = next((p for p in spec.params if p.required), None)
    out = [first] if first is not None else []
    second = SECOND_POSITIONAL.get(spec.name)
    out += [p for p in spec.params if p.name == second]
    return out


def second_spelling(spec: Call) -> Param | None:
    """The required option of ``spec`` that may also come after its first argument."""
    name = SECOND_SPELLING.get(spec.name)
    return next((p for p in spec.params if p.name == name), None)


def kinds_of(hint: Any) -> list[Any]:
    """The non-None alternatives of a type hint."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return [h for h in typing.get_args(hint) if h is not type(None)]
    return [hint]


def shape_of(param: Param) -> str:
    """How a parameter travels on the command line."""
    kinds = kinds_of(param.hint)
    origins = [typing.get_origin(k) or k for k in kinds]
    if dict in origins or any(typing.is_typeddict(k) for k in kinds):
        return "json"
    if list in origins:
        return "many" if str in origins else "list"
    if kinds == [bool]:
        return "flag"
    if bool in kinds and len(kinds) == 2 and any(typing.get_origin(k) is Literal for k in kinds):
        return "tristate"
    if len(kinds) == 1 and typing.get_origin(kinds[0]) is Literal:
        return "choice"
    if kinds == [int]:
        return "int"
    if kinds == [float]:
        return "float"
    return "str"


TRISTATE = {"true": True, "false": False}


def choices_of(param: Param) -> tuple[str, ...]:
    """The values a choice takes on the command line (a ``bool | Literal["auto"]``
    parameter: auto, true, false)."""
    if shape_of(param) == "tristate":
        return (*(param.choices or ()), *TRISTATE)
    return param.choices or ()


def option_names(param: Param) -> list[str]:
    """``-k`` for one letter; ``--type-filter`` and ``--type_filter`` for the rest."""
    if len(param.name) == 1:
        return [f"-{param.name}", f"--{param.name}"]
    dashed = "--" + param.name.replace("_", "-")
    return [dashed] if dashed == f"--{param.name}" else [dashed, f"--{param.name}"]


def convert(param: Param, value: Any, positional: bool) -> Any:
    """A command-line value as the engine's argument."""
    shape = shape_of(param)
    if value is None:
        return None
    if shape == "json":
        label = param.name.upper() if positional else f"--{param.name.replace('_', '-')}"
        return common.read_json(value, label)
    if shape == "list":
        return [part for item in value for part in _list_items(item)]
    if shape == "many":
        return value[0] if len(value) == 1 else list(value)
    if isinstance(value, enum.Enum):
        value = value.value
    if shape == "tristate":
        return TRISTATE.get(value, value)
    return value


def collect(spec: Call, values: dict[str, Any]) -> dict[str, Any]:
    """The engine's argument object from parsed command-line values (as Typer hands
    them to a command): absent options stay absent, so the engine's defaults apply."""
    by_position = positionals(spec)
    args: dict[str, Any] = {}
    for param in spec.params:
        value = convert(param, values.get(param.name), param in by_position)
        if value is None and not param.required:
            continue
        if param.name in values and shape_of(param) == "flag" and value == param.default:
            continue
        args[param.name] = value
    return args


def _list_items(text: str) -> list[str]:
    """One list option's value: ``a,b``, or the JSON array the engine's own docs show
    (``'["summary"]'``)."""
    if text.lstrip().startswith("["):
        import json

        try:
            items = json.loads(text)
        except ValueError:
            items = None
        if isinstance(items, list) and all(isinstance(i, str) for i in items):
            return [i.strip() for i in items if i.strip()]
    return [part.strip() for part in text.split(",") if part.strip()]
