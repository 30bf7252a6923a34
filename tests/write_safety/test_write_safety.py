"""Writes are safe: read-only Vines refuse them, one writer at a time, every failure
(an exception at any step, a SIGKILL at any moment) leaves the forest clean, and
readers never see half a write."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import monkeyllm.writes.transaction as transaction
from monkeyllm import Vine
from monkeyllm.errors import VineError

from ..forestkit import assert_error, assert_ok, files_of, git, head, meta_of, node, status
from .kit import (
    ALPHA_SUMMARY,
    DATA_SCHEMA,
    KINDS,
    Kind,
    _agrees_with_files,
    _plant_dataset,
    journal,
    stray_temps,
)

# -- helpers -------------------------------------------------------------------------


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
        new = node("kb/new", "kb", "New", "A new note.")
        assert_error(reader.plant(new), "E_READONLY")
        assert_error(reader.plant(new, dry_run=True), "E_READONLY")
        assert_error(
            reader.plant(
                {"id": "kb/alpha", "type": "note", "parent": "kb", "title": "A", "summary": "A."},
                if_absent=True,
            ),
            "E_READONLY",
        )
        assert_error(
            reader.plant(node("kb/ds", "kb", "D", "D.", type="dataset", schema=DATA_SCHEMA)),
            "E_READONLY",
        )
        assert_error(
            reader.graft("kb/alpha", {"set_frontmatter": {"summary": "Changed."}}), "E_READONLY"
        )
        assert_error(
            reader.graft("kb/alpha", {"add_links": [{"rel": "related-to", "target": "kb/data"}]}),
            "E_READONLY",
        )
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
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
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


MATRIX = [(kind, step) for kind in KINDS for step in KINDS[kind].steps if step != "after-commit"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_step_is_reached(vine: Vine, fault: Callable[..., None], kind: str) -> None:
    reached: list[str] = []
    fault(reached.append)
    assert_ok(KINDS[kind].run(vine))
    wanted = list(KINDS[kind].steps)
    assert [s for s in reached if s in wanted] == wanted, reached


def _raise_at(
    step: str, fired: list[str], exc: Callable[[str], BaseException] = Injected
) -> Callable[[str], None]:
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


@pytest.mark.parametrize("kind, step", MATRIX, ids=[f"{k}-{s}" for k, s in MATRIX])
def test_fault_rolls_back(vine: Vine, fault: Callable[..., None], kind: str, step: str) -> None:
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
        assert (
            meta["payload_hash"] == hashlib.sha256((root / "kb/data.db").read_bytes()).hexdigest()
        )
        expected = 1 if step == "before-payload-commit" else 2
        assert assert_ok(vine.query("kb/data", "SELECT v FROM t WHERE id = 1"))["rows"] == [
            [expected]
        ]
    _agrees_with_files(vine, root)


@pytest.mark.parametrize("kind", list(KINDS))
def test_fault_after_the_commit_leaves_files_equal_to_head(
    vine: Vine, fault: Callable[..., None], kind: str
) -> None:
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
    vine: Vine, fault: Callable[..., None], kind: str
) -> None:
    root = vine.root
    before, files = head(root), files_of(root)
    fired: list[str] = []
    step = KINDS[kind].steps[-2]  # the last step before the commit
    fault(_raise_at(step, fired, InjectedVineError))
    assert_error(KINDS[kind].run(vine), "E_INJECTED")
    assert fired == [step]
    assert head(root) == before and status(root) == ""
    if kind != "tend":
        assert files_of(root) == files


def test_an_interrupt_inside_a_write_rolls_back(vine: Vine, fault: Callable[..., None]) -> None:
    root = vine.root
    before, files = head(root), files_of(root)
    fired: list[str] = []
    fault(_raise_at("after-parent", fired, lambda m: KeyboardInterrupt(m)))
    with pytest.raises(KeyboardInterrupt):
        _plant_dataset(vine)
    fault(None)
    assert head(root) == before and files_of(root) == files and status(root) == ""
    assert not journal(root).exists()
    assert_ok(_plant_dataset(vine))  # the write mutex was released


@pytest.mark.parametrize(
    "kind",
    ["plant-dataset", "prune-dataset", "transplant-dataset", "transplant-leaf", "prune-leaf"],
)
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
    transaction.Transaction.rollback = lambda self: None  # type: ignore[method-assign]
    try:
        with pytest.raises(Die):
            spec.run(v)
    finally:
        transaction.Transaction.rollback = original  # type: ignore[method-assign]
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
