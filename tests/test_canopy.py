"""The Canopy with an OpenAI-compatible endpoint (a real HTTP server on 127.0.0.1):
building, staying true to the files (plant, graft, outside edits, deletions), batching,
the embedder mismatch, a provider that fails, hangs or answers garbage, and the
``hybrid`` parameter on every surface."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from monkeyllm import Vine
from monkeyllm.canopy import hybrid

from .embedkit import EmbedServer
from .forestkit import copy_sample, git_init, node, reader

PARAPHRASE = "handover timeframes"


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with EmbedServer() as srv:
        yield srv


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    root = copy_sample(tmp_path / "brain")
    git_init(root)
    return root


def http(srv: EmbedServer, **extra: object) -> dict[str, object]:
    return {"kind": "http", "model": srv.model, "url": srv.url, **extra}


def inputs(srv: EmbedServer) -> list[list[str]]:
    """The inputs of every request, in order."""
    return [s.body["input"] for s in srv.requests]


def ids(response: dict) -> list[str]:
    return [r["id"] for r in response["results"]]


@contextlib.contextmanager
def embedded(forest: Path, server: EmbedServer, *, writable: bool = False) -> Iterator[Vine]:
    """A Vine on ``forest`` (heat off) once its Canopy is built with ``server``'s embedder."""
    with Vine(forest, writable=writable, alpha=0) as vine:
        vine.canopy_build(http(server))
        yield vine


def built(forest: Path, server: EmbedServer) -> None:
    """The Canopy of ``forest`` built with ``server``'s embedder, then closed."""
    with embedded(forest, server):
        pass


