"""``vine serve`` over stdio as a shell script drives it: requests written at once and the
input closed right after (``printf ... | vine serve``, ``vine serve < requests.jsonl``).
Every request is answered before the server exits, calls still running included, and a
request the SDK would drop (a malformed one, a batch, a line that is not JSON) gets an
error answer instead of silence, so nobody waits for it."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .forestkit import copy_sample
from .mcpkit import PING, TIMEOUT, VINE

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(ident: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def _serve(forest: Path, lines: list[str], tmp_path: Path, how: str) -> tuple[list[Any], float]:
    """Every line, then the end of input; the replies and how long the server took."""
    text = "".join(line + "\n" for line in lines)
    source = tmp_path / "requests.jsonl"
    source.write_text(text, encoding="utf-8")
    started = time.monotonic()
    with open(source, encoding="utf-8") as requests:
        # Both ends pipes: the event loop's own transport; input from a file: the SDK's
        # threads.
        given: dict[str, Any] = {"input": text} if how == "pipe" else {"stdin": requests}
        done = subprocess.run(
            [VINE, "serve", "-f", str(forest), "--readonly"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            **given,
        )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()], took


@pytest.mark.parametrize("how", ["pipe", "file"])
def test_every_request_is_answered_when_the_input_ends_right_after(
    tmp_path: Path, how: str
) -> None:
    forest = copy_sample(tmp_path / "brain")
    requests = [
        PING,
        INITIALIZED,
        _call(2, "harvest", {"query": "exchange policy deadlines", "k": 3}),
        _call(3, "locate", {"query": "warehouse"}),
        _call(4, "look", {"id": "sales/exchange-policy"}),
        {"jsonrpc": "2.0", "id": "five", "method": "tools/list"},
    ]
    replies, _ = _serve(forest, [json.dumps(r) for r in requests], tmp_path, how)
    by_id = {reply["id"]: reply for reply in replies}
    assert set(by_id) == {1, 2, 3, 4, "five"}, replies
    for ident in (2, 3, 4):
        assert "error" not in by_id[ident], by_id[ident]
        assert by_id[ident]["result"].get("isError") is not True
    assert by_id[2]["result"]["structuredContent"]["results"]
    assert by_id[4]["result"]["structuredContent"]["id"] == "sales/exchange-policy"
    assert any(t["name"] == "locate" for t in by_id["five"]["result"]["tools"])


@pytest.mark.parametrize("how", ["pipe", "file"])
def test_a_request_the_sdk_would_drop_is_answered_and_nobody_waits(
    tmp_path: Path, how: str
) -> None:
    forest = copy_sample(tmp_path / "brain")
    lines = [
        json.dumps(PING),
        json.dumps(INITIALIZED),
        # params must be an object: the SDK's parser refuses the line and answers nothing.
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": "look"}),
        # A batch (no longer in the protocol): the same.
        json.dumps([{"jsonrpc": "2.0", "id": 10, "method": "ping"}]),
        # Not JSON, and JSON cut short: a parse error, with id null (JSON-RPC 2.0).
        "this is not JSON",
        '{"jsonrpc": "2.0", "id": 12, "method": "ping"',
        json.dumps(_call(11, "locate", {"query": "warehouse"})),
    ]
    replies, took = _serve(forest, lines, tmp_path, how)
    by_id = {reply["id"]: reply for reply in replies}
    assert set(by_id) == {1, 9, 10, 11, None}, replies
    unparsed = [reply for reply in replies if reply["id"] is None]
    assert len(unparsed) == 2 and all(r["error"]["code"] == -32700 for r in unparsed)
    assert by_id[9]["error"]["code"] == -32600 and "params" in by_id[9]["error"]["message"]
    assert by_id[10]["error"]["code"] == -32600 and "batch" in by_id[10]["error"]["message"]
    assert by_id[11]["result"]["structuredContent"]["results"]
    # The end of input waited for no answer that was never coming.
    assert took < TIMEOUT / 2


@pytest.mark.parametrize("closed", ["<&-", ">&-"])
def test_a_closed_standard_input_or_output_is_a_usage_error(tmp_path: Path, closed: str) -> None:
    # Closed at start, descriptor 0 or 1 would be whatever the process opened next.
    forest = copy_sample(tmp_path / "brain")
    done = subprocess.run(
        ["sh", "-c", f'"$0" serve -f "$1" {closed}', VINE, str(forest)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2, done.stderr
    assert "standard input or output is closed" in done.stderr
    assert "Traceback" not in done.stderr
