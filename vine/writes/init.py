"""Creating a forest: the master index, the default dialect, ``.gitignore``, and the
repository with its first commit."""

from __future__ import annotations

from pathlib import Path

from .. import hints
from ..errors import SchemaError
from ..gitops import init_repository
from . import render, rules
from .transaction import atomic_write

GITIGNORE = "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n"

SCHEMA_BODY = """# Schema

The dialect of this forest: the node types and the edge rels it accepts. Tables whose
first cell is a backticked token declare them; a rel's inverse is the name an incoming
edge is shown under.

## Node types

| type | what it holds |
|---|---|
| `branch` | a folder's index, listing what lives under it |
| `note` | free text, the default leaf |
| `document` | a converted document (PDF, DOCX) whose original may sit in `_assets/` |
| `dataset` | rows in a sibling SQLite payload, read with query and written with tend |
| `entity` | a person, organization, product or place (`entity_kind` says which) |
| `concept` | a definition or a term |
| `event` | something that happened on a date |
| `media` | an image or audio file, described by its body |

## Edge rels

| rel | inverse | meaning |
|---|---|---|
| `part-of` | `contains` | logical hierarchy, beyond folders |
| `related-to` | `related-to` | generic and symmetric |
| `mentioned-in` | `mentions` | the entity is named by a document |
| `author` | `author-of` | authorship |
| `compared-with` | `compared-with` | contrast, symmetric |
| `derived-from` | `origin-of` | provenance between nodes |
| `same-as` | `same-as` | a soft merge that deletes nothing |
| `discovered-shortcut` | — | a path an agent found useful |
| `succeeds` | `precedes` | temporal order |
| `supersedes` | `superseded-by` | replacement |
"""


def make_folder(root: Path) -> None:
    """Create ``root`` (and its parents) for a new forest; ``E_SCHEMA`` naming the path
    when a file stands where a folder must be (``root`` itself or one of its parents),
    where ``mkdir`` would raise a bare ``FileExistsError`` or ``NotADirectoryError``."""
    for folder in (root, *root.parents):
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                if folder == root:
                    where = "it is"
                    hint = (
                        "Give the path of a folder instead (a new one is created), e.g. "
                        f"{root.parent / (root.name + '-forest')}; the file is left as it is."
                    )
                else:
                    where = f"{folder} is"
                    hint = "Give a path under a folder instead; the file is left as it is."
                raise SchemaError(
                    f"cannot create a forest at {root}: {where} a file, not a folder",
                    hint=hint,
                    path=str(folder),
                )
            break
    root.mkdir(parents=True, exist_ok=True)


def init_forest(root: Path, title: str, summary: str | None) -> str:
    """Write a new forest at ``root`` and commit it; returns the commit sha."""
    rules.check_title(title)
    if summary is None:
        summary = f"{title}: a new forest, with no sub-branches yet."
    rules.check_summary(summary)
    make_folder(root)
    if (root / "_index.md").exists():
        raise SchemaError(
            f"a forest already exists at {root}", hint=f"It is one already: {hints.open_forest()}."
        )
    today = render.today()
    master = {
        "id": "_index",
        "type": "branch",
        "title": title,
        "summary": summary,
        "coverage": "0 bananas, 0 sub-branches",
        "created": today,
        "updated": today,
    }
    schema = {
        "id": "_meta/schema",
        "type": "note",
        "title": "Schema",
        "summary": "The node types and edge rels this forest accepts.",
        "created": today,
        "updated": today,
        "source": "manual",
    }
    atomic_write(root / ".gitignore", GITIGNORE.encode())
    atomic_write(
        root / "_index.md",
        render.render(master, render.index_body(title, summary, master=True)).encode(),
    )
    atomic_write(root / "_meta" / "schema.md", render.render(schema, SCHEMA_BODY).encode())
    repo = init_repository(root)
    try:
        return repo.commit(
            [root / ".gitignore", root / "_index.md", root / "_meta" / "schema.md"],
            f"init: forest '{title}'",
            also=(".gitignore",),
        )
    finally:
        repo.close()
