"""Opening a forest: the lock, read-only mode, the context manager."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from monkeyllm import Vine, VineError
from monkeyllm.lock import LOCK_NAME

from .forestkit import assert_ok, make_forest


def test_context_manager_takes_and_releases_the_lock(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f")
    with Vine(root) as vine:
        assert vine.writable
        card = json.loads((root / LOCK_NAME).read_text())
        assert card["pid"] == os.getpid()
        assert set(card) == {"pid", "host", "since", "hold", "by"}
        assert card["hold"] == "while-open"
    assert not (root / LOCK_NAME).exists()


def test_second_writer_gets_e_locked(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f")
    with Vine(root):
        with pytest.raises(VineError) as info:
            Vine(root)
        assert info.value.code == "E_LOCKED"
        assert f"pid {os.getpid()}" in info.value.message


def test_read_only_never_locks_and_many_open_beside_a_writer(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f", {"a/one": ("note", {}, "# One\n")})
    with Vine(root) as writer:
        readers = [Vine(root, writable=False) for _ in range(3)]
        for reader in readers:
            assert_ok(reader.look("a/one"))
        assert_ok(writer.look("a/one"))
        for reader in readers:
            reader.close()


def test_orphaned_lock_of_a_dead_process_is_reclaimed(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f")
    script = textwrap.dedent(f"""
        import os
        from monkeyllm import Vine
        Vine({str(root)!r})
        os._exit(0)   # dies holding the lock, without releasing it
    """)
    subprocess.run([sys.executable, "-c", script], check=True)
    assert (root / LOCK_NAME).exists()
    with Vine(root) as vine:
        assert json.loads((root / LOCK_NAME).read_text())["pid"] == os.getpid()
        assert vine.writable


def test_live_writer_in_another_process_blocks(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f")
    script = textwrap.dedent(f"""
        import sys, time
        from monkeyllm import Vine
        v = Vine({str(root)!r})
        print("ready", flush=True)
        sys.stdin.readline()
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(VineError) as info:
            Vine(root)
        assert info.value.code == "E_LOCKED"
        assert str(proc.pid) in info.value.message
        with Vine(root, writable=False) as reader:
            assert_ok(reader.locate("forest"))
    finally:
        proc.communicate("\n", timeout=10)


def test_not_a_forest(tmp_path: Path) -> None:
    with pytest.raises(VineError) as info:
        Vine(tmp_path)
    assert info.value.code == "E_NOT_FOUND"


def test_closed_vine_answers_an_envelope(tmp_path: Path) -> None:
    vine = Vine(make_forest(tmp_path / "f"), writable=False)
    vine.close()
    vine.close()
    assert "error" in vine.locate("x")


