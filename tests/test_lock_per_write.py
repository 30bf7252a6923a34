"""Writers that share a forest: ``Vine(lock="per-write")``, waiting for a write in
progress, a holder for life answering E_LOCKED at once, recovery when the lock is
taken, the latest state under the lock, and edits refused when their node changed."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine, VineError
from monkeyllm.lock import LOCK_NAME, timeout_from_env

from .forestkit import assert_error, assert_ok, copy_sample, git, head, status

NOTE = {
    "type": "note",
    "parent": "sales/_index",
    "title": "Shared",
    "summary": "Planted while another process writes the same forest.",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_sample(tmp_path / "brain", git=True)


def note(node_id: str) -> dict[str, Any]:
    return {"id": node_id, **NOTE}


def parent_of(root: Path, sha: str) -> str:
    return git(root, "rev-parse", f"{sha}^").strip()


class Child:
    """A Python process running ``script`` on the forest, read line by line."""

    def __init__(self, root: Path, script: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script), str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def line(self) -> str:
        assert self.proc.stdout is not None
        got = self.proc.stdout.readline()
        assert got, self.proc.stderr.read() if self.proc.stderr else ""
        return got.strip()

    def say(self, text: str = "") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def finish(self) -> str:
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode in (0, 1), err
        return out

    @property
    def pid(self) -> int:
        return self.proc.pid


def meanwhile(root: Path, lines: str) -> str:
    """Run ``lines`` of Python in another process, as the body of
    ``with Vine(root, lock="per-write") as v:``; what it printed, stripped."""
    script = f"from monkeyllm import Vine\nwith Vine({str(root)!r}, lock='per-write') as v:\n"
    body = textwrap.indent(textwrap.dedent(lines), "    ")
    return subprocess.run(
        [sys.executable, "-c", script + body], capture_output=True, text=True, check=True
    ).stdout.strip()


@contextlib.contextmanager
def writing(root: Path, seconds: str) -> Iterator[Child]:
    """A process whose write holds the forest for ``seconds``, once it says it is writing;
    it is finished on the way out."""
    child = Child(root, SLOW_WRITER)
    try:
        child.say(seconds)
        assert child.line() == "writing"
        yield child
    finally:
        child.finish()


# A real write that holds the lock for a while: the commit waits ``seconds`` first.
SLOW_WRITER = """
    import json, sys, time
    from monkeyllm import Vine
    from monkeyllm.writes import transaction
    root, seconds = sys.argv[1], float(sys.stdin.readline())
    def slow(step):
        if step == "before-commit":
            print("writing", flush=True)
            time.sleep(seconds)
    transaction.FAULT = slow
    with Vine(root, lock="per-write") as vine:
        out = vine.plant({"id": "sales/slow", "type": "note", "parent": "sales/_index",
                          "title": "Slow", "summary": "A write that takes its time."})
    print(json.dumps(out), flush=True)
"""

# A process that holds the forest open for writing until told to stop.
HOLDER = """
    import sys
    from monkeyllm import Vine
    vine = Vine(sys.argv[1])
    print("holding", flush=True)
    sys.stdin.readline()
    vine.close()
