"""`vine serve --transport http`: a real server on 127.0.0.1 and the SDK's real client
over streamable HTTP in both protocol eras; the Host check (DNS-rebinding protection)
and the call log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from monkeyllm import CALLS, Vine, shapes
from monkeyllm.serve.tools import ENGINE_TOOLS

from .forestkit import copy_sample, head
from .mcpkit import (
    ACCEPT,
    ERAS,
    TIMEOUT,
    host_probes,
    http_server,
    http_session,
    payload,
    ping,
    stable,
    stdio_session,
)
from .test_mcp import NOTE, READS, cool


def run(fn: Any, *args: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT * 2):
            return await fn(*args)

    return anyio.run(bounded)


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "brain", git=True)


@pytest.mark.parametrize("era", ERAS)
def test_http_serves_the_same_tools_and_answers(forest: Path, tmp_path: Path, era: str) -> None:
    cool(forest)
    with Vine(forest, writable=False) as vine:
        expected = {name: vine.call(name, args) for name, args in READS.items()}
    log = tmp_path / "serve.log"

    async def body(url: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with http_session(url, era) as session:
            out["version"] = session.protocol_version
            out["tools"] = (await session.list_tools()).tools
            for name, args in READS.items():
                out[name] = payload(await session.call_tool(name, args))
            out["bad"] = payload(await session.call_tool("look", {"id": 3}))
            out["plant"] = payload(await session.call_tool("plant", {"node": NOTE}))
        # A read-only server on stdio reads what the HTTP one wrote.
        async with stdio_session("-f", str(forest), "--readonly") as reader:
            out["seen"] = payload(await reader.call_tool("look", {"id": NOTE["id"]}))
        return out

    with http_server("-f", str(forest), stderr=log) as url:
        out = run(body, url)
    tools = {t.name: t for t in out["tools"]}
    assert [n for n in tools if n in CALLS] == list(ENGINE_TOOLS)
    assert out["version"] == ("2026-07-28" if era == "modern" else "2025-11-25")
    for name in ENGINE_TOOLS:
        assert tools[name].input_schema == CALLS[name].input_schema()
        assert tools[name].output_schema == {
            "$schema": "http://json-schema.org/draft-07/schema#",
            **shapes.or_envelope(CALLS[name].output_schema()),
        }
    for name in READS:
        if name == "query":
            expected[name].pop("elapsed_ms"), out[name].pop("elapsed_ms")
        assert stable(out[name]) == stable(expected[name]), name
    assert out["bad"]["error"]["code"] == "E_SCHEMA"
    assert out["plant"]["commit"] == head(forest)
    assert out["seen"]["title"] == "MCP note"
    lines = [
        line
        for line in log.read_text().splitlines()
        if line.startswith("vine serve: ") and " forest=" in line
    ]
    assert len(lines) == len(READS) + 2
    assert lines[0].startswith("vine serve: locate forest=brain ")
    assert lines[0].endswith("ms ok")
    assert lines[-2].endswith(" E_SCHEMA") and lines[-2].startswith("vine serve: look ")
    assert "Traceback" not in log.read_text()


def test_http_answers_only_the_hosts_it_is_told(forest: Path, tmp_path: Path) -> None:
    with http_server(
        "-f",
        str(forest),
        "--readonly",
        "--allow-host",
        "brain.internal",
        stderr=tmp_path / "serve.log",
    ) as url:
        port = url.split(":")[2].split("/")[0]
        codes = {}
        for host in host_probes(port):
            codes[host] = ping(url, Host=host).status_code
        origin = ping(url, Origin="http://evil.example")
    assert codes.pop("evil.example") == 421
    assert codes.pop(f"evil.example:{port}") == 421
    assert set(codes.values()) == {200}, codes
    assert origin.status_code == 403


def test_a_readonly_http_server_lists_only_reads(forest: Path, tmp_path: Path) -> None:
    async def body(url: str) -> dict[str, list[str]]:
        listed = {}
        for era in ERAS:
            async with http_session(url, era) as session:
                listed[era] = [t.name for t in (await session.list_tools()).tools]
        return listed

    with http_server("-f", str(forest), "--readonly", stderr=tmp_path / "serve.log") as url:
        listed = run(body, url)
    reads = [n for n in ENGINE_TOOLS if CALLS[n].read_only]
    assert "history" in reads and "prune" not in reads
    for names in listed.values():
        assert names == ["forests", *reads, "view"]


def test_the_param_header_check_reads_the_listed_schemas(forest: Path, tmp_path: Path) -> None:
    """The 2026-07-28 HTTP path checks ``Mcp-Param-*`` headers against a tool's input
    schema: the server answers it from the schemas it lists (the SDK would otherwise
    run the whole ``tools/list`` for every call), and a tool it does not list has none."""
    from monkeyllm.serve.dispatch import Dispatcher
    from monkeyllm.serve.forests import Forests
    from monkeyllm.serve.server import build

    async def body(url: str) -> dict[str, Any]:
        async with http_session(url, "modern") as session:
            return {t.name: t.input_schema for t in (await session.list_tools()).tools}

    with http_server("-f", str(forest), "--readonly", stderr=tmp_path / "serve.log") as url:
        listed = run(body, url)
    forests = Forests(forest=forest, writable=False)
    try:
        lookup = build(Dispatcher(forests)).get_tool_input_schema
        assert lookup is not None
        assert {name: lookup(name) for name in listed} == listed
        assert lookup("plant") is None  # a read-only server lists no write
    finally:
        forests.close()


def test_the_stations_param_header_check_reads_its_listed_schemas(tmp_path: Path) -> None:
    """The Station's ``/mcp`` offers every key the same tools: the same map serves."""
    from monkeyllm.serve.station.core import Station
    from monkeyllm.serve.station.mcp import build_server, tools

    station = Station(tmp_path)
    try:
        lookup = build_server(station, anyio.CapacityLimiter(1)).get_tool_input_schema
        assert lookup is not None
        listed = {t.name: t.input_schema for t in tools()}
        assert "look" in listed and "answer" in listed
        assert {name: lookup(name) for name in listed} == listed
        assert lookup("nope") is None
    finally:
        station.close()


