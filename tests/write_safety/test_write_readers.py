"""Readers during writes never see half a write, and the files a write leaves are what an
operator expects (no temporaries, modes kept, the lock released)."""

from __future__ import annotations

import os
import re
import stat
import threading
import tomllib
import traceback

from monkeyllm import Vine

from ..forestkit import REPO, assert_ok, git, head, meta_of, node, status
from .kit import _agrees_with_files, _plant_note


def test_reads_during_writes_never_see_half_a_node(vine: Vine) -> None:
    root = vine.root
    assert_ok(
        vine.plant(node("r", "_index", "Reads", "Nodes planted while others read.", type="branch"))
    )
    stop = threading.Event()
    errors: list[str] = []
    counts = {"looks": 0, "passes": 0}

    def expected(node_id: str) -> tuple[str, str]:
        n = int(node_id.rsplit("-", 1)[1])
        return f"Reading check {n}", f"Reading check number {n}, planted under load."

    def check(reader: Vine) -> None:
        listed = reader.scan("r", fields=["id", "title", "summary"], limit=50)
        assert "error" not in listed, listed
        for entry in listed["nodes"]:
            assert (entry["title"], entry["summary"]) == expected(entry["id"]), entry
            look = reader.look(entry["id"])
            assert "error" not in look, look
            assert (look["title"], look["summary"]) == expected(entry["id"]), look
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
                title, summary = (
                    f"Reading check {n}",
                    (f"Reading check number {n}, planted under load."),
                )
                assert_ok(
                    vine.plant(
                        node(
                            f"r/node-{n}",
                            "r",
                            title,
                            summary,
                            body=f"# {title}\n\n## Findings\n\n" + "x " * 400,
                        )
                    )
                )
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
            out = vine.plant(node(f"kb/t{t}-{n}", "kb", f"T{t} {n}", f"Thread {t} node {n}."))
            if "error" in out:
                errors.append(repr(out))
            out = vine.graft(
                "kb/alpha", {"add_links": [{"rel": "related-to", "target": f"kb/t{t}-{n}"}]}
            )
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
            len(planted) == 1 and files == {"kb/_index.md", *planted}
        ), files
    meta = meta_of(root / "kb" / "_index.md")
    assert meta["coverage"] == "35 bananas, 0 sub-branches"
    assert len(meta_of(root / "kb" / "alpha.md")["links"]) == 32
    _agrees_with_files(vine, root)


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
    subpackages = {
        "monkeyllm" + "".join("." + p for p in d.relative_to(REPO / "vine").parts)
        for d in (REPO / "vine").rglob("*")
        if d.is_dir() and (d / "__init__.py").exists()
    } | {"monkeyllm"}
    assert subpackages <= packages, sorted(subpackages - packages)