"""


def test_per_write_takes_the_lock_only_inside_each_write(root: Path) -> None:
    with Vine(root, lock="per-write") as vine:
        assert vine.lock == "per-write" and vine.writable
        assert not (root / LOCK_NAME).exists()
        assert_ok(vine.look("sales/exchange-policy"))
        assert not (root / LOCK_NAME).exists()  # reads never take it
        seen: dict[str, Any] = {}

        def peek(step: str) -> None:
            if step == "before-commit":
                seen.update(json.loads((root / LOCK_NAME).read_text()))

        from monkeyllm.writes import transaction

        transaction.FAULT = peek
        try:
            out = assert_ok(vine.plant(note("sales/shared-1")))
        finally:
            transaction.FAULT = None
        assert out["commit"] == head(root)
        assert seen["pid"] == os.getpid() and seen["hold"] == "per-write"
        assert not (root / LOCK_NAME).exists()
        # Between its writes another process's plain Vine(path) gets the forest.
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                textwrap.dedent(f"""
            from monkeyllm import Vine
            with Vine({str(root)!r}) as v:
                print(v.plant({note("sales/shared-2")!r})["commit"])
        """),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip() == head(root)
        # ... and this Vine's next write commits on top of it.
        again = assert_ok(vine.plant(note("sales/shared-3")))
        assert parent_of(root, again["commit"]) == done.stdout.strip()
    assert status(root) == ""


def test_a_write_waits_for_a_write_in_progress_then_commits_on_top(root: Path) -> None:
    with writing(root, "1.2") as child:
        card = json.loads((root / LOCK_NAME).read_text())
        assert card["pid"] == child.pid and card["hold"] == "per-write"
        waited: list[dict[str, Any]] = []
        with Vine(root, lock="per-write", on_lock_wait=waited.append) as vine:
            started = time.monotonic()
            out = assert_ok(vine.plant(note("sales/after-slow")))
            took = time.monotonic() - started
        theirs = json.loads(child.line())
    assert took >= 0.5, took
    assert [w["pid"] for w in waited] == [child.pid]  # told once, naming the holder
    assert parent_of(root, out["commit"]) == theirs["commit"]
    assert status(root) == ""


def test_a_plain_vine_waits_at_open_for_a_write_in_progress(root: Path) -> None:
    with writing(root, "0.8") as child:
        with Vine(root) as vine:  # while-open: waits its turn
            out = assert_ok(vine.plant(note("sales/after-open")))
        theirs = json.loads(child.line())
    assert parent_of(root, out["commit"]) == theirs["commit"]


def test_a_write_longer_than_the_timeout_answers_e_locked_naming_it(root: Path) -> None:
    with writing(root, "4") as child:
        with Vine(root, lock="per-write", lock_timeout=0.6) as vine:
            started = time.monotonic()
            err = assert_error(vine.plant(note("sales/too-soon")), "E_LOCKED")
            took = time.monotonic() - started
            assert 0.5 <= took < 3, took
            assert f"pid {child.pid}" in err["message"] and "has been writing" in err["message"]
            assert "VINE_LOCK_TIMEOUT" in err["hint"]
            assert err["holder"]["pid"] == child.pid
            assert err["holder"]["hold"] == "per-write"
            assert vine.look("sales/too-soon")["error"]["code"] == "E_NOT_FOUND"
        child.line()
    assert status(root) == ""


def test_a_holder_for_life_answers_e_locked_at_once_naming_it(root: Path) -> None:
    child = Child(root, HOLDER)
    try:
        assert child.line() == "holding"
        with Vine(root, lock="per-write", lock_timeout=5) as vine:
            started = time.monotonic()
            err = assert_error(vine.plant(note("sales/refused")), "E_LOCKED")
            assert time.monotonic() - started < 1.0  # not the 5 s timeout
            assert f"pid {child.pid}" in err["message"]
            assert "python -c" in err["message"]  # what kind of process
            assert "as long as it has the forest open" in err["message"]
            assert 'lock="per-write"' in err["hint"] and "Stop that process" in err["hint"]
            assert_ok(vine.look("sales/exchange-policy"))  # reads go on
            before = head(root)
            child.say()
            child.finish()
            out = assert_ok(vine.plant(note("sales/refused")))  # free again: it commits
            assert parent_of(root, out["commit"]) == before
    finally:
        if child.proc.poll() is None:
            child.say()
            child.finish()


def test_the_timeout_comes_from_the_keyword_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VINE_LOCK_TIMEOUT", raising=False)
    assert timeout_from_env(None) == 5.0
    assert timeout_from_env(0.25) == 0.25
    monkeypatch.setenv("VINE_LOCK_TIMEOUT", "12")
    assert timeout_from_env(None) == 12.0
    assert timeout_from_env(1) == 1.0
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv("VINE_LOCK_TIMEOUT", bad)
        with pytest.raises(VineError) as info:
            timeout_from_env(None)
        assert info.value.code == "E_SCHEMA" and "VINE_LOCK_TIMEOUT" in info.value.message
    monkeypatch.delenv("VINE_LOCK_TIMEOUT")
    for bad in (-1, True, "3", float("inf")):
        with pytest.raises(VineError):
            timeout_from_env(bad)  # type: ignore[arg-type]


def test_an_unknown_lock_mode_is_refused(root: Path) -> None:
    with pytest.raises(VineError) as info:
        Vine(root, lock="sometimes")  # type: ignore[arg-type]
    assert info.value.code == "E_SCHEMA" and "per-write" in info.value.message
    assert not (root / LOCK_NAME).exists()


# A writer killed in the middle of a write: the node file is written, nothing committed.
KILLED_MID_WRITE = """
    import os, sys
    from monkeyllm import Vine
    from monkeyllm.writes import transaction
    def die(step):
        if step == "after-node":
            os._exit(9)
    vine = Vine(sys.argv[1], lock="per-write")
    transaction.FAULT = die
    vine.graft("sales/exchange-policy", {"set_frontmatter": {"summary": "Half written."}})
