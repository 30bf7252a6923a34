"""Writes are safe: read-only Vines refuse them, one writer at a time, every failure
(an exception at any step, a SIGKILL at any moment) leaves the forest clean, and
readers never see half a write."""

from __future__ import annotations

import hashlib
import os
import random
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import tomllib
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import monkeyllm.writes.transaction as transaction
from monkeyllm import Vine
from monkeyllm.errors import VineError

from .forestkit import REPO, assert_error, assert_ok, files_of, git, head, meta_of, status

EM = "\u2014"
ALPHA_SUMMARY = "Alpha, the first letter of the kb."
DATA_SCHEMA = {"t": {"columns": {"id": "INTEGER", "v": "INTEGER"}, "primary_key": ["id"]}}


# -- helpers -------------------------------------------------------------------------


def stray_temps(root: Path) -> list[str]:
    """Temporary files a write may leave in the tree: ``.vine-*.tmp``, SQLite journals."""
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", "_derived"):
            continue
        if path.name.startswith(".vine-") or path.name.endswith((".tmp", "-journal")):
            out.append(rel.as_posix())
    return out


def journal(root: Path) -> Path:
    return root / "_derived" / "journal.json"


def build(root: Path) -> Path:
    """kb/_index with alpha (listed in the master's Landmarks too), gamma (linking to
    alpha in its frontmatter and its body) and a dataset."""
    with Vine.init(root, "Title") as v:
        assert_ok(v.plant({"id": "kb", "type": "branch", "parent": "_index",
                           "title": "Knowledge", "summary": "Letters and their uses."}))
        assert_ok(v.plant({"id": "kb/alpha", "type": "note", "parent": "kb", "title": "Alpha",
                           "summary": ALPHA_SUMMARY, "body": "# Alpha\n\n## Usage\n\nDaily."}))
        assert_ok(v.plant({"id": "kb/data", "type": "dataset", "parent": "kb",
                           "title": "Data", "summary": "A counter.", "schema": DATA_SCHEMA,
                           "rows": {"t": [[1, 0]]}}))
        assert_ok(v.plant({"id": "kb/gamma", "type": "note", "parent": "kb", "title": "Gamma",
                           "summary": "Gamma, which cites alpha.",
                           "links": [{"rel": "related-to", "target": "kb/alpha"}],
                           "body": "# Gamma\n\nAfter [[kb/alpha]], before nothing."}))
    index = root / "_index.md"
    index.write_text(index.read_text(encoding="utf-8").rstrip("\n")
                     + f"\n\n- [[kb/alpha]] {EM} {ALPHA_SUMMARY}\n", encoding="utf-8")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam",
        "landmark")
    return root


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("safety") / "f")


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "f"
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns("_derived", ".vine.lock"))
    return dest


@pytest.fixture
def vine(root: Path) -> Iterator[Vine]:
    with Vine(root) as v:
        yield v


@pytest.fixture
def fault() -> Iterator[Callable[[Callable[[str], None] | None], None]]:
    """Install a FAULT hook for the test; always reset afterwards."""
    def install(hook: Callable[[str], None] | None) -> None:
        transaction.FAULT = hook
    try:
        yield install
    finally:
        transaction.FAULT = None


# -- read-only Vines -----------------------------------------------------------------


def test_read_only_vine_refuses_every_write(vine: Vine) -> None:
    root = vine.root
    before, files = head(root), files_of(root)
    with Vine(root, writable=False) as reader:
        new = {"id": "kb/new", "type": "note", "parent": "kb", "title": "New",
               "summary": "A new note."}
        assert_error(reader.plant(new), "E_READONLY")
        assert_error(reader.plant(new, dry_run=True), "E_READONLY")
        assert_error(reader.plant({"id": "kb/alpha", "type": "note", "parent": "kb",
                                   "title": "A", "summary": "A."}, if_absent=True),
                     "E_READONLY")
        assert_error(reader.plant({"id": "kb/ds", "type": "dataset", "parent": "kb",
                                   "title": "D", "summary": "D.", "schema": DATA_SCHEMA}),
                     "E_READONLY")
        assert_error(reader.graft("kb/alpha", {"set_frontmatter": {"summary": "Changed."}}),
                     "E_READONLY")
        assert_error(reader.graft("kb/alpha", {"add_links": [
            {"rel": "related-to", "target": "kb/data"}]}), "E_READONLY")
        assert_error(reader.tend("kb/data", "UPDATE t SET v = 9 WHERE id = 1"), "E_READONLY")
        assert_error(reader.call("plant", {"node": new}), "E_READONLY")
        # Reads still work beside the writer.
        assert assert_ok(reader.look("kb/alpha"))["summary"] == ALPHA_SUMMARY
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert_error(vine.look("kb/new"), "E_NOT_FOUND")


