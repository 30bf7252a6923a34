"""Fixtures the write-safety tests share: a small forest with git, a writable Vine on it,
and fault injection at a named write step."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine

from ..forestkit import assert_ok, git
from .kit import ALPHA_SUMMARY, DATA_SCHEMA

EM = "\u2014"


def build(root: Path) -> Path:
    """kb/_index with alpha (listed in the master's Landmarks too), gamma (linking to
    alpha in its frontmatter and its body) and a dataset."""
    with Vine.init(root, "Title") as v:
        assert_ok(
            v.plant(
                {
                    "id": "kb",
                    "type": "branch",
                    "parent": "_index",
                    "title": "Knowledge",
                    "summary": "Letters and their uses.",
                }
            )
        )
        assert_ok(
            v.plant(
                {
                    "id": "kb/alpha",
                    "type": "note",
                    "parent": "kb",
                    "title": "Alpha",
                    "summary": ALPHA_SUMMARY,
                    "body": "# Alpha\n\n## Usage\n\nDaily.",
                }
            )
        )
        assert_ok(
            v.plant(
                {
                    "id": "kb/data",
                    "type": "dataset",
                    "parent": "kb",
                    "title": "Data",
                    "summary": "A counter.",
                    "schema": DATA_SCHEMA,
                    "rows": {"t": [[1, 0]]},
                }
            )
        )
        assert_ok(
            v.plant(
                {
                    "id": "kb/gamma",
                    "type": "note",
                    "parent": "kb",
                    "title": "Gamma",
                    "summary": "Gamma, which cites alpha.",
                    "links": [{"rel": "related-to", "target": "kb/alpha"}],
                    "body": "# Gamma\n\nAfter [[kb/alpha]], before nothing.",
                }
            )
        )
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
