"""Writes survive a SIGKILL at any moment: a writer process killed at random points of
its writes leaves the forest clean, every write whole or absent, and the next writer
recovers."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import monkeyllm.writes.transaction as transaction
from bench.torture_kit import read_until
from monkeyllm import Vine

from ..forestkit import assert_error, assert_ok, files_of, git, head, node, status
from .kit import DATA_SCHEMA, KINDS, _agrees_with_files, _plant_dataset, journal, stray_temps

KILL_ROUNDS = 40
SHA = re.compile(r"^[0-9a-f]{40}$")


def _child(root: Path, wfd: int, round_no: int) -> None:
    """Runs in a forked child: open the forest and write until killed."""

    def say(text: str) -> None:
        os.write(wfd, (text + "\n").encode())

    def report(out: dict[str, Any]) -> None:
        if "error" in out:
            say(f"ERR {out['error'].get('code')} {out['error'].get('message')}")
        elif out.get("commit"):
            say(out["commit"])

    try:
        vine = Vine(root)
        say("ready")
        j = 0
        while True:
            nid = f"k/n{round_no:02d}-{j:03d}"
            report(
                vine.plant(
                    node(
                        nid,
                        "k",
                        nid,
                        f"Node {nid} as planted.",
                        body=f"# {nid}\n\n## Log\n\nPlanted in round {round_no}.",
                    )
                )
            )
            report(
                vine.graft(
                    nid,
                    {
                        "set_frontmatter": {"summary": f"Node {nid} revised."},
                        "append_section": {"header": "More", "body": "x"},
                    },
                )
            )
            moved = nid + "-m"
            report(vine.transplant(nid, moved))
            # The hub keeps one link per round, so it stays under the 50-link cap however
            # long a slow machine lets a child run.
            prev = f"k/n{round_no:02d}-{j - 1:03d}-m"
            report(
                vine.graft(
                    "k/hub",
                    {
                        "add_links": [{"rel": "related-to", "target": moved}],
                        "remove_links": [{"rel": "related-to", "target": prev}],
                        "set_frontmatter": {"summary": f"Hub at {nid}."},
                    },
                )
            )
            report(vine.tend("k/data", "UPDATE t SET v = v + 1 WHERE id = 1"))
            if j % 2 == 1:
                report(vine.prune(prev, force=True))
            # A dataset is born, moved (its payload renamed), then pruned (its payload to
            # the graveyard), one step per round.
            born = f"k/d{round_no:02d}-{j - j % 3:03d}"
            if j % 3 == 0:
                report(
                    vine.plant(
                        node(
                            born,
                            "k",
                            "D",
                            "Born to die.",
                            type="dataset",
                            schema=DATA_SCHEMA,
                            rows={"t": [[1, j]]},
                        )
                    )
                )
            elif j % 3 == 1:
                report(vine.transplant(born, born + "-m"))
            else:
                report(vine.prune(born + "-m"))
            if j % 4 == 1:
                report(
                    vine.tend(
                        "k/data", f"INSERT INTO t VALUES ({100_000 + round_no * 1000 + j}, 0)"
                    )
                )
            j += 1
    except BaseException as exc:  # anything at all is reported to the parent
        say(f"ERR exception {exc!r}")
    finally:
        os._exit(0)


def _read_until_ready(rfd: int, timeout: float) -> bytes:
    """What the child says until it is ready (or fails, or closes the pipe); the test fails
    when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    data = read_until(rfd, b"ready\n", timeout)
    assert b"ready\n" in data or b"ERR" in data or time.monotonic() < deadline, data
    return data


