"""What every subcommand shares: finding the forest, reading JSON arguments, opening
the engine, and printing a response (JSON for scripts, rich for people).

Exit status: 0 for a result, 1 for an error envelope, 2 for a usage error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from monkeyllm.errors import is_error

if TYPE_CHECKING:
    from monkeyllm import Vine
    from monkeyllm.registry import Call

# Typer is imported only where a usage error is raised: the hot path of a call
# (`vine look x`) never imports it.

ENV_FOREST = "VINE_FOREST"
ENV_WATCH = "VINE_WATCH"
KEEPER_IDLE_S = 600
EXIT_ERROR = 1
EXIT_USAGE = 2


class Settings:
    """The options given before the subcommand (``vine -f brain --json look x``)."""

    forest: Path | None = None
    json: bool = False


def bad_parameter(message: str, param_hint: str | None = None) -> Exception:
    """Typer's usage error (exit 2, printed with the command's usage line)."""
    import typer

    return typer.BadParameter(message, param_hint=param_hint)


def _usage_error_class() -> type[Exception]:
    """Click's ``UsageError`` as Typer raises it (Typer 0.2x carries a Click of its
    own), found as the parent of Typer's ``BadParameter``."""
    import typer

    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def usage_error(message: str) -> Exception:
    """A usage error about the command line as a whole (no parameter to name):
    printed as ``Error: message`` under the usage line, exit 2."""
    return _usage_error_class()(message)


def is_usage_error(exc: BaseException) -> bool:
    """True for a usage error raised by :func:`usage`, :func:`usage_error` or
    :func:`find_forest`."""
    return isinstance(exc, _usage_error_class())


def usage(message: str, hint: str = "") -> NoReturn:
    """Stop with a usage error (exit 2)."""
    raise bad_parameter(message + (f" {hint}" if hint else ""))


def is_forest(folder: Path) -> bool:
    """A forest's root holds its master index and its dialect."""
    return (folder / "_index.md").is_file() and (folder / "_meta" / "schema.md").is_file()


def find_forest(given: Path | None, *, source: str = "--forest") -> Path:
    """``--forest``, else ``$VINE_FOREST``, else the nearest forest at or above here
    (``source`` names how ``given`` was given, for the error)."""
    chosen = given or Settings.forest
    if chosen is None and os.environ.get(ENV_FOREST):
        chosen, source = Path(os.environ[ENV_FOREST]), ENV_FOREST
    if chosen is not None:
        folder = chosen.expanduser()
        if not is_forest(folder):
            if not folder.exists():
                why = f"{folder} does not exist"
            elif not folder.is_dir():
                why = f"{folder} is a file, not a forest's folder"
            else:
                why = f"{folder} is not a forest (no _index.md and _meta/schema.md)"
            raise bad_parameter(
                f"{why}; {_forests_below(folder) or 'create one with `vine init`'}.",
                param_hint=source,
            )
        return folder
    here = Path.cwd()
    for folder in (here, *here.parents):
        if is_forest(folder):
            return folder
    raise bad_parameter(
        f"no forest at or above {here}: pass --forest DIR, set {ENV_FOREST}, or run "
        f"inside a forest ({_forests_below(here) or 'create one with `vine init`'}).",
        param_hint="--forest",
    )


def forest_of(argument: Path | None, option: Path | None) -> Path:
    """The forest of a command taking it as its FOREST argument or as ``--forest``:
    either one, not two different ones."""
    if argument is not None and option is not None and argument != option:
        raise bad_parameter(
            f"two forests given, {argument} and --forest {option}: give one", param_hint="FOREST"
        )
    if argument is not None:
        return find_forest(argument, source="FOREST")
    return find_forest(option)


def _forests_below(folder: Path) -> str:
    """Names the forests right inside ``folder`` (such as sample-brain/ in a clone of
    this repository), as a suggestion; empty when there are none."""
    try:
        below = sorted(child for child in folder.iterdir() if child.is_dir() and is_forest(child))
    except OSError:
        return ""
    if not below:
        return ""
    named = ", ".join(f"--forest {os.path.relpath(child)}" for child in below[:3])
    return f"a forest is right inside it: {named}"


