"""Helpers the plant tests share: a node file's frontmatter and body, and the commit plant
made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..forestkit import git, node

EM = "\u2014"


CLIENTS = node(
    "clients/_index", "_index", "Clients", "Clients and prospects of the company.", type="branch"
)


def split(path: Path) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of a node file, checking the file shape on the way."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and text.endswith("\n"), text
    front, sep, body = text[4:].partition("\n---\n\n")
    assert sep, text
    return yaml.safe_load(front), body


def section_lines(body: str, name: str) -> list[str]:
    """The non-blank lines of the H2 section ``name``."""
    lines = body.split("\n")
    start = lines.index(f"## {name}")
    out = []
    for line in lines[start + 1 :]:
        if line.startswith("#") and not line.startswith("###"):
            break
        if line.strip():
            out.append(line)
    return out


def changed_files(root: Path, rev: str = "HEAD") -> set[str]:
    return set(git(root, "show", "--name-only", "--format=", rev).split())