def test_http_refusals_are_envelopes_with_a_hint(forest: Path, tmp_path: Path) -> None:
    """What the SDK's transport refuses in plain text (a Host or Origin it does not
    answer, a wrong Content-Type, a body over 4 MiB) and a path other than /mcp answer
    the error envelope, status kept, saying what to do (--allow-host for a name)."""
    with http_server("-f", str(forest), "--readonly", stderr=tmp_path / "serve.log") as url:
        port = url.split(":")[2].split("/")[0]
        got = {
            "host": ping(url, Host=f"192.168.1.5:{port}"),
            "origin": ping(url, Origin="http://evil.example"),
            "text": httpx.post(
                url,
                content=b"hi",
                timeout=TIMEOUT,
                headers={**ACCEPT, "Content-Type": "text/plain"},
            ),
            "huge": httpx.post(url, content=b"x" * (5 << 20), timeout=TIMEOUT, headers=ACCEPT),
            "elsewhere": httpx.get(url.replace("/mcp", "/"), timeout=TIMEOUT),
            "fine": ping(url),
        }
    assert {k: r.status_code for k, r in got.items()} == {
        "host": 421,
        "origin": 403,
        "text": 400,
        "huge": 413,
        "elsewhere": 404,
        "fine": 200,
    }
    errors = {k: r.json()["error"] for k, r in got.items() if k != "fine"}
    assert errors["host"]["code"] == "E_HOST_NOT_ALLOWED"
    assert "192.168.1.5" in errors["host"]["message"] and "--allow-host" in errors["host"]["hint"]
    assert errors["origin"]["code"] == "E_FORBIDDEN"
    assert errors["text"]["code"] == "E_SCHEMA"
    assert "content-type" in errors["text"]["message"].lower()
    assert errors["huge"]["code"] == "E_SCHEMA"
    assert errors["elsewhere"]["code"] == "E_NOT_FOUND" and "/mcp" in errors["elsewhere"]["hint"]
