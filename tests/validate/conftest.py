"""Fixtures the validate tests share: a clean copy of sample-brain."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..forestkit import copy_sample


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_sample(tmp_path_factory.mktemp("clean") / "brain")
