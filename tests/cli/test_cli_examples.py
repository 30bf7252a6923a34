"""Every call's ``--help`` example runs as printed on a writable copy of sample-brain/:
a newcomer copies it from the help into a shell and gets an answer, not an error or an
empty result."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from monkeyllm.registry import CALLS

from ..forestkit import copy_sample
from .kit import vine

# The part of each answer that must not be empty for the example to show anything.
SHOWS = {
    "locate": "results",
    "look": "summary",
    "move": "neighbors",
    "pick": "body",
    "scan": "nodes",
    "sniff": "results",
    "query": "rows",
    "harvest": "results",
    "history": "entries",
    "calendar": "buckets",
    "coverage": "roots",
    "plant": "commit",
    "graft": "commit",
    "tend": "commit",
    "prune": "commit",
    "transplant": "commit",
}


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-brain/ with a git repository of its own (writes commit)."""
    return copy_sample(tmp_path_factory.mktemp("examples") / "brain", git=True)


def example_of(command: str) -> list[str]:
    """The example as ``vine COMMAND --help`` prints it, split as a shell would."""
    result = vine(command, "--help")
    assert result.exit_code == 0, result.stdout
    (line,) = [ln.strip() for ln in result.stdout.splitlines() if "Example: " in ln]
    words = shlex.split(line.split("Example: ", 1)[1])
    assert words[:2] == ["vine", command], line
    return words[1:]


def test_every_call_has_a_checked_example() -> None:
    assert set(SHOWS) == set(CALLS)


@pytest.mark.parametrize("command", sorted(SHOWS))
def test_help_example_runs_on_sample_brain(brain: Path, command: str) -> None:
    args = example_of(command)
    result = vine(*args, "-f", str(brain))
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    out: dict[str, Any] = json.loads(result.stdout)
    assert "error" not in out
    assert out[SHOWS[command]], (args, out)
