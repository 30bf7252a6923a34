"""`vine serve` over stdio reads and writes its pipes on the event loop (no worker thread
per line): a message far longer than asyncio's default line limit still crosses, an
overlong line is skipped whole without ending the session, and where standard output is
not a pipe (a file) the server serves through the SDK's own threads."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio

from monkeyllm.serve.pipes import Lines

from .forestkit import copy_sample
from .mcpkit import PING, TIMEOUT, VINE, payload, stdio_session


def test_a_message_longer_than_a_default_line_limit_crosses(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain", git=True)
    # About 1.3 MB of JSON on one line: twenty times asyncio's default limit.
    body = "# Long\n\n" + "A line of the long note that fills the upload.\n" * 25_000
    files = [{"name": "long.md", "content": body}]

    async def session() -> tuple[dict[str, Any], dict[str, Any]]:
        with anyio.fail_after(TIMEOUT * 2):
            async with stdio_session("-f", str(forest)) as s:
                made = payload(await s.call_tool("ingest", {"files": files, "into": "inbox"}))
                seen = payload(await s.call_tool("look", {"id": "inbox/long"}))
                return made, seen

    made, seen = anyio.run(session)
    assert [e["id"] for e in made["created"]] == ["inbox/long"], made
    assert seen["id"] == "inbox/long" and seen["stats"]["body_tokens"] > 100_000


def test_an_overlong_line_is_skipped_whole_and_reading_goes_on() -> None:
    async def read() -> list[str]:
        reader = asyncio.StreamReader(limit=32)
        reader.feed_data(b'{"a": 1}\n' + b"x" * 100 + b"\n" + '{"b": "é"}\n'.encode())
        reader.feed_data(b'{"c": 3}')  # the last line has no newline
        reader.feed_eof()
        return [line async for line in Lines(reader)]

    assert asyncio.run(read()) == ['{"a": 1}\n', "", '{"b": "é"}\n', '{"c": 3}']


def test_standard_output_to_a_file_is_served_through_the_sdk(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    out = tmp_path / "protocol.jsonl"
    requests = [
        PING,  # the initialize request
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "look", "arguments": {"id": "sales/exchange-policy"}},
        },
    ]
    with open(out, "w", encoding="utf-8") as sink:
        proc = subprocess.Popen(
            [VINE, "serve", "-f", str(forest), "--readonly"],
            stdin=subprocess.PIPE,
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert proc.stdin is not None and proc.stderr is not None
    try:
        for message in requests:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        replies: dict[int, Any] = {}
        while len(replies) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            for line in out.read_text(encoding="utf-8").splitlines():
                reply = json.loads(line)
                replies[reply["id"]] = reply
        proc.stdin.close()
        assert proc.wait(timeout=TIMEOUT) == 0
        errors = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert replies[1]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[2]["result"]["structuredContent"]["id"] == "sales/exchange-policy"
    assert errors == ""
