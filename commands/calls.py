"""One subcommand per registered call, generated from the engine's registry.

A call's Python signature is its command line: the first required parameter is
positional, every other one is an option named as in Python (``-k``, ``--scope``,
``--type-filter`` or ``--type_filter``); ``graft``'s patch and the SQL of ``query`` and
``tend`` may also follow the id as a second argument. Lists repeat their option
(``--fields id --fields summary``, or ``--fields id,summary``); a parameter that takes
one value or a list takes several values; structured arguments (``plant``'s node,
``graft``'s patch, ``scan``'s filter) are JSON given inline, as ``@file.json`` or as
``-`` for standard input. Reads open the forest read-only; only the write calls take
its lock.
"""

from __future__ import annotations

import enum
import inspect
import typing
from functools import cache
from typing import Annotated, Any, Literal

import typer

from monkeyllm.registry import CALLS, Call, Param

from . import common, options
from .params import (
    choices_of,
    collect,
    kinds_of,
    option_names,
    positionals,
    second_spelling,
    shape_of,
)

# One example per call, shown in its --help (a test checks every call has one, and
# that each runs as written on a writable copy of sample-brain/: what a newcomer tries
# first). The command is the first line; a line after it is a note.
EXAMPLES: dict[str, str] = {
    "locate": 'vine locate "exchange policy deadlines" -k 3',
    "look": "vine look sales/exchange-policy",
    "move": "vine move sales/_index --rel children",
    "pick": 'vine pick engineering/nfe-runbook --section "Common rejection codes"',
    "scan": 'vine scan sales --recursive --filter \'{"type": "dataset"}\'',
    "sniff": "vine sniff NF-4412 --scope sales",
    "query": "vine query sales/orders-2026 --sql 'SELECT COUNT(*) FROM orders'",
    "harvest": 'vine harvest "what is the deadline to exchange a retail order?" -k 3',
    "plant": (
        'vine plant \'{"id": "sales/idea", "type": "note", "parent": "sales/_index", '
        '"title": "An idea", "summary": "What it is, in one line."}\'\n'
        "(or from a file: vine plant @node.json, or vine plant - < node.json)"
    ),
    "graft": 'vine graft sales/price-list --patch \'{"set_frontmatter": {"tags": ["pricing"]}}\'',
    "tend": (
        "vine tend sales/orders-2026 --sql \"UPDATE orders SET region = 'Southeast' "
        "WHERE id = '1001'\""
    ),
    "history": "vine history sales/exchange-policy --limit 5",
    "calendar": "vine calendar --scope meetings --granularity week --since 2026",
    "coverage": "vine coverage --scope sales",
    "prune": (
        "vine prune contracts/nda-template\n"
        "(on a terminal it shows what goes and asks first; --yes does not ask)"
    ),
    "transplant": "vine transplant sales/discount-ladder sales/pipeline/discount-ladder",
}

_FOREST = inspect.Parameter(
    "forest_", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=options.Forest
)
_YES = inspect.Parameter(
    "yes_",
    inspect.Parameter.KEYWORD_ONLY,
    default=False,
    annotation=Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="Do it without showing what goes and asking first (piped output never asks).",
        ),
    ],
)
_JSON = inspect.Parameter(
    "json_", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=options.Json
)


def param_help(param: Param, shape: str) -> str:
    """The parameter's doc, its limits (from its signature) and how to spell it."""
    extra = {
        "json": " JSON inline, @file.json, or - for standard input.",
        "list": " Repeat the option or separate values with commas.",
        "many": " Repeat for several.",
    }.get(shape, "")
    limits = param.limits() if shape not in ("json", "choice", "tristate") else ""
    choices = ""
    allowed = _list_choices(param) if shape == "list" else ()
    if allowed:
        choices = " One or more of: " + ", ".join(allowed) + "."
    return (param.doc or "") + (f" ({limits})" if limits else "") + choices + extra


def _list_choices(param: Param) -> tuple[str, ...]:
    """The closed set of a list parameter's items (look's fields, locate's include)."""
    for option in kinds_of(param.hint):
        if typing.get_origin(option) is list:
            (item,) = typing.get_args(option) or (None,)
            if typing.get_origin(item) is Literal:
                return tuple(typing.get_args(item))
    return ()


