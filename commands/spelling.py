"""Hints in the command line's words: ``vine sniff TERMS``, ``--section HEADER``.

The engine words every hint from structured parts (:mod:`monkeyllm.hints`); this is
the command line's rendering of them, from the same parameter table the commands are
built from, so a hint names exactly what a person types.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from monkeyllm.hints import Arg, Hole, Spelling
from monkeyllm.registry import CALLS

from .params import option_names, positionals, shape_of


class CommandLine(Spelling):
    """The ``vine`` command's spelling of calls, parameters and forests."""

    name = "cli"

    def call(self, call: str, args: list[Arg]) -> str:
        spec = CALLS.get(call)
        # The arguments given by position, as the command takes them (ID, and NEW_ID
        # for transplant); the others are options.
        by_position = {p.name for p in positionals(spec)} if spec else set()
        parts = ["vine", call]
        for arg in args:
            if arg.param in by_position:
                parts.append(_hole(call, arg) if isinstance(arg.value, Hole) else _value(arg.value))
            else:
                parts.append(self.option(call, arg))
        return " ".join(parts)

    def option(self, call: str, arg: Arg) -> str:
        spec = CALLS.get(call)
        param = next((p for p in spec.params if p.name == arg.param), None) if spec else None
        name = option_names(param)[0] if param is not None else "--" + arg.param.replace("_", "-")
        if isinstance(arg.value, Hole):
            return f"{name} {_hole(call, arg)}"
        if arg.value is True and (param is None or shape_of(param) == "flag"):
            return name
        return f"{name} {_value(arg.value)}"

    def parameter(self, call: str, param: str) -> str:
        spec = CALLS.get(call)
        found = next((p for p in spec.params if p.name == param), None) if spec else None
        if found is None:
            return "--" + param.replace("_", "-")
        # An argument given by position is named as help shows it (ID, NEW_ID).
        if any(p.name == param for p in positionals(spec)):
            return param.upper()
        return option_names(found)[0]

    def create_forest(self) -> str:
        return "vine init PATH --title TITLE"

    def open_writable(self) -> str:
        return "vine plant, vine graft and vine tend open the forest for writing themselves."

    def open_forest(self) -> str:
        return "use it with vine -f PATH (vine look _index -f PATH shows its root)"

    def open_readonly(self) -> str:
        return "vine's reads (look, locate, sniff, ...) open it read-only and run beside it"


def _hole(call: str, arg: Arg) -> str:
    """A placeholder as the command's help shows it: ``TERMS``, ``HEADER``, ``JSON``."""
    if arg.value.label is not None:
        return arg.value.label.upper().replace(" ", "_")
    spec = CALLS.get(call)
    param = next((p for p in spec.params if p.name == arg.param), None) if spec else None
    if param is not None and shape_of(param) == "json":
        return "JSON"
    return arg.param.upper()


def _value(value: Any) -> str:
    if isinstance(value, list | dict):
        return shlex.quote(json.dumps(value, ensure_ascii=False))
    return shlex.quote(str(value))


class JsonArguments(CommandLine):
    """``vine call``'s spelling: its arguments are the JSON object MCP and REST take, so
    a parameter is named as that object keys it (``new_id``); calls and forests read as
    the command line's."""

    name = "cli-json"

    def parameter(self, call: str, param: str) -> str:
        return param


CLI = CommandLine()
CLI_JSON = JsonArguments()
