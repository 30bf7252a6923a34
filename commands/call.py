"""``vine call TOOL [ARGS_JSON|-]``: any call with the JSON arguments MCP and REST take."""

from typing import Annotated

import typer

from monkeyllm.registry import CALLS

from . import common, options


def call(
    tool: Annotated[
        str, typer.Argument(help="The call's name (locate, look, plant, ...).", show_default=False)
    ],
    args: Annotated[
        str,
        typer.Argument(
            help="The argument object as JSON: inline, @file.json, or - for standard input.",
            show_default=False,
        ),
    ] = "{}",
    forest: options.Forest = None,
    json: options.Json = False,
) -> None:
    """Run any call with a JSON argument object, exactly as MCP and REST take it.

    Scripts move between surfaces without rewriting their arguments.

    \b
    Example: vine call locate '{"query": "exchange policy", "k": 3}'
    """
    spec = CALLS.get(tool)
    if spec is None:
        common.usage(f"unknown call {tool!r}.", "Calls: " + ", ".join(CALLS) + ".")
    arguments = common.read_json(args, "ARGS")
    if not isinstance(arguments, dict):
        common.usage('ARGS must be a JSON object, such as \'{"query": "..."}\'.')
    common.run_call(spec, forest, common.json_mode(json), arguments, json_args=True)
