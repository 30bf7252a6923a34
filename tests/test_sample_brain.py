"""sample-brain/ is a real, valid forest with its own history, and the call contract's examples
work on it literally."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import yaml

from monkeyllm import Vine

from .forestkit import HISTORY, SAMPLE, assert_ok


def _frontmatter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("\n---\n", 1)[0][4:])


def test_every_file_is_a_well_formed_node(brain: Vine) -> None:
    assert brain.problems() == []
    out = assert_ok(brain.scan("_index", recursive=True, fields=["id", "type"], limit=50, after=""))
    assert out["total"] >= 40


def test_the_bundle_is_sample_brains_history(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(HISTORY), str(clone)], check=True)
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=clone, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert len(log) > 5 and log[-1].startswith("init: forest")
    tracked = {
        p.relative_to(clone) for p in clone.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    expected = {
        p.relative_to(SAMPLE)
        for p in SAMPLE.rglob("*")
        if p.is_file()
        and (p.suffix == ".md" or p.name == ".gitignore")
        and "_derived" not in p.parts
    }
    assert tracked == expected
    for rel in expected:
        assert (clone / rel).read_bytes() == (SAMPLE / rel).read_bytes(), rel


def test_links_resolve_and_payloads_match_their_hash(brain: Vine) -> None:
    ids = set()
    files = [p for p in SAMPLE.rglob("*.md") if "_derived" not in p.parts]
    for path in files:
        ids.add(str(path.relative_to(SAMPLE))[:-3])
    datasets = 0
    for path in files:
        meta = _frontmatter(path)
        assert meta["id"] == str(path.relative_to(SAMPLE))[:-3]
        for link in meta.get("links") or []:
            assert link["target"] in ids, (meta["id"], link)
        if meta.get("payload"):
            datasets += 1
            payload = path.parent / meta["payload"]
            assert hashlib.sha256(payload.read_bytes()).hexdigest() == meta["payload_hash"]
    assert datasets >= 2


def test_the_seeds_examples_work_literally(brain: Vine) -> None:
    top = assert_ok(brain.locate("exchange policy deadlines", k=3))["results"]
    assert top[0]["id"] == "sales/exchange-policy"
    digest = assert_ok(brain.look("sales/exchange-policy"))
    assert digest["outline"] == ["Channels", "Deadlines", "Invoice rules"]
    assert {"rel": "mentions", "source": "people/ana-ribeiro"} in digest["edges_in"]
    sniffed = assert_ok(brain.sniff(["NF-4412", "exchange"], scope="sales", k=5))
    assert sniffed["results"][0]["id"] == "sales/exchange-policy"
    assert any("NF-4412" in m["snippet"] for m in sniffed["results"][0]["matches"])
    orders = assert_ok(
        brain.query(
            "sales/orders-2026",
            "SELECT region, COUNT(*) AS orders FROM orders GROUP BY region ORDER BY orders DESC",
        )
    )
    assert orders["columns"] == ["region", "orders"]
    assert orders["rows"][0][0] == "Southeast"
    dataset = assert_ok(brain.look("sales/orders-2026"))
    assert "value_cents" in dataset["query_manual"]["tables"]["orders"]
    assert "SUM() returns 0" in dataset["notes"]
    scan = assert_ok(
        brain.scan(
            "_index",
            filter={"type": "dataset", "tags_any": ["sales"]},
            fields=["id", "summary", "payload_type"],
            recursive=True,
        )
    )
    assert {"sales/orders-2026", "sales/pipeline/prospects-q2"} <= {n["id"] for n in scan["nodes"]}
    agreement = assert_ok(brain.pick("contracts/master-agreement"))
    assert agreement["truncated"] is True and agreement["body_tokens"] > 4000


def test_english_and_portuguese(brain: Vine) -> None:
    assert brain.sniff("devolução")["results"]
    assert brain.sniff("devolucao")["results"]