def read_json(text: str, what: str) -> Any:
    """A JSON argument given inline, as ``@file`` or as ``-`` (standard input)."""
    source = "inline JSON"
    if text == "-":
        if sys.stdin.isatty():  # a person at a terminal: say why nothing happens
            sys.stderr.write(f"vine: reading {what} as JSON from standard input (Ctrl-D ends it)\n")
        text, source = sys.stdin.read(), "standard input"
    elif text.startswith("@"):
        path = Path(text[1:]).expanduser()
        try:
            text, source = path.read_text(encoding="utf-8"), str(path)
        except UnicodeDecodeError:
            usage(f"{what}: {path} is not UTF-8 text (a binary file?); give a JSON file.")
        except OSError as exc:
            usage(f"{what}: cannot read {path}: {exc.strerror or exc}")
    try:
        return json.loads(text.removeprefix("\ufeff"))  # a BOM some editors write first
    except json.JSONDecodeError as exc:
        usage(
            f"{what} is not valid JSON ({source}, line {exc.lineno} column {exc.colno}: "
            f"{exc.msg}).",
            "Give JSON inline, as @file.json, or - for standard input.",
        )


def json_mode(flag: bool) -> bool:
    """JSON when asked, or when standard output is not a terminal."""
    return flag or Settings.json or not sys.stdout.isatty()


def name_process(argv: list[str]) -> None:
    """Name this process on the writer lock's card as its command line does (``vine
    plant``, ``vine station serve``), so a writer it keeps waiting can say who it is."""
    from monkeyllm.lock import set_program

    from .flags import value_follows

    words = ["vine"]
    args = iter(argv)
    for arg in args:
        if value_follows(arg):
            next(args, None)
        elif not arg.startswith("-"):
            words.append(arg)
            if arg not in ("station", "call") or len(words) > 2:
                break
    set_program(" ".join(words))


def say_waiting(card: dict[str, object]) -> None:
    """Tell the person at the terminal that a write waits for another writer."""
    from monkeyllm.lock import who

    sys.stderr.write(f"vine: waiting for the writer lock ({who(card)} is writing) ...\n")
    sys.stderr.flush()


def open_vine(forest: Path | None, *, writable: bool, as_json: bool) -> Vine:
    """The engine on the chosen forest; an engine refusal (locked, not found) becomes
    its error envelope and exit 1.

    A writable one takes the writer lock for its write alone (``lock="per-write"``):
    a write in progress elsewhere is waited for, and said so on stderr.
    """
    root = find_forest(forest)
    from monkeyllm import Vine
    from monkeyllm.errors import VineError

    def opened() -> Vine:
        if not writable:
            return Vine(root, writable=False)
        return Vine(root, lock="per-write", on_lock_wait=say_waiting)

    try:
        if sys.stderr.isatty() and not (root / "_derived" / "catalog.db").exists():
            # The first open of a forest builds its catalog: say so while it runs.
            from rich.console import Console

            with Console(stderr=True).status(f"Building the catalog of {root} ..."):
                return opened()
        return opened()
    except VineError as exc:
        fail(exc.envelope(), as_json)


def fail(envelope: dict[str, Any], as_json: bool) -> NoReturn:
    """Print an error envelope (JSON on stdout in JSON mode, one line on stderr always)
    and exit 1."""
    if as_json:
        write_json(envelope)
    error = envelope.get("error", {})
    line = f"vine: {error.get('code', 'E_INTERNAL')}: {error.get('message', '')}"
    if error.get("hint"):
        line += f" (hint: {error['hint']})"
    sys.stderr.write(" ".join(line.split()) + "\n")
    if not as_json:  # a person: what else the envelope says (JSON mode has it on stdout)
        for key, value in error.items():
            if key not in ("code", "message", "hint"):
                sys.stderr.write(f"  {key}: {_detail(value)}\n")
    raise SystemExit(EXIT_ERROR)