def test_alpha_must_be_a_non_negative_number(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f")
    for bad in (-1, True, "0.3"):
        with pytest.raises(VineError):
            Vine(root, writable=False, alpha=bad)


def test_trace_files_are_pruned_to_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each session writes one trace file; one-shot processes in a loop must not pile
    them up without end: opening a new one keeps the newest TRACES_KEPT."""
    from monkeyllm import traces

    monkeypatch.setattr(traces, "TRACES_KEPT", 5)
    root = make_forest(tmp_path / "f")
    folder = root / "_derived" / "traces"
    folder.mkdir(parents=True)
    for i in range(8):
        old = folder / f"old{i}.jsonl"
        old.write_text("{}\n")
        os.utime(old, ns=(i * 10**9, i * 10**9))
    (folder / "notes.txt").write_text("not a trace")
    with Vine(root, writable=False) as vine:
        vine.look("_index")
        kept = sorted(p.name for p in folder.glob("*.jsonl"))
    assert len(kept) == 5
    assert f"{vine.session}.jsonl" in kept
    assert {"old4.jsonl", "old5.jsonl", "old6.jsonl", "old7.jsonl"} <= set(kept)
    assert (folder / "notes.txt").exists()


@pytest.mark.parametrize(
    "options",
    [
        {"alpha": float("nan")},
        {"alpha": float("inf")},
        {"half_life_days": 0},
        {"half_life_days": -5},
        {"half_life_days": float("nan")},
        {"half_life_days": "30"},
        {"writable": "no"},
        {"writable": None},
        {"watch": "no"},
        {"on_lock_wait": 5},
        {"embedder": "http://127.0.0.1:9/v1"},
        {"embedder": {"kind": "bogus"}},
    ],
    ids=repr,
)
def test_a_bad_option_is_refused_before_the_lock_is_taken(
    tmp_path: Path, options: dict[str, object]
) -> None:
    """A NaN alpha made every score NaN (not JSON), a NaN half-life failed every call
    with E_INTERNAL, writable="no" opened for writing; a bad embedder raised only after
    the lock was taken, and left it held by the process until it exited."""
    root = make_forest(tmp_path / "f")
    with pytest.raises(VineError) as refused:
        Vine(root, **options)  # type: ignore[arg-type]
    assert refused.value.code == "E_SCHEMA"
    assert not (root / LOCK_NAME).exists()
    with Vine(root, lock_timeout=0) as vine:  # the lock is free again
        assert_ok(vine.locate("test forest"))


@pytest.mark.parametrize("path", [None, 3, b"/tmp", ["f"]], ids=repr)
def test_a_path_that_is_not_a_path_is_e_schema(path: object) -> None:
    with pytest.raises(VineError) as refused:
        Vine(path, writable=False)  # type: ignore[arg-type]
    assert refused.value.code == "E_SCHEMA"
    assert "path must be a str or a pathlib.Path" in str(refused.value)


def test_a_branchs_folder_is_not_opened_as_a_forest(tmp_path: Path) -> None:
    """Vine("brain/sales") opened the branch as a forest of its own: ids without their
    prefix (exchange-policy), no edges, and a _derived/ catalog written into it."""
    root = make_forest(tmp_path / "f", {"sales/pipeline/deal": ("note", {}, "# Deal\n")})
    for folder, branch in ((root / "sales", "sales/_index"), (root / "sales" / "pipeline", None)):
        branch = branch or "sales/pipeline/_index"
        with pytest.raises(VineError) as refused:
            Vine(folder, writable=False)
        err = refused.value.envelope()["error"]
        assert err["code"] == "E_NOT_FOUND"
        assert f"is the branch {branch} of a forest" in err["message"]
        assert f"open the forest's root, {root}" in err["hint"]
        assert not (folder / "_derived").exists()
    with Vine(root, writable=False) as vine:
        assert_ok(vine.look("sales/pipeline/deal"))


@pytest.mark.parametrize("options", [{"writeable": False}, {"alpha": float("nan")}], ids=repr)
def test_init_and_copy_check_their_options_before_creating_anything(
    tmp_path: Path, options: dict[str, object]
) -> None:
    """A mistyped option raised only once the forest was made, so the corrected retry
    answered "a forest already exists"."""
    source = make_forest(tmp_path / "f")
    for made, create in (
        (tmp_path / "new", lambda: Vine.init(tmp_path / "new", "New", **options)),
        (tmp_path / "copy", lambda: Vine.copy(source, tmp_path / "copy", **options)),
    ):
        with pytest.raises(VineError) as refused:
            create()
        assert refused.value.code == "E_SCHEMA"
        assert not made.exists()
    with Vine.init(tmp_path / "new", "New", writable=False) as vine:
        assert not vine.writable
    with pytest.raises(VineError) as refused:
        Vine.init(None, "New")  # type: ignore[arg-type]
    assert refused.value.code == "E_SCHEMA"


def test_init_where_a_file_stands_names_the_path_and_what_to_do(tmp_path: Path) -> None:
    """A regular file raised a bare FileExistsError from mkdir (NotADirectoryError when
    it stood above the path)."""
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    for path, where in ((target, "it is"), (target / "brain", f"{target} is")):
        with pytest.raises(VineError) as refused:
            Vine.init(path, "New")
        err = refused.value.envelope()["error"]
        assert err["code"] == "E_SCHEMA"
        assert err["message"] == f"cannot create a forest at {path}: {where} a file, not a folder"
        assert err["path"] == str(target)
        assert "the file is left as it is" in err["hint"]
    assert target.read_text() == "mine\n"


def test_an_embedder_that_is_not_one_is_e_schema_everywhere(tmp_path: Path) -> None:
    """canopy_build("x") and bind_embedder(5) failed with AttributeError from inside."""
    with Vine(make_forest(tmp_path / "f"), writable=False) as vine:
        for use in (lambda: vine.canopy_build("x"), lambda: vine.bind_embedder(5)):
            with pytest.raises(VineError) as refused:
                use()  # type: ignore[arg-type]
            assert refused.value.code == "E_SCHEMA" and "embedder must be" in str(refused.value)


def test_the_methods_beside_the_calls_refuse_wrong_types_as_e_schema(tmp_path: Path) -> None:
    """visibility(None), reinforce(None), near(id, keep=5), trailers(None),
    canopy_build(progress=5) and ingest(vine, None) raised bare TypeErrors (and
    AttributeErrors) from inside; a string where a list belongs was taken character by
    character. Each is E_SCHEMA naming the argument, and nothing is written."""
    from monkeyllm.ingest import ingest

    root = make_forest(tmp_path / "f")
    note = tmp_path / "note.md"
    note.write_text("A note to ingest. It says little.\n", encoding="utf-8")
    with Vine(root) as vine:
        before = vine.head()
        uses = {
            "allow": lambda: vine.visibility(None),
            "deny": lambda: vine.visibility(deny="sales"),
            "ids": lambda: vine.reinforce(None),
            "keep": lambda: vine.near("x", keep=5),
            "pairs": lambda: vine.trailers(None),
            "progress": lambda: vine.canopy_build(progress=5),
            "rebuild": lambda: vine.canopy_build(rebuild="yes"),
            "sources": lambda: ingest(vine, None),
            "max_bytes": lambda: ingest(vine, [note], max_bytes="1k"),
            "prefer_source": lambda: ingest(vine, [note], prefer_source=None),
        }
        for name, use in uses.items():
            with pytest.raises(VineError) as refused:
                with use():  # the context managers refuse as they are entered
                    pass
            assert refused.value.code == "E_SCHEMA", name
            assert refused.value.message.startswith(f"{name} must be "), refused.value.message
        with pytest.raises(VineError) as refused:
            ingest(vine, str(note))
        assert "Wrap one in a list" in str(refused.value.hint)
        assert vine.head() == before
