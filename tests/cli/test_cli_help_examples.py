"""Every command's help prints its example unwrapped (or continued with a backslash),
even on a narrow terminal: a line broken at a hyphen (``nomic-`` / ``embed-text``)
cannot be copied back into a shell."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
import typer

from monkeyllm.commands.app import app

from .kit import vine


def paths(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group under ``group``, as the words that name it."""
    found = []
    for name, command in group.commands.items():
        here = (*prefix, name)
        found.append(here)
        if hasattr(command, "commands"):  # a group (Typer's own Click, not click's)
            found += paths(command, here)
    return found


COMMANDS = paths(typer.main.get_command(app))


def test_every_command_is_walked() -> None:
    assert ("canopy", "build") in COMMANDS and ("station", "key", "add") in COMMANDS


@pytest.mark.parametrize("width", [60, 80])
@pytest.mark.parametrize("command", [" ".join(c) for c in COMMANDS])
def test_the_example_is_one_command_line(command: str, width: int) -> None:
    result = vine(*command.split(), "--help", env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.stdout
    lines = result.stdout.splitlines()
    (start,) = [n for n, ln in enumerate(lines) if ln.strip().startswith("Example: ")]
    block = [lines[start]]
    while block[-1].endswith("\\"):
        block.append(lines[start + len(block)])
    after = lines[start + len(block)] if start + len(block) < len(lines) else ""
    assert after.strip() == "" or after.strip().startswith("("), (block, after)
    text = " ".join(ln.strip().removesuffix("\\") for ln in block).removeprefix("Example: ")
    words = shlex.split(text.split(" | ")[0])
    assert words[0] == "vine" and not any(w.endswith("-") for w in words), words


USAGES = [("look", "{ID...}"), ("pick", "{ID...}"), ("sniff", "{TERMS...}"), ("locate", "{QUERY}")]


@pytest.mark.parametrize(("command", "usage"), USAGES)
def test_usage_says_which_arguments_repeat(command: str, usage: str) -> None:
    """As the README's table has it: `vine look ID...` takes several ids."""
    result = vine(command, "--help")
    assert result.stdout.splitlines()[0] == f"Usage: vine {command} [OPTIONS] {usage}"