def _cli_param(param: Param, positional: bool, optional: bool = False) -> inspect.Parameter:
    """The Typer parameter for one call parameter (``optional``: a required option
    that may come as the second argument instead, which the command checks)."""
    shape = shape_of(param)
    annotation: Any = {
        "json": str,
        "flag": bool,
        "int": int,
        "float": float,
        "list": list[str],
        "many": list[str],
    }.get(shape, str)
    # Options left out reach the engine as absent, so its own defaults apply; help
    # shows them.
    text = param_help(param, shape)
    if optional:
        text += f" Required: this option or {param.name.upper()} after the first argument."
    if param.default is not None and shape not in ("flag", "json"):
        text += f"  [default: {param.default}]"
    options: dict[str, Any] = {
        "help": text,
        "show_default": False,
        "metavar": _metavar(param, shape, positional),
    }
    if shape in ("choice", "tristate"):
        annotation = _choices(choices_of(param))
    if positional:
        info = typer.Argument(**options)
        default: Any = inspect.Parameter.empty
    else:
        info = typer.Option(*option_names(param), **options)
        if shape == "flag":
            default = bool(param.default)
        else:
            default = ... if param.required and not optional else None
    return inspect.Parameter(
        param.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation | None if default is None else annotation, info],
    )


def _metavar(param: Param, shape: str, positional: bool) -> str | None:
    if shape == "flag":
        return None
    if shape in ("choice", "tristate"):
        return "[" + "|".join(choices_of(param)) + "]"
    if positional:  # ID... where several may be given (look, pick, sniff), as README says
        return param.name.upper() + ("..." if shape == "many" else "")
    return {"json": "JSON", "list": "NAME[,NAME]", "int": "N", "float": "X"}.get(shape, "TEXT")


@cache
def _choices(values: tuple[str, ...]) -> type[enum.Enum]:
    """An enum Typer offers as a choice, for a ``Literal`` parameter."""
    return enum.Enum("Choice", {v: v for v in values}, type=str)  # type: ignore[return-value]


def build(spec: Call) -> typer.models.CommandInfo | Any:
    """The command function of one call, with a signature Typer reads."""
    by_position = positionals(spec)
    second = second_spelling(spec)

    def command(**kwargs: Any) -> None:
        forest = kwargs.pop("forest_")
        as_json = common.json_mode(kwargs.pop("json_"))
        yes = bool(kwargs.pop("yes_", False))
        if second is not None:
            _second_argument(spec, second, kwargs)
        common.run_call(spec, forest, as_json, collect(spec, kwargs), assume_yes=yes)

    params = [_cli_param(p, p in by_position, p is second) for p in spec.params]
    extra = [_YES] if spec.name in common.CONFIRMED else []
    if second is not None:
        extra.append(_second_parameter(second))
    command.__signature__ = inspect.Signature([*params, *extra, _FOREST, _JSON])  # type: ignore[attr-defined]
    command.__name__ = spec.name
    return command


def _second_parameter(param: Param) -> inspect.Parameter:
    """The optional second argument that stands for the option ``param``."""
    flag = option_names(param)[0]
    return inspect.Parameter(
        "second_",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            str | None,
            typer.Argument(
                help=f"The same as {flag}, given after the first argument.",
                metavar=param.name.upper(),
                show_default=False,
            ),
        ],
    )


def _second_argument(spec: Call, param: Param, kwargs: dict[str, Any]) -> None:
    """Put the second argument in the option's place: one of the two is needed, and
    only one may be given."""
    given = kwargs.pop("second_", None)
    flag = option_names(param)[0]
    if given is not None and kwargs.get(param.name) is not None:
        raise common.usage_error(
            f"{param.name} given twice, as {flag} and as the second argument: give it once."
        )
    if given is not None:
        kwargs[param.name] = given
    elif kwargs.get(param.name) is None:
        first = positionals(spec)[0].name.upper()
        raise common.usage_error(
            f"Missing option '{flag}' (or give it after {first}: "
            f"vine {spec.name} {first} {param.name.upper()})."
        )


def help_text(spec: Call) -> str:
    """The call's docstring (without its Args section) and its example."""
    doc = spec.doc.split("\n\nArgs:")[0].split("\nArgs:")[0].strip()
    body = doc if doc.startswith(spec.summary) else f"{spec.summary}\n\n{doc}"
    # "\b" keeps click from rewrapping the example: wrapped at a hyphen or inside the
    # JSON, it could not be copied back into a shell as it is.
    return f"{body}\n\n\b\nExample: {EXAMPLES.get(spec.name, '')}"


def register(app: typer.Typer, only: str | None = None) -> None:
    """Add one subcommand per registered call (or just ``only``), reads first, in
    registry order."""
    order = {"read": 0, "composite": 1, "write": 2}
    for spec in sorted(CALLS.values(), key=lambda c: order.get(c.kind, 3)):
        if only is not None and spec.name != only:
            continue
        app.command(spec.name, help=help_text(spec), short_help=spec.summary)(build(spec))
