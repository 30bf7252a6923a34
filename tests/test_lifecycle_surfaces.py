"""prune, transplant, history, calendar and coverage from the command line (JSON when
piped, rich on a terminal, prune asking first on a terminal) and over `vine serve`'s
MCP tools, on real git forests."""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .forestkit import copy_sample, files_of, git, head, status
from .mcpkit import VINE, stdio_session
from .test_cli_render import render


def vine(forest: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VINE, *args, "-f", str(forest)], capture_output=True, text=True, input=stdin, timeout=120
    )


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "brain", git=True)


def test_the_commands_piped(forest: Path) -> None:
    before, files = head(forest), files_of(forest)
    refused = vine(forest, "prune", "sales/exchange-policy")
    assert refused.returncode == 1 and refused.stderr.startswith("vine: E_ANCHORED")
    error = json.loads(refused.stdout)["error"]
    assert error["anchor_count"] == 5 and len(error["anchors"]) == 5
    assert head(forest) == before and files_of(forest) == files  # piped: never asks
    moved = vine(forest, "transplant", "sales/price-list", "sales/pipeline/price-list")
    assert moved.returncode == 0, moved.stderr
    out = json.loads(moved.stdout)
    assert out["new_id"] == "sales/pipeline/price-list" and out["backlinks_rewritten"] >= 3
    gone = vine(forest, "look", "sales/price-list")
    assert gone.returncode == 1
    assert json.loads(gone.stdout)["error"]["moved_to"] == "sales/pipeline/price-list"
    history = json.loads(
        vine(forest, "history", "sales/pipeline/price-list", "--limit", "5").stdout
    )
    assert [e["action"] for e in history["entries"]] == ["transplant", "plant"]
    weeks = json.loads(
        vine(forest, "calendar", "--granularity", "week", "--scope", "meetings").stdout
    )
    assert weeks["buckets"] and all("-W" in b["period"] for b in weeks["buckets"])
    covered = json.loads(vine(forest, "coverage", "--scope", "sales").stdout)
    assert covered["total"] == sum(covered["types"].values())
    forced = vine(forest, "prune", "sales/exchange-policy", "--force")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["backlinks_removed"] == 5
    assert status(forest) == ""
    dry = vine(forest, "prune", "sales/discount-ladder", "--force", "--dry-run")
    assert json.loads(dry.stdout)["dry_run"] is True and status(forest) == ""


