"""Helpers the graft tests share: a node file's parts and the commit that wrote it."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import yaml

from monkeyllm import Vine

from ..forestkit import assert_error, git, head, status


def blob(root: Path, node_id: str) -> str:
    """The node's revision as reads give it: its blob id in HEAD, cut to 12."""
    return git(root, "rev-parse", f"HEAD:{node_id}.md").strip()[:12]


TODAY = datetime.date.today().isoformat()
OLD = "2025-01-01"
EM = "\u2014"

ALPHA_BODY = """# Alpha

Intro paragraph.

## Usage

Use alpha daily.

### Details

Fine print.

## History

Alpha began in 2020.
"""
ALPHA_SUMMARY = "Alpha, the first letter of the kb."
CROSS = "- Alpha explains the letters \u2192 [[kb/alpha]]"


def subject(root: Path) -> str:
    return git(root, "log", "-1", "--format=%s").strip()


def changed_files(root: Path, rev: str = "HEAD") -> set[str]:
    return set(git(root, "show", "--name-only", "--format=", rev).split())


def tracked(root: Path) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in git(root, "ls-files").split()}


def split(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    front, sep, body = text[4:].partition("\n---\n\n")
    assert text.startswith("---\n") and sep, text
    return yaml.safe_load(front), body


def body_of(vine: Vine, node_id: str) -> str:
    return split(vine.root / (node_id + ".md"))[1]


def unchanged(vine: Vine, before: str, files: dict[str, bytes]) -> None:
    assert head(vine.root) == before
    assert tracked(vine.root) == files
    assert status(vine.root) == ""


def refused_frontmatter(vine: Vine, key: str, value: Any, code: str) -> None:
    """set_frontmatter of ``key`` to ``value`` on kb/alpha answers ``code`` and leaves
    the forest (its HEAD and tracked files) as it was."""
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"set_frontmatter": {key: value}}), code)
    unchanged(vine, before, files)
