"""Fixtures the harvest tests share: a copy of sample-brain of their own, a read-only Vine on it
with heat off, and k's ceiling kept at its default."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from monkeyllm import Vine
from monkeyllm.reads.harvest import MAX_K_ENV

from ..forestkit import copy_sample, reader


@pytest.fixture(autouse=True)
def _default_max_k(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's shell cannot change k's ceiling under these tests."""
    monkeypatch.delenv(MAX_K_ENV, raising=False)


@pytest.fixture(scope="module")
def hv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vine]:
    """Read-only, heat off, on a copy of sample-brain/ of this module's own (reads leave
    heat behind): rankings do not move as the tests read."""
    with reader(copy_sample(tmp_path_factory.mktemp("harvest") / "brain")) as vine:
        yield vine
