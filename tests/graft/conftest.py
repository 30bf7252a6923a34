"""Fixtures the graft tests share: a small forest with git and a writable Vine on it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from monkeyllm import Vine

from ..forestkit import age, assert_ok, node
from .kit import ALPHA_BODY, ALPHA_SUMMARY, CROSS, EM, OLD, TODAY


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kb/_index with alpha, beta and gamma, listed also in the master's Landmarks and
    Cross trails; every file aged to an old ``updated`` so refreshes show."""
    root = tmp_path_factory.mktemp("graft") / "f"
    with Vine.init(root, "Title") as v:
        for spec in (
            node("kb", "_index", "Knowledge", "Letters and their uses.", type="branch"),
            node(
                "kb/alpha",
                "kb",
                "Alpha",
                ALPHA_SUMMARY,
                body=ALPHA_BODY,
                links=[{"rel": "part-of", "target": "kb/_index"}],
            ),
            *(
                node(f"kb/{leaf}", "kb", leaf.title(), f"{leaf.title()} letter.")
                for leaf in ("beta", "gamma")
            ),
        ):
            assert_ok(v.plant(spec))
    index = root / "_index.md"
    text = index.read_text(encoding="utf-8")
    text = text.replace("## Cross trails\n", f"## Cross trails\n\n{CROSS}\n")
    text = text.rstrip("\n") + f"\n\n- [[kb/alpha]] {EM} {ALPHA_SUMMARY}\n"
    index.write_text(text, encoding="utf-8")
    age(root, TODAY, OLD)
    return root


@pytest.fixture(scope="module")
def shared(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vine]:
    """One forest for the refusals, which must leave it as it was."""
    root = tmp_path_factory.mktemp("graft-refusals") / "f"
    shutil.copytree(template, root, ignore=shutil.ignore_patterns("_derived", ".vine.lock"))
    with Vine(root) as v:
        yield v