def test_build_records_the_embedder_and_embeds_every_node_in_batches(
    forest: Path, server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIT_KEY", "sk-secret-123")
    with Vine(forest, writable=False) as vine:
        done = []
        out = vine.canopy_build(
            http(server, api_key_env="KIT_KEY", batch=20), progress=lambda d, n: done.append((d, n))
        )
        nodes = vine._forest.catalog.count()
    assert out["embedded"] == nodes and out["stale"] == 0 and out["built"]["embedded"] == nodes
    assert out["embedder"]["name"] == "http" and out["embedder"]["model"] == "kit-embed"
    assert out["embedder"]["dim"] == 64 and out["matches"] is True
    assert [len(batch) for batch in inputs(server)][:-1] == [20] * (len(server.requests) - 1)
    assert sum(len(b) for b in inputs(server)) == nodes
    assert done[0] == (0, nodes) and done[-1] == (nodes, nodes)
    assert {s.authorization for s in server.requests} == {"Bearer sk-secret-123"}
    manifest = (forest / "_derived" / "canopy" / "index.json").read_text()
    assert "KIT_KEY" in manifest and "sk-secret-123" not in manifest
    assert json.loads(manifest)["embedder"]["config"]["url"] == server.url
    # Never in git: _derived/ is ignored.
    assert (
        "_derived"
        not in subprocess.run(
            ["git", "status", "--porcelain"], cwd=forest, capture_output=True, text=True
        ).stdout
    )


def test_hybrid_finds_a_paraphrase_that_lexical_ranking_misses(
    forest: Path, server: EmbedServer
) -> None:
    with reader(forest) as vine:
        before = vine.locate(PARAPHRASE, k=3)
        asked = vine.locate(PARAPHRASE, k=3, hybrid=True)
        vine.canopy_build(http(server))
        lexical = vine.locate(PARAPHRASE, k=3, hybrid=False)
        fused = vine.locate(PARAPHRASE, k=3)
    assert before["hybrid"] == {"ran": False, "reason": "no-index"}
    assert "vine canopy build" in asked["hybrid"]["note"]
    assert asked["hybrid"]["reason"] == "no-index" and ids(asked) == ids(before)
    assert lexical["hybrid"] == {"ran": False, "reason": "off"}
    assert ids(lexical) == ids(before)
    assert fused["hybrid"] == {"ran": True, "model": "kit-embed"}
    assert "sales/exchange-policy" in ids(fused)
    assert "sales/exchange-policy" not in ids(lexical)
    scores = [r["score"] for r in fused["results"]]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0


def test_harvest_fuses_its_locate_leg_and_says_so(forest: Path, server: EmbedServer) -> None:
    with embedded(forest, server) as vine:
        fused = vine.harvest(PARAPHRASE, k=3, hybrid=True)
        lexical = vine.harvest(PARAPHRASE, k=3, hybrid=False)
        auto = vine.harvest(PARAPHRASE, k=3)
    assert fused["hybrid"]["ran"] is True and lexical["hybrid"]["reason"] == "off"
    # auto ranks harvest lexically (fusion measured no better there: bench/README.md).
    assert auto["hybrid"]["reason"] == "auto-lexical" and ids(auto) == ids(lexical)
    assert "sales/exchange-policy" in ids(fused)


def test_a_query_vector_is_asked_for_once_per_process(forest: Path, server: EmbedServer) -> None:
    with Vine(forest, writable=False) as vine:
        vine.canopy_build(http(server))
        server.requests.clear()
        for _ in range(3):
            assert vine.locate("exchange deadlines")["hybrid"]["ran"]
    assert inputs(server) == [["exchange deadlines"]]


def test_writes_re_embed_only_what_changed_on_the_next_hybrid_read(
    forest: Path, server: EmbedServer
) -> None:
    with embedded(forest, server, writable=True) as vine:
        server.requests.clear()
        planted = vine.plant(
            node(
                "sales/trade-in",
                "sales/_index",
                "Trade-in programme",
                "Old kettles swapped for a voucher in stores.",
            )
        )
        assert "error" not in planted
        # The write asks nothing of the embedder; the next read embeds the new node
        # only (the branch whose index gained a line kept its title and summary).
        assert server.requests == []
        vine.locate("voucher for old kettles")
        docs = [batch for batch in inputs(server) if batch != ["voucher for old kettles"]]
        assert [len(d) for d in docs] == [1] and "Trade-in programme" in docs[0][0]
        server.requests.clear()
        vine.graft("sales/trade-in", {"append_section": {"header": "Notes", "body": "Body only."}})
        vine.locate("voucher for old kettles")
        assert inputs(server) == []  # a body edit changes no embedded text
        vine.graft(
            "sales/trade-in",
            {"set_frontmatter": {"summary": "Old appliances exchanged for store credit."}},
        )
        vine.locate("store credit for appliances")
        sent = [b for b in inputs(server) if b != ["store credit for appliances"]]
        assert len(sent) == 1 and len(sent[0]) == 1
        assert "store credit" in sent[0][0]
        assert vine.canopy_status()["stale"] == 0


def test_an_outside_edit_is_stale_until_a_read_or_a_build_embeds_it(
    forest: Path, server: EmbedServer
) -> None:
    built(forest, server)
    path = forest / "finance" / "fx-policy.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "title: Currency hedging policy", "title: Currency hedging and voucher policy"
        ),
        encoding="utf-8",
    )
    (forest / "people" / "org-chart.md").unlink()
    with reader(forest) as vine:
        status = vine.canopy_status()
        assert status["stale"] == 1
        assert status["embedded"] == vine._forest.catalog.count()  # the deleted one went
        server.requests.clear()
        out = vine.locate("voucher")
        assert out["hybrid"]["ran"] is True
        assert any(
            "voucher" in text for batch in inputs(server) for text in batch if batch != ["voucher"]
        )
        assert vine.canopy_status()["stale"] == 0


def test_a_backlog_larger_than_a_read_embeds_is_reported_stale(
    forest: Path, server: EmbedServer
) -> None:
    built(forest, server)
    for n in range(hybrid.INLINE + 3):
        (forest / "sales" / f"extra-{n}.md").write_text(
            f"---\ntype: note\ntitle: Extra {n}\nsummary: Extra note {n}.\n---\n", encoding="utf-8"
        )
    with reader(forest) as vine:
        out = vine.locate("extra note")
        assert out["hybrid"]["ran"] is True and out["hybrid"]["stale"] == 3
        assert "vine canopy build" in out["hybrid"]["note"]
        assert vine.canopy_build()["stale"] == 0


