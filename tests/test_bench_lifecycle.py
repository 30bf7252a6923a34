"""``python -m bench.lifecycle`` runs end to end on a small git-backed forest."""

from __future__ import annotations

from pathlib import Path

from bench import lifecycle
from bench.generate import generate


def test_the_lifecycle_benchmark_runs(tmp_path: Path) -> None:
    root = tmp_path / "forest"
    generate(root, 400, seed=3, git=True, max_rows=50)
    figures = lifecycle.bench(root, rounds=3, seed=3)
    for name in (
        "plant (reference)",
        "prune",
        "prune --force",
        "transplant",
        "history",
        "calendar",
        "coverage",
        "git log -n 21 -- path, alone",
    ):
        assert figures[name]["n"] >= 3 and figures[name]["median"] > 0, name
    assert figures["commits in the forest"] >= 13
    assert isinstance(figures["transplant per backlink"], float)
    text = lifecycle.render(figures)
    assert "transplant per backlink" in text and "<= 30" in text
