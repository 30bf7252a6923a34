"""Deterministic synthetic forest generator for benchmarks.

Run from the repository root::

    python -m bench.generate --nodes 10000 --out /tmp/f10k [--seed 7] [--git] [--max-rows R]

or import :func:`generate`. The output is a complete forest in the on-disk format:
one ``.md`` per node (block-YAML frontmatter, markdown body), ``_index.md`` branches
three levels deep whose entry lines and ``coverage`` match their children,
``_meta/schema.md`` with the default dialect, ``.gitignore``, and a sibling SQLite
``.db`` payload for every dataset leaf.

Everything is drawn from one ``random.Random(seed)`` (dataset rows from a per-node
generator derived from the seed), so the same arguments give byte-identical files.
``nodes`` counts every ``.md`` written, master index and ``_meta/schema`` included.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.generate_datasets import (
    ColumnGen,
    build_sqlite,
    dataset_sections,
    dataset_summary,
    plan_dataset,
)
from bench.generate_format import cap, day, render_frontmatter, render_node
from bench.generate_plan import (
    Branch,
    Leaf,
    build_pools,
    date_branches,
    make_links,
    plan_branches,
    plan_leaves,
)
from bench.generate_prose import Prose, inserts_for
from bench.generate_vocab import vocab
from bench.generate_words import GITIGNORE, REL_TABLE, TYPE_TABLE

# What the tests and other benchmarks take from here.
__all__ = ["generate", "main", "render_frontmatter"]


class Writer:
    """Writes files under ``out`` on a few threads and counts markdown bytes.

    File creation dominates on some filesystems and releases the GIL, so it overlaps
    with generation. At most ``backlog`` files wait in memory.
    """

    def __init__(self, out: Path, threads: int = 6, backlog: int = 512):
        self.out = out
        self.md_bytes = 0
        self.md_files = 0
        self._pool = ThreadPoolExecutor(max_workers=threads)
        self._slots = threading.BoundedSemaphore(backlog)
        self._errors: list[BaseException] = []

    def _write(self, path: Path, data: bytes) -> None:
        try:
            path.write_bytes(data)
        except BaseException as e:  # re-raised by close()
            self._errors.append(e)
        finally:
            self._slots.release()

    def md(self, node_id: str, fm: dict, body: str) -> None:
        data = render_node(fm, body)
        self._slots.acquire()
        self._pool.submit(self._write, self.out / f"{node_id}.md", data)
        self.md_bytes += len(data)
        self.md_files += 1

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        if self._errors:
            raise self._errors[0]


def leaf_frontmatter(leaf: Leaf, payload: tuple[str, str] | None) -> dict:
    fm: dict = {
        "id": leaf.id,
        "type": leaf.type,
        "title": leaf.title,
        "summary": leaf.summary,
        "created": day(leaf.created),
        "updated": day(leaf.updated),
    }
    if leaf.tags:
        fm["tags"] = leaf.tags
    if leaf.aliases:
        fm["aliases"] = leaf.aliases
    if leaf.links:
        fm["links"] = leaf.links
    fm["source"] = leaf.source
    if leaf.source == "ingest":
        fm["confidence"] = 0.7
        if leaf.type == "document":
            fm["origin"] = f"file:///srv/inbox/{leaf.id.rsplit('/', 1)[-1]}.pdf"
    if leaf.entity_kind:
        fm["entity_kind"] = leaf.entity_kind
    if payload:
        fm.update(payload=payload[0], payload_type="sqlite", payload_hash=payload[1])
    return fm


def write_leaf(
    w: Writer,
    rng: random.Random,
    prose: Prose,
    leaf: Leaf,
    all_ids: list[str],
    gen_seed: str,
    max_rows: int,
) -> int:
    """Write one leaf (and its payload); returns the number of dataset rows written."""
    inserts = inserts_for(rng, leaf, all_ids)
    if leaf.type != "dataset":
        body = prose.body(leaf, inserts, rng.randint(200, 2000))
        w.md(leaf.id, leaf_frontmatter(leaf, None), body)
        return 0
    table = prose.v.pt_table if leaf.lang == "pt" else prose.v.en_table
    prose.count, prose.pending = 0, []
    intro = prose.paragraph(table, leaf.topics)
    notes = prose.paragraph(table, leaf.topics)
    if inserts:
        notes += " " + " ".join(inserts) + "."
    name = leaf.id.rsplit("/", 1)[-1] + ".db"
    path = w.out / f"{leaf.id}.db"
    samples = build_sqlite(path, leaf.dataset or [], ColumnGen(random.Random(gen_seed), prose.v))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    body = "\n\n".join(
        [f"# {leaf.title}", intro, dataset_sections(leaf.dataset or [], samples), "## Notes", notes]
    )
    w.md(leaf.id, leaf_frontmatter(leaf, (name, digest)), body)
    return sum(t["rows"] for t in leaf.dataset or [])


def _cross_trails(rng: random.Random, b: Branch, targets: list[Branch]) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 2)):
        t = rng.choice(targets)
        if t is b:
            continue
        word = rng.choice(t.topics)
        lines.append(f"- {cap(word)} context lives with {t.title} → [[{t.id}]]")
    return lines


def index_body(
    b: Branch, title: str, summary: str, cross: list[str], landmarks: list[str] | None
) -> str:
    sections = [f"# {title}", f"> {summary}"]
    subs = [f"- [[{s.id}]] — {s.summary}" for s in b.subs]
    leaves = [f"- [[{x.id}]] — {x.summary}" for x in b.leaves]
    for name, lines in (
        ("Sub-branches", subs),
        ("Direct bananas", leaves),
        ("Cross trails", cross),
    ):
        sections.append("\n".join([f"## {name}"] + lines))
    if landmarks is not None:
        sections.append("\n".join(["## Landmarks"] + landmarks))
    return "\n\n".join(sections)


def branch_frontmatter(b: Branch, title: str, summary: str) -> dict:
    return {
        "id": b.id,
        "type": "branch",
        "title": title,
        "summary": summary,
        "coverage": f"{len(b.leaves)} bananas, {len(b.subs)} sub-branches",
        "created": day(b.created),
        "updated": day(b.updated),
    }


def write_indexes(
    w: Writer,
    rng: random.Random,
    root: Branch,
    branches: list[Branch],
    leaves: list[Leaf],
    degree: dict[str, int],
    nodes: int,
    seed: int,
) -> None:
    for b in branches:
        cross = _cross_trails(rng, b, branches) if rng.random() < 0.3 else []
        w.md(
            b.id,
            branch_frontmatter(b, b.title, b.summary),
            index_body(b, b.title, b.summary, cross, None),
        )
    by_id = {x.id: x for x in leaves}
    ranked = sorted(((d, i) for i, d in degree.items() if i in by_id), key=lambda p: (-p[0], p[1]))
    landmarks = [f"- [[{i}]] — {by_id[i].summary}" for _, i in ranked[:20]]
    title = "Synthetic benchmark forest"
    summary = (
        f"Synthetic forest of {nodes} nodes in {len(root.subs)} top-level branches "
        f"(seed {seed}), generated for engine benchmarks."
    )
    cross = _cross_trails(rng, root, branches)
    root.title, root.summary = title, summary
    w.md(
        "_index",
        branch_frontmatter(root, title, summary),
        index_body(root, title, summary, cross, landmarks),
    )


def schema_body() -> str:
    lines = [
        "# Forest dialect",
        "",
        "The node types and edge rels this forest accepts. Edit the tables to extend "
        "the dialect; an unknown type or rel is refused on write.",
        "",
        "## Node types",
        "",
        "| type | meaning | payload | harvest verb |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{t}` | {m} | {p} | {h} |" for t, m, p, h in TYPE_TABLE]
    lines += ["", "## Edge rels", "", "| rel | inverse | meaning |", "|---|---|---|"]
    lines += [f"| `{r}` | {f'`{i}`' if i else '—'} | {m} |" for r, i, m in REL_TABLE]
    return "\n".join(lines)


def write_meta(w: Writer, created: int) -> None:
    (w.out / "_meta").mkdir(parents=True, exist_ok=True)
    fm = {
        "id": "_meta/schema",
        "type": "note",
        "title": "Forest dialect",
        "summary": "Node types and edge rels accepted by this forest, as markdown tables.",
        "created": day(created),
        "updated": day(created),
    }
    w.md("_meta/schema", fm, schema_body())
    (w.out / ".gitignore").write_text(GITIGNORE, encoding="utf-8")


def git_commit(out: Path, nodes: int, seed: int) -> None:
    """Initialise the forest's own repo and commit every .md plus .gitignore once."""
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="vine",
        GIT_AUTHOR_EMAIL="vine@monkeyllm.local",
        GIT_COMMITTER_NAME="vine",
        GIT_COMMITTER_EMAIL="vine@monkeyllm.local",
    )
    ident = [
        "-c",
        "user.name=vine",
        "-c",
        "user.email=vine@monkeyllm.local",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "core.autocrlf=false",
    ]

    def git(*args: str) -> None:
        subprocess.run(
            ["git", *ident, *args], cwd=out, env=env, check=True, stdout=subprocess.DEVNULL
        )

    git("init", "-q", "--initial-branch=main")
    git("add", "--", ".gitignore", "*.md")
    git("commit", "-q", "--no-verify", "-m", f"init: synthetic forest ({nodes} nodes, seed {seed})")


