"""What the package says about itself holds: one version, spelled in pyproject.toml."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import monkeyllm

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def tracked(pattern: str) -> list[Path]:
    """The repository's tracked files matching a git pathspec."""
    out = subprocess.run(["git", "ls-files", "-z", pattern], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return [REPO / p for p in out.split("\0") if p]


def test_the_version_is_pyprojects_read_from_the_installed_metadata() -> None:
    declared = PYPROJECT["project"]["version"]
    assert monkeyllm.__version__ == version("monkeyllm") == declared
    done = subprocess.run([sys.executable, "-c", "from monkeyllm.commands.main import main; main()",
                           "--version"], capture_output=True, text=True)
    assert done.stdout.strip() == f"vine (monkeyllm) {declared}"


def test_no_module_writes_the_version_down_a_second_time() -> None:
    spelled = re.compile(r"""__version__\s*=\s*["']""")
    written = [p.relative_to(REPO).as_posix() for p in tracked("*.py")
               if spelled.search(p.read_text(encoding="utf-8"))]
    assert written == []
