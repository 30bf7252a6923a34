"""The retrieval question set (bench/questions.json) and the quality bench that reads it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.quality import HOLDOUT, QUESTIONS, load_questions, main, measure, render_quality
from monkeyllm import Vine

KEYS = {"id", "lang", "question", "expected", "kind", "note"}
KINDS = {"two-nodes", "code", "body-only", "metadata", "cross-language"}
MINIMUM = {"two-nodes": 5, "code": 5, "body-only": 5}
RANKER_KEYS = {
    "available",
    "n",
    "recall",
    "answered",
    "answered_count",
    "tokens",
    "latency_ms",
    "by_lang",
    "by_kind",
    "unstable",
    "errors",
}


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    return load_questions(QUESTIONS)


def subset(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One question of each language and one needing two nodes."""
    by_id = {q["id"]: q for q in questions}
    en = next(q for q in questions if q["lang"] == "en")
    pt = next(q for q in questions if q["lang"] == "pt")
    two = next(q for q in questions if "two-nodes" in q["kind"])
    return [by_id[i] for i in dict.fromkeys([en["id"], pt["id"], two["id"]])]


@pytest.mark.parametrize(("path", "least"), [(QUESTIONS, 24), (HOLDOUT, 12)])
def test_questions_are_well_formed(path: Path, least: int) -> None:
    questions = load_questions(path)
    assert len(questions) >= least
    for q in questions:
        assert set(q) == KEYS, q["id"]
        assert q["lang"] in {"en", "pt"}
        assert isinstance(q["question"], str) and q["question"].strip()
        assert q["expected"] and all(isinstance(e, str) for e in q["expected"])
        assert len(set(q["expected"])) == len(q["expected"]), q["id"]
        assert set(q["kind"]) <= KINDS and q["kind"], q["id"]
        assert ("two-nodes" in q["kind"]) == (len(q["expected"]) >= 2), q["id"]
        assert q["note"].strip()
    ids = [q["id"] for q in questions]
    assert len(set(ids)) == len(ids)


def test_questions_cover_both_languages_and_every_kind(questions: list[dict[str, Any]]) -> None:
    langs = Counter(q["lang"] for q in questions)
    assert set(langs) == {"en", "pt"}
    assert min(langs.values()) >= len(questions) // 3
    kinds = Counter(tag for q in questions for tag in q["kind"])
    for kind, least in MINIMUM.items():
        assert kinds[kind] >= least, kind


def test_the_held_out_set_asks_new_questions(questions: list[dict[str, Any]]) -> None:
    held = load_questions(HOLDOUT)
    assert not {q["id"] for q in held} & {q["id"] for q in questions}
    assert not {q["question"] for q in held} & {q["question"] for q in questions}


@pytest.mark.parametrize("path", [QUESTIONS, HOLDOUT])
def test_every_expected_id_exists(brain: Vine, path: Path) -> None:
    for q in load_questions(path):
        for node_id in q["expected"]:
            digest = brain.look(node_id, fields=["title"])
            assert "error" not in digest, (q["id"], node_id, digest)


def test_measure_reports_every_figure(sample_root: Path, questions: list[dict[str, Any]]) -> None:
    chosen = subset(questions)
    figures = measure(sample_root, chosen, k=3, rounds=2)
    assert {
        "forest",
        "questions",
        "k",
        "rounds",
        "alpha",
        "heat",
        "rankers",
        "answers",
        "misses",
    } <= set(figures)
    assert figures["alpha"] == 0 and figures["questions"] == len(chosen)
    locate = figures["rankers"]["locate"]
    assert RANKER_KEYS <= set(locate)
    assert 0 <= locate["recall"] <= 1 and locate["n"] == len(chosen)
    assert set(locate["by_lang"]) == {"en", "pt"}
    assert "two-nodes" in locate["by_kind"]
    assert locate["latency_ms"]["n"] == 2 * len(chosen)
    harvest = figures["rankers"]["harvest"]
    assert RANKER_KEYS <= set(harvest) if harvest["available"] else harvest["reason"]
    for answer in figures["answers"]:
        row = answer["locate"]
        assert len(row["ids"]) <= 3
        assert set(row["hits"]) <= set(row["ids"]) & set(answer["expected"])
        assert row["recall"] == len(row["hits"]) / len(answer["expected"])
        assert row["tokens"] > 0 and row["median_ms"] > 0
    assert render_quality(figures)


def test_a_ranker_the_engine_lacks_is_reported_not_raised(
    sample_root: Path, questions: list[dict[str, Any]]
) -> None:
    figures = measure(sample_root, questions[:1], rounds=1, rankers=["locate", "nowhere"])
    assert figures["rankers"]["nowhere"]["available"] is False
    assert "E_" in figures["rankers"]["nowhere"]["reason"]
    assert "nowhere" not in figures["answers"][0]
    assert any("unavailable" in line for line in render_quality(figures))


def test_main_prints_json(
    sample_root: Path,
    questions: list[dict[str, Any]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(questions[:2]), encoding="utf-8")
    assert (
        main(
            [
                "--forest",
                str(sample_root),
                "--questions",
                str(path),
                "--rounds",
                "1",
                "--json",
                "--no-scorecard",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["quality"]["questions"] == 2
    assert set(out["quality"]["rankers"]) == {"locate", "harvest"}


def test_the_default_run_adds_the_held_out_set_without_its_target(
    sample_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--forest", str(sample_root), "--rounds", "1", "--json", "--no-scorecard"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["quality"]["set"], out["quality"]["target"]) == ("questions.json", True)
    assert (out["holdout"]["set"], out["holdout"]["target"]) == ("holdout.json", False)
    assert out["holdout"]["questions"] == len(load_questions(HOLDOUT))
    assert main(["--forest", str(sample_root), "--rounds", "1", "--no-scorecard"]) == 0
    text = capsys.readouterr().out
    assert text.count("target: harvest recall@3") == 1
    assert "(holdout.json)" in text


# The levels harvest reached on each set: a change to the ranking that loses answers has
# to say so here. Word forms, function words, score-weighted fusion and linked evidence
# took the question set from 0.938 to 0.891 and the held-out set from 0.812 to 0.792
# (cross-language questions whose English answer now meets Portuguese nodes that share
# the question's word forms: bench/README.md), while the frozen set went from 0.631 to
# 0.794. A fixed pool for every k (harvest(k=3) is the first three of harvest(k=5)) then
# lost q09 on the question set (0.891 -> 0.859, a near tie: 0.0193 against 0.0164) and
# won h09 on the held-out one (0.792 -> 0.812), with frozen2, frozen3 and frozen4 up.
# Translations across the two languages (the lexicon) took them to 0.938 and 0.958.
@pytest.mark.parametrize(("path", "least"), [(QUESTIONS, 0.93), (HOLDOUT, 0.95)])
def test_harvest_keeps_its_recall(sample_root: Path, path: Path, least: float) -> None:
    """The level each set was at when the ranking last changed."""
    figures = measure(sample_root, load_questions(path), k=3, rounds=1, rankers=["harvest"])
    assert figures["rankers"]["harvest"]["recall"] >= least, figures["misses"]
