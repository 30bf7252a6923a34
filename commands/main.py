"""The ``vine`` console script, with a hot path for the calls.

Shell scripts run ``vine look x`` in loops, and importing Typer and building a
command costs about 60 ms of every run. So a plain command line of a registered call
is parsed here, from the same parameter table the Typer commands are built from
(:mod:`monkeyllm.commands.params`), and run through the same code. Only the forms the
Typer command accepts are understood: the positional argument, ``--name value``,
``--name=value``, ``-k value``, flags, repeated list options, and ``-f``/``--forest``
and ``--json`` before or after the call's name. Anything else (help, completion, a
bare ``--``, ``--no-flag``, an unknown or malformed option, a missing argument, a
value that does not convert, JSON from standard input) goes to the Typer
application, so help and usage errors read as they always have.
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import monkeyllm  # noqa: F401  (importing the engine fills the registry of calls)
from monkeyllm.registry import CALLS, Call, Param

from . import common
from .flags import FOREST, JSON
from .params import choices_of, collect, option_names, positionals, second_spelling, shape_of

_COMPLETE = "_VINE_COMPLETE"


@dataclass
class Plan:
    """A call's command line, parsed as Typer would hand it to the command."""

    spec: Call
    forest: Path | None = None  # -f given after the call's name
    global_forest: Path | None = None  # -f given before it
    json: bool = False
    values: dict[str, Any] = field(default_factory=dict)


def _convert(param: Param, shape: str, raw: str) -> Any:
    """One value as Click converts it; ValueError when it does not."""
    if shape == "int":
        return int(raw)
    if shape == "float":
        return float(raw)
    if shape in ("choice", "tristate") and raw not in choices_of(param):
        raise ValueError(raw)
    if shape == "json" and raw == "-":
        raise ValueError(raw)  # standard input: read once, by the Typer command
    return raw


def parse(argv: list[str]) -> Plan | None:
    """The plan of a plain call command line, or None for anything else."""
    args = list(argv)
    plan: Plan | None = None
    forest: Path | None = None
    as_json = False
    while args and plan is None:  # options before the call's name
        arg = args.pop(0)
        if arg in FOREST.names:
            if not args or _option_like(args[0]):
                return None
            forest = Path(args.pop(0))
        elif FOREST.given(arg):
            forest = Path(arg.partition("=")[2])
        elif JSON.given(arg):
            as_json = True
        elif arg in CALLS:
            plan = Plan(CALLS[arg], global_forest=forest, json=as_json)
        else:
            return None
    if plan is None:
        return None
    by_position = positionals(plan.spec)
    first = by_position[0] if by_position else None
    options: dict[str, Param] = {
        name: p for p in plan.spec.params if p not in by_position for name in option_names(p)
    }
    given: list[str] = []
    lists: dict[str, list[str]] = {}
    while args:
        arg = args.pop(0)
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if JSON.given(arg):
            plan.json = True
            continue
        if FOREST.given(arg):
            value = (
                attached if eq else (args.pop(0) if args and not _option_like(args[0]) else None)
            )
            if not value:
                return None
            plan.forest = Path(value)
            continue
        if not _option_like(arg):
            given.append(arg)
            continue
        param = options.get(name)
        if param is None:
            return None
        shape = shape_of(param)
        if shape == "flag":
            if eq:
                return None
            plan.values[param.name] = True
            continue
        if eq:
            raw = attached
        elif args and not _option_like(args[0]):
            raw = args.pop(0)
        else:
            return None
        try:
            value = _convert(param, shape, raw)
        except ValueError:
            return None
        if shape in ("list", "many"):
            lists.setdefault(param.name, []).append(value)
        else:
            plan.values[param.name] = value
    if first is None:
        if given:
            return None
    elif len(by_position) == 1 and shape_of(first) in ("list", "many"):
        if not given:
            return None
        plan.values[first.name] = given
    else:
        second = second_spelling(plan.spec)
        if second is not None and len(given) == len(by_position) + 1:
            if second.name in plan.values:
                return None  # given twice: Typer says so
            try:
                plan.values[second.name] = _convert(second, shape_of(second), given.pop())
            except ValueError:
                return None
        if len(given) != len(by_position):
            return None
        for param, raw in zip(by_position, given, strict=True):
            try:
                plan.values[param.name] = _convert(param, shape_of(param), raw)
            except ValueError:
                return None
    for param in plan.spec.params:
        shape = shape_of(param)
        if param.name in lists:
            plan.values[param.name] = lists[param.name]
        elif param not in by_position and param.required and param.name not in plan.values:
            return None
        elif shape == "flag":
            plan.values.setdefault(param.name, bool(param.default))
        else:
            plan.values.setdefault(param.name, None)
    return plan


def _option_like(arg: str) -> bool:
    """An argument Click would take for an option (``-`` alone is a value)."""
    return arg.startswith("-") and arg != "-"


def run(plan: Plan) -> bool:
    """Run a parsed call; False (having done nothing) when a usage error needs the
    Typer application to report it."""
    common.Settings.forest = plan.global_forest
    common.Settings.json = plan.json
    as_json = common.json_mode(plan.json)
    try:
        args = collect(plan.spec, plan.values)
        common.find_forest(plan.forest)
    except Exception as exc:
        if common.is_usage_error(exc):
            return False
        raise
    common.run_call(plan.spec, plan.forest, as_json, args)
    return True


def main() -> None:
    """The console script: the hot path for a plain call, the kept help for ``vine
    --help``, else the Typer application."""
    argv = sys.argv[1:]
    common.name_process(argv)
    if os.environ.get(_COMPLETE):
        plan = None
    elif argv in (["--help"], ["-h"]):
        from . import helpcache

        _quiet_pipe()
        helpcache.show(_typer_main)
        return
    else:
        plan = parse(argv)
    if plan is not None:
        _quiet_pipe()
        if run(plan):
            return
    _typer_main()


def _quiet_pipe() -> None:
    """A reader that stops early (`vine look x | head -c 10`) ends this one-shot
    process as it ends any Unix tool, silently, instead of a BrokenPipeError
    traceback. Only here: a server (which never takes this path) must outlive a client
    that hangs up, so Python's own SIG_IGN stays for it."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def _typer_main() -> None:
    from .app import main as typer_main

    typer_main()
