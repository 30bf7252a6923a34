"""What the package says about itself holds: one version, spelled in pyproject.toml; one
import name per module; the package list is the folders."""

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
    out = subprocess.run(
        ["git", "ls-files", "-z", pattern], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    return [REPO / p for p in out.split("\0") if p]


def test_the_version_is_pyprojects_read_from_the_installed_metadata() -> None:
    declared = PYPROJECT["project"]["version"]
    assert monkeyllm.__version__ == version("monkeyllm") == declared
    done = subprocess.run(
        [sys.executable, "-c", "from monkeyllm.commands.main import main; main()", "--version"],
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == f"vine (monkeyllm) {declared}"


def test_no_module_writes_the_version_down_a_second_time() -> None:
    spelled = re.compile(r"""__version__\s*=\s*["']""")
    written = [
        p.relative_to(REPO).as_posix()
        for p in tracked("*.py")
        if spelled.search(p.read_text(encoding="utf-8"))
    ]
    assert written == []


SHADOWS = ("vine", "commands", "serve", "tui")


def test_the_folders_never_import_under_their_own_names() -> None:
    """From the repository root ``import vine`` would load a second engine beside
    ``monkeyllm`` (``vine.VineError is not monkeyllm.VineError``): importing every module
    of the package there loads none of the folder names."""
    from .test_import_cost import project_modules

    names = sorted(m for m in project_modules() if not m.endswith("__main__"))
    script = (
        "import importlib, json, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{SHADOWS!r})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_pyprojects_packages_are_the_folders_that_hold_an_init() -> None:
    setup = PYPROJECT["tool"]["setuptools"]
    mapped = {
        package: (REPO / folder).resolve() for package, folder in setup["package-dir"].items()
    }
    assert sorted(setup["packages"]) == sorted(mapped)
    folders = {
        init.parent.resolve()
        for top in ("vine", "commands", "serve", "tui")
        for init in (REPO / top).rglob("__init__.py")
    }
    assert set(mapped.values()) == folders


LINES_MAX = 600


def test_no_module_is_over_600_lines() -> None:
    """Engine, surfaces, benchmarks and tests alike: a module past this holds several
    things and splits by responsibility."""
    long = {
        p.relative_to(REPO).as_posix(): n
        for p in tracked("*.py")
        if (n := p.read_text(encoding="utf-8").count("\n")) > LINES_MAX
    }
    assert long == {}