def test_read_only_vine_without_a_writer(root: Path) -> None:
    before, files = head(root), files_of(root)
    with Vine(root, writable=False) as reader:
        assert_error(reader.tend("kb/data", "DELETE FROM t WHERE 1=1"), "E_READONLY")
        assert not (root / ".vine.lock").exists()
    assert head(root) == before and files_of(root) == files


# -- one writer ----------------------------------------------------------------------


def test_second_writer_in_process_is_locked(vine: Vine) -> None:
    with pytest.raises(VineError) as caught:
        Vine(vine.root)
    assert caught.value.code == "E_LOCKED"
    assert f"pid {os.getpid()}" in caught.value.message
    # Readers open freely beside it, and the writer keeps working.
    with Vine(vine.root, writable=False):
        pass
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"title": "Alpha 2"}}))


def test_lock_frees_on_close(root: Path) -> None:
    first = Vine(root)
    first.close()
    first.close()
    with Vine(root) as second:
        assert_ok(second.graft("kb/alpha", {"set_frontmatter": {"title": "Again"}}))


HOLDER = """
import sys
from monkeyllm import Vine
v = Vine(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()
"""


def test_second_writer_across_processes(root: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(VineError) as caught:
            Vine(root)
        assert caught.value.code == "E_LOCKED"
        assert f"pid {proc.pid}" in caught.value.message
        with Vine(root, writable=False) as reader:
            assert_ok(reader.look("kb/alpha"))
        # A holder killed outright leaves a lock that frees itself.
        proc.kill()
        proc.wait(timeout=10)
        with Vine(root) as writer:
            assert_ok(writer.graft("kb/alpha", {"set_frontmatter": {"title": "Mine now"}}))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


# -- fault injection -----------------------------------------------------------------


class Injected(RuntimeError):
    """An unexpected failure in the middle of a write."""


@dataclass(frozen=True)
class Kind:
    name: str
    run: Callable[[Vine], dict[str, Any]]
    steps: tuple[str, ...]
    planted: str | None = None


def _plant_note(v: Vine) -> dict[str, Any]:
    return v.plant({"id": "kb/new", "type": "note", "parent": "kb", "title": "New",
                    "summary": "A new note about faults.", "body": "Body."})


def _plant_branch(v: Vine) -> dict[str, Any]:
    return v.plant({"id": "kb/sub", "type": "branch", "parent": "kb", "title": "Sub",
                    "summary": "A sub-branch."})


def _plant_dataset(v: Vine) -> dict[str, Any]:
    return v.plant({"id": "kb/born", "type": "dataset", "parent": "kb", "title": "Born",
                    "summary": "A dataset born in a fault test.", "schema": DATA_SCHEMA,
                    "rows": {"t": [[1, 1], [2, 2]]}})


def _graft_summary(v: Vine) -> dict[str, Any]:
    return v.graft("kb/alpha", {"set_frontmatter": {"summary": "Alpha, grafted."}})


def _graft_links(v: Vine) -> dict[str, Any]:
    return v.graft("kb/alpha", {"add_links": [{"rel": "related-to", "target": "kb/data"}],
                                "append_section": {"header": "Notes", "body": "Linked."}})


def _tend(v: Vine) -> dict[str, Any]:
    return v.tend("kb/data", "UPDATE t SET v = v + 1 WHERE id = 1")


def _prune_leaf(v: Vine) -> dict[str, Any]:
    # alpha is listed by its parent and by the master's Landmarks: two indexes rewritten.
    return v.prune("kb/alpha", force=True)


def _prune_dataset(v: Vine) -> dict[str, Any]:
    return v.prune("kb/data")                 # its payload goes to the graveyard


def _transplant_leaf(v: Vine) -> dict[str, Any]:
    return v.transplant("kb/alpha", "alpha")  # another parent; the Landmarks entry follows


def _transplant_dataset(v: Vine) -> dict[str, Any]:
    return v.transplant("kb/data", "kb/counter")   # its payload is renamed beside it


PLANT_STEPS = ("after-node", "after-parent", "before-commit", "after-commit")
GRAFT_STEPS = ("after-node", "after-propagation", "before-commit", "after-commit")
MOVE_STEPS = ("after-node", "after-parent", "before-commit", "after-commit")
KINDS = {k.name: k for k in (
    Kind("plant-note", _plant_note, PLANT_STEPS, "kb/new"),
    Kind("plant-branch", _plant_branch, PLANT_STEPS, "kb/sub/_index"),
    Kind("plant-dataset", _plant_dataset, ("before-payload", "after-payload", *PLANT_STEPS),
         "kb/born"),
    Kind("graft-summary", _graft_summary, GRAFT_STEPS),
    Kind("graft-links", _graft_links, GRAFT_STEPS),
    Kind("tend", _tend, ("before-payload-commit", "after-node", "before-commit",
                         "after-commit")),
    Kind("prune-leaf", _prune_leaf, MOVE_STEPS),
    Kind("prune-dataset", _prune_dataset, ("after-payload", *MOVE_STEPS)),
    Kind("transplant-leaf", _transplant_leaf, MOVE_STEPS, "alpha"),
    Kind("transplant-dataset", _transplant_dataset, ("after-payload", *MOVE_STEPS),
         "kb/counter"),
)}
MATRIX = [(kind, step) for kind in KINDS for step in KINDS[kind].steps
          if step != "after-commit"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_step_is_reached(vine: Vine, fault: Callable[..., None], kind: str) -> None:
    reached: list[str] = []
    fault(reached.append)
    assert_ok(KINDS[kind].run(vine))
    wanted = list(KINDS[kind].steps)
    assert [s for s in reached if s in wanted] == wanted, reached


def _raise_at(step: str, fired: list[str],
              exc: Callable[[str], BaseException] = Injected) -> Callable[[str], None]:
    def hook(name: str) -> None:
        if name == step:
            fired.append(name)
            raise exc(f"injected at {name}")
    return hook


def _catalog_state(v: Vine, kind: Kind) -> dict[str, Any]:
    """What the catalog says about the nodes a write touches."""
    state: dict[str, Any] = {}
    if kind.planted:
        state["planted"] = v.look(kind.planted).get("error", {}).get("code", "present")
        listed = assert_ok(v.scan("kb", fields=["id"], limit=50))["nodes"]
        state["listed"] = kind.planted in {n["id"] for n in listed}
    alpha = assert_ok(v.look("kb/alpha"))
    state["summary"] = alpha["summary"]
    state["edges"] = sorted(e["target"] for e in alpha["edges_out"])
    children = assert_ok(v.look("kb/_index"))["children"]
    state["children"] = {c["id"]: c["summary"] for c in children}
    return state


def _agrees_with_files(v: Vine, root: Path) -> None:
    """Every cataloged id has its file, every file its catalog row, with its summary."""
    on_disk = {p.relative_to(root).as_posix()[:-3] for p in root.rglob("*.md")
               if p.relative_to(root).parts[0] not in (".git", "_derived")}
    listed: set[str] = set()
    after = ""
    while True:
        page = assert_ok(v.scan("_index", fields=["id", "summary"], recursive=True,
                                limit=50, after=after))
        for node in page["nodes"]:
            listed.add(node["id"])
            assert node["summary"] == meta_of(root / (node["id"] + ".md"))["summary"], node
        if not page.get("next"):
            break
        after = page["next"]
    assert listed | {"_index"} == on_disk
    assert v.problems() == []


@pytest.mark.parametrize("kind, step", MATRIX, ids=[f"{k}-{s}" for k, s in MATRIX])
def test_fault_rolls_back(vine: Vine, fault: Callable[..., None], kind: str,
                          step: str) -> None:
    spec = KINDS[kind]
    root = vine.root
    before, files = head(root), files_of(root)
    catalog = _catalog_state(vine, spec)
    fired: list[str] = []
    fault(_raise_at(step, fired))
    out = spec.run(vine)
    fault(None)
    assert fired == [step]
    assert_error(out, "E_INTERNAL")

    assert status(root) == ""
    assert head(root) == before
    assert not journal(root).exists()
    assert stray_temps(root) == []
    now = files_of(root)
    if kind == "tend" and step != "before-payload-commit":
        # The rows landed before the markdown: only the payload may differ (hash drift,
        # healed by the next tend).
        assert now.pop("kb/data.db") != files.pop("kb/data.db")
    assert now == files
    assert _catalog_state(vine, spec) == catalog
    with Vine(root, writable=False) as fresh:
        assert _catalog_state(fresh, spec) == catalog
        _agrees_with_files(fresh, root)

    # The same write then goes through.
    again = assert_ok(spec.run(vine))
    assert again["commit"] == head(root) != before
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert status(root) == "" and not journal(root).exists()
    if spec.planted:
        assert assert_ok(vine.look(spec.planted))["id"] == spec.planted
    if kind == "tend":
        meta = meta_of(root / "kb/data.md")
        assert meta["payload_hash"] == hashlib.sha256(
            (root / "kb/data.db").read_bytes()).hexdigest()
        expected = 1 if step == "before-payload-commit" else 2
        assert assert_ok(vine.query("kb/data", "SELECT v FROM t WHERE id = 1"))["rows"] == [
            [expected]]
    _agrees_with_files(vine, root)


@pytest.mark.parametrize("kind", list(KINDS))
def test_fault_after_the_commit_leaves_files_equal_to_head(
        vine: Vine, fault: Callable[..., None], kind: str) -> None:
    """The commit has landed when "after-commit" fires. Whatever the call answers, the
    working tree must then hold exactly HEAD's files, and the catalog must agree."""
    spec = KINDS[kind]
    root = vine.root
    before = head(root)
    fired: list[str] = []
    fault(_raise_at("after-commit", fired))
    out = spec.run(vine)
    fault(None)
    assert fired == ["after-commit"]
    landed = head(root) != before
    assert landed, "the fault fires after the commit"
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert status(root) == "", (out, status(root))
    assert not journal(root).exists()
    assert stray_temps(root) == []
    if spec.planted:
        assert assert_ok(vine.look(spec.planted))["id"] == spec.planted
    _agrees_with_files(vine, root)
    with Vine(root, writable=False) as fresh:
        _agrees_with_files(fresh, root)
    # The forest stays writable.
    assert_ok(vine.graft("kb/_index", {"set_frontmatter": {"title": "Still writable"}}))
    assert status(root) == ""


class InjectedVineError(VineError):
    code = "E_INJECTED"


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_vine_error_inside_a_write_keeps_its_code(
        vine: Vine, fault: Callable[..., None], kind: str) -> None:
    root = vine.root
    before, files = head(root), files_of(root)
    fired: list[str] = []
    step = KINDS[kind].steps[-2]          # the last step before the commit
    fault(_raise_at(step, fired, InjectedVineError))
    assert_error(KINDS[kind].run(vine), "E_INJECTED")
    assert fired == [step]
    assert head(root) == before and status(root) == ""
    if kind != "tend":
        assert files_of(root) == files


def test_an_interrupt_inside_a_write_rolls_back(vine: Vine,
                                                fault: Callable[..., None]) -> None:
    root = vine.root
    before, files = head(root), files_of(root)
    fired: list[str] = []
    fault(_raise_at("after-parent", fired, lambda m: KeyboardInterrupt(m)))
    with pytest.raises(KeyboardInterrupt):
        _plant_dataset(vine)
    fault(None)
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert not journal(root).exists()
    assert_ok(_plant_dataset(vine))      # the write mutex was released


@pytest.mark.parametrize("kind", ["plant-dataset", "prune-dataset", "transplant-dataset",
                                  "transplant-leaf", "prune-leaf"])
def test_journal_of_a_dead_writer_is_undone_on_open(root: Path, kind: str) -> None:
    """A half-write with its journal, as a killed writer leaves it: the next open puts
    the files back and the payloads where they were (HEAD did not move)."""
    before, files = head(root), files_of(root)
    spec = KINDS[kind]

    class Die(BaseException):
        pass

    def die(step: str) -> None:
        if step == "after-parent":
            raise Die(step)

    v = Vine(root)
    transaction.FAULT = die
    original = transaction.Transaction.rollback
    transaction.Transaction.rollback = lambda self: None   # type: ignore[method-assign]
    try:
        with pytest.raises(Die):
            spec.run(v)
    finally:
        transaction.Transaction.rollback = original         # type: ignore[method-assign]
        transaction.FAULT = None
        v.close()
    assert journal(root).exists() and status(root) != ""
    with Vine(root) as reopened:
        assert not journal(root).exists()
        assert status(root) == "" and head(root) == before and files_of(root) == files
        if spec.planted:
            assert_error(reopened.look(spec.planted), "E_NOT_FOUND")
        _agrees_with_files(reopened, root)
        assert_ok(spec.run(reopened))
        assert status(root) == ""


# -- SIGKILL at random moments -------------------------------------------------------

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
            report(vine.plant({"id": nid, "type": "note", "parent": "k", "title": nid,
                               "summary": f"Node {nid} as planted.",
                               "body": f"# {nid}\n\n## Log\n\nPlanted in round {round_no}."}))
            report(vine.graft(nid, {"set_frontmatter": {"summary": f"Node {nid} revised."},
                                    "append_section": {"header": "More", "body": "x"}}))
            moved = nid + "-m"
            report(vine.transplant(nid, moved))
            # The hub keeps one link per round, so it stays under the 50-link cap however
            # long a slow machine lets a child run.
            prev = f"k/n{round_no:02d}-{j - 1:03d}-m"
            report(vine.graft("k/hub", {"add_links": [{"rel": "related-to", "target": moved}],
                                        "remove_links": [{"rel": "related-to",
                                                          "target": prev}],
                                        "set_frontmatter": {"summary": f"Hub at {nid}."}}))
            report(vine.tend("k/data", "UPDATE t SET v = v + 1 WHERE id = 1"))
            if j % 2 == 1:
                report(vine.prune(prev, force=True))
            # A dataset is born, moved (its payload renamed), then pruned (its payload to
            # the graveyard), one step per round.
            born = f"k/d{round_no:02d}-{j - j % 3:03d}"
            if j % 3 == 0:
                report(vine.plant({"id": born, "type": "dataset",
                                   "parent": "k", "title": "D", "summary": "Born to die.",
                                   "schema": DATA_SCHEMA, "rows": {"t": [[1, j]]}}))
            elif j % 3 == 1:
                report(vine.transplant(born, born + "-m"))
            else:
                report(vine.prune(born + "-m"))
            if j % 4 == 1:
                report(vine.tend("k/data", f"INSERT INTO t VALUES "
                                          f"({100_000 + round_no * 1000 + j}, 0)"))
            j += 1
    except BaseException as exc:  # anything at all is reported to the parent
        say(f"ERR exception {exc!r}")
    finally:
        os._exit(0)


def _read_until_ready(rfd: int, timeout: float) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while b"ready\n" not in data and b"ERR" not in data:
        left = deadline - time.monotonic()
        assert left > 0, data
        ready, _, _ = select.select([rfd], [], [], left)
        if ready:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            data += chunk
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
        assert_ok(v.plant({"id": "k", "type": "branch", "parent": "_index", "title": "K",
                           "summary": "Written by writers that get killed."}))
        assert_ok(v.plant({"id": "k/hub", "type": "note", "parent": "k", "title": "Hub",
                           "summary": "The hub every round links from."}))
        assert_ok(v.plant({"id": "k/data", "type": "dataset", "parent": "k", "title": "Data",
                           "summary": "A counter every round bumps.", "schema": DATA_SCHEMA,
                           "rows": {"t": [[1, 0]]}}))
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
        lines = data.decode().split("\n")[:-1]          # complete lines only
        assert lines and lines[0] == "ready", lines
        assert not [line for line in lines if line.startswith("ERR")], lines
        shas = [line for line in lines[1:] if SHA.match(line)]
        assert len(shas) == len(lines) - 1, lines
        reported += shas
        kills_mid_write += journal(root).exists()

        with Vine(root) as vine:                        # recovers from the journal
            assert not journal(root).exists(), round_no
            assert status(root) == "", (round_no, status(root))
            assert stray_temps(root) == [], round_no
            locks = [p.relative_to(root).as_posix() for p in (root / ".git").rglob("*.lock")]
            assert locks == [], (round_no, locks)
            history = set(git(root, "log", "--format=%H").split())
            assert set(shas) <= history, round_no
            _agrees_with_files(vine, root)
            for path in root.glob("k/*.db"):          # no orphan payload
                assert (root / "k" / (path.stem + ".md")).exists(), (round_no, path)
            # Still writable: no stale git or engine lock left behind.
            assert_ok(vine.graft("k/hub", {"set_frontmatter": {"title": f"Hub {round_no}"}}))
            assert status(root) == ""
    assert len(reported) > KILL_ROUNDS, "the writers should have committed plenty"
    assert kills_mid_write > 0, "some kills should land inside a write"
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=root,
                          capture_output=True, text=True)
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


@pytest.mark.parametrize("lock", ["logs/HEAD.lock", "logs/refs/heads/main.lock",
                                  "index.lock", "refs/heads/main.lock"])
def test_a_stale_git_lock_never_splits_answer_and_history(root: Path, lock: str) -> None:
    """A writer killed inside git's ref, reflog or index update leaves its ``.lock``
    file. The next writes may refuse, but what they answer must match the history: a
    commit that lands is a success with a clean tree; a refusal leaves HEAD and the
    files as they were."""
    (root / ".git" / lock).write_bytes(b"")
    with Vine(root) as vine:
        for n in range(2):
            before, files = head(root), files_of(root)
            out = vine.plant({"id": f"kb/after-{n}", "type": "note", "parent": "kb",
                              "title": "After", "summary": "Planted beside a stale lock."})
            moved = head(root) != before
            if "error" in out:
                assert not moved, (out, "the commit landed but the call answered an error")
                assert files_of(root) == files and status(root) == ""
                assert_error(vine.look(f"kb/after-{n}"), "E_NOT_FOUND")
            else:
                assert moved and out["commit"] == head(root)
                assert status(root) == ""
                assert_ok(vine.look(f"kb/after-{n}"))


BIG_INSERT = ("INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM c "
              "WHERE x < 5000000) SELECT x, length(printf('%0200d', x)) FROM c")


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
        Vine(root).plant({"id": "kb/born", "type": "dataset", "parent": "kb",
                          "title": "Born", "summary": "Killed at birth.",
                          "schema": DATA_SCHEMA, "rows": {"t": rows}})

    _kill_when(_fork(work), lambda: db.exists() and db.stat().st_size > 1_000_000)
    with Vine(root) as vine:
        assert status(root) == "", status(root)
        assert stray_temps(root) == []
        assert head(root) == before and files_of(root) == files
        assert not journal(root).exists()
        assert_error(vine.look("kb/born"), "E_NOT_FOUND")
        assert_ok(_plant_dataset(vine))
        assert status(root) == ""


MOVES = [(kind, step) for kind in ("prune-leaf", "prune-dataset", "transplant-leaf",
                                   "transplant-dataset") for step in KINDS[kind].steps]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("kind, step", MOVES, ids=[f"{k}-{s}" for k, s in MOVES])
def test_sigkill_inside_a_prune_or_transplant(root: Path, tmp_path: Path, kind: str,
                                              step: str) -> None:
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
        for path in root.glob("kb/*.db"):               # no payload without its node
            assert (root / "kb" / (path.stem + ".md")).exists(), path


# -- reads during writes -------------------------------------------------------------


def test_reads_during_writes_never_see_half_a_node(vine: Vine) -> None:
    root = vine.root
    assert_ok(vine.plant({"id": "r", "type": "branch", "parent": "_index", "title": "Reads",
                          "summary": "Nodes planted while others read."}))
    stop = threading.Event()
    errors: list[str] = []
    counts = {"looks": 0, "passes": 0}

    def expected(node_id: str) -> tuple[str, str]:
        n = int(node_id.rsplit("-", 1)[1])
        return f"Reading check {n}", f"Reading check number {n}, planted under load."

    def check(reader: Vine) -> None:
        listed = reader.scan("r", fields=["id", "title", "summary"], limit=50)
        assert "error" not in listed, listed
        for node in listed["nodes"]:
            assert (node["title"], node["summary"]) == expected(node["id"]), node
            look = reader.look(node["id"])
            assert "error" not in look, look
            assert (look["title"], look["summary"]) == expected(node["id"]), look
            assert look["outline"] == ["Findings"], look
            counts["looks"] += 1
        found = reader.locate("reading check planted under load", k=10)
        assert "error" not in found, found
        for hit in found["results"]:
            if hit["id"].startswith("r/node-"):
                assert hit["summary"] == expected(hit["id"])[1], hit
        for path in (root / "r").glob("*.md"):
            meta = meta_of(path)
            assert meta["id"] == path.relative_to(root).as_posix()[:-3], meta
            if meta["type"] == "note":
                assert (meta["title"], meta["summary"]) == expected(meta["id"]), meta
        children = reader.look("r/_index")
        assert "error" not in children, children
        counts["passes"] += 1

    def loop(reader: Vine) -> None:
        while not stop.is_set():
            try:
                check(reader)
            except Exception:  # every failure is collected, with its traceback
                errors.append(traceback.format_exc())
                return

    with Vine(root, writable=False) as other:
        threads = [threading.Thread(target=loop, args=(r,)) for r in (vine, other)]
        for t in threads:
            t.start()
        try:
            for n in range(30):
                title, summary = f"Reading check {n}", (f"Reading check number {n}, "
                                                        "planted under load.")
                assert_ok(vine.plant({"id": f"r/node-{n}", "type": "note", "parent": "r",
                                      "title": title, "summary": summary,
                                      "body": f"# {title}\n\n## Findings\n\n" + "x " * 400}))
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)
        assert errors == []
        assert counts["passes"] > 2 and counts["looks"] > 0
        check(other)
        final = assert_ok(other.scan("r", fields=["id"], limit=50))
        assert len(final["nodes"]) == 30 and final["truncated"] is False


