"""Helpers the write-safety tests share: the state of a forest as files and git see it, and
the checks that it is clean."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from monkeyllm import Vine

from ..forestkit import DATA_SCHEMA, assert_ok, meta_of, node

ALPHA_SUMMARY = "Alpha, the first letter of the kb."


def stray_temps(root: Path) -> list[str]:
    """Temporary files a write may leave in the tree: ``.vine-*.tmp``, SQLite journals."""
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", "_derived"):
            continue
        if path.name.startswith(".vine-") or path.name.endswith((".tmp", "-journal")):
            out.append(rel.as_posix())
    return out


def journal(root: Path) -> Path:
    return root / "_derived" / "journal.json"


@dataclass(frozen=True)
class Kind:
    name: str
    run: Callable[[Vine], dict[str, Any]]
    steps: tuple[str, ...]
    planted: str | None = None


def _plant_note(v: Vine) -> dict[str, Any]:
    return v.plant(node("kb/new", "kb", "New", "A new note about faults.", body="Body."))


def _plant_branch(v: Vine) -> dict[str, Any]:
    return v.plant(node("kb/sub", "kb", "Sub", "A sub-branch.", type="branch"))


def _plant_dataset(v: Vine) -> dict[str, Any]:
    born = node("kb/born", "kb", "Born", "A dataset born in a fault test.", type="dataset")
    return v.plant({**born, "schema": DATA_SCHEMA, "rows": {"t": [[1, 1], [2, 2]]}})


def _graft_summary(v: Vine) -> dict[str, Any]:
    return v.graft("kb/alpha", {"set_frontmatter": {"summary": "Alpha, grafted."}})


def _graft_links(v: Vine) -> dict[str, Any]:
    return v.graft(
        "kb/alpha",
        {
            "add_links": [{"rel": "related-to", "target": "kb/data"}],
            "append_section": {"header": "Notes", "body": "Linked."},
        },
    )


def _tend(v: Vine) -> dict[str, Any]:
    return v.tend("kb/data", "UPDATE t SET v = v + 1 WHERE id = 1")


def _prune_leaf(v: Vine) -> dict[str, Any]:
    # alpha is listed by its parent and by the master's Landmarks: two indexes rewritten.
    return v.prune("kb/alpha", force=True)


def _prune_dataset(v: Vine) -> dict[str, Any]:
    return v.prune("kb/data")  # its payload goes to the graveyard


def _transplant_leaf(v: Vine) -> dict[str, Any]:
    return v.transplant("kb/alpha", "alpha")  # another parent; the Landmarks entry follows


def _transplant_dataset(v: Vine) -> dict[str, Any]:
    return v.transplant("kb/data", "kb/counter")  # its payload is renamed beside it


PLANT_STEPS = ("after-node", "after-parent", "before-commit", "after-commit")
GRAFT_STEPS = ("after-node", "after-propagation", "before-commit", "after-commit")
MOVE_STEPS = ("after-node", "after-parent", "before-commit", "after-commit")
KINDS = {
    k.name: k
    for k in (
        Kind("plant-note", _plant_note, PLANT_STEPS, "kb/new"),
        Kind("plant-branch", _plant_branch, PLANT_STEPS, "kb/sub/_index"),
        Kind(
            "plant-dataset",
            _plant_dataset,
            ("before-payload", "after-payload", *PLANT_STEPS),
            "kb/born",
        ),
        Kind("graft-summary", _graft_summary, GRAFT_STEPS),
        Kind("graft-links", _graft_links, GRAFT_STEPS),
        Kind(
            "tend", _tend, ("before-payload-commit", "after-node", "before-commit", "after-commit")
        ),
        Kind("prune-leaf", _prune_leaf, MOVE_STEPS),
        Kind("prune-dataset", _prune_dataset, ("after-payload", *MOVE_STEPS)),
        Kind("transplant-leaf", _transplant_leaf, MOVE_STEPS, "alpha"),
        Kind(
            "transplant-dataset", _transplant_dataset, ("after-payload", *MOVE_STEPS), "kb/counter"
        ),
    )
}


def _agrees_with_files(v: Vine, root: Path) -> None:
    """Every cataloged id has its file, every file its catalog row, with its summary."""
    on_disk = {
        p.relative_to(root).as_posix()[:-3]
        for p in root.rglob("*.md")
        if p.relative_to(root).parts[0] not in (".git", "_derived")
    }
    listed: set[str] = set()
    after = ""
    while True:
        page = assert_ok(
            v.scan("_index", fields=["id", "summary"], recursive=True, limit=50, after=after)
        )
        for entry in page["nodes"]:
            listed.add(entry["id"])
            assert entry["summary"] == meta_of(root / (entry["id"] + ".md"))["summary"], entry
        if not page.get("next"):
            break
        after = page["next"]
    assert listed | {"_index"} == on_disk
    assert v.problems() == []
