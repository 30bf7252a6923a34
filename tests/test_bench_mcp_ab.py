"""``python -m bench.mcp_ab`` runs two real ``vine serve --transport http`` processes
alternately on a small generated forest and splits each round trip into the server's
own time, the protocol's and the client's output-schema check."""

from __future__ import annotations

import os
from pathlib import Path

from bench import mcp_ab
from bench.generate import generate
from tests.mcpkit import VINE


def test_two_servers_alternate_and_each_call_is_split(tmp_path: Path) -> None:
    root = tmp_path / "forest"
    generate(root, 300, seed=3, git=True, max_rows=50)
    here = os.environ.get("PYTHONPATH", "")
    results = mcp_ab.measure(
        {"a": VINE, "b": VINE}, root, rounds=6, sessions=2, seed=3, paths={"a": here, "b": here}
    )
    assert set(results) == {"a", "b"}
    for runs in results.values():
        assert len(runs) == 2
        for figures in runs:
            for call in ("look", "locate"):
                row = figures[call]
                assert row["round trip"] > row["protocol"] > 0, (call, row)
                assert row["server"] is not None and row["server"] >= 0
                # This server declares output schemas, so the SDK's client checks each.
                assert row["schema check"] > 0, (call, row)
    text = mcp_ab.render(results)
    assert "| a |" in text and "| b |" in text and "protocol ratio" in text
    assert text.count(" 1.00 |") >= 2  # the first server against itself, per call
