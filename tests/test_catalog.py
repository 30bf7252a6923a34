"""The catalog: built when missing, true to the files, robust to bad files."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import assert_error, assert_ok, make_forest, node, node_meta, write_node


@pytest.fixture(params=[True, False], ids=["inotify", "stat-walk"])
def watch(request: pytest.FixtureRequest) -> bool:
    return request.param


def _forest(tmp_path: Path) -> Path:
    return make_forest(
        tmp_path / "f",
        {
            "notes/alpha": ("note", {"summary": "Alpha ledger reconciliation."}, "# Alpha\n\nbody"),
            "notes/beta": ("note", {"summary": "Beta rollout checklist."}, "# Beta\n\nbody"),
        },
    )


def test_catalog_is_built_when_missing(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    assert not (root / "_derived").exists()
    with Vine(root, writable=False) as vine:
        assert (root / "_derived" / "catalog.db").is_file()
        ids = {n["id"] for n in assert_ok(vine.scan("_index", recursive=True))["nodes"]}
    assert {"notes/alpha", "notes/beta", "notes/_index", "_meta/schema"} <= ids


def _write(root: Path, node_id: str, summary: str, body: str) -> None:
    write_node(root, node_id, node_meta(node_id, summary=summary), body)


def _bump(path: Path) -> None:
    # Make sure a same-size rewrite within the clock tick still changes the stat.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_outside_edit_is_seen_by_the_next_call(tmp_path: Path, watch: bool) -> None:
    root = _forest(tmp_path)
    with Vine(root, writable=False, watch=watch) as vine:
        assert assert_ok(vine.locate("reconciliation"))["results"][0]["id"] == "notes/alpha"
        _write(root, "notes/alpha", "Gamma forecast.", "# Alpha\n\nNew body with ZX-9981 inside.")
        _bump(root / "notes/alpha.md")
        assert vine.locate("reconciliation")["results"] == []
        assert vine.locate("gamma forecast")["results"][0]["id"] == "notes/alpha"
        hit = assert_ok(vine.sniff("ZX-9981"))["results"]
        assert [r["id"] for r in hit] == ["notes/alpha"]


def test_added_and_deleted_files_are_seen(tmp_path: Path, watch: bool) -> None:
    root = _forest(tmp_path)
    with Vine(root, writable=False, watch=watch) as vine:
        _write(root, "notes/gamma", "Gamma unicorn.", "# Gamma\n\nunicornword")
        assert vine.locate("unicorn")["results"][0]["id"] == "notes/gamma"
        assert vine.sniff("unicornword")["results"][0]["id"] == "notes/gamma"
        (root / "notes/beta.md").unlink()
        assert_error(vine.look("notes/beta"), "E_NOT_FOUND")
        assert vine.locate("rollout")["results"] == []


def test_new_folder_and_removed_folder_are_seen(tmp_path: Path, watch: bool) -> None:
    root = _forest(tmp_path)
    with Vine(root, writable=False, watch=watch) as vine:
        _write(root, "deep/er/leaf", "Quasar notes.", "# Leaf\n\nquasarword")
        assert vine.locate("quasar")["results"][0]["id"] == "deep/er/leaf"
        shutil.rmtree(root / "deep")
        assert_error(vine.look("deep/er/leaf"), "E_NOT_FOUND")
        shutil.move(root / "notes", root / "moved")
        assert_error(vine.look("notes/alpha"), "E_NOT_FOUND")
        assert_ok(vine.look("moved/alpha"))


def test_edits_made_while_closed_are_seen_on_open(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    Vine(root, writable=False).close()
    write_node(root, "notes/alpha", node_meta("notes/alpha", summary="Zeppelin."), "# A\n")
    _bump(root / "notes/alpha.md")
    (root / "notes/beta.md").unlink()
    with Vine(root, writable=False) as vine:
        assert vine.locate("zeppelin")["results"][0]["id"] == "notes/alpha"
        assert_error(vine.look("notes/beta"), "E_NOT_FOUND")


def _stored_walk(root: Path) -> bytes | None:
    with sqlite3.connect(root / "_derived" / "catalog.db") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key='walk'").fetchone()
    conn.close()
    return row[0] if row else None


def test_an_in_place_edit_after_a_stored_walk_is_seen(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    with Vine(root, writable=False) as vine:
        assert_ok(vine.look("notes/alpha"))
    assert _stored_walk(root)
    path = root / "notes/alpha.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Alpha ledger", "Omega ledger"), encoding="utf-8")
    _bump(path)
    with Vine(root, writable=False) as vine:
        assert vine.locate("omega")["results"][0]["id"] == "notes/alpha"


def test_a_stored_walk_is_not_trusted_once_the_catalog_moved_on(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    path = root / "notes/alpha.md"
    with Vine(root, writable=False) as vine:
        assert_ok(vine.look("notes/alpha"))
    stored = _stored_walk(root)
    old, st = path.read_bytes(), path.stat()
    write_node(root, "notes/alpha", node_meta("notes/alpha", summary="Zeppelin."), "# A\n")
    _bump(path)
    with Vine(root, writable=False) as vine:
        assert vine.locate("zeppelin")["results"][0]["id"] == "notes/alpha"
    # The old bytes and stat come back: the files match the stored walk again, but the
    # catalog indexed the version in between.
    path.write_bytes(old)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _stored_walk(root) == stored
    with Vine(root, writable=False) as vine:
        assert vine.locate("zeppelin")["results"] == []
        assert vine.locate("reconciliation")["results"][0]["id"] == "notes/alpha"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_long_lived_vine_watches_from_its_second_call(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    Vine(root, writable=False).close()  # builds the catalog
    with Vine(root, writable=False) as vine:
        watcher = vine._forest.catalog.watcher
        assert_ok(vine.look("notes/alpha"))
        assert not watcher.live
        assert_ok(vine.look("notes/alpha"))
        assert watcher.live
    with Vine(root, writable=False, watch=False) as vine:
        for _ in range(3):
            assert_ok(vine.look("notes/alpha"))
        assert not vine._forest.catalog.watcher.live


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"no frontmatter here\n", "no frontmatter"),
        (b"---\nid: x\ntitle: [unclosed\n---\n\nbody\n", "bad YAML"),
        (b"---\nid: x\ntitle: y\n", "unterminated"),
        (b"---\n- a\n- b\n---\n\nbody\n", "not a mapping"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00binary", "binary"),
        (b"---\nid: x\n---\n\n\xff\xfe bad utf8\n", "not UTF-8"),
    ],
)
def test_malformed_file_is_skipped_and_reported(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    root = _forest(tmp_path)
    (root / "notes" / "broken.md").write_bytes(content)
    with Vine(root, writable=False) as vine:
        problems = vine.problems()
        assert [p["path"] for p in problems] == ["notes/broken.md"]
        assert reason in problems[0]["reason"]
        err = assert_error(vine.look("notes/broken"), "E_FRONTMATTER")
        assert "notes/broken.md" in err["message"]
        assert_ok(vine.look("notes/alpha"))
        assert vine.locate("reconciliation")["results"][0]["id"] == "notes/alpha"
        assert_ok(vine.sniff("body"))
        assert_ok(vine.scan("notes"))


def test_a_fixed_file_comes_back(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    (root / "notes" / "broken.md").write_text("oops")
    with Vine(root, writable=False) as vine:
        assert vine.problems()
        write_node(root, "notes/broken", node_meta("notes/broken", summary="Mended kettle."))
        assert vine.problems() == []
        assert vine.locate("kettle")["results"][0]["id"] == "notes/broken"


@pytest.mark.parametrize("damage", ["truncate", "garbage", "delete"])
def test_damaged_catalog_is_rebuilt_on_open(tmp_path: Path, damage: str) -> None:
    root = _forest(tmp_path)
    Vine(root, writable=False).close()
    db = root / "_derived" / "catalog.db"
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    if damage == "truncate":
        with open(db, "r+b") as fh:
            fh.truncate(1000)
    elif damage == "garbage":
        db.write_bytes(b"not a database at all" * 100)
    else:
        db.unlink()
    with Vine(root, writable=False) as vine:
        assert vine.locate("reconciliation")["results"][0]["id"] == "notes/alpha"


def test_read_only_filesystem_still_answers(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    root = _forest(tmp_path)
    os.chmod(root, 0o555)
    try:
        with Vine(root, writable=False) as vine:
            assert vine.locate("reconciliation")["results"][0]["id"] == "notes/alpha"
    finally:
        os.chmod(root, 0o755)


def test_derived_not_writable_falls_back_to_memory(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    (root / "_derived").write_text("a file where the folder should be")
    with Vine(root, writable=False) as vine:
        assert vine.locate("reconciliation")["results"][0]["id"] == "notes/alpha"
        assert vine.sniff("body")["results"]


def test_heat_survives_a_rebuild(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    with Vine(root, writable=False) as vine:
        for _ in range(3):
            vine.look("notes/alpha")
        before = vine.look("notes/alpha", fields=["stats"])["stats"]["heat"]
        assert before > 0
        vine.reindex()
        assert vine.look("notes/alpha", fields=["stats"])["stats"]["heat"] >= before


def test_symlinks_out_of_the_forest_are_not_nodes(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    outside = tmp_path / "secret.md"
    write_node(tmp_path, "secret", node_meta("secret", summary="Top secret plans."))
    (root / "notes" / "link.md").symlink_to(outside)
    (root / "linkdir").symlink_to(tmp_path)
    with Vine(root, writable=False) as vine:
        assert vine.locate("secret plans")["results"] == []
        assert_error(vine.look("notes/link"), "E_NOT_FOUND")
        assert_error(vine.look("linkdir/secret"), "E_NOT_FOUND")


def test_noticing_an_edit_is_fast_enough_to_not_need_reindex(tmp_path: Path) -> None:
    root = _forest(tmp_path)
    with Vine(root, writable=False) as vine:
        for i in range(5):
            write_node(root, "notes/alpha", node_meta("notes/alpha", summary=f"Round {i} zz{i}q."))
            _bump(root / "notes/alpha.md")
            assert vine.locate(f"zz{i}q")["results"][0]["id"] == "notes/alpha"
    assert time.time()


def test_an_older_walk_never_drops_a_node_another_process_just_indexed(tmp_path: Path) -> None:
    """A reader walks the files, a writer then adds a node and indexes it, and only then
    does the reader apply its walk: the node is in the table but not in that walk. The
    reader must look again rather than drop it (a race seen with 16 processes)."""
    from .forestkit import copy_sample

    root = copy_sample(tmp_path / "brain", git=True)
    with Vine(root, writable=False) as reader, Vine(root) as writer:
        reader.look("_index")
        walk = reader._forest.catalog.watcher.walk_all()  # before the node exists
        out = writer.plant(
            node("sales/raced", "sales/_index", "Raced", "Planted between walk and apply.")
        )
        assert out.get("commit"), out
        reader._forest.catalog._sync_walk(walk)  # the older walk lands
        row = reader._forest.catalog.conn.execute(
            "SELECT id FROM nodes WHERE id = 'sales/raced'"
        ).fetchone()
        assert row is not None
        assert reader.look("sales/raced")["title"] == "Raced"
