"""A writable copy of a forest: the same files, in a git repository of its own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import NotFound, SchemaError
from ..gitops import init_repository
from ..nodes import ParseError, parse_text
from .init import GITIGNORE
from .transaction import atomic_write

# Never copied: the engine's caches, a writer's lock, and the source's own git data.
_LEFT_OUT = shutil.ignore_patterns("_derived", ".vine.lock", ".git")


def copy_forest(src: Path, dest: Path) -> str:
    """Copy the forest at ``src`` (markdown, dataset payloads, ``_assets/``) to ``dest``,
    make ``dest`` its own git repository and commit its files; returns the commit.

    The copy is what a person tries edits on when the forest they have cannot be
    written (it lies inside another repository, or in none).

    Raises:
        NotFound: ``src`` holds no forest.
        SchemaError: ``dest`` exists and is not an empty folder, or lies inside ``src``.
    """
    src, dest = Path(src).expanduser().resolve(), Path(dest).expanduser().resolve()
    if not (src / "_index.md").is_file():
        raise NotFound(f"no forest at {src} (no _index.md)")
    if dest == src or src in dest.parents:
        raise SchemaError(
            f"a copy cannot go inside the forest it copies ({dest})",
            hint="Name a folder outside it.",
        )
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SchemaError(
            f"{dest} exists and is not an empty folder", hint="Name a new folder for the copy."
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dest, ignore=_LEFT_OUT, dirs_exist_ok=True, symlinks=False)
    if not (dest / ".gitignore").exists():
        atomic_write(dest / ".gitignore", GITIGNORE.encode())
    try:
        title = parse_text("_index", (dest / "_index.md").read_text("utf-8")).title
    except (OSError, UnicodeDecodeError, ParseError):
        title = dest.name
    markdown = [
        Path(folder) / name
        for folder, dirs, files in os.walk(dest)
        if not _private(Path(folder).relative_to(dest))
        for name in files
        if name.endswith(".md")
    ]
    repo = init_repository(dest)
    try:
        return repo.commit(
            [*sorted(markdown), dest / ".gitignore"],
            f"copy: forest '{title}' from {src.name}",
            also=(".gitignore",),
        )
    finally:
        repo.close()


def _private(rel: Path) -> bool:
    return any(part in ("_derived", "_assets", ".git") for part in rel.parts)
