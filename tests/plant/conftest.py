"""Fixtures the plant tests share: a forest to plant in, with and without a clients
branch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from monkeyllm import Vine

from ..forestkit import assert_ok
from .kit import CLIENTS


@pytest.fixture
def vine(tmp_path: Path) -> Iterator[Vine]:
    with Vine.init(tmp_path / "f", "Title") as v:
        yield v


@pytest.fixture
def clients(vine: Vine) -> Vine:
    assert_ok(vine.plant(dict(CLIENTS)))
    return vine