def _on_a_terminal(forest: Path, args: list[str], answer: str | None) -> tuple[int, str]:
    """Run ``vine ARGS`` with a pseudo-terminal as its standard streams, answering
    ``answer`` once it asks; its exit status and what it printed."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.environ["COLUMNS"] = "120"
        os.execv(VINE, [VINE, *args, "-f", str(forest)])
    out = b""
    answered = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal: it has ended
                break
            if not chunk:
                break
            out += chunk
        if answer is not None and not answered and b"[y/N]" in out:
            os.write(fd, answer.encode() + b"\r")
            answered = True
    else:
        os.kill(pid, 9)
    _, code = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(code), out.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_prune_on_a_terminal_shows_what_goes_and_asks(forest: Path) -> None:
    before, files = head(forest), files_of(forest)
    code, text = _on_a_terminal(forest, ["prune", "sales/exchange-policy", "--force"], "n")
    assert code == 1, text
    assert "this will remove" in text and "people/ana-ribeiro (mentioned-in)" in text
    assert "5 links pointing at it are dropped" in text and "nothing was changed" in text
    assert head(forest) == before and files_of(forest) == files
    code, text = _on_a_terminal(forest, ["prune", "sales/exchange-policy", "--force"], "y")
    assert code == 0, text
    assert "pruned sales/exchange-policy" in text
    assert git(forest, "log", "-1", "--format=%s").strip() == "prune(sales/exchange-policy)"
    # --yes skips the question; a refusal is shown without asking.
    code, text = _on_a_terminal(forest, ["prune", "sales/price-list"], None)
    assert code == 1 and "E_ANCHORED" in text and "[y/N]" not in text
    code, text = _on_a_terminal(forest, ["prune", "sales/pipeline/2026/q2-forecast", "--yes"], None)
    assert code == 0 and "[y/N]" not in text and "pruned" in text, text
    assert status(forest) == ""


@pytest.mark.parametrize(
    "target, command",
    [
        ("sales/_index", "vine scan sales/_index --recursive"),
        ("clients/casa-bela", "vine prune clients/casa-bela --force"),
    ],
)
def test_a_refused_prune_hints_the_command_for_this_node(
    forest: Path, target: str, command: str
) -> None:
    """The hint of a refused prune is a command line to run as printed, naming the
    node (no ID or PARENT_ID left to fill in), and it runs."""
    refused = vine(forest, "prune", target)
    assert refused.returncode == 1 and refused.stderr.startswith("vine: E_ANCHORED")
    assert command in json.loads(refused.stdout)["error"]["hint"]
    ran = vine(forest, *shlex.split(command)[1:])
    assert ran.returncode == 0, ran.stderr


def test_a_folder_given_as_the_new_id_names_the_command_to_run(forest: Path) -> None:
    """`vine transplant ID sales/` (a shell's completion of the folder) is refused, and
    the hint is a command line that runs: NEW_ID by position, never --new-id."""
    before, files = head(forest), files_of(forest)
    refused = vine(forest, "transplant", "sales/price-list", "finance/")
    assert refused.returncode == 1 and refused.stderr.startswith("vine: E_SCHEMA")
    hint = json.loads(refused.stdout)["error"]["hint"]
    assert "vine transplant sales/price-list finance/price-list" in hint
    assert head(forest) == before and files_of(forest) == files
    moved = vine(forest, "transplant", "sales/price-list", "finance/price-list")
    assert moved.returncode == 0, moved.stderr


def test_rich_layouts() -> None:
    history = render(
        "history",
        {
            "id": "sales/x",
            "truncated": False,
            "entries": [
                {
                    "commit": "a" * 40,
                    "at": "2026-05-04T10:11:12+00:00",
                    "action": "graft",
                    "message": "graft(sales/x): set title",
                    "by": "ana",
                },
                {
                    "commit": "b" * 40,
                    "at": "2026-04-01T09:00:00+00:00",
                    "action": "plant",
                    "message": "plant(sales/x): X [source=agent]",
                },
            ],
        },
    )
    assert "history of sales/x: 2 commits" in history
    assert "2026-05-04 10:11:12" in history and "ana" in history and "aaaaaaaaaaaa" in history
    calendar = render(
        "calendar",
        {
            "date_field": "created",
            "granularity": "month",
            "undated": 3,
            "truncated": False,
            "range": {"first": "2026-01-02", "last": "2026-02-20", "nodes": 6},
            "buckets": [
                {"period": "2026-02", "since": "2026-02", "until": "2026-02", "nodes": 4},
                {"period": "2026-01", "since": "2026-01", "until": "2026-01", "nodes": 2},
            ],
        },
    )
    lines = {
        line.split("│")[1].strip(): line
        for line in calendar.splitlines()
        if line.count("│") > 2 and "20" in line
    }
    assert lines["2026-02"].count("█") == 2 * lines["2026-01"].count("█") == 40
    assert "6 nodes, 2026-01-02 to 2026-02-20" in calendar and "undated  3" in calendar
    coverage = render(
        "coverage",
        {
            "roots": [
                {
                    "id": "sales/_index",
                    "title": "Sales",
                    "nodes": 12,
                    "branches": 3,
                    "first": "2025-02-10",
                    "last": "2026-04-10",
                    "origin": "https://x.example/docs/",
                    "without_origin": 2,
                }
            ],
            "total": 20,
            "types": {"note": 15, "branch": 5},
            "sources": {"agent": 20},
            "undated": 0,
            "system": 1,
            "date_field": "created",
            "truncated": True,
        },
    )
    assert "sales/_index" in coverage and "https://x.example/docs/" in coverage
    assert "2 without one" in coverage and "note 15, branch 5" in coverage
    assert "truncated" in coverage
    moved = render(
        "transplant",
        {
            "id": "a/x",
            "new_id": "b/x",
            "commit": "c" * 40,
            "backlinks_rewritten": 3,
            "trail": ["_index", "b/_index"],
        },
    )
    assert "transplanted a/x → b/x" in moved and "backlinks_rewritten" in moved


def _payload(result: Any) -> dict[str, Any]:
    return json.loads(result.content[0].text)


def test_the_mcp_tools(forest: Path) -> None:
    import anyio

    async def body() -> dict[str, Any]:
        async with stdio_session("--forest", str(forest)) as session:
            refused = await session.call_tool("prune", {"id": "sales/exchange-policy"})
            moved = await session.call_tool(
                "transplant", {"id": "sales/price-list", "new_id": "sales/pipeline/price-list"}
            )
            old = await session.call_tool("look", {"id": "sales/price-list"})
            history = await session.call_tool("history", {"id": "sales/pipeline/price-list"})
            calendar = await session.call_tool("calendar", {"granularity": "year"})
            coverage = await session.call_tool("coverage", {})
            return {
                "refused": refused,
                "moved": moved,
                "old": old,
                "history": history,
                "calendar": calendar,
                "coverage": coverage,
            }

    got = anyio.run(body)
    assert got["refused"].is_error
    assert _payload(got["refused"])["error"]["code"] == "E_ANCHORED"
    assert not got["moved"].is_error and _payload(got["moved"])["commit"] == head(forest)
    assert got["old"].is_error
    assert _payload(got["old"])["error"]["moved_to"] == "sales/pipeline/price-list"
    assert _payload(got["history"])["entries"][0]["action"] == "transplant"
    assert sum(b["nodes"] for b in _payload(got["calendar"])["buckets"]) > 50
    assert _payload(got["coverage"])["roots"]
    assert status(forest) == ""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_dry_run_on_a_forest_without_git_says_the_write_cannot_commit(tmp_path: Path) -> None:
    """A dry run checks what the commit needs too: on a forest that is not its own git
    repository it answers the E_SCHEMA the write would, and a prune on a terminal says
    so before it asks, not after a yes."""
    forest = copy_sample(tmp_path / "brain")
    files = files_of(forest)
    for args in (
        ["prune", "products/aurora-kettle", "--dry-run"],
        ["transplant", "products/aurora-kettle", "sales/aurora-kettle", "--dry-run"],
    ):
        done = vine(forest, *args)
        assert done.returncode == 1, done.stdout
        assert "not a git repository of its own" in json.loads(done.stdout)["error"]["message"]
    code, text = _on_a_terminal(forest, ["prune", "products/aurora-kettle"], "y")
    assert code == 1 and "not a git repository" in text and "[y/N]" not in text, text
    assert files_of(forest) == files
