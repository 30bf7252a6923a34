"""Fixtures the write-safety tests share: a small forest with git, a writable Vine on it,
and fault injection at a named write step."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine

from ..forestkit import assert_ok, counter, git, node
from .kit import ALPHA_SUMMARY

EM = "\u2014"


def build(root: Path) -> Path:
    """kb/_index with alpha (listed in the master's Landmarks too), gamma (linking to
    alpha in its frontmatter and its body) and a dataset."""
    with Vine.init(root, "Title") as v:
        for spec in (
            node("kb", "_index", "Knowledge", "Letters and their uses.", type="branch"),
            node("kb/alpha", "kb", "Alpha", ALPHA_SUMMARY, body="# Alpha\n\n## Usage\n\nDaily."),
            counter("A counter.", 0),
            node(
                "kb/gamma",
                "kb",
                "Gamma",
                "Gamma, which cites alpha.",
                links=[{"rel": "related-to", "target": "kb/alpha"}],
                body="# Gamma\n\nAfter [[kb/alpha]], before nothing.",
            ),
        ):
            assert_ok(v.plant(spec))
    index = root / "_index.md"
    index.write_text(
        index.read_text(encoding="utf-8").rstrip("\n")
        + f"\n\n- [[kb/alpha]] {EM} {ALPHA_SUMMARY}\n",
        encoding="utf-8",
    )
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "landmark")
    return root


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("safety") / "f")
