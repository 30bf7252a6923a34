"""`vine watch`: while a keeper runs, one-shot processes skip their walk and still see
every edit made before they asked; without one (or after it stops) they walk."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from monkeyllm import Vine, keeper

from .forestkit import copy_sample
from .mcpkit import VINE

pytestmark = pytest.mark.skipif(not keeper.AVAILABLE, reason="keepers need Linux")


def _edit_summary(forest: Path, node_id: str, summary: str) -> None:
    path = forest / f"{node_id}.md"
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("\nsummary: ")
    path.write_text(head + f"\nsummary: {summary}\n" + rest.split("\n", 1)[1], encoding="utf-8")


@contextlib.contextmanager
def serving(forest: Path) -> Iterator[keeper.Keeper]:
    """A keeper for ``forest`` answering from a thread of this process."""
    with Vine(forest, writable=False) as holder:
        served = holder.keeper()
        thread = threading.Thread(target=served.serve_forever, daemon=True)
        thread.start()
        try:
            yield served
        finally:
            served.close()
            thread.join(5)


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[Path]:
    forest = copy_sample(tmp_path / "brain")
    with serving(forest):
        yield forest


def test_a_one_shot_reader_asks_the_keeper_and_sees_every_edit(kept: Path) -> None:
    _edit_summary(kept, "sales/exchange-policy", "Edited by hand a moment ago.")
    (kept / "sales" / "fresh-note.md").write_text(
        "---\nid: sales/fresh-note\ntype: note\ntitle: Fresh note\nsummary: Written "
        "by hand, never indexed.\ncreated: '2026-11-30'\nupdated: '2026-11-30'\n---\n\n"
        "# Fresh\n",
        encoding="utf-8",
    )
    (kept / "sales" / "price-list.md").unlink()
    with Vine(kept, writable=False) as vine:
        look = vine.look("sales/exchange-policy", fields=["summary"])
        assert vine._forest.catalog.last_sync == "keeper"
        listed = {n["id"] for n in vine.scan("sales")["nodes"]}
    assert look["summary"] == "Edited by hand a moment ago."
    assert "sales/fresh-note" in listed and "sales/price-list" not in listed


def test_the_command_line_uses_a_running_vine_watch(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    log = tmp_path / "watch.log"
    with (
        open(log, "w") as err,
        subprocess.Popen(
            [VINE, "watch", "-f", str(forest)], stdout=subprocess.DEVNULL, stderr=err
        ) as watcher,
    ):
        try:
            deadline = time.monotonic() + 30
            while "keeping" not in log.read_text():
                assert watcher.poll() is None, log.read_text()
                assert time.monotonic() < deadline
                time.sleep(0.05)
            second = subprocess.run(
                [VINE, "watch", "-f", str(forest)], capture_output=True, text=True, timeout=30
            )
            for n in range(3):
                _edit_summary(forest, "sales/exchange-policy", f"Edit number {n}.")
                got = subprocess.run(
                    [
                        VINE,
                        "look",
                        "sales/exchange-policy",
                        "-f",
                        str(forest),
                        "--fields",
                        "summary",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                assert json.loads(got.stdout)["summary"] == f"Edit number {n}.", got.stderr
        finally:
            watcher.terminate()
            watcher.wait(timeout=30)
    assert second.returncode == 1 and "E_LOCKED" in second.stderr
    text = log.read_text()
    assert re.search(r"stopped, after [3-9]\d* answers", text), text
    assert "Traceback" not in text


def test_without_a_keeper_the_reader_walks(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    with Vine(forest, writable=False) as holder:
        served = holder.keeper()
        served.close()  # stopped before anyone asked
    _edit_summary(forest, "sales/exchange-policy", "Seen by a walk.")
    with Vine(forest, writable=False) as vine:
        assert (
            vine.look("sales/exchange-policy", fields=["summary"])["summary"] == "Seen by a walk."
        )
        assert vine._forest.catalog.last_sync == "walk"


def test_a_keeper_answers_for_its_own_forest_only(kept: Path, tmp_path: Path) -> None:
    other = copy_sample(tmp_path / "other")
    assert keeper.address(kept) != keeper.address(other)
    assert keeper.ask(kept) and not keeper.ask(other)  # nobody keeps the other
    # Two forests may share a socket name: the question names the forest whole, and a
    # keeper answers only its own.
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(keeper.address(kept))
        ident = keeper.identity(other)
        assert ident is not None
        sock.sendall(b"sync " + ident.hex().encode() + b"\n")
        assert sock.recv(16) == b""
    with Vine(other, writable=False) as vine:
        vine.look("_index")
        assert vine._forest.catalog.last_sync == "walk"


def test_a_second_keeper_is_refused(kept: Path) -> None:
    with Vine(kept, writable=False) as vine:
        from monkeyllm.errors import Locked

        with pytest.raises(Locked):
            vine.keeper()


def test_a_read_that_walked_starts_a_keeper_that_stops_itself(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    env = {**os.environ, "VINE_WATCH": "1"}

    def look() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [VINE, "look", "sales/exchange-policy", "-f", str(forest), "--fields", "summary"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )

    first = look()
    assert first.returncode == 0 and first.stderr == "", first.stderr
    try:
        deadline = time.monotonic() + 60
        while not keeper.ask(forest):  # the keeper it started is up
            assert time.monotonic() < deadline
            time.sleep(0.1)
        _edit_summary(forest, "sales/exchange-policy", "Seen through the keeper.")
        assert json.loads(look().stdout)["summary"] == "Seen through the keeper."
        with Vine(forest, writable=False) as vine:
            vine.look("_index")
            assert vine.freshness == "keeper"
    finally:
        stopped = subprocess.run(
            [VINE, "watch", "--stop", "-f", str(forest)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    assert stopped.returncode == 0 and "stopped the keeper" in stopped.stderr
    deadline = time.monotonic() + 30
    while keeper.ask(forest):  # gone within a poll or two
        assert time.monotonic() < deadline
        time.sleep(0.1)
    off = subprocess.run(
        [VINE, "look", "_index", "-f", str(forest)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "VINE_WATCH": "0"},
    )
    assert off.returncode == 0
    time.sleep(1.0)
    assert not keeper.ask(forest)  # VINE_WATCH=0 started none


def test_a_keeper_stops_when_its_forest_goes_away(tmp_path: Path) -> None:
    import shutil

    forest = copy_sample(tmp_path / "brain")
    with subprocess.Popen(
        [VINE, "watch", "-f", str(forest), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            deadline = time.monotonic() + 60
            while not keeper.ask(forest):
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
            # At once after its first answer: the keeper knows its folder before it
            # answers anyone.
            shutil.rmtree(forest)
            assert proc.wait(timeout=30) == 0
            assert proc.stderr is not None and proc.stderr.read() == b""
        finally:
            if proc.poll() is None:  # a keeper that stays fails the test, not the suite
                proc.kill()


def test_a_keeper_with_idle_stops_when_nobody_asks(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    with subprocess.Popen(
        [VINE, "watch", "-f", str(forest), "--idle", "1.5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        deadline = time.monotonic() + 60
        while not keeper.ask(forest):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        assert proc.wait(timeout=30) == 0
        assert proc.stderr is not None
        said = proc.stderr.read()
        assert re.search(
            r"stopped: nobody asked for 1\.5 s \(--idle\), after [1-9]\d* answers?", said
        )


def test_no_keeper_for_a_forest_other_machines_change(tmp_path: Path) -> None:
    """inotify does not see edits made over NFS, SMB or FUSE from elsewhere: there every
    call keeps walking."""
    real = os.path.realpath(tmp_path)
    mounts = (
        "/dev/sda1 / ext4 rw 0 0\n"
        f"server:/export {real} nfs4 rw 0 0\n"
        f"/dev/sdb1 {real}/local\\040disk ext4 rw 0 0\n"
    )
    assert keeper.filesystem(tmp_path / "brain", mounts) == "nfs4"
    assert not keeper.watchable(tmp_path / "brain", mounts)
    assert keeper.filesystem(tmp_path / "local disk" / "brain", mounts) == "ext4"
    assert keeper.watchable(tmp_path / "local disk" / "brain", mounts)
    assert not keeper.watchable(tmp_path, f"me@host:/ {real} fuse.sshfs rw 0 0\n")
    assert keeper.watchable(Path("/"), "/dev/sda1 / ext4 rw 0 0\n")


def test_a_keeper_whose_catalog_file_is_replaced_stops_answering(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    with serving(forest) as served:
        assert keeper.ask(forest)
        catalog = forest / "_derived" / "catalog.db"
        replaced = catalog.with_name("catalog.db.new")
        replaced.write_bytes(catalog.read_bytes())
        os.replace(replaced, catalog)  # as a rebuild of a damaged one does
        assert not keeper.ask(forest)
        assert served.stopped.is_set()
        with Vine(forest, writable=False) as vine:
            vine.look("_index")
            assert vine.freshness == "walk"
