"""An agent, a person at the command line and a person in the browser write one forest
at once: a writable ``vine serve`` (stdio and HTTP) runs while ``vine plant`` and a
``vine browse`` save commit, and the server's next write lands on top of both."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from textual.widgets import Input

from monkeyllm.lock import LOCK_NAME

from .forestkit import copy_sample, git, head, node, status
from .mcpkit import TIMEOUT, VINE, http_server, http_session, payload, stdio_session
from .tui.kit import opened_at, press

CLI_ENV = {**os.environ, "VINE_WATCH": "0"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "brain", git=True)


def note(node_id: str, title: str) -> dict[str, Any]:
    return node(
        node_id, "sales/_index", title, f"{title}, planted while others write the same forest."
    )


def cli(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VINE, *args, "-f", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env or CLI_ENV,
    )


@asynccontextmanager
async def served(root: Path, transport: str, log: Path) -> AsyncIterator[ClientSession]:
    if transport == "stdio":
        async with stdio_session("-f", str(root), errlog=log) as session:
            yield session
        return
    with http_server("-f", str(root), stderr=log) as url:
        async with http_session(url) as session:
            yield session


async def tool(session: ClientSession, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return payload(await session.call_tool(name, args))


async def browser_saves_summary(root: Path, node_id: str, summary: str) -> None:
    """A person edits a node's summary in ``vine browse`` and saves (Pilot)."""
    async with opened_at(root, node_id, "e") as (pilot, app):
        app.screen.query_one("#edit-summary", Input).value = summary
        await press(pilot, "ctrl+s")
        shown = [n.message for n in app._notifications]
        assert any("saved in commit" in m for m in shown), shown


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_server_the_cli_and_the_browser_all_commit(
    root: Path, tmp_path: Path, transport: str
) -> None:
    async def body() -> None:
        async with served(root, transport, tmp_path / "serve.log") as session:
            first = await tool(session, "plant", {"node": note("sales/agent-1", "Agent one")})
            assert first["commit"] == head(root)
            assert not (root / LOCK_NAME).exists()  # the server holds no lock between writes
            planted = await asyncio.to_thread(
                cli, root, "plant", json.dumps(note("sales/person-1", "Person one"))
            )
            assert planted.returncode == 0, planted.stderr
            by_cli = json.loads(planted.stdout)["commit"]
            await browser_saves_summary(
                root, "sales/exchange-policy", "Return windows per channel, edited in the browser."
            )
            by_browser = head(root)
            assert by_browser != by_cli
            # The server sees both and writes on top of them.
            seen = await tool(session, "look", {"id": "sales/person-1"})
            assert seen["title"] == "Person one"
            edited = await tool(session, "look", {"id": "sales/exchange-policy"})
            assert edited["summary"].endswith("edited in the browser.")
            last = await tool(
                session,
                "graft",
                {
                    "id": "sales/person-1",
                    "patch": {
                        "append_section": {"header": "Agent", "body": "Seen by the agent."},
                        "if_revision": seen["revision"],
                    },
                },
            )
            assert git(root, "rev-parse", f"{last['commit']}^").strip() == by_browser
        log = git(root, "log", "--format=%H %s", "-4").splitlines()
        assert [line.split()[0] for line in log] == [
            last["commit"],
            by_browser,
            by_cli,
            first["commit"],
        ]
        assert [line.split(" ", 1)[1] for line in log] == [
            "graft(sales/person-1): append 'Agent'",
            "graft(sales/exchange-policy): set summary",
            "plant(sales/person-1): Person one [source=manual]",
            "plant(sales/agent-1): Agent one [source=agent]",
        ]
        assert git(root, "rev-parse", f"{by_cli}^").strip() == first["commit"]
        assert git(root, "rev-parse", f"{by_browser}^").strip() == by_cli

    asyncio.run(asyncio.wait_for(body(), TIMEOUT * 4))
    assert status(root) == ""
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=root, capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
    checked = subprocess.run(
        [VINE, "validate", "-f", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=CLI_ENV,
    )
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert not (root / LOCK_NAME).exists()


# A real write that holds the lock for a while: the commit waits first.
SLOW = """
    import sys, time
    from monkeyllm import Vine
    from monkeyllm.writes import transaction
    def slow(step):
        if step == "before-commit":
            print("writing", flush=True)
            time.sleep(float(sys.argv[2]))
    transaction.FAULT = slow
    with Vine(sys.argv[1], lock="per-write") as vine:
        print(vine.plant({"id": "sales/slow", "type": "note", "parent": "sales/_index",
                          "title": "Slow", "summary": "A write that takes its time."})
              ["commit"], flush=True)
"""


def slow_writer(root: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SLOW), str(root), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    return proc


def test_the_cli_says_it_waits_for_a_write_in_progress(root: Path) -> None:
    proc = slow_writer(root, 1.5)
    try:
        done = cli(root, "plant", json.dumps(note("sales/waited", "Waited")))
    finally:
        theirs = proc.communicate(timeout=TIMEOUT)[0].strip()
    assert done.returncode == 0, done.stderr
    assert f"vine: waiting for the writer lock (pid {proc.pid} on" in done.stderr
    assert git(root, "rev-parse", json.loads(done.stdout)["commit"] + "^").strip() == theirs
    assert status(root) == ""


def test_the_cli_gives_up_after_vine_lock_timeout(root: Path) -> None:
    proc = slow_writer(root, 4)
    try:
        started = time.monotonic()
        done = cli(
            root,
            "plant",
            json.dumps(note("sales/late", "Late")),
            env={**CLI_ENV, "VINE_LOCK_TIMEOUT": "0.8"},
        )
        took = time.monotonic() - started
    finally:
        proc.communicate(timeout=TIMEOUT)
    assert done.returncode == 1
    err = json.loads(done.stdout)["error"]
    assert err["code"] == "E_LOCKED" and f"pid {proc.pid}" in err["message"]
    assert "has been writing" in err["message"] and "VINE_LOCK_TIMEOUT" in err["hint"]
    assert took < 4, took
    assert "sales/late" not in git(root, "log", "--format=%s")


def test_a_cli_write_beside_a_holder_for_life_names_it_at_once(root: Path) -> None:
    script = textwrap.dedent("""
        import sys
        from monkeyllm import Vine
        vine = Vine(sys.argv[1])
        print("holding", flush=True)
        sys.stdin.readline()
    """)
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        started = time.monotonic()
        done = cli(root, "plant", json.dumps(note("sales/refused", "Refused")))
        assert time.monotonic() - started < 4  # no 5 s wait for a holder for life
        assert done.returncode == 1
        err = json.loads(done.stdout)["error"]
        assert err["code"] == "E_LOCKED" and f"pid {holder.pid}" in err["message"]
        assert "python -c" in err["message"] and 'lock="per-write"' in err["hint"]
        assert "vine: waiting" not in done.stderr
        assert cli(root, "look", "sales/exchange-policy").returncode == 0
    finally:
        holder.communicate("\n", timeout=TIMEOUT)


def test_a_browser_edit_of_a_node_changed_meanwhile_is_refused(root: Path) -> None:
    async def body() -> None:
        async with opened_at(root, "sales/exchange-policy", "e") as (pilot, app):
            app.screen.query_one("#edit-summary", Input).value = "The person's summary."
            # Meanwhile someone else edits the node from the command line.
            done = await asyncio.to_thread(
                cli,
                root,
                "graft",
                "sales/exchange-policy",
                "--patch",
                json.dumps({"set_frontmatter": {"summary": "The other writer's summary."}}),
            )
            assert done.returncode == 0, done.stderr
            theirs = head(root)
            await press(pilot, "ctrl+s")
            shown = [n.message for n in app._notifications]
            assert any("Someone else changed this node" in m for m in shown), shown
            assert head(root) == theirs
            # The node is shown again as it now is.
            assert app.browse.digest["summary"] == "The other writer's summary."

    asyncio.run(asyncio.wait_for(body(), TIMEOUT * 2))
    text = (root / "sales/exchange-policy.md").read_text()
    assert "The other writer's summary." in text and "The person's summary." not in text
    assert status(root) == ""
