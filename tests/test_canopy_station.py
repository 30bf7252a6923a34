"""Hybrid ranking on the serving surfaces: the Station's REST route and its MCP endpoint
take ``hybrid``; the Station binds a query embedder per forest (``vine station
bind-embedder``) and a rebinding applies at the next call; ``vine serve`` over stdio
takes ``hybrid`` too. The embeddings endpoint is a real server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from monkeyllm import Vine

from .embedkit import EmbedServer
from .forestkit import copy_sample
from .mcpkit import payload, stdio_session
from .test_canopy import PARAPHRASE
from .test_station import _key, _serve
from .test_station_mcp import calls, run


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    root = tmp_path / "forests"
    copy_sample(root / "acme")
    with EmbedServer() as srv:
        with Vine(root / "acme", writable=False) as vine:
            vine.canopy_build({"kind": "http", "model": srv.model, "url": srv.url})
        _, key = _key(root, "reader", caps="read")
        with _serve(root) as url, httpx.Client(base_url=url, timeout=30) as client:
            yield {
                "root": root,
                "url": url,
                "client": client,
                "key": key,
                "srv": srv,
                "reader": key,
            }


def locate(st: dict[str, Any], **args: Any) -> httpx.Response:
    return st["client"].post(
        "/v1/forests/acme/locate",
        json={"query": PARAPHRASE, **args},
        headers={"Authorization": f"Bearer {st['key']}"},
    )


def station_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "monkeyllm.commands", "station", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_rest_takes_hybrid_and_says_which_ranking_ran(served: dict[str, Any]) -> None:
    fused = locate(served)
    assert fused.status_code == 200
    assert fused.json()["hybrid"] == {"ran": True, "model": "kit-embed"}
    assert "sales/exchange-policy" in [r["id"] for r in fused.json()["results"]]
    lexical = locate(served, hybrid=False)
    assert lexical.json()["hybrid"] == {"ran": False, "reason": "off"}
    wrong = locate(served, hybrid="sometimes")
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "E_SCHEMA"
    harvest = served["client"].post(
        "/v1/forests/acme/harvest",
        json={"query": PARAPHRASE, "hybrid": True},
        headers={"Authorization": f"Bearer {served['key']}"},
    )
    assert harvest.status_code == 200 and harvest.json()["hybrid"]["ran"] is True


def test_the_station_binds_an_embedder_per_forest(served: dict[str, Any]) -> None:
    root = str(served["root"])

    def bind(model: str, *more: str) -> Any:
        where = ("--root", root, "--endpoint", served["srv"].url)
        return station_cli("bind-embedder", "acme", *where, "--model", model, *more)

    bound = bind("kit-embed-2", "--api-key-env", "KIT_KEY")
    assert bound.returncode == 0, bound.stderr
    assert json.loads(bound.stdout)["model"] == "kit-embed-2"
    listed = [
        json.loads(line) for line in station_cli("bindings", "--root", root).stdout.splitlines()
    ]
    assert {
        "forest": "acme",
        "role": "embed",
        "kind": "http",
        "model": "kit-embed-2",
        "url": served["srv"].url,
        "api_key_env": "KIT_KEY",
        "timeout_s": 3.0,
        "batch": 64,
    } in listed
    mismatch = locate(served).json()["hybrid"]
    assert mismatch["reason"] == "mismatch" and "kit-embed-2" in mismatch["note"]
    assert bind("kit-embed").returncode == 0
    assert locate(served).json()["hybrid"]["ran"] is True
    unbound = station_cli("unbind-embedder", "acme", "--root", root)
    assert unbound.returncode == 0 and json.loads(unbound.stdout)["unbound"] is True
    assert locate(served).json()["hybrid"]["ran"] is True  # the Canopy's own embedder
    again = station_cli("unbind-embedder", "acme", "--root", root)
    assert again.returncode == 1
    bad = station_cli(
        "bind-embedder", "acme", "--root", root, "--endpoint", "ftp://x", "--model", "m"
    )
    assert bad.returncode == 2


def test_the_station_mcp_tools_take_hybrid(served: dict[str, Any]) -> None:
    got = run(
        calls,
        served,
        "reader",
        [
            ("locate", {"forest": "acme", "query": PARAPHRASE, "hybrid": False}),
            ("locate", {"forest": "acme", "query": PARAPHRASE}),
            ("harvest", {"forest": "acme", "query": PARAPHRASE, "hybrid": True}),
            ("locate", {"forest": "acme", "query": PARAPHRASE, "hybrid": "maybe"}),
        ],
    )
    off, fused, harvested, wrong = (payload(r) for r in got)
    assert off["hybrid"]["reason"] == "off"
    assert fused["hybrid"]["ran"] is True and harvested["hybrid"]["ran"] is True
    assert wrong["error"]["code"] == "E_SCHEMA"


def test_vine_serve_over_stdio_takes_hybrid(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    with EmbedServer() as srv:
        with Vine(root, writable=False) as vine:
            vine.canopy_build({"kind": "http", "model": srv.model, "url": srv.url})

        async def body() -> list[Any]:
            async with stdio_session("--forest", str(root)) as session:
                tools = {t.name: t for t in (await session.list_tools()).tools}
                assert "hybrid" in tools["locate"].input_schema["properties"]
                return [
                    await session.call_tool("locate", {"query": PARAPHRASE, "hybrid": flag})
                    for flag in (True, False)
                ]

        fused, lexical = (payload(r) for r in run(body))
    assert fused["hybrid"]["ran"] is True and lexical["hybrid"]["reason"] == "off"
