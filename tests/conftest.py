"""Shared fixtures: copies of sample-brain/ and the check that the engine is imported
under one name. Plain helpers are in ``forestkit.py``."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import copy_sample, make_forest, reader

# No `vine` process started by a test leaves a keeper (`vine watch`) behind it; the
# tests of keepers start and stop their own.
os.environ["VINE_WATCH"] = "0"

# The folders whose import names differ (vine/ is monkeyllm, commands/ is
# monkeyllm.commands, ...): imported under the folder's name, a module would be a second
# copy beside the installed one.
FOLDER_NAMES = ("vine", "commands", "serve", "tui")


@pytest.fixture(autouse=True)
def _one_copy_of_the_engine() -> Iterator[None]:
    """Every test leaves no module imported under a folder's name."""
    yield
    strays = sorted(m for m in sys.modules if m.split(".")[0] in FOLDER_NAMES)
    assert strays == [], f"imported by folder name, not as monkeyllm: {strays}"


@pytest.fixture(autouse=True)
def _fresh_canopy_caches() -> Iterator[None]:
    """No test inherits another's cached query vectors or a provider marked down (once
    a test has loaded the Canopy at all)."""
    hybrid = sys.modules.get("monkeyllm.canopy.hybrid")
    if hybrid is not None:
        hybrid.forget()
    yield
    hybrid = sys.modules.get("monkeyllm.canopy.hybrid")
    if hybrid is not None:
        hybrid.forget()


@pytest.fixture(scope="session")
def sample_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session-wide copy of sample-brain/ that tests must not change."""
    return copy_sample(tmp_path_factory.mktemp("sample") / "brain")


@pytest.fixture(scope="session")
def brain(sample_root: Path) -> Iterator[Vine]:
    """A read-only Vine on the session copy, with heat turned off for stable ranks."""
    with reader(sample_root) as vine:
        yield vine


@pytest.fixture(scope="module")
def scratch_vine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Vine]]:
    """A forest of the module's own, empty but for its master index and dialect, and a
    read-only Vine on it: for tests that write node files into it as they go."""
    root = make_forest(tmp_path_factory.mktemp("scratch") / "f")
    with Vine(root, writable=False) as vine:
        yield root, vine


@pytest.fixture
def brain_copy(tmp_path: Path) -> Path:
    """A per-test writable copy of sample-brain/ (its own git repository)."""
    return copy_sample(tmp_path / "brain", git=True)


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the module's ``template`` forest, its git history included (the
    caches and the lock left behind): a module that defines ``template`` gets this."""
    dest = tmp_path / "f"
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns("_derived", ".vine.lock"))
    return dest


@pytest.fixture
def vine(root: Path) -> Iterator[Vine]:
    """A writable Vine on ``root``."""
    with Vine(root) as v:
        yield v
