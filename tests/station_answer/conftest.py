"""Fixtures the answer tests share: a Station over two forests with a bound model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ..modelkit import ModelServer
from ..test_station import _key, _serve, two_forests
from .kit import _bind


@pytest.fixture(scope="module")
def st(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("answer")
    two_forests(root)
    made: dict[str, Any] = {
        "root": root,
        "ans": _key(root, "ans", caps="read,answer")[1],
        "deny": _key(root, "deny", deny=("secret/",), caps="read,answer,query")[1],
        "writer": _key(root, "writer", caps="read,query,write,tend,answer")[1],
        "reader": _key(root, "reader", caps="read")[1],
        "other": _key(root, "o", forest="other", caps="read,answer")[1],
    }
    with (
        ModelServer() as kit,
        _serve(root) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        made.update(kit=kit, client=client)
        _bind(root, kit.url, timeout_s=2.0)
        yield made


@pytest.fixture(autouse=True)
def _rebind(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts from the plain binding and an empty script."""
    yield
    if "st" in request.fixturenames:
        made = request.getfixturevalue("st")
        _bind(made["root"], made["kit"].url, timeout_s=2.0)
        made["kit"].reply()