"""


def test_a_writer_killed_mid_write_is_recovered_by_the_next_writer(root: Path) -> None:
    before = head(root)
    text = (root / "sales/exchange-policy.md").read_text()
    with Vine(root, lock="per-write") as vine:  # open before the crash
        assert_ok(vine.look("sales/exchange-policy"))
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(KILLED_MID_WRITE), str(root)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 9, done.stderr
        assert (root / "_derived" / "journal.json").exists()
        assert "Half written." in (root / "sales/exchange-policy.md").read_text()
        out = assert_ok(vine.plant(note("sales/after-crash")))
        assert parent_of(root, out["commit"]) == before
        assert not (root / "_derived" / "journal.json").exists()
        assert (root / "sales/exchange-policy.md").read_text() == text
        assert "Half written." not in vine.look("sales/exchange-policy")["summary"]
    assert status(root) == ""
    assert "Half written." not in git(root, "log", "-p", "-1")


def test_a_reader_opened_after_the_crash_settles_it_when_the_lock_is_free(root: Path) -> None:
    text = (root / "sales/exchange-policy.md").read_text()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_MID_WRITE), str(root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 9, done.stderr
    with Vine(root, lock="per-write") as vine:
        assert not (root / "_derived" / "journal.json").exists()
        assert (root / "sales/exchange-policy.md").read_text() == text
        assert "Half written." not in vine.look("sales/exchange-policy")["summary"]
    assert status(root) == ""


def test_each_write_starts_from_what_another_process_committed(root: Path) -> None:
    with Vine(root, lock="per-write") as vine:
        old = assert_ok(vine.look("sales/exchange-policy"))["summary"]
        assert_ok(vine.locate("exchange policy"))
        theirs = meanwhile(
            root,
            f"""
            v.plant({note("sales/theirs")!r})
            v.graft("sales/exchange-policy",
                    {{"set_frontmatter": {{"summary": "Changed by the other process."}}}})
            print(v.head())
        """,
        )
        assert theirs == head(root)
        # A node the other process planted is there for this one's next write ...
        out = assert_ok(
            vine.graft(
                "sales/theirs",
                {"append_section": {"header": "Seen", "body": "Grafted by the long-lived writer."}},
            )
        )
        assert parent_of(root, out["commit"]) == theirs
        # ... which kept the other process's edit of the index and of the summary.
        digest = assert_ok(vine.look("sales/exchange-policy"))
        assert digest["summary"] == "Changed by the other process." != old
        index = (root / "sales/_index.md").read_text()
        assert "sales/theirs" in index and "Changed by the other process." in index
    assert status(root) == ""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "monkeyllm.commands",
            "validate",
            "-f",
            str(root),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-2000:]


def test_a_graft_of_a_node_changed_since_it_was_read_is_refused(root: Path) -> None:
    with Vine(root, lock="per-write") as agent:
        seen = assert_ok(agent.pick("sales/exchange-policy", section="Deadlines"))
        assert seen["revision"] == assert_ok(agent.look("sales/exchange-policy"))["revision"]
        theirs = meanwhile(
            root,
            """
            print(v.graft("sales/exchange-policy", {"replace_section": {
                "header": "Deadlines", "body": "Fourteen days, says the person."}})
                  ["commit"])
        """,
        )
        after = (root / "sales/exchange-policy.md").read_bytes()
        err = assert_error(
            agent.graft(
                "sales/exchange-policy",
                {
                    "replace_section": {
                        "header": "Deadlines",
                        "body": "Thirty days, says the agent.",
                    },
                    "if_revision": seen["revision"],
                },
            ),
            "E_CONFLICT",
        )
        assert seen["revision"] in err["message"] and err["revision"] != seen["revision"]
        assert "pick(id)" in err["hint"]
        assert (root / "sales/exchange-policy.md").read_bytes() == after
        assert head(root) == theirs
        # Read again, edit again: the graft with the new revision lands.
        fresh = assert_ok(agent.pick("sales/exchange-policy", section="Deadlines"))
        assert fresh["revision"] == err["revision"] and "Fourteen" in fresh["body"]
        out = assert_ok(
            agent.graft(
                "sales/exchange-policy",
                {
                    "replace_section": {"header": "Deadlines", "body": "Fourteen days, confirmed."},
                    "if_revision": fresh["revision"],
                },
            )
        )
        assert parent_of(root, out["commit"]) == theirs
        assert out["revision"] == assert_ok(agent.look("sales/exchange-policy"))["revision"]
        # A revision is the file's git blob id, cut short: a longer prefix works too.
        blob = git(root, "rev-parse", "HEAD:sales/exchange-policy.md").strip()
        assert blob.startswith(out["revision"])
        assert_ok(
            agent.graft(
                "sales/exchange-policy",
                {"set_frontmatter": {"tags": ["policy"]}, "if_revision": blob.upper()},
            )
        )
    assert status(root) == ""


@pytest.mark.parametrize("value", [42, "", "xyz", "abc", "g" * 12, "a" * 41])
def test_a_malformed_revision_is_refused_before_any_write(root: Path, value: Any) -> None:
    before = head(root)
    with Vine(root, lock="per-write") as vine:
        err = assert_error(
            vine.graft(
                "sales/exchange-policy", {"set_frontmatter": {"tags": ["x"]}, "if_revision": value}
            ),
            "E_SCHEMA",
        )
        assert "if_revision" in err["message"]
    assert head(root) == before


def test_a_patch_of_if_revision_alone_checks_and_changes_nothing(root: Path) -> None:
    before = head(root)
    with Vine(root, lock="per-write") as vine:
        rev = assert_ok(vine.look("sales/exchange-policy"))["revision"]
        out = assert_ok(vine.graft("sales/exchange-policy", {"if_revision": rev}))
        assert out["commit"] is None and out["revision"] == rev
        assert_error(vine.graft("sales/exchange-policy", {"if_revision": "abcdef1"}), "E_CONFLICT")
    assert head(root) == before and status(root) == ""


def test_a_graft_of_a_node_pruned_or_moved_meanwhile_says_so(root: Path) -> None:
    with Vine(root, lock="per-write") as agent:
        rev = assert_ok(agent.look("sales/exchange-policy-2025"))["revision"]
        assert_ok(agent.look("people/ana-ribeiro"))
        meanwhile(
            root,
            """
            assert "commit" in v.prune("sales/exchange-policy-2025", force=True)
            assert "commit" in v.transplant("people/ana-ribeiro", "sales/ana-ribeiro")
        """,
        )
        before = head(root)
        assert_error(
            agent.graft(
                "sales/exchange-policy-2025",
                {"set_frontmatter": {"tags": ["x"]}, "if_revision": rev},
            ),
            "E_NOT_FOUND",
        )
        moved = assert_error(
            agent.graft("people/ana-ribeiro", {"set_frontmatter": {"tags": ["x"]}}), "E_MOVED"
        )
        assert moved["moved_to"] == "sales/ana-ribeiro"
        assert head(root) == before
    assert status(root) == ""


def test_a_write_waits_a_moment_for_a_git_command_to_let_go(root: Path) -> None:
    import threading

    lock = root / ".git" / "index.lock"
    with Vine(root, lock="per-write") as vine:
        # Held from here (as `git status` holds it for a moment): the clock starts with
        # the hold, after the forest is open, however long opening took.
        lock.write_text("")
        started = time.monotonic()
        threading.Timer(0.3, lock.unlink).start()
        out = assert_ok(vine.plant(note("sales/after-git")))
        assert time.monotonic() - started >= 0.25
    assert out["commit"] == head(root) and status(root) == ""


# Another process that writes now and then, each write allowed to wait one second.
NOW_AND_THEN = """
    import json, sys, time
    from monkeyllm import Vine
    out = []
    with Vine(sys.argv[1], lock="per-write", lock_timeout=1.0) as v:
        for i in range(20):
            r = v.plant({"id": f"sales/now-{i}", "type": "note", "parent": "sales/_index",
                         "title": "Now", "summary": "Written now and then."})
            out.append(r.get("error", {}).get("code", "ok"))
            time.sleep(0.05)
    print(json.dumps(out))
