"""A write the file system refuses (too large, full, read-only) answers an envelope and
leaves the forest as it was.

A file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ`` ignored) stands in for a full
disk in a child process: every write past the limit fails with ``EFBIG``, as one past
the free space fails with ``ENOSPC``. Where the machine lets us mount one, a small tmpfs
gives the real ``ENOSPC``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .forestkit import copy_sample, files_of, git, head, status

resource = pytest.importorskip("resource")

CHILD = textwrap.dedent("""
    import json, resource, signal, sys
    from monkeyllm import Vine
    root, limit, body = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    vine = Vine(root)
    vine.look("sales/exchange-policy")          # the catalog is open before the limit
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    if limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    out = {
        "plant": vine.plant({"id": "sales/huge", "type": "note", "parent": "sales/_index",
                             "title": "Huge", "summary": "Too large to write.",
                             "body": "# Huge\\n\\n" + "x" * body}),
        "graft": vine.graft("sales/exchange-policy",
                            {"append_section": {"header": "Huge", "body": "y" * body}}),
    }
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    out["after"] = vine.look("sales/exchange-policy", fields=["summary"])
    vine.close()
    print(json.dumps(out))
""")


def run_child(root: Path, limit: int, body: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(limit), str(body)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_write_past_the_file_size_limit_is_refused_and_undone(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    before, files = head(root), files_of(root)
    out = run_child(root, limit=200_000, body=400_000)
    for call in ("plant", "graft"):
        error = out[call]["error"]
        assert error["code"] == "E_READONLY", out[call]
        assert "cannot be written" in error["message"] and error["hint"]
    assert "error" not in out["after"]
    assert head(root) == before
    assert files_of(root) == files
    assert status(root) == ""
    assert "sales/huge" not in git(root, "ls-files")


def test_a_full_file_system_is_refused_and_undone(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    tried = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True
    )
    if tried.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        root = copy_sample(mount / "brain", git=True)
        shutil.rmtree(root / "_derived", ignore_errors=True)
        free = shutil.disk_usage(mount).free
        before, files = head(root), files_of(root)
        out = run_child(root, limit=0, body=free + 1_000_000)
        for call in ("plant", "graft"):
            assert out[call]["error"]["code"] == "E_READONLY", out[call]
            assert "No space left" in out[call]["error"]["message"]
        assert head(root) == before and files_of(root) == files and status(root) == ""
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