def test_an_embedder_that_does_not_match_the_index_is_never_compared(
    forest: Path, server: EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with embedded(forest, server) as vine:
        lexical = vine.locate(PARAPHRASE, hybrid=False)
    monkeypatch.setenv(hybrid.ENV_URL, server.url)
    monkeypatch.setenv(hybrid.ENV_MODEL, "another-model")
    server.requests.clear()
    with reader(forest) as vine:
        out = vine.locate(PARAPHRASE, hybrid=True)
        status = vine.canopy_status()
    assert out["hybrid"]["ran"] is False and out["hybrid"]["reason"] == "mismatch"
    assert "kit-embed" in out["hybrid"]["note"] and "another-model" in out["hybrid"]["note"]
    assert ids(out) == ids(lexical)
    assert server.requests == []
    assert status["matches"] is False and "another-model" in status["mismatch"]


def test_a_query_vector_of_another_size_is_a_mismatch(forest: Path, server: EmbedServer) -> None:
    with embedded(forest, server) as vine:
        server.dim = 32  # the endpoint now serves another model
        out = vine.locate(PARAPHRASE)
    assert out["hybrid"]["reason"] == "mismatch" and "32" in out["hybrid"]["note"]


@pytest.mark.parametrize("mode", ["fail", "garbage", "down"])
def test_a_failing_provider_falls_back_to_lexical_and_says_so(
    forest: Path, server: EmbedServer, mode: str
) -> None:
    with embedded(forest, server) as vine:
        lexical = vine.locate("exchange deadlines", hybrid=False)
        if mode == "down":
            server.stop()
        else:
            server.mode = mode
        started = time.monotonic()
        out = vine.locate("exchange deadlines")
        again = vine.harvest("exchange deadlines", hybrid=True)
        took = time.monotonic() - started
    assert out["hybrid"]["ran"] is False and out["hybrid"]["reason"] == "provider"
    assert ids(out) == ids(lexical)
    assert again["hybrid"]["reason"] == "provider" and "retrying" in again["hybrid"]["note"]
    assert took < hybrid.RETRY_AFTER_S
    expected = {
        "fail": "HTTP 503: model is overloaded",
        "garbage": "not JSON",
        "down": "could not reach",
    }[mode]
    assert expected in out["hybrid"]["note"]


def test_a_provider_that_hangs_costs_a_read_its_timeout_once(
    forest: Path, server: EmbedServer
) -> None:
    with reader(forest) as vine:
        vine.canopy_build(http(server, timeout_s=0.5))
        server.mode, server.sleep_s = "slow", 5.0
        started = time.monotonic()
        out = vine.locate("kettle warranty")
        first = time.monotonic() - started
        started = time.monotonic()
        second = vine.locate("grinder promotion")
        later = time.monotonic() - started
    assert out["hybrid"]["reason"] == "provider" and "0.5 s" in out["hybrid"]["note"]
    assert first < 2.5
    assert second["hybrid"]["reason"] == "provider" and later < 0.5


def test_a_build_against_a_failing_provider_is_an_envelope_and_keeps_nothing_half_done(
    forest: Path, server: EmbedServer
) -> None:
    from monkeyllm.errors import VineError

    server.mode = "fail"
    with Vine(forest, writable=False) as vine:
        with pytest.raises(VineError) as caught:
            vine.canopy_build(http(server))
        assert caught.value.envelope()["error"]["code"] == "E_PROVIDER"
        assert vine.canopy_status()["index"] is False
        assert vine.locate("exchange")["hybrid"]["reason"] == "no-index"


def test_another_embedder_rebuilds_and_drop_removes_the_canopy(
    forest: Path, server: EmbedServer
) -> None:
    with Vine(forest, writable=False) as vine:
        vine.canopy_build(http(server))
        out = vine.canopy_build(http(server, model="kit-embed-2"))
        assert out["built"]["replaced"] == "http:kit-embed"
        assert out["embedder"]["model"] == "kit-embed-2"
        assert out["built"]["embedded"] == out["nodes"]
        dropped = vine.canopy_drop()
        assert dropped["dropped"] is True
        assert not (forest / "_derived" / "canopy").exists()
        assert vine.locate("exchange")["hybrid"]["reason"] == "no-index"
        assert vine.canopy_drop()["dropped"] is False


@pytest.mark.parametrize("bad", ["yes", 1, None, ["auto"]])
def test_hybrid_takes_auto_true_or_false(forest: Path, bad: object) -> None:
    with Vine(forest, writable=False) as vine:
        out = vine.call("locate", {"query": "exchange", "hybrid": bad})
        harvest = vine.call("harvest", {"query": "exchange", "hybrid": bad})
    if bad is None:
        assert out["hybrid"]["reason"] == "no-index"
        return
    assert out["error"]["code"] == "E_SCHEMA" and "hybrid" in out["error"]["message"]
    assert harvest["error"]["code"] == "E_SCHEMA"


def test_bad_embedder_configurations_are_schema_errors(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from monkeyllm.errors import VineError

    with Vine(forest, writable=False) as vine:
        for bad in (
            {"kind": "http", "model": "m", "url": "ftp://x"},
            {"kind": "local", "model": "no-such-model"},
            {"kind": "http", "model": "", "url": "http://127.0.0.1:9"},
            {"kind": "http", "model": "m", "url": "http://x", "timeout_s": 0},
        ):
            with pytest.raises(VineError) as caught:
                vine.canopy_build(bad)
            assert caught.value.code == "E_SCHEMA"
        monkeypatch.setenv(hybrid.ENV_URL, "http://127.0.0.1:9/v1")
        (forest / "_derived" / "canopy").mkdir(parents=True)
        (forest / "_derived" / "canopy" / "index.json").write_text(
            json.dumps({"format": 1, "recipe": 1, "embedder": {"name": "http", "model": "m"}})
        )
        out = vine.locate("exchange")
    assert out["hybrid"]["reason"] == "config" and hybrid.ENV_MODEL in out["hybrid"]["note"]


def run_vine(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "monkeyllm.commands", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_cli_canopy_build_status_drop_and_locate_hybrid(forest: Path, server: EmbedServer) -> None:
    built = run_vine(
        "canopy",
        "build",
        "-f",
        str(forest),
        "--url",
        server.url,
        "--model",
        server.model,
        "--batch",
        "16",
    )
    assert built.returncode == 0, built.stderr
    out = json.loads(built.stdout)
    assert out["embedded"] == out["nodes"] and out["built"]["embedded"] == out["nodes"]
    status = json.loads(run_vine("canopy", "status", "-f", str(forest)).stdout)
    assert status["stale"] == 0 and status["embedder"]["model"] == "kit-embed"
    fused = json.loads(run_vine("locate", PARAPHRASE, "-f", str(forest), "-k", "3").stdout)
    assert fused["hybrid"]["ran"] is True
    lexical = json.loads(
        run_vine("locate", PARAPHRASE, "-f", str(forest), "-k", "3", "--hybrid", "false").stdout
    )
    assert lexical["hybrid"]["reason"] == "off"
    harvest = json.loads(
        run_vine("harvest", PARAPHRASE, "-f", str(forest), "--hybrid", "true").stdout
    )
    assert harvest["hybrid"]["ran"] is True
    wrong = run_vine("locate", "x", "-f", str(forest), "--hybrid", "maybe")
    assert wrong.returncode == 2
    dropped = json.loads(run_vine("canopy", "drop", "-f", str(forest)).stdout)
    assert dropped["dropped"] is True
    bad = run_vine("canopy", "build", "-f", str(forest), "--url", "http://127.0.0.1:9/v1")
    assert bad.returncode == 2 and "--model" in bad.stderr


def test_cli_build_against_an_unreachable_endpoint_is_an_envelope(forest: Path) -> None:
    done = run_vine(
        "canopy", "build", "-f", str(forest), "--url", "http://127.0.0.1:9/v1", "--model", "m"
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "E_PROVIDER"


def test_the_hybrid_parameter_is_in_every_surface_schema() -> None:
    from monkeyllm.registry import CALLS

    for name in ("locate", "harvest"):
        schema = CALLS[name].input_schema()["properties"]["hybrid"]
        assert schema["default"] == "auto"
        assert {"type": "boolean"} in schema["anyOf"]
        assert {"type": "string", "enum": ["auto"]} in schema["anyOf"]


@pytest.mark.parametrize("damage", ["vectors", "manifest"])
def test_a_damaged_canopy_ranks_lexically_and_a_rebuild_repairs_it(
    forest: Path, server: EmbedServer, damage: str
) -> None:
    with embedded(forest, server) as vine:
        lexical = vine.locate("exchange deadlines", hybrid=False)
    folder = forest / "_derived" / "canopy"
    target = folder / ("vectors.db" if damage == "vectors" else "index.json")
    for extra in ("vectors.db-wal", "vectors.db-shm"):
        (folder / extra).unlink(missing_ok=True)
    target.write_bytes(b"this is not what it should be" * 100)
    with reader(forest) as vine:
        out = vine.locate("exchange deadlines")
        assert out["hybrid"]["ran"] is False and out["hybrid"]["reason"] == "index"
        assert "--rebuild" in out["hybrid"]["note"]
        assert ids(out) == ids(lexical)
        harvested = vine.call("harvest", {"query": "exchange deadlines", "hybrid": True})
        assert harvested["hybrid"]["reason"] == "index"
        if damage == "vectors":
            from monkeyllm.errors import VineError

            assert "damaged" in vine.canopy_status()["mismatch"]
            with pytest.raises(VineError) as caught:
                vine.canopy_build(http(server))
            assert "--rebuild" in (caught.value.hint or "")
        vine.canopy_build(http(server), rebuild=True)
        assert vine.locate("exchange deadlines")["hybrid"]["ran"] is True


def test_a_moved_node_keeps_its_vector_and_a_deleted_one_loses_it(
    forest: Path, server: EmbedServer
) -> None:
    """A node whose file moves (as a transplant or a git mv moves it) is not re-embedded:
    its vector follows it to its new id."""
    with embedded(forest, server) as vine:
        count = vine.canopy_status()["embedded"]
    (forest / "finance" / "fx-policy.md").rename(forest / "finance" / "hedging-policy.md")
    (forest / "people" / "org-chart.md").unlink()
    server.requests.clear()
    with reader(forest) as vine:
        out = vine.locate("currency hedging")
        status = vine.canopy_status()
        index = vine._forest.canopy
        assert "finance/hedging-policy" in index._pos and "finance/fx-policy" not in index._pos
    assert out["hybrid"]["ran"] is True and "stale" not in out["hybrid"]
    assert [b for b in inputs(server) if b != ["currency hedging"]] == []
    assert status["embedded"] == count - 1 and status["stale"] == 0
    assert "finance/hedging-policy" in ids(out)


def test_transplant_re_embeds_nothing_and_prune_drops_the_vector(
    forest: Path, server: EmbedServer
) -> None:
    with embedded(forest, server, writable=True) as vine:
        count = vine.canopy_status()["embedded"]
        server.requests.clear()
        moved = vine.transplant("finance/fx-policy", "sales/fx-policy")
        assert "error" not in moved, moved
        out = vine.locate("currency hedging")
        assert out["hybrid"]["ran"] is True
        assert "sales/fx-policy" in ids(out)
        # The moved node's text is unchanged: nothing is embedded but the query.
        assert [b for b in inputs(server) if b != ["currency hedging"]] == []
        pruned = vine.prune("finance/dso", force=True)
        assert "error" not in pruned, pruned
        vine.locate("days sales outstanding")
        status = vine.canopy_status()
        index = vine._forest.canopy
        assert "finance/dso" not in index._pos and "finance/fx-policy" not in index._pos
        assert status["stale"] == 0 and status["embedded"] == vine._forest.catalog.count()
        assert status["embedded"] <= count + 1


def test_a_reader_sees_another_vines_build_and_re_embeds(forest: Path, server: EmbedServer) -> None:
    """Two Vines on one forest (as a server and a `vine canopy build` are): what one
    builds or re-embeds, the other's next read uses."""
    with reader(forest) as watcher, reader(forest) as builder:
        assert watcher.locate(PARAPHRASE)["hybrid"]["reason"] == "no-index"
        builder.canopy_build(http(server))
        fused = watcher.locate(PARAPHRASE)
        assert fused["hybrid"]["ran"] is True and "sales/exchange-policy" in ids(fused)
        path = forest / "finance" / "fx-policy.md"
        path.write_text(
            path.read_text(encoding="utf-8").replace(
                "title: Currency hedging policy", "title: Handover timeframes for currency"
            ),
            encoding="utf-8",
        )
        builder.canopy_build()
        server.requests.clear()
        out = watcher.locate(PARAPHRASE)
        assert [b for b in inputs(server) if b != [PARAPHRASE]] == []  # nothing left
        assert "finance/fx-policy" in ids(out)
        assert watcher._forest.canopy.count == builder._forest.canopy.count
