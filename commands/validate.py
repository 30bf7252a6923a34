"""``vine validate``: check a forest (the command forest repositories run in CI).

Exit status: 0 when clean, 1 on errors (on warnings too with ``--strict``), 2 for
usage (a folder that is not a forest, an unknown option).
"""

import enum
import json as jsonlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from monkeyllm.text import counted

from . import common, options

if TYPE_CHECKING:
    from monkeyllm.validate import Finding


class Format(enum.StrEnum):
    """Output formats of ``vine validate``."""

    text = "text"
    json = "json"
    github = "github"


def validate(
    forest_argument: options.ForestArgument = None,
    forest: options.Forest = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Fail (exit 1) on warnings as well as errors (notes, which "
            "--fix records, never fail).",
        ),
    ] = False,
    format: Annotated[
        Format,
        typer.Option(
            "--format", help="text for people, json for scripts, github for workflow annotations."
        ),
    ] = Format.text,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix", help="First repair index entries, coverage and payload hashes, in one commit."
        ),
    ] = False,
    payloads: Annotated[
        bool,
        typer.Option(
            "--payloads/--no-payloads",
            help="Check payload files (missing, sha256, orphans); "
            "--no-payloads for a git checkout, which never holds them.",
        ),
    ] = True,
) -> None:
    """Check every file of a forest: frontmatter, ids, types and rels, links and
    wikilinks, index entries and coverage, payloads. Exit 1 on errors.

    \b
    Example: vine validate ./brain --strict --format github
    """
    root = common.forest_of(forest_argument, forest)
    from monkeyllm.errors import VineError
    from monkeyllm.validate import fix as repair
    from monkeyllm.validate import validate as check

    as_json = format is Format.json
    fixed = None
    try:
        with common.cli_words():
            if fix:
                fixed = repair(root, payloads=payloads, on_lock_wait=common.say_waiting)
            findings = check(root, payloads=payloads)
    except VineError as exc:
        common.fail(exc.envelope(), as_json)
    errors = sum(1 for x in findings if x.severity == "error")
    warnings = sum(1 for x in findings if x.severity == "warning")
    notes = len(findings) - errors - warnings
    counts = (errors, warnings, notes)
    if format is Format.json:
        _json(findings, counts, fixed)
    elif format is Format.github:
        _github(findings, root, counts, fixed)
    else:
        _text(findings, counts, fixed)
    if errors or (strict and warnings):
        raise typer.Exit(common.EXIT_ERROR)


Counts = tuple[int, int, int]  # errors, warnings, notes


def _counts(counts: Counts) -> str:
    errors, warnings, notes = counts
    line = f"{counted(errors, 'error')}, {counted(warnings, 'warning')}"
    return line + (f", {counted(notes, 'note')} for --fix" if notes else "")


def _fixed_lines(fixed: dict[str, Any] | None) -> list[str]:
    """What --fix did, for people (stderr in the text and github formats)."""
    if fixed is None:
        return []
    if not fixed["repairs"]:
        lines = [
            "vine validate --fix: nothing " + ("repaired" if fixed["skipped"] else "to repair")
        ]
    else:
        lines = [
            f"vine validate --fix: {counted(len(fixed['repairs']), 'repair')} in "
            f"{counted(len(fixed['files']), 'file')}, commit {fixed['commit'][:12]}"
        ]
    lines += [f"  fixed {r['code']} in {r['path']}: {r['message']}" for r in fixed["repairs"]]
    if fixed["skipped"]:
        lines.append(
            f"  skipped {counted(len(fixed['skipped']), 'repair')} that depend on uncommitted "
            "changes (repairs are made from committed content only):"
        )
        lines += [f"  skipped {r['code']} in {r['path']}: {r['reason']}" for r in fixed["skipped"]]
    return lines


def _json(findings: list["Finding"], counts: Counts, fixed: dict[str, Any] | None) -> None:
    out: dict[str, Any] = {
        "findings": [x.as_dict() for x in findings],
        "errors": counts[0],
        "warnings": counts[1],
        "notes": counts[2],
    }
    if fixed is not None:
        out["fixed"] = fixed["repairs"]
        out["skipped"] = fixed["skipped"]
        out["commit"] = fixed["commit"]
    sys.stdout.write(jsonlib.dumps(out, ensure_ascii=False) + "\n")


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub reads it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(
    findings: list["Finding"], root: Path, counts: Counts, fixed: dict[str, Any] | None
) -> None:
    """One ``::error``/``::warning``/``::notice`` workflow command per finding; paths are
    made relative to the working folder (the repository root on a runner)."""
    for line in _fixed_lines(fixed):
        sys.stderr.write(line + "\n")
    prefix = os.path.relpath(root.resolve(), Path.cwd().resolve())
    prefix = "" if prefix == "." or prefix.startswith("..") else prefix + "/"
    out = []
    for x in findings:
        props = [f"file={escape_property(prefix + x.path)}"]
        if x.line is not None:
            props.append(f"line={x.line}")
        props.append(f"title={escape_property(x.code)}")
        message = f"{x.id + ': ' if x.id else ''}{x.message} (fix: {x.fix})"
        command = "notice" if x.severity == "note" else x.severity
        out.append(f"::{command} {','.join(props)}::{escape_data(message)}")
    out.append(_counts(counts))
    sys.stdout.write("\n".join(out) + "\n")


def _colour() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _text(findings: list["Finding"], counts: Counts, fixed: dict[str, Any] | None) -> None:
    """Findings grouped by file, then the count line; coloured on a terminal."""
    for line in _fixed_lines(fixed):
        sys.stderr.write(line + "\n")
    lines = list(_grouped(findings))
    if lines:
        lines.append(("", ""))
    lines.append(
        (_counts(counts), "bold red" if counts[0] else "bold yellow" if counts[1] else "bold green")
    )
    if not _colour():
        sys.stdout.write("\n".join(text for text, _ in lines) + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=True)
    for text, style in lines:
        console.print(Text(text, style=style))


def _grouped(findings: list["Finding"]) -> Iterable[tuple[str, str]]:
    """(line, style) pairs: a header per file, an indented line per finding."""
    style = {"error": "red", "warning": "yellow", "note": "cyan"}
    path = None
    for x in findings:
        if x.path != path:
            if path is not None:
                yield "", ""
            path = x.path
            yield (f"{x.path}" + (f" ({x.id})" if x.id else ""), "bold")
        where = f"{x.line}:" if x.line is not None else "-:"
        yield f"  {where:<6}{x.severity:<8}{x.code}  {x.message}", style[x.severity]
        yield f"  {'':<14}fix: {x.fix}", "dim"
