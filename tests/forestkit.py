"""Plain helpers for tests that build, copy and inspect forests: the sample forest and
its history, git in a forest, node files and their frontmatter, small forests written
by hand, and the checks every test makes on a response. The fixtures that use them are
in ``conftest.py``."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample-brain"
_IGNORE = shutil.ignore_patterns("_derived", ".vine.lock", ".git")
HISTORY = REPO / "tests" / "sample_data" / "sample-brain.bundle"


def copy_sample(dest: Path, *, git: bool = False) -> Path:
    """A copy of sample-brain/ at ``dest``; with ``git``, a clone of its own history
    (the bundle) plus the dataset payloads, which never enter git."""
    if not git:
        shutil.copytree(SAMPLE, dest, ignore=_IGNORE)
        return dest
    subprocess.run(["git", "clone", "-q", str(HISTORY), str(dest)], check=True, capture_output=True)
    for payload in SAMPLE.rglob("*.db"):
        if "_derived" not in payload.parts:
            target = dest / payload.relative_to(SAMPLE)
            shutil.copy2(payload, target)
    return dest


def git(root: Path, *args: str, check: bool = True) -> str:
    """Run git in ``root``; its standard output."""
    return subprocess.run(
        ["git", *args], cwd=root, check=check, capture_output=True, text=True
    ).stdout


def head(root: Path) -> str:
    """The sha of HEAD."""
    return git(root, "rev-parse", "HEAD").strip()


def status(root: Path) -> str:
    """``git status --porcelain`` with every untracked file listed ("" when clean)."""
    return git(root, "status", "--porcelain", "--untracked-files=all")


def files_of(root: Path) -> dict[str, bytes]:
    """Every file of the forest (ignored ones included) except git's, the caches and
    the lock."""
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", "_derived") or rel.name == ".vine.lock" or path.is_dir():
            continue
        out[rel.as_posix()] = path.read_bytes()
    return out


# The call contract's dataset example, literally (plant it under a planted clients/_index).
PROSPECTING: dict[str, Any] = {
    "id": "clients/prospecting-2026",
    "type": "dataset",
    "parent": "clients/_index",
    "title": "Client prospecting 2026",
    "summary": "Prospects collected in 2026, with segment, site and collection date.",
    "schema": {
        "clients": {
            "columns": {"name": "TEXT", "site": "TEXT", "segment": "TEXT", "collected_at": "TEXT"},
            "primary_key": ["name"],
        }
    },
    "rows": {"clients": [["Acme", "acme.example", "industry", "2026-01-14"]]},
}


def git_init(root: Path) -> None:
    """Make ``root`` a git repository with one commit of its markdown files."""
    run = {"cwd": root, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=vine",
            "-c",
            "user.email=vine@monkeyllm.local",
            "commit",
            "-qm",
            "init: sample forest",
        ],
        **run,
    )


def write_node(root: Path, node_id: str, meta: dict[str, Any], body: str = "") -> Path:
    """Write one node file in the forest format."""
    path = root / (node_id + ".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    fm = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()
    path.write_text(f"---\n{fm}\n---\n\n{body.strip()}\n", encoding="utf-8")
    return path


def file_lines(root: Path, node_id: str) -> list[str]:
    """The lines of a node's file, as an editor numbers them (line N is ``[N - 1]``)."""
    return (root / (node_id + ".md")).read_text(encoding="utf-8").split("\n")


def body_offset(root: Path, node_id: str) -> int:
    """How many file lines come before a node's body: the frontmatter block and the blank
    lines after it (body line 1 is file line ``1 + body_offset``)."""
    lines = file_lines(root, node_id)
    closing = [i for i, line in enumerate(lines) if line.strip() == "---"][1]
    i = closing + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def node_meta(node_id: str, ntype: str = "note", **extra: Any) -> dict[str, Any]:
    """Frontmatter with every required key."""
    leaf = node_id.rsplit("/", 1)[-1]
    title = extra.pop("title", leaf.replace("-", " ").title())
    meta = {
        "id": node_id,
        "type": ntype,
        "title": title,
        "summary": extra.pop("summary", f"About {title}."),
        "created": extra.pop("created", "2026-01-10"),
        "updated": extra.pop("updated", "2026-01-10"),
    }
    meta.update(extra)
    return meta


SCHEMA_BODY = """# Schema

## Node types

| type | meaning |
|---|---|
| `branch` | a folder index |
| `note` | free text |
| `dataset` | tabular data |
| `entity` | a person or thing |

## Edges (rels)

| rel | inverse | meaning |
|---|---|---|
| `part-of` | `contains` | hierarchy |
| `related-to` | `related-to` | generic |
| `mentioned-in` | `mentions` | named by |
| `supersedes` | `superseded-by` | replacement |
| `discovered-shortcut` | — | found by use |
"""