def test_writes_from_many_threads_serialize(vine: Vine) -> None:
    root = vine.root
    before = head(root)
    errors: list[str] = []

    def writer(t: int) -> None:
        for n in range(8):
            out = vine.plant({"id": f"kb/t{t}-{n}", "type": "note", "parent": "kb",
                              "title": f"T{t} {n}", "summary": f"Thread {t} node {n}."})
            if "error" in out:
                errors.append(repr(out))
            out = vine.graft("kb/alpha", {"add_links": [{"rel": "related-to",
                                                        "target": f"kb/t{t}-{n}"}]})
            if "error" in out:
                errors.append(repr(out))

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert status(root) == ""
    commits = git(root, "log", "--format=%H", f"{before}..HEAD").split()
    assert len(commits) == 64
    for sha in commits:
        files = set(git(root, "show", "--name-only", "--format=", sha).split())
        planted = {f for f in files if re.fullmatch(r"kb/t\d-\d\.md", f)}
        assert files == {"kb/alpha.md"} or (
            len(planted) == 1 and files == {"kb/_index.md", *planted}), files
    meta = meta_of(root / "kb" / "_index.md")
    assert meta["coverage"] == "35 bananas, 0 sub-branches"
    assert len(meta_of(root / "kb" / "alpha.md")["links"]) == 32
    _agrees_with_files(vine, root)


# -- files as the operator sees them -------------------------------------------------


def test_writes_keep_file_permissions(vine: Vine) -> None:
    """A write must not turn a readable forest into files only its writer can read."""
    root = vine.root
    alpha = root / "kb" / "alpha.md"
    os.chmod(alpha, 0o644)
    assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"title": "Alpha again"}}))
    assert stat.S_IMODE(alpha.stat().st_mode) == 0o644
    umask = os.umask(0)
    os.umask(umask)
    assert_ok(_plant_note(vine))
    assert stat.S_IMODE((root / "kb" / "new.md").stat().st_mode) == 0o666 & ~umask


def test_installed_package_ships_the_writes() -> None:
    """pyproject lists its packages by hand: every subpackage of vine/ must be in it, or a
    non-editable install cannot import monkeyllm (vine.py imports .writes)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = set(config["tool"]["setuptools"]["packages"])
    subpackages = {"monkeyllm" + "".join("." + p for p in d.relative_to(REPO / "vine").parts)
                   for d in (REPO / "vine").rglob("*") if d.is_dir()
                   and (d / "__init__.py").exists()} | {"monkeyllm"}
    assert subpackages <= packages, sorted(subpackages - packages)
