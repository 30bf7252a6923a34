"""The ``vine`` Typer application: global options, the generated call subcommands and
the forest commands."""

import sys
from typing import Annotated

import typer

import monkeyllm  # importing the engine fills the registry of calls
from monkeyllm.registry import CALLS

from . import calls, common, options
from .browse import browse
from .call import call
from .canopy import canopy_app
from .flags import HELP, VERSION, value_follows
from .ingest import ingest
from .init import init
from .reindex import reindex
from .serve import serve
from .station import station_app
from .validate import validate
from .watch import watch


def make_app(only: str | None = None) -> typer.Typer:
    """The application; with ``only``, just that call's subcommand (what one run of
    ``vine look ...`` needs, without building the other commands' parameters)."""
    app = typer.Typer(
        name="vine",
        help="Navigate and tend a forest of markdown knowledge: one subcommand per engine "
        "call. JSON on stdout when piped (or with --json), rich output on a "
        "terminal.\n\n\b\n"
        'Example: vine locate "exchange policy deadlines" -k 3 \\\n'
        "  | jq '.results[0].id'",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        # Plain help and usage errors: rich help alone costs ~200 ms of imports per run.
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(main_options)
    calls.register(app, only)
    if only is None:
        app.command("call", help=call.__doc__)(call)
        app.command("init", help=init.__doc__)(init)
        app.command("reindex", help=reindex.__doc__)(reindex)
        app.command("validate", help=validate.__doc__)(validate)
        app.command("ingest", help=ingest.__doc__)(ingest)
        app.command("browse", help=browse.__doc__)(browse)
        app.command("watch", help=watch.__doc__)(watch)
        app.command("serve", help=serve.__doc__)(serve)
        app.add_typer(station_app, name="station")
        app.add_typer(canopy_app, name="canopy")
    return app


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"vine (monkeyllm) {monkeyllm.__version__}\n")
        raise typer.Exit()


def main_options(
    forest: options.Forest = None,
    json: options.Json = False,
    version: Annotated[
        bool, typer.Option(*VERSION.names, callback=_version, is_eager=True, help=VERSION.help)
    ] = False,
) -> None:
    """Options that apply to every subcommand (each subcommand takes them too)."""
    common.Settings.forest = forest
    common.Settings.json = json


def _subcommand(argv: list[str]) -> str | None:
    """The subcommand named on the command line, when it is a registered call."""
    args = iter(argv)
    for arg in args:
        if value_follows(arg):
            next(args, None)
        elif not arg.startswith("-"):
            return arg if arg in CALLS else None
        elif HELP.given(arg) or VERSION.given(arg) or arg.endswith("-completion"):
            return None
    return None


def main() -> None:
    """The console script."""
    make_app(_subcommand(sys.argv[1:]))(prog_name="vine")


app = make_app()
