"""On a narrow terminal (40 columns, or 80 for the widest tables) the command line's
tables become rows stacked as ``header  value`` lines rather than columns three cells
wide, and an id (a sha) is never folded in the middle, so it can be copied back."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from monkeyllm import Vine
from monkeyllm.commands.render import show

from ..forestkit import assert_ok, copy_sample


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = copy_sample(tmp_path_factory.mktemp("narrow") / "brain", git=True)
    with Vine(root) as vine:
        yield vine


def shown(call: str, response: dict[str, Any], width: int) -> list[str]:
    out = Console(record=True, width=width, file=io.StringIO(), force_terminal=True)
    show(out, call, response)
    lines = out.export_text().splitlines()
    assert max(map(len, lines)) <= width, "\n".join(lines)
    return lines


def whole(ids: list[str], lines: list[str]) -> None:
    """Each id is on one line, with nothing of another id around it."""
    for id_ in ids:
        assert any(re.search(rf"(^|[\s│]){re.escape(id_)}(\s|│|$)", ln) for ln in lines), (
            id_,
            "\n".join(lines),
        )


CALLS = {
    "locate": (lambda v: v.locate("exchange policy", k=3), "results", "id"),
    "sniff": (lambda v: v.sniff(["NF-4412", "invoice"], k=3), "results", "id"),
    "scan": (lambda v: v.scan("sales", recursive=True), "nodes", "id"),
    "move": (lambda v: v.move("sales/exchange-policy", direction="both"), "neighbors", "id"),
    "harvest": (lambda v: v.harvest("exchange deadline", k=3), "results", "id"),
    "coverage": (lambda v: v.coverage(), "roots", "id"),
}


@pytest.mark.parametrize("width", [40, 80])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_ids_stay_whole_on_a_narrow_terminal(brain: Vine, call: str, width: int) -> None:
    ask, key, field = CALLS[call]
    response = assert_ok(ask(brain))
    ids = [item[field] for item in response[key]]
    assert ids
    whole(ids, shown(call, response, width))


def test_forty_columns_stack_the_rows_under_their_headers(brain: Vine) -> None:
    response = assert_ok(brain.locate("exchange policy", k=2))
    lines = shown("locate", response, 40)
    assert not any(ln.startswith(("┏", "┃")) for ln in lines)  # no table
    for header in ("id", "type", "title", "summary", "score", "heat"):
        assert sum(ln.startswith(f"{header}  ") for ln in lines) == 2, (header, lines)
    assert [ln[:3] for ln in lines if "─" in ln] == ["1  ", "2  "]


SQUEEZED = {
    "move": (lambda v: v.move("sales/exchange-policy"), "neighbors"),
    "sniff": (lambda v: v.sniff(["prazo"], k=3), "results"),
    "locate": (lambda v: v.locate("exchange policy", k=3), "results"),
}


@pytest.mark.parametrize("call", sorted(SQUEEZED))
def test_a_summary_is_never_squeezed_into_a_column_of_a_few_words(brain: Vine, call: str) -> None:
    """At 80 columns a table whose summary or snippet would get ten-odd cells (a
    two-line summary folded into a dozen lines) is shown as stacked rows instead."""
    ask, key = SQUEEZED[call]
    response = assert_ok(ask(brain))
    lines = shown(call, response, 80)
    prose = [item.get("summary") or "" for item in response[key]]
    prose += [m.get("snippet") or "" for item in response[key] for m in item.get("matches", [])]
    first = next(p for p in prose if len(p) > 60)
    opening = " ".join(first.split()[:5])
    assert any(opening in ln for ln in lines), (opening, lines)


def test_a_wide_terminal_keeps_the_table(brain: Vine) -> None:
    response = assert_ok(brain.locate("exchange policy", k=2))
    lines = shown("locate", response, 160)
    assert lines[1].startswith("┏") and "summary" in lines[2]


def test_query_rows_and_history_shas_on_forty_columns(brain: Vine) -> None:
    sql = "SELECT id, customer, region, total_invoice, closed_at FROM orders LIMIT 2"
    response = assert_ok(brain.query("sales/orders-2026", sql))
    lines = shown("query", response, 40)
    for column, value in zip(response["columns"], response["rows"][0], strict=True):
        assert f"{column}  " in "\n".join(lines) and str(value) in "\n".join(lines)
    brain.graft("sales/price-list", {"set_frontmatter": {"tags": ["pricing", "narrow"]}})
    history = assert_ok(brain.history("sales/price-list"))
    lines = shown("history", history, 40)
    whole([e["commit"][:12] for e in history["entries"]], lines)


def test_calendar_bars_shrink_to_the_terminal(brain: Vine) -> None:
    response = assert_ok(brain.calendar())
    lines = shown("calendar", response, 40)
    for bucket in response["buckets"]:
        (row,) = [ln for ln in lines if f" {bucket['period']} " in ln]
        assert "█" in row  # the bar is on the period's own line, not folded below it
    assert not any(re.fullmatch(r"│\s+│\s+│ █+\s*│\s+│", ln) for ln in lines)


def test_reindex_says_what_it_rebuilt(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    (root / "sales/binary.md").write_bytes(b"\x00\x01binary")
    with Vine(root, writable=False) as vine:
        response = vine.reindex()
    lines = shown("reindex", response, 80)
    assert lines[0].startswith(f"Rebuilt the catalog: {response['nodes']} nodes in ")
    assert "1 file skipped: vine validate says why." in " ".join(" ".join(lines).split())
    assert not any(line.strip().startswith("{") for line in lines)  # not the raw JSON


def test_a_digest_lays_out_its_tables_in_the_panel(brain: Vine) -> None:
    """A branch's children and a dataset's sample rows, inside the digest panel, are
    fitted to the room in the panel: ids whole on 40 columns, a table on a wide one."""
    branch = assert_ok(brain.look("sales/pipeline/_index"))
    ids = [c["id"] for c in branch["children"]]
    whole(ids, shown("look", branch, 40))
    wide = shown("look", branch, 160)
    assert any("┃ child" in line for line in wide)
    whole(ids, wide)
    dataset = assert_ok(brain.look("sales/orders-2026"))
    narrow = "\n".join(shown("look", dataset, 40))
    for column in dataset["sample_rows"]["columns"]:
        assert f"│ {column}  " in narrow, narrow


def test_init_points_to_an_example_node(tmp_path: Path) -> None:
    """The next steps after `vine init` say what a node's JSON holds (a newcomer has no
    node.json, and --help's example plants under a branch a new forest lacks)."""
    from monkeyllm.commands.render.writes import init

    out = Console(record=True, width=120, file=io.StringIO(), force_terminal=True)
    init(out, {"forest": str(tmp_path), "title": "Mine", "commit": "a" * 40, "nodes": 1})
    text = re.sub(r"[│\s]+", " ", out.export_text())  # the panel's lines joined
    assert "vine plant @node.json" in text
    assert "id, type, parent (_index at first), title and summary" in text