def _make_dirs(out: Path, branches: list[Branch]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for b in branches:
        (out / b.folder).mkdir(parents=True, exist_ok=True)


def generate(
    out: Path, nodes: int, seed: int = 7, git: bool = False, max_rows: int = 100_000
) -> dict:
    """Write a synthetic forest of exactly ``nodes`` markdown nodes under ``out``.

    Args:
        out: target directory; created if missing, refused if it already holds a forest.
        nodes: total ``.md`` nodes, master index and ``_meta/schema`` included (>= 20).
        seed: seed of the single random stream; same arguments give identical files.
        git: initialise a repository in ``out`` and commit the forest once.
        max_rows: row count of the few big dataset tables (and cap for all of them).

    Returns:
        Stats: nodes, branches (master included), leaves, datasets, typed links,
        dataset rows, markdown bytes, payload bytes and elapsed seconds.
    """
    if nodes < 20:
        raise ValueError("nodes must be at least 20")
    if max_rows < 10:
        raise ValueError("max_rows must be at least 10")
    out = Path(out)
    if (out / "_index.md").exists():
        raise FileExistsError(f"{out} already holds a forest (_index.md exists)")
    t0 = time.perf_counter()
    rng, v = random.Random(seed), vocab()
    root, branches = plan_branches(rng, v, nodes)
    n_leaves = nodes - 2 - len(branches)
    leaves = plan_leaves(rng, v, root, branches, n_leaves)
    date_branches(rng, root, branches)
    datasets = [x for x in leaves if x.type == "dataset"]
    big = set(
        rng.sample(
            range(1, len(datasets)), min(len(datasets) - 1, max(0, min(9, len(datasets) // 50)))
        )
    )
    for i, leaf in enumerate(datasets):
        leaf.dataset = plan_dataset(rng, i == 0 or i in big, i == 0, max_rows)
        leaf.summary = dataset_summary(leaf.title, leaf.dataset, leaf.topics)
    _make_dirs(out, branches)
    w = Writer(out)
    pools = build_pools(leaves, branches, len(root.subs))
    all_ids = [b.id for b in branches] + [x.id for x in leaves]
    degree: dict[str, int] = {}
    prose = Prose(rng, v)
    rows = links = 0
    try:
        write_meta(w, root.created)
        for leaf in leaves:
            make_links(rng, leaf, leaves, pools, degree)
            links += len(leaf.links)
            rows += write_leaf(w, rng, prose, leaf, all_ids, f"{seed}:{leaf.id}", max_rows)
        write_indexes(w, rng, root, branches, leaves, degree, nodes, seed)
    finally:
        w.close()
    if git:
        git_commit(out, nodes, seed)
    db_bytes = sum((out / f"{x.id}.db").stat().st_size for x in datasets)
    return {
        "nodes": w.md_files,
        "branches": len(branches) + 1,
        "leaves": len(leaves),
        "datasets": len(datasets),
        "links": links,
        "dataset_rows": rows,
        "markdown_bytes": w.md_bytes,
        "payload_bytes": db_bytes,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.generate", description="Generate a deterministic synthetic forest."
    )
    p.add_argument("--nodes", type=int, required=True, help="total .md nodes (>= 20)")
    p.add_argument("--out", type=Path, required=True, help="target directory")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--git", action="store_true", help="git init and commit once")
    p.add_argument(
        "--max-rows",
        type=int,
        default=100_000,
        help="rows of the big dataset tables (default 100000)",
    )
    a = p.parse_args(argv)
    try:
        stats = generate(a.out, a.nodes, seed=a.seed, git=a.git, max_rows=a.max_rows)
    except (ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
