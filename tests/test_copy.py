"""A forest that cannot be written says so before any write, and ``Vine.copy`` makes a
writable copy of it: the same files, in a git repository of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import SAMPLE, assert_ok, copy_sample, git, status


def test_the_shipped_sample_says_why_it_cannot_be_written() -> None:
    with Vine(SAMPLE, writable=False) as vine:
        reason = vine.cannot_write()
    assert reason is not None and "inside the git repository at" in reason


def test_a_plain_folder_and_an_own_repository(tmp_path: Path) -> None:
    plain = copy_sample(tmp_path / "plain")
    with Vine(plain, writable=False) as vine:
        assert vine.cannot_write() == (
            "it is not a git repository, and every write is a git commit"
        )
    own = copy_sample(tmp_path / "own", git=True)
    with Vine(own, writable=False) as vine:
        assert vine.cannot_write() is None


def test_copy_makes_a_writable_forest_of_its_own(tmp_path: Path) -> None:
    dest = tmp_path / "deep" / "mine"
    with Vine.copy(SAMPLE, dest) as vine:
        assert vine.writable and vine.cannot_write() is None
        assert (dest / ".git").is_dir()  # a repository of its own
        assert (
            git(dest, "log", "--format=%s").strip()
            == "copy: forest 'Acme Trading brain' from sample-brain"
        )
        assert status(dest) == ""
        assert (dest / "sales/orders-2026.db").is_file()  # payloads come along
        assert assert_ok(vine.query("sales/orders-2026", "SELECT COUNT(*) FROM orders"))
        out = assert_ok(vine.graft("sales/price-list", {"set_frontmatter": {"tags": ["x"]}}))
        assert out["commit"] == git(dest, "rev-parse", "HEAD").strip()
    tracked = git(dest, "ls-files").split()
    assert "_index.md" in tracked and ".gitignore" in tracked
    assert not [f for f in tracked if f.endswith(".db") or f.startswith("_derived")]
    assert git(SAMPLE, "status", "--porcelain", str(SAMPLE)).strip() == ""  # untouched


@pytest.mark.parametrize("where", ["not-empty", "inside"])
def test_copy_refuses_a_folder_that_holds_something(tmp_path: Path, where: str) -> None:
    src = copy_sample(tmp_path / "src")
    dest = src / "sub" if where == "inside" else tmp_path / "full"
    if where == "not-empty":
        dest.mkdir()
        (dest / "keep.txt").write_text("mine")
    with pytest.raises(Exception) as caught:
        Vine.copy(src, dest)
    assert getattr(caught.value, "code", None) == "E_SCHEMA"
    if where == "not-empty":
        assert sorted(p.name for p in dest.iterdir()) == ["keep.txt"]


def test_vine_browse_copy_refuses_a_full_folder_with_the_envelope(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    done = subprocess.run(
        [sys.executable, "-m", "monkeyllm.commands", "browse", str(SAMPLE), "--copy", str(full)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "E_SCHEMA" in done.stderr and "not an empty folder" in done.stderr