def _detail(value: Any) -> str:
    """An envelope's extra field on one line: an anchor list reads
    ``sales/price-list (related-to); ...``."""
    if isinstance(value, list):
        return "; ".join(_detail(v) for v in value) or "none"
    if isinstance(value, dict):
        first, *rest = [str(v) for v in value.values()] or [""]
        return first + (f" ({', '.join(rest)})" if rest else "")
    return str(value)


def cli_words(json_args: bool = False) -> Any:
    """A block in which the engine words its hints as the command line spells things
    (``vine sniff TERMS``, ``--section HEADER``), not as Python does; with
    ``json_args`` (``vine call``), parameters keep the names its JSON object gives."""
    from monkeyllm.hints import spelled

    from .spelling import CLI, CLI_JSON

    return spelled(CLI_JSON if json_args else CLI)


# Calls that show what they will do and ask first, on a terminal (not with --yes).
CONFIRMED = ("prune",)


def run_call(
    spec: Call,
    forest: Path | None,
    as_json: bool,
    args: dict[str, Any],
    *,
    assume_yes: bool = False,
    json_args: bool = False,
) -> None:
    """Open the forest (read-only for reads), make one call, close, print.

    A call in :data:`CONFIRMED`, printed for a person (not JSON) and not told
    ``--yes``, first shows what it would do (its dry run) and asks; the forest is not
    held while the question waits. ``json_args``: ``args`` is the JSON object ``vine
    call`` was given, so an error names its keys as given.
    """
    from monkeyllm.writes import authored

    with cli_words(json_args):
        if spec.name in CONFIRMED and not as_json and not assume_yes and not args.get("dry_run"):
            from .confirm import confirm

            vine = open_vine(forest, writable=True, as_json=as_json)
            try:
                preview = vine.call(spec.name, {**args, "dry_run": True})
            finally:
                vine.close()
            if is_error(preview):
                emit(spec.name, preview, as_json)
            if not confirm(console(), spec.name, preview):
                sys.stderr.write(f"vine: nothing was changed ({spec.name} not confirmed)\n")
                raise SystemExit(EXIT_ERROR)
        vine = open_vine(forest, writable=not spec.read_only, as_json=as_json)
        try:
            # A person at a terminal writes this: source manual, unless told otherwise.
            response = vine.call(spec.name, authored(spec.name, args))
            walked = vine.freshness == "walk"
        finally:
            vine.close()
    if walked:
        start_keeper(vine.root)
    emit(spec.name, response, as_json)


def start_keeper(root: Path) -> None:
    """After a call that had to walk the files, start `vine watch --idle 600` on the
    forest in the background, so the next commands ask it instead (Linux; not with
    VINE_WATCH=0; a second keeper of the same forest exits at once)."""
    from monkeyllm import keeper

    if (
        os.environ.get(ENV_WATCH, "1") == "0"
        or not keeper.AVAILABLE
        or not (root / "_derived" / "catalog.db").is_file()
    ):
        return
    import subprocess

    try:
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "monkeyllm.commands",
                "watch",
                "-f",
                str(root),
                "--idle",
                str(KEEPER_IDLE_S),
                "--quiet",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=root,
        )
    except OSError:
        return


def emit(call: str, response: dict[str, Any], as_json: bool) -> None:
    """Print a response: JSON (exactly the engine's object) or rich for people; an
    error envelope exits 1."""
    if is_error(response):
        fail(response, as_json)
    if as_json:
        write_json(response)
        return
    from . import render

    with cli_words():  # what the footer says is spelled as the command line spells
        render.show(console(), call, response)


def write_json(obj: Any) -> None:
    """``obj`` as JSON on standard output: indented on a terminal, one line when piped."""
    indent = 2 if sys.stdout.isatty() else None
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=indent, default=str) + "\n")
    sys.stdout.flush()


def console() -> Any:
    """A rich console on standard output (rich honours ``NO_COLOR`` itself)."""
    from rich.console import Console

    return Console(soft_wrap=False, highlight=False)