def _drain(rfd: int) -> bytes:
    data = b""
    while chunk := os.read(rfd, 65536):
        data += chunk
    return data


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_at_random_moments(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with Vine.init(root, "Kill test") as v:
        assert_ok(
            v.plant(node("k", "_index", "K", "Written by writers that get killed.", type="branch"))
        )
        assert_ok(v.plant(node("k/hub", "k", "Hub", "The hub every round links from.")))
        assert_ok(
            v.plant(
                node(
                    "k/data",
                    "k",
                    "Data",
                    "A counter every round bumps.",
                    type="dataset",
                    schema=DATA_SCHEMA,
                    rows={"t": [[1, 0]]},
                )
            )
        )
    rnd = random.Random(20260)
    reported: list[str] = []
    kills_mid_write = 0
    for round_no in range(KILL_ROUNDS):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(rfd)
            _child(root, wfd, round_no)
        os.close(wfd)
        try:
            data = _read_until_ready(rfd, timeout=20)
            time.sleep(rnd.uniform(0.0, 0.3))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            data += _drain(rfd)
        finally:
            os.close(rfd)
        lines = data.decode().split("\n")[:-1]  # complete lines only
        assert lines and lines[0] == "ready", lines
        assert not [line for line in lines if line.startswith("ERR")], lines
        shas = [line for line in lines[1:] if SHA.match(line)]
        assert len(shas) == len(lines) - 1, lines
        reported += shas
        kills_mid_write += journal(root).exists()

        with Vine(root) as vine:  # recovers from the journal
            assert not journal(root).exists(), round_no
            assert status(root) == "", (round_no, status(root))
            assert stray_temps(root) == [], round_no
            locks = [p.relative_to(root).as_posix() for p in (root / ".git").rglob("*.lock")]
            assert locks == [], (round_no, locks)
            history = set(git(root, "log", "--format=%H").split())
            assert set(shas) <= history, round_no
            _agrees_with_files(vine, root)
            for path in root.glob("k/*.db"):  # no orphan payload
                assert (root / "k" / (path.stem + ".md")).exists(), (round_no, path)
            # Still writable: no stale git or engine lock left behind.
            assert_ok(vine.graft("k/hub", {"set_frontmatter": {"title": f"Hub {round_no}"}}))
            assert status(root) == ""
    assert len(reported) > KILL_ROUNDS, "the writers should have committed plenty"
    assert kills_mid_write > 0, "some kills should land inside a write"
    fsck = subprocess.run(
        ["git", "fsck", "--full", "--strict"], cwd=root, capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    history = git(root, "log", "--format=%H").split()
    assert set(reported) <= set(history)
    assert len(history) == len(set(history))
    with Vine(root, writable=False) as reader:
        _agrees_with_files(reader, root)
        for path in root.glob("k/*.md"):
            node_id = path.relative_to(root).as_posix()[:-3]
            assert_ok(reader.look(node_id))
        # Payloads open and answer; drift from the recorded hash is allowed.
        for path in root.glob("k/*.db"):
            node_id = path.relative_to(root).as_posix()[:-3]
            assert_ok(reader.query(node_id, "SELECT COUNT(*) FROM t"))


def _kill_when(pid: int, ready: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "the child never got there"
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _fork(work: Callable[[], None]) -> int:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            work()
        finally:
            os._exit(0)
    return pid


@pytest.mark.parametrize(
    "lock", ["logs/HEAD.lock", "logs/refs/heads/main.lock", "index.lock", "refs/heads/main.lock"]
)
def test_a_stale_git_lock_never_splits_answer_and_history(root: Path, lock: str) -> None:
    """A writer killed inside git's ref, reflog or index update leaves its ``.lock``
    file. The next writes may refuse, but what they answer must match the history: a
    commit that lands is a success with a clean tree; a refusal leaves HEAD and the
    files as they were."""
    (root / ".git" / lock).write_bytes(b"")
    with Vine(root) as vine:
        for n in range(2):
            before, files = head(root), files_of(root)
            out = vine.plant(node(f"kb/after-{n}", "kb", "After", "Planted beside a stale lock."))
            moved = head(root) != before
            if "error" in out:
                assert not moved, (out, "the commit landed but the call answered an error")
                assert files_of(root) == files and status(root) == ""
                assert_error(vine.look(f"kb/after-{n}"), "E_NOT_FOUND")
            else:
                assert moved and out["commit"] == head(root)
                assert status(root) == ""
                assert_ok(vine.look(f"kb/after-{n}"))


BIG_INSERT = (
    "INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM c "
    "WHERE x < 5000000) SELECT x, length(printf('%0200d', x)) FROM c"
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_inside_a_long_tend(root: Path) -> None:
    """Killed while a big statement has spilled into the payload: the payload keeps a
    hot SQLite journal. After the next open the tree is clean and the payload answers
    queries with its rows as they were before the statement."""
    db = root / "kb" / "data.db"
    size = db.stat().st_size
    before = head(root)

    def work() -> None:
        Vine(root).tend("kb/data", BIG_INSERT)

    _kill_when(_fork(work), lambda: db.stat().st_size > size + 2_000_000)
    with Vine(root) as vine:
        out = assert_ok(vine.query("kb/data", "SELECT id, v FROM t"))
        assert out["rows"] == [[1, 0]]
        assert status(root) == "", status(root)
        assert stray_temps(root) == []
        assert head(root) == before and not journal(root).exists()
    with Vine(root, writable=False) as reader:
        assert assert_ok(reader.query("kb/data", "SELECT COUNT(*) FROM t"))["rows"] == [[1]]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_inside_a_dataset_birth(root: Path) -> None:
    """Killed while a newborn payload is loading its rows: the next open removes the
    payload and everything SQLite left beside it."""
    rows = [[i, i] for i in range(400_000)]
    db = root / "kb" / "born.db"
    before, files = head(root), files_of(root)

    def work() -> None:
        Vine(root).plant(
            node(
                "kb/born",
                "kb",
                "Born",
                "Killed at birth.",
                type="dataset",
                schema=DATA_SCHEMA,
                rows={"t": rows},
            )
        )

    _kill_when(_fork(work), lambda: db.exists() and db.stat().st_size > 1_000_000)
    with Vine(root) as vine:
        assert status(root) == "", status(root)
        assert stray_temps(root) == []
        assert head(root) == before and files_of(root) == files
        assert not journal(root).exists()
        assert_error(vine.look("kb/born"), "E_NOT_FOUND")
        assert_ok(_plant_dataset(vine))
        assert status(root) == ""


MOVES = [
    (kind, step)
    for kind in ("prune-leaf", "prune-dataset", "transplant-leaf", "transplant-dataset")
    for step in KINDS[kind].steps
]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("kind, step", MOVES, ids=[f"{k}-{s}" for k, s in MOVES])
def test_sigkill_inside_a_prune_or_transplant(
    root: Path, tmp_path: Path, kind: str, step: str
) -> None:
    """A writer killed at each step of a prune or a transplant (files removed or
    written, a payload in the graveyard or beside its new node): the next writable open
    leaves the forest exactly as it was, or, killed after the commit, exactly as HEAD
    says; either way the same write then goes through (or has)."""
    before, files = head(root), files_of(root)
    flag = tmp_path / "reached"

    def work() -> None:
        def hold(name: str) -> None:
            if name == step:
                flag.write_text(name)
                time.sleep(60)

        vine = Vine(root)
        transaction.FAULT = hold
        KINDS[kind].run(vine)

    _kill_when(_fork(work), flag.exists)
    with Vine(root) as vine:
        assert not journal(root).exists()
        assert status(root) == "", status(root)
        assert stray_temps(root) == []
        _agrees_with_files(vine, root)
        if step == "after-commit":
            assert git(root, "rev-parse", "HEAD~1").strip() == before
            subject = git(root, "log", "-1", "--format=%s").strip()
            assert subject.startswith(kind.split("-")[0] + "("), subject
        else:
            assert head(root) == before and files_of(root) == files
            assert_ok(KINDS[kind].run(vine))
            assert status(root) == ""
        for path in root.glob("kb/*.db"):  # no payload without its node
            assert (root / "kb" / (path.stem + ".md")).exists(), path