"""


def test_a_process_that_keeps_writing_lets_another_process_write_between(root: Path) -> None:
    """Three threads of one Vine write back to back (as a busy server's do): without
    giving way, the next of its own writes would take the lock each time it lets go,
    and a writer in another process would wait out its timeout."""
    import threading

    stop = time.monotonic() + 60
    with Vine(root, lock="per-write") as busy:

        def hog(t: int) -> None:
            j = 0
            while time.monotonic() < stop:
                busy.plant(note(f"sales/busy-{t}-{j}"))
                j += 1

        threads = [threading.Thread(target=hog, args=(t,)) for t in range(3)]
        for thread in threads:
            thread.start()
        try:
            done = subprocess.run(
                [sys.executable, "-c", textwrap.dedent(NOW_AND_THEN), str(root)],
                capture_output=True,
                text=True,
                timeout=120,
            )
        finally:
            stop = 0
            for thread in threads:
                thread.join()
    assert json.loads(done.stdout) == ["ok"] * 20, done.stdout + done.stderr
    assert status(root) == ""


def test_a_lock_just_let_go_waits_for_a_writer_that_queued(root: Path) -> None:
    import threading

    from monkeyllm.lock import ForestLock

    lock = ForestLock(root, "per-write")
    lock.acquire()
    lock.release()  # this process just wrote
    marker = root / "_derived" / "lock-waiters" / f"{os.getppid()}-1"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()  # a live process waits
    started = time.monotonic()
    threading.Timer(0.03, marker.unlink).start()
    lock.acquire()
    assert time.monotonic() - started >= 0.025
    lock.release()
    # A waiter that died is not waited for, and its file goes.
    dead = root / "_derived" / "lock-waiters" / "999999999-1"
    dead.touch()
    started = time.monotonic()
    lock.acquire()
    # (well under the 50 ms a live waiter is given, even on a busy machine)
    assert time.monotonic() - started < 0.04 and not dead.exists()
    lock.release()
