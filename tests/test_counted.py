"""Counts in what people read say "1 node" and "2 nodes", never "node(s)"."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from monkeyllm import Vine
from monkeyllm.commands.render import show
from monkeyllm.forest import coverage_phrase
from monkeyllm.text import counted

from .forestkit import assert_ok


def render(call: str, response: dict[str, Any]) -> str:
    out = Console(record=True, width=200, file=io.StringIO(), force_terminal=True)
    show(out, call, response)
    return out.export_text()


def test_counted_picks_the_form_the_count_needs() -> None:
    assert [counted(n, "node") for n in (0, 1, 2)] == ["0 nodes", "1 node", "2 nodes"]
    assert counted(1, "sub-branch", "sub-branches") == "1 sub-branch"
    assert counted(3, "sub-branch", "sub-branches") == "3 sub-branches"
    assert coverage_phrase(1, 2) == "1 banana, 2 sub-branches."


def test_one_row_reads_as_one_row(brain: Vine) -> None:
    response = assert_ok(
        brain.query("sales/pipeline/prospects-q2", "SELECT prospect_id FROM prospects LIMIT 1")
    )
    text = render("query", response)
    assert "1 row ·" in text and "(s)" not in text


def test_a_page_of_one_block_and_one_period_and_one_commit() -> None:
    reindex = render("reindex", {"nodes": 1, "skipped": 2, "elapsed_ms": 5})
    assert "Rebuilt the catalog: 1 node in 5 ms" in reindex and "2 files skipped" in reindex
    calendar = render(
        "calendar",
        {
            "granularity": "month",
            "buckets": [{"period": "2026-01", "nodes": 1, "since": "2026-01-02"}],
            "range": {"nodes": 1, "first": "2026-01-02", "last": "2026-01-02"},
            "undated": 0,
        },
    )
    assert "1 period" in calendar and "1 node, 2026-01-02 to 2026-01-02" in calendar
    history = render("history", {"id": "kb/a", "entries": [{"action": "plant"}]})
    assert "history of kb/a: 1 commit" in history and "(s)" not in history
    total = render("coverage", {"roots": [], "total": 1, "types": {}, "sources": {}})
    assert "1 node" in total and "0 regions" in total and "(s)" not in total


def test_envelopes_count_in_words(tmp_path) -> None:  # noqa: ANN001
    """The engine's own refusals read as people write: "1 link", not "1 link(s)"."""
    from .forestkit import git_init, leaf, make_forest

    root = make_forest(
        tmp_path / "f",
        {
            "kb/a": leaf("# A\n\nA.\n", title="A", summary="A.", links=[("related-to", "kb/b")]),
            "kb/b": leaf("# B\n\nB.\n", title="B", summary="B."),
        },
    )
    git_init(root)
    with Vine(root) as vine:
        pruned = vine.prune("kb/b")
    assert pruned["error"]["code"] == "E_ANCHORED"
    assert "linked from 1 link in other nodes" in pruned["error"]["message"]
