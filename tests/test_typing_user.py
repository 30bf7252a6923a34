"""A user's own script type-checks against the engine: the package says it is typed
(``py.typed``, shipped as package data), and each call keeps its signature through the
registry's decorator, so mypy sees ``vine.locate(3)`` as the mistake it is."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from .forestkit import REPO

pytest.importorskip("mypy")

GOOD = """
from monkeyllm import Vine, VineError

def first_hit(vine: Vine) -> str | None:
    found = vine.locate("exchange policy deadlines", k=3)
    results = found.get("results", [])
    return results[0]["id"] if results else None

try:
    with Vine("brain", writable=False) as vine:
        first_hit(vine)
        vine.pick("sales/exchange-policy", section="Deadlines")
        vine.harvest("what is the deadline?", terms=["deadline"], k=2)
        vine.call("look", {"id": "sales/exchange-policy"})
except VineError as exc:
    print(exc.code)
"""

BAD = """
from monkeyllm import Vine

vine = Vine("brain", writable=False)
vine.locate(3)
vine.locate("x", k="3")
vine.look(id=5)
vine.sniff(["a"], nosuch=1)
"""


def installed_copy(site: Path) -> None:
    """The engine laid out as an install would (``monkeyllm/`` with its package data),
    where mypy treats it as an installed package: typed only if it says so."""
    shutil.copytree(REPO / "vine", site / "monkeyllm", ignore=shutil.ignore_patterns("__pycache__"))


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "", str(script)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_package_data_ships_py_typed() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["monkeyllm"]
    assert (REPO / "vine" / "py.typed").is_file()


def test_a_users_script_type_checks_and_its_mistakes_are_caught(tmp_path: Path) -> None:
    installed_copy(tmp_path / "site")
    good = mypy(tmp_path, GOOD)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(tmp_path, BAD)
    lines = {int(line.split(":")[1]) for line in bad.stdout.splitlines() if ": error:" in line}
    # locate(3), k="3", look(id=5) and an unknown keyword: each its own line's error.
    assert lines == {5, 6, 7, 8}, bad.stdout
