"""Fixtures the CLI tests share: a copy of sample-brain for the commands to read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..forestkit import copy_sample


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-brain/ for reads (reads leave heat behind, so not the shared
    session copy)."""
    return copy_sample(tmp_path_factory.mktemp("cli") / "brain")
