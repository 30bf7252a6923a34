"""Fixtures the TUI tests share: a copy of sample-brain to browse."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..forestkit import copy_sample


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    """A plain copy for browsing (no git: nothing is written)."""
    return copy_sample(tmp_path / "brain")
