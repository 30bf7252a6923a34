"""`vine serve` over stdio, driven by the MCP SDK's real client in both protocol eras (the
initialize handshake and 2026-07-28's server/discover): the tool list comes from the
registry (input and output schemas), a read-only server lists only reads, every tool
answers what the Python API answers, errors are envelopes with isError set, writes
commit, and stdout carries nothing but protocol."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from monkeyllm import CALLS, Vine, shapes
from monkeyllm.serve.tools import ENGINE_TOOLS

from .forestkit import copy_sample, git, head, node
from .mcpkit import ERAS, PING, TIMEOUT, VINE, payload, stable, stdio_session

WRITES = ("plant", "graft", "tend", "prune", "transplant", "ingest")

READS: dict[str, dict[str, Any]] = {
    "locate": {"query": "exchange policy deadlines", "k": 3},
    "look": {"id": "sales/exchange-policy"},
    "move": {"id": "sales/_index", "rel": "children"},
    "pick": {"id": "sales/exchange-policy", "section": "Deadlines"},
    "scan": {"parent_id": "sales", "recursive": True, "fields": ["id", "type"]},
    "sniff": {"terms": "NF-4412"},
    "query": {"id": "sales/orders-2026", "sql": "SELECT COUNT(*) AS n FROM orders"},
    "harvest": {"query": "deadline to exchange a retail order", "k": 3},
}
# One wrong argument per tool: a mistyped value or a missing required parameter.
INVALID: dict[str, dict[str, Any]] = {
    "locate": {"query": 3},
    "look": {},
    "move": {"id": "sales/_index", "direction": "up"},
    "pick": {"id": ["a"] * 3, "section": 7},
    "scan": {"parent_id": "sales", "limit": "x"},
    "sniff": {"terms": None},
    "query": {"id": "sales/orders-2026"},
    "harvest": {"k": 3},
    "plant": {"node": "not an object"},
    "graft": {"id": "sales/exchange-policy"},
    "tend": {"id": "sales/orders-2026", "sql": 1},
    "view": {},
    "ingest": {"files": "x"},
    "forests": {"bogus": 1},
}
NOTE = node(
    "sales/mcp-note",
    "sales/_index",
    "MCP note",
    "Planted over the Model Context Protocol.",
    body="# MCP note\n\nPlanted by an agent.\n",
)
EXPECTED_HINTS = {
    "plant": (False, False, False),
    "graft": (False, True, False),
    "tend": (False, True, False),
    "ingest": (False, False, False),
    "prune": (False, True, False),
    "transplant": (False, True, False),
}


def run(fn: Any, *args: Any) -> Any:
    """Run an async test body with a deadline."""

    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT * 2):
            return await fn(*args)

    return anyio.run(bounded)


def cool(root: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (root / "_derived" / f"trails.db{suffix}").unlink(missing_ok=True)


def tiny_png() -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "brain", git=True)


# -- the tool list -------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_tools_carry_the_registry_schemas_and_explicit_annotations(forest: Path, era: str) -> None:
    async def body() -> tuple[Any, list[Any]]:
        async with stdio_session("--forest", str(forest), era=era) as session:
            return session.protocol_version, (await session.list_tools()).tools

    version, listed = run(body)
    assert version == ("2026-07-28" if era == "modern" else "2025-11-25")
    tools = {t.name: t for t in listed}
    assert list(tools) == ["forests", *ENGINE_TOOLS, "view", "ingest"]
    assert "answer" not in tools
    for name in ENGINE_TOOLS:
        assert tools[name].input_schema == CALLS[name].input_schema(), name
        assert tools[name].output_schema == {
            "$schema": "http://json-schema.org/draft-07/schema#",
            **shapes.or_envelope(CALLS[name].output_schema()),
        }
        assert tools[name].description and "Args:" not in tools[name].description
        assert CALLS[name].summary in tools[name].description
    for tool in tools.values():
        hints = tool.annotations
        assert None not in (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ), tool.name
        assert hints.open_world_hint is False
        expected = EXPECTED_HINTS.get(tool.name, (True, False, True))
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == expected, (
            tool.name
        )
        assert tool.input_schema["type"] == "object"


@pytest.mark.parametrize("era", ERAS)
def test_a_readonly_server_lists_only_what_it_can_run(forest: Path, era: str) -> None:
    async def body() -> tuple[list[str], dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with stdio_session("-f", str(forest), "--readonly", era=era) as session:
            names = [t.name for t in (await session.list_tools()).tools]
            refused = payload(await session.call_tool("plant", {"node": NOTE}))
            looked = payload(await session.call_tool("look", READS["look"]))
            unknown = payload(await session.call_tool("lokate", {"query": "x"}))
            return names, refused, looked, unknown

    names, refused, looked, unknown = run(body)
    assert names == ["forests", *(n for n in ENGINE_TOOLS if n not in WRITES), "view"]
    # A mistyped name is offered the tools listed, never a write that cannot run.
    assert unknown["error"]["hint"] == "Tools: " + ", ".join(names) + "."
    assert not set(WRITES) & set(names)
    # A write named anyway says why it cannot run here.
    assert refused["error"]["code"] == "E_READONLY"
    assert "--readonly" in refused["error"]["hint"]
    assert looked["id"] == "sales/exchange-policy"
    assert not (forest / "sales" / "mcp-note.md").exists()


def test_tool_prefix_renames_every_tool(forest: Path) -> None:
    async def body() -> tuple[list[str], dict[str, Any]]:
        async with stdio_session(
            "-f", str(forest), "--readonly", "--tool-prefix", "vine_"
        ) as session:
            names = [t.name for t in (await session.list_tools()).tools]
            return names, payload(await session.call_tool("vine_look", READS["look"]))

    names, looked = run(body)
    assert names == [
        "vine_forests",
        *(f"vine_{n}" for n in ENGINE_TOOLS if n not in WRITES),
        "vine_view",
    ]
    assert looked["id"] == "sales/exchange-policy"


# -- calls ---------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_every_tool_answers_like_the_python_api(forest: Path, era: str) -> None:
    cool(forest)
    before = head(forest)
    # The Python API first: the writes below change what the reads would see.
    with Vine(forest, writable=False) as vine:
        expected = {name: getattr(vine, name)(**args) for name, args in READS.items()}

    async def body() -> dict[str, Any]:
        got: dict[str, Any] = {}
        async with stdio_session("--forest", str(forest), era=era) as session:
            for name, args in READS.items():
                got[name] = payload(await session.call_tool(name, args))
            for name, args in INVALID.items():
                got["bad " + name] = await session.call_tool(name, args)
            got["unknown"] = payload(await session.call_tool("answer", {"question": "x"}))
            got["forests"] = payload(await session.call_tool("forests", {}))
            got["plant"] = payload(await session.call_tool("plant", {"node": NOTE}))
            got["graft"] = payload(
                await session.call_tool(
                    "graft",
                    {
                        "id": NOTE["id"],
                        "patch": {"append_section": {"header": "Notes", "body": "Grafted too."}},
                    },
                )
            )
            got["tend"] = payload(
                await session.call_tool(
                    "tend",
                    {"id": "sales/orders-2026", "sql": "DELETE FROM orders WHERE id = '1001'"},
                )
            )
            got["wrong forest"] = payload(
                await session.call_tool(
                    "look", {"forest": "elsewhere", "id": "sales/exchange-policy"}
                )
            )
            got["named forest"] = payload(
                await session.call_tool(
                    "look",
                    {"forest": forest.name, "id": "sales/exchange-policy", "fields": ["summary"]},
                )
            )
        return got

    got = run(body)
    for name in READS:
        assert "error" not in got[name], (name, got[name])
        if name == "query":
            expected[name].pop("elapsed_ms"), got[name].pop("elapsed_ms")
        assert stable(got[name]) == stable(expected[name]), name
    for name in INVALID:
        result = got["bad " + name]
        assert result.is_error is True, name
        error = payload(result)["error"]
        assert error["code"] == "E_SCHEMA", (name, error)
        assert error["message"]
    assert got["unknown"]["error"]["code"] == "E_SCHEMA"
    assert got["forests"] == {
        "forests": [{"id": forest.name, "active": True, "writable": True, "locked": False}],
        "mode": "single",
    }
    assert got["wrong forest"]["error"]["code"] == "E_SCHEMA"
    assert got["named forest"]["summary"]
    # The three writes committed, one commit each, in order.
    assert got["plant"]["commit"] and got["graft"]["commit"]
    assert got["tend"]["rows_affected"] == 1 and got["tend"]["commit"]
    log = git(forest, "log", "--format=%H %s", f"{before}..HEAD").splitlines()
    assert [line.split(" ", 1)[0] for line in log] == [
        got["tend"]["commit"],
        got["graft"]["commit"],
        got["plant"]["commit"],
    ]
    assert (forest / "sales" / "mcp-note.md").is_file()


def test_a_readonly_server_beside_a_writable_one(forest: Path) -> None:
    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with (
            stdio_session("-f", str(forest)) as writer,
            stdio_session("-f", str(forest), "--readonly") as reader,
        ):
            out["refused"] = payload(await reader.call_tool("plant", {"node": NOTE}))
            out["forests"] = payload(await reader.call_tool("forests", {}))
            out["planted"] = payload(await writer.call_tool("plant", {"node": NOTE}))
            out["seen"] = payload(await reader.call_tool("look", {"id": NOTE["id"]}))
            out["ghost"] = payload(await writer.call_tool("look", {"id": "sales/exchange-polcy"}))
        return out

    out = run(body)
    assert out["refused"]["error"]["code"] == "E_READONLY"
    assert "--readonly" in out["refused"]["error"]["hint"]
    assert out["forests"]["forests"][0]["writable"] is False
    assert out["planted"]["commit"] == head(forest)
    assert out["seen"]["title"] == "MCP note"
    # `vine serve` is started from the command line, yet speaks the calls' own words.
    hint = out["ghost"]["error"]["hint"]
    assert "'sales/exchange-policy'" in hint and "locate(query)" in hint, hint
    assert "vine locate" not in hint


def test_a_forest_held_open_is_served_and_the_start_says_who_holds_it(forest: Path) -> None:
    with Vine(forest):
        done = subprocess.run(
            [VINE, "serve", "-f", str(forest)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr
    assert f"pid {os.getpid()}" in done.stderr and "writes answer E_LOCKED" in done.stderr
    assert done.stdout == ""


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def raw_messages(era: str) -> list[dict[str, Any]]:
    """A raw session: the opening of ``era``, an unknown tool, a bad argument, a write
    that runs git and a read of what it wrote."""
    calls = [
        ("nope", {}),
        ("look", {"id": 42}),
        ("plant", {"node": NOTE}),
        ("look", {"id": NOTE["id"]}),
    ]
    if era == "modern":
        opening = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "server/discover",
                "params": {"_meta": MODERN_META},
            }
        ]
    else:
        opening = [PING, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    meta = {"_meta": MODERN_META} if era == "modern" else {}
    return opening + [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": name, "arguments": args, **meta},
        }
        for n, (name, args) in enumerate(calls, start=2)
    ]


@pytest.mark.parametrize("era", ERAS)
def test_stdout_carries_only_protocol(forest: Path, era: str) -> None:
    """Raw JSON-RPC over the pipes: every line the server writes is a protocol message,
    through an unknown tool, a bad argument and a write that runs git; stderr stays
    quiet (no warnings from the SDK or its models)."""
    messages = raw_messages(era)
    errors = forest.parent / "stderr.log"
    with open(errors, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [VINE, "serve", "-f", str(forest)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert proc.stdin is not None and proc.stdout is not None
    replies = {}
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                line = proc.stdout.readline()
                reply = json.loads(line)
                assert reply["jsonrpc"] == "2.0"
                replies[reply["id"]] = reply
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert rest == ""
    assert proc.returncode == 0
    assert errors.read_text() == ""
    if era == "modern":
        assert replies[1]["result"]["supportedVersions"] == ["2026-07-28"]
    else:
        assert replies[1]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[2]["result"]["isError"] is True
    assert replies[2]["result"]["structuredContent"]["error"]["code"] == "E_SCHEMA"
    assert replies[3]["result"]["structuredContent"]["error"]["code"] == "E_SCHEMA"
    assert replies[4]["result"]["isError"] is False
    assert replies[5]["result"]["structuredContent"]["title"] == "MCP note"


# -- several forests -----------------------------------------------------------------


def test_root_mode_serves_every_forest_and_requires_forest(tmp_path: Path) -> None:
    root = tmp_path / "forests"
    copy_sample(root / "acme", git=True)
    copy_sample(root / "globex", git=True)
    (root / "not-a-forest").mkdir()

    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session("--root", str(root)) as session:
            out["tools"] = {t.name: t for t in (await session.list_tools()).tools}
            out["forests before"] = payload(await session.call_tool("forests", {}))
            out["missing"] = payload(await session.call_tool("look", READS["look"]))
            out["acme"] = payload(
                await session.call_tool("look", {"forest": "acme", **READS["look"]})
            )
            out["escape"] = payload(
                await session.call_tool("look", {"forest": "../forests/acme", **READS["look"]})
            )
            out["other"] = payload(
                await session.call_tool("look", {"forest": "not-a-forest", **READS["look"]})
            )
            out["plant"] = payload(
                await session.call_tool("plant", {"forest": "globex", "node": NOTE})
            )
            out["forests after"] = payload(await session.call_tool("forests", {}))
        return out

    out = run(body)
    for name in ENGINE_TOOLS:
        schema = out["tools"][name].input_schema
        plain = CALLS[name].input_schema()
        assert schema["required"] == ["forest", *plain["required"]]
        assert {k: v for k, v in schema["properties"].items() if k != "forest"} == plain[
            "properties"
        ]
    assert "forest" not in out["tools"]["forests"].input_schema["properties"]
    assert out["forests before"] == {
        "mode": "registry",
        "forests": [
            {"id": "acme", "active": False, "writable": True, "locked": False},
            {"id": "globex", "active": False, "writable": True, "locked": False},
        ],
    }
    assert out["missing"]["error"]["code"] == "E_SCHEMA"
    assert "acme, globex" in out["missing"]["error"]["hint"]
    assert out["acme"]["id"] == "sales/exchange-policy"
    assert out["escape"]["error"]["code"] == "E_NOT_FOUND"
    assert out["other"]["error"]["code"] == "E_NOT_FOUND"
    assert out["plant"]["commit"] == head(root / "globex")
    assert not (root / "acme" / "sales" / "mcp-note.md").exists()
    assert [f["active"] for f in out["forests after"]["forests"]] == [True, True]


# -- the MCP-only tools --------------------------------------------------------------


def test_ingest_then_view_an_image(forest: Path) -> None:
    png = tiny_png()
    files = [
        {"name": "pics/dot.png", "b64": base64.b64encode(png).decode()},
        {"name": "notes/first.md", "content": "# First\n\nA note sent by an agent."},
    ]

    async def body() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session("-f", str(forest)) as session:
            out["ingest"] = payload(
                await session.call_tool("ingest", {"files": files, "into": "inbox"})
            )
            out["again"] = payload(
                await session.call_tool("ingest", {"files": files, "into": "inbox"})
            )
            out["view"] = await session.call_tool("view", {"id": "inbox/pics/dot"})
            out["view note"] = payload(await session.call_tool("view", {"id": "inbox/notes/first"}))
            out["view none"] = payload(await session.call_tool("view", {"id": "nope"}))
            out["escape"] = payload(
                await session.call_tool("ingest", {"files": [{"name": "../x.md", "content": "x"}]})
            )
            out["look"] = payload(await session.call_tool("look", {"id": "inbox/notes/first"}))
        async with stdio_session("-f", str(forest), "--readonly") as session:
            out["readonly"] = payload(await session.call_tool("ingest", {"files": files}))
        return out

    out = run(body)
    report = out["ingest"]
    assert sorted(e["id"] for e in report["created"]) == ["inbox/notes/first", "inbox/pics/dot"]
    assert sorted(e["path"] for e in report["created"]) == ["notes/first.md", "pics/dot.png"]
    assert report["commit"] == head(forest)
    assert out["again"]["commit"] is None and out["again"]["counts"]["unchanged"] == 2
    view = out["view"]
    assert view.is_error is False
    image, text = view.content
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png
    header = json.loads(text.text)
    assert header == view.structured_content
    assert header["id"] == "inbox/pics/dot" and header["size"] == len(png)
    assert header["media_type"] == "image/png" and header["payload_hash"]
    assert out["view note"]["error"]["code"] == "E_SCHEMA"
    assert out["view none"]["error"]["code"] == "E_NOT_FOUND"
    assert out["escape"]["error"]["code"] == "E_SCHEMA"
    assert out["look"]["title"] == "First"
    assert out["readonly"]["error"]["code"] == "E_READONLY"


def test_forests_says_which_forest_another_writer_holds(tmp_path: Path) -> None:
    """``locked`` (the reference's forests shape) is true while another process holds a
    forest's writer lock, and false again once it lets go."""
    import sys

    from monkeyllm.serve.forests import Forests

    root = tmp_path / "forests"
    copy_sample(root / "acme", git=True)
    copy_sample(root / "globex", git=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from monkeyllm import Vine; "
            f"v = Vine({str(root / 'globex')!r}); print('held', flush=True); "
            "sys.stdin.readline(); v.close()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        forests = Forests(root=root, writable=False)
        got = {f["id"]: f["locked"] for f in forests.describe()["forests"]}
        assert got == {"acme": False, "globex": True}
    finally:
        holder.communicate("\n", timeout=30)
    assert {f["id"]: f["locked"] for f in forests.describe()["forests"]} == {
        "acme": False,
        "globex": False,
    }
    forests.close()


def test_vine_serve_help_names_every_tool_it_serves() -> None:
    # The help is what a person reads before wiring a client: it must not fall behind
    # the tools (it named 11 of the 16 engine calls).
    from typer.testing import CliRunner

    from monkeyllm.commands.app import make_app

    shown = CliRunner().invoke(make_app(), ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert set(ENGINE_TOOLS) == set(CALLS), "every engine call is a tool"
    for name in (*ENGINE_TOOLS, "forests", "view", "ingest"):
        assert f" {name}" in shown.replace(",", " ").replace("(", " "), name