def make_forest(
    root: Path, nodes: dict[str, tuple[str, dict[str, Any], str]] | None = None
) -> Path:
    """A minimal forest: master index, dialect, and ``nodes`` as id -> (type, meta, body).

    Branch indexes are written for every folder that holds nodes.
    """
    root.mkdir(parents=True, exist_ok=True)
    write_node(
        root,
        "_index",
        node_meta("_index", "branch", title="Test forest", summary="A forest built by a test."),
        "# Test forest\n\n## Sub-branches\n\n## Direct bananas\n\n## Cross trails\n",
    )
    write_node(
        root,
        "_meta/schema",
        node_meta("_meta/schema", title="Schema", summary="Types and rels of this forest."),
        SCHEMA_BODY,
    )
    (root / ".gitignore").write_text("_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n")
    for node_id, (ntype, extra, body) in (nodes or {}).items():
        folders = node_id.split("/")[:-1]
        for depth in range(1, len(folders) + 1):
            index = "/".join(folders[:depth]) + "/_index"
            if not (root / (index + ".md")).exists() and index != node_id:
                write_node(
                    root,
                    index,
                    node_meta(index, "branch", title=folders[depth - 1].title()),
                    f"# {folders[depth - 1].title()}\n",
                )
        write_node(root, node_id, node_meta(node_id, ntype, **dict(extra)), body)
    return root


def assert_ok(response: dict[str, Any]) -> dict[str, Any]:
    """Fail with the envelope when a call answered an error."""
    assert "error" not in response, response
    return response


def assert_error(response: dict[str, Any], code: str) -> dict[str, Any]:
    """The response is exactly an error envelope with ``code``."""
    assert set(response) == {"error"}, response
    err = response["error"]
    assert err["code"] == code, err
    assert isinstance(err["message"], str) and err["message"]
    return err


def node(node_id: str, parent: str, title: str, summary: str, **extra: Any) -> dict[str, Any]:
    """A node for ``plant``: its id, parent, title and summary, a note unless ``type``
    says otherwise, and any other keys."""
    return {
        "id": node_id,
        "type": extra.pop("type", "note"),
        "parent": parent,
        "title": title,
        "summary": summary,
        **extra,
    }


# A one-table payload of one text column (for a dataset planted without rows).
TEXT_TABLE = {"t": {"columns": {"a": "TEXT"}}}
# A one-table payload: a counter ``v`` per ``id``.
DATA_SCHEMA = {"t": {"columns": {"id": "INTEGER", "v": "INTEGER"}, "primary_key": ["id"]}}


def counter(summary: str, value: int, node_id: str = "kb/data") -> dict[str, Any]:
    """A dataset for ``plant`` under kb/, titled Data, whose one row counts ``value``."""
    return node(
        node_id, "kb", "Data", summary, type="dataset", schema=DATA_SCHEMA, rows={"t": [[1, value]]}
    )


def age(root: Path, today: str, old: str) -> None:
    """Turn every node file's ``updated: today`` into ``old`` and commit the forest as it
    stands, so a write that refreshes the date shows."""
    for path in root.rglob("*.md"):
        if ".git" not in path.parts:
            text = path.read_text(encoding="utf-8")
            path.write_text(
                text.replace(f"updated: '{today}'", f"updated: '{old}'"), encoding="utf-8"
            )
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "age")


def node_path(root: Path, node_id: str) -> Path:
    """The file of node ``node_id`` in the forest at ``root``."""
    return root / (node_id + ".md")


def meta_of(path: Path) -> dict[str, Any]:
    """A node file's frontmatter."""
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text[4:].partition("\n---\n")[0])


def sql_rows(db: Path, sql: str) -> list[list[Any]]:
    """``sql`` run straight through sqlite3 on the payload ``db``, read-only: its rows,
    each as a list."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [list(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def links(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    """Typed links from ``(rel, target)`` pairs."""
    return [{"rel": rel, "target": target} for rel, target in pairs]


def leaf(body: str = "", ntype: str = "note", **meta: Any) -> tuple[str, dict[str, Any], str]:
    """One node of :func:`make_forest`'s ``nodes``: its body, its type and the frontmatter
    keys it sets (the rest take :func:`node_meta`'s defaults). Its ``links`` may be given
    as ``(rel, target)`` pairs."""
    if "links" in meta:
        meta["links"] = [
            {"rel": link[0], "target": link[1]} if isinstance(link, tuple) else link
            for link in meta["links"]
        ]
    return ntype, meta, body


def person(body: str = "", **meta: Any) -> tuple[str, dict[str, Any], str]:
    """An entity node of kind person, for :func:`make_forest` (as :func:`leaf`)."""
    return leaf(body, "entity", entity_kind="person", **meta)


def reader(root: Path) -> Any:
    """A read-only Vine on ``root`` with heat off, so rankings do not move as a test reads
    (use it as a context manager)."""
    from monkeyllm import Vine

    return Vine(root, writable=False, alpha=0)


def forest_fixture(nodes: dict[str, tuple[str, dict[str, Any], str]]) -> Any:
    """A pytest fixture (name it by assigning it in a test module) that writes ``nodes``
    as a forest of each test's own, with :func:`make_forest`; its value is the root."""
    import pytest

    @pytest.fixture
    def forest(tmp_path: Path) -> Path:
        return make_forest(tmp_path / "forest", nodes)

    return forest


def fuzzed(max_examples: int) -> settings:
    """Hypothesis settings for a test that draws examples over a fixture it keeps across
    them: ``max_examples``, no deadline (a catalog build takes what it takes), and the
    function-scoped fixture check off."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
