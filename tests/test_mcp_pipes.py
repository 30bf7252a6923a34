"""`vine serve` over stdio reads and writes its pipes on the event loop (no worker thread
per line): a message far longer than asyncio's default line limit still crosses, an
overlong line is skipped whole without ending the session, and where standard output is
not a pipe (a file) the server serves through the SDK's own threads."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from monkeyllm.serve.pipes import Lines, without_lone_surrogates

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


def test_escaped_lone_surrogates_become_replacement_characters() -> None:
    assert without_lone_surrogates('{"a": "x\\ud800 y"}') == '{"a": "x\\ufffd y"}'
    assert without_lone_surrogates('["\\udc00\\ud800"]') == '["\\ufffd\\ufffd"]'
    # A pair is one character; an escaped backslash before "ud800" is no escape.
    for kept in ('{"a": "\\ud83d\\ude00"}', '{"a": "\\\\ud800"}', '{"a": "\\u00e9\\n"}'):
        assert without_lone_surrogates(kept) == kept
    assert json.loads(without_lone_surrogates('"\\\\\\uD83D"')) == "\\\ufffd"


def test_a_call_holding_a_lone_surrogate_is_answered(tmp_path: Path) -> None:
    """The SDK's parser refuses a line with an escaped lone surrogate and drops it
    unanswered, so the client waited for ever; the pipes' reader replaces it first."""
    forest = copy_sample(tmp_path / "brain")

    def call(id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}

    requests = [
        PING,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(2, "look", {"id": "sales/\ud800"}),  # json.dumps escapes it: \ud800
        call(3, "locate", {"query": "exchange \ud83d\ude00 \udc00", "k": 1}),
        call(4, "look", {"id": "sales/exchange-policy", "fields": ["id"]}),
    ]
    proc = subprocess.Popen(
        [VINE, "serve", "-f", str(forest), "--readonly"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in requests))
        proc.stdin.flush()
        lines: list[str] = []
        reader = threading.Thread(
            target=lambda: lines.extend(proc.stdout.readline() for _ in range(4)),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(TIMEOUT)  # a reply per request: a dropped one never comes
        assert len(lines) == 4, "a request went unanswered"
        replies = {}
        for line in lines:
            reply = json.loads(line)
            replies[reply["id"]] = reply["result"].get("structuredContent")
        proc.stdin.close()
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert replies[2]["error"]["code"] == "E_NOT_FOUND"
    assert replies[3]["results"][0]["id"] == "sales/exchange-policy"
    assert replies[4] == {"id": "sales/exchange-policy"}
