"""Tests for the synthetic forest generator (bench/generate.py).

Small forests only: each generation of N=300 takes well under a second.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bench.generate import generate, main, render_frontmatter

N = 300
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ROWS = 500
SEED = 11
ENTRY_RE = re.compile(r"^- \[\[([^\]|#]+)(?:\|[^\]]*)?\]\] — (.+)$")
WIKILINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
HEADER_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.MULTILINE)
COVERAGE_RE = re.compile(r"^(\d+) bananas, (\d+) sub-branches$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DEFAULT_TYPES = {"branch", "note", "document", "dataset", "entity", "concept", "event", "media"}
DEFAULT_RELS = {
    "part-of",
    "related-to",
    "mentioned-in",
    "author",
    "compared-with",
    "derived-from",
    "same-as",
    "discovered-shortcut",
    "succeeds",
    "supersedes",
}


def split_node(text: str) -> tuple[dict, str]:
    """Split at the first '\\n---' the way forest readers do."""
    assert text.startswith("---\n")
    end = text.find("\n---", 3)
    assert end != -1, "unterminated frontmatter"
    fm = yaml.load(text[3:end], Loader=LOADER)
    body = text[text.find("\n", end + 1) + 1 :].lstrip("\n")
    assert isinstance(fm, dict)
    return fm, body


def section(body: str, name: str) -> str | None:
    """Text of an H2 section up to the next header of equal or higher level."""
    heads = list(HEADER_RE.finditer(body))
    for i, m in enumerate(heads):
        if len(m.group(1)) == 2 and m.group(2) == name:
            end = next((h.start() for h in heads[i + 1 :] if len(h.group(1)) <= 2), len(body))
            return body[m.end() : end]
    return None


def load_forest(root: Path) -> dict[str, tuple[dict, str, Path]]:
    nodes = {}
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if rel.parts[0] in ("_derived", "_assets", ".git"):
            continue
        fm, body = split_node(path.read_text(encoding="utf-8"))
        nodes[rel.with_suffix("").as_posix()] = (fm, body, path)
    return nodes


@pytest.fixture(scope="module")
def forest(tmp_path_factory) -> tuple[Path, dict, dict]:
    out = tmp_path_factory.mktemp("forest") / "f"
    stats = generate(out, N, seed=SEED, max_rows=ROWS)
    return out, stats, load_forest(out)


def md_files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_deterministic(forest, tmp_path):
    root, stats, _ = forest
    again = generate(tmp_path / "again", N, seed=SEED, max_rows=ROWS)
    assert md_files(tmp_path / "again") == md_files(root)  # .md, .gitignore and .db alike
    assert {k: v for k, v in again.items() if k != "seconds"} == {
        k: v for k, v in stats.items() if k != "seconds"
    }
    generate(tmp_path / "s1", 40, seed=1, max_rows=20)
    generate(tmp_path / "s2", 40, seed=2, max_rows=20)
    assert md_files(tmp_path / "s1") != md_files(tmp_path / "s2")


def test_stats_and_layout(forest):
    root, stats, nodes = forest
    assert stats["nodes"] == N == len(nodes)
    assert stats["branches"] == sum(1 for fm, _, _ in nodes.values() if fm["type"] == "branch")
    assert stats["datasets"] == len(list(root.rglob("*.db"))) >= 1
    assert stats["markdown_bytes"] == sum(p.stat().st_size for *_, p in nodes.values())
    assert (root / ".gitignore").read_text() == "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n"
    depth = max(i.count("/") for i, (fm, _, _) in nodes.items() if fm["type"] == "branch")
    assert depth == 3  # a/b/c/_index


def test_every_node_parses_with_required_keys(forest):
    _, _, nodes = forest
    for node_id, (fm, body, path) in nodes.items():
        assert fm["id"] == node_id
        for key in ("type", "title", "summary"):
            assert isinstance(fm[key], str) and fm[key], (node_id, key)
        assert DATE_RE.match(fm["created"]) and DATE_RE.match(fm["updated"]), node_id
        assert fm["created"] <= fm["updated"]
        assert fm["type"] in DEFAULT_TYPES
        assert len(fm["summary"]) <= 200 and "\n" not in fm["summary"]
        assert not fm["summary"].lower().startswith(("this document describes", "file containing"))
        assert body.startswith(f"# {fm['title']}\n")
        raw = path.read_bytes()
        assert raw.endswith(b"\n") and not raw.endswith(b"\n\n") and b"\r" not in raw
        if fm["type"] == "entity":
            assert fm["entity_kind"] in {"person", "organization", "product", "place", "other"}
        tags = fm.get("tags", [])
        assert 0 < len(tags) <= 4 or fm["type"] == "branch" or node_id == "_meta/schema"
        assert all(t == t.lower() for t in tags)


def test_leaf_bodies(forest):
    _, _, nodes = forest
    leaves = [
        (fm, b)
        for fm, b, _ in nodes.values()
        if fm["type"] not in ("branch", "dataset") and fm["id"] != "_meta/schema"
    ]
    assert {fm["type"] for fm, _ in leaves} == {"note", "document", "concept", "event", "entity"}
    for fm, body in leaves:
        words = len(body.split())
        assert 180 <= words <= 2600, (fm["id"], words)
        outline = [m for m in HEADER_RE.finditer(body) if len(m.group(1)) in (2, 3)]
        assert 2 <= len(outline) <= 8, fm["id"]
        assert "\n\n" in body
    text = "\n".join(b for _, b in leaves)
    assert re.search(r"\b(INV-\d{4}-\d{4}|SKU-\d{5})\b", text)
    assert "```" in text and "\n- " in text
    assert re.search(r"[ãçéóâêô]", text)
    assert any(fm.get("aliases") for fm, _ in leaves)


def test_links_and_wikilinks_resolve(forest):
    _, stats, nodes = forest
    total = 0
    for node_id, (fm, body, _) in nodes.items():
        links = fm.get("links", [])
        assert len(links) <= 50
        pairs = [(lk["rel"], lk["target"]) for lk in links]
        assert len(pairs) == len(set(pairs)), node_id
        for rel, target in pairs:
            assert rel in DEFAULT_RELS
            assert target in nodes and target != node_id
        total += len(links)
        for target in WIKILINK_RE.findall(body):
            assert target.strip() in nodes, (node_id, target)
    assert total == stats["links"]
    leaves = stats["leaves"]
    assert 1.5 <= total / leaves <= 3.0


def test_indexes_list_children_with_correct_coverage(forest):
    _, _, nodes = forest
    for node_id, (fm, body, _) in nodes.items():
        if fm["type"] != "branch":
            continue
        folder = "" if node_id == "_index" else node_id[: -len("_index")]
        heads = [m.group(2) for m in HEADER_RE.finditer(body) if len(m.group(1)) == 2]
        want = ["Sub-branches", "Direct bananas", "Cross trails"]
        assert heads == (want + ["Landmarks"] if node_id == "_index" else want)
        subs = [ENTRY_RE.match(x) for x in section(body, "Sub-branches").splitlines() if x]
        bananas = [ENTRY_RE.match(x) for x in section(body, "Direct bananas").splitlines() if x]
        assert all(subs) and all(bananas), node_id
        m = COVERAGE_RE.match(fm["coverage"])
        assert m and (int(m[1]), int(m[2])) == (len(bananas), len(subs)), node_id
        children = {
            i
            for i in nodes
            if i != node_id
            and i.startswith(folder)
            and i[len(folder) :].count("/") == (1 if i.endswith("/_index") else 0)
            and not i.startswith("_meta/")
        }
        listed = {e[1] for e in subs + bananas}
        assert listed == children, node_id
        for e in subs + bananas:
            assert e[2] == nodes[e[1]][0]["summary"]


def test_master_index_and_schema(forest):
    _, _, nodes = forest
    fm, body, _ = nodes["_index"]
    assert fm["id"] == "_index" and fm["type"] == "branch"
    landmarks = [x for x in section(body, "Landmarks").splitlines() if x]
    assert 1 <= len(landmarks) <= 20
    assert all(
        ENTRY_RE.match(x) and nodes[ENTRY_RE.match(x)[1]][0]["type"] != "branch" for x in landmarks
    )
    sfm, sbody, _ = nodes["_meta/schema"]
    assert sfm["type"] == "note"
    rows = re.findall(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*)\|", sbody, re.MULTILINE)
    rel_part = sbody.split("## Edge rels")[1]
    rels = dict(re.findall(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*)\|", rel_part, re.MULTILINE))
    assert set(rels) == DEFAULT_RELS
    assert rels["discovered-shortcut"].strip() == "—"
    assert rels["part-of"].strip() == "`contains`"
    assert {t for t, _ in rows} - set(rels) == DEFAULT_TYPES


def test_datasets(forest):
    root, stats, nodes = forest
    datasets = [(fm, body, p) for fm, body, p in nodes.values() if fm["type"] == "dataset"]
    assert len(datasets) == stats["datasets"]
    hit_max = False
    for fm, body, path in datasets:
        db = path.parent / fm["payload"]
        assert fm["payload"] == path.stem + ".db" and fm["payload_type"] == "sqlite"
        assert fm["payload_hash"] == hashlib.sha256(db.read_bytes()).hexdigest()
        heads = [m.group(2) for m in HEADER_RE.finditer(body) if len(m.group(1)) == 2]
        assert heads == ["Query manual", "Sample rows", "Notes"]
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        tables = [
            r[0]
            for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY rowid")
        ]
        assert 1 <= len(tables) <= 3
        manual, samples = section(body, "Query manual"), section(body, "Sample rows")
        for t in tables:
            cols = con.execute(f"PRAGMA table_info({t})").fetchall()
            assert 3 <= len(cols) <= 12
            sig = ", ".join(f"{c[1]} {c[2]}" for c in cols)
            assert f"- `{t}({sig})`" in manual
            assert f"`SELECT * FROM {t} LIMIT 5`" in manual
            assert f"`SELECT COUNT(*) FROM {t}`" in manual
            n = con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            assert 10 <= n <= ROWS
            hit_max |= n == ROWS
            assert f"### {t} — {n} rows\n" in samples
            first = con.execute(f"SELECT * FROM {t} LIMIT 1").fetchone()
            assert "| " + " | ".join(
                str(x) if x is not None else "" for x in first
            ) in samples.replace("\\|", "|")
        con.close()
    assert hit_max


def test_frontmatter_renderer_round_trips():
    fm = {
        "id": "_index",
        "type": "branch",
        "title": "Yes",
        "summary": "a: b # c — ã 'q' \"d\"",
        "coverage": "3 bananas, 0 sub-branches",
        "created": "2024-01-02",
        "updated": "2024-01-03",
        "tags": ["true", "null", "2024", "ok"],
        "links": [{"rel": "related-to", "target": "1/x", "confidence": 0.5, "note": "n: o"}],
    }
    assert yaml.safe_load(render_frontmatter(fm)) == fm


def test_cli_git_single_commit(tmp_path, capsys):
    out = tmp_path / "g"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.generate",
            "--nodes",
            "60",
            "--out",
            str(out),
            "--seed",
            "5",
            "--git",
            "--max-rows",
            "50",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    stats = json.loads(res.stdout)
    assert stats["nodes"] == 60 and res.stdout.count("\n") == 1
    log = subprocess.run(
        ["git", "log", "--format=%an <%ae>|%s"], cwd=out, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert log == ["vine <vine@monkeyllm.local>|init: synthetic forest (60 nodes, seed 5)"]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=out, check=True, capture_output=True, text=True
    ).stdout.split()
    assert ".gitignore" in tracked and all(t.endswith(".md") for t in tracked if t != ".gitignore")
    assert len(tracked) == 61
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=out, check=True, capture_output=True, text=True
    ).stdout
    assert status == ""  # payloads are ignored, nothing left over
    assert main(["--nodes", "60", "--out", str(out)]) == 2  # refuses an existing forest
    assert "already holds a forest" in capsys.readouterr().err
