"""The rich rendering of call responses for people at a terminal."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text

from monkeyllm import Vine
from monkeyllm.commands.render import heat_bar, show
from monkeyllm.commands.spelling import CLI
from monkeyllm.hints import spelled

from .forestkit import PROSPECTING, assert_ok, node

TRUNCATED = "⚠ truncated: "
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def console(width: int = 200, **options: Any) -> Console:
    """A recording terminal console writing into memory."""
    settings: dict[str, Any] = {"force_terminal": True, "color_system": "truecolor"}
    settings.update(options)
    return Console(record=True, width=width, file=io.StringIO(), **settings)


def render(call: str, response: dict[str, Any], width: int = 200) -> str:
    """The plain text a person sees for ``response``."""
    out = console(width)
    show(out, call, response)
    return out.export_text()


def colours(text: Text) -> set[str]:
    """The colours of the filled cells and the number of a heat bar (not its track)."""
    track = text.plain.index("░") if "░" in text.plain else -1
    found = set()
    for span in text.spans:
        if span.start == track:
            continue
        colour = Style.parse(span.style) if isinstance(span.style, str) else span.style
        if colour.color is not None:
            found.add(colour.color.name)
    return found


def colour_codes(raw: str) -> list[str]:
    """SGR parameters that set a foreground or background colour."""
    found = []
    for params in SGR.findall(raw):
        codes = [int(p) for p in params.split(";") if p]
        found += [str(c) for c in codes if 30 <= c <= 49 or 90 <= c <= 107]
    return found


# -- reads ---------------------------------------------------------------------------


def test_locate_table_shows_ids_titles_and_heat(brain: Vine) -> None:
    response = assert_ok(brain.locate("exchange policy", k=3))
    text = render("locate", response)
    for item in response["results"]:
        assert item["id"] in text
        assert item["title"] in text
        assert f"{item['body_tokens']} tokens" in text
    assert "▇" in text or "░" in text
    assert (TRUNCATED in text) is bool(response["truncated"])


def test_the_ranking_line_says_in_words_why_it_was_lexical(brain: Vine) -> None:
    """Under auto a forest without a Canopy answers only the reason's code; a person
    still reads what it means and what makes one."""
    response = assert_ok(brain.locate("exchange policy", k=3))
    assert response["hybrid"] == {"ran": False, "reason": "no-index"}
    assert "ranking: lexical (no Canopy index: vine canopy build makes one)" in render(
        "locate", response
    )


@pytest.mark.parametrize("call", ["locate", "sniff", "move"])
def test_narrow_terminal_keeps_every_column(brain: Vine, call: str) -> None:
    response = {
        "locate": lambda: brain.locate("invoice policy", k=3),
        "sniff": lambda: brain.sniff(["NF-4412", "invoice"], k=2),
        "move": lambda: brain.move("sales/exchange-policy", direction="both"),
    }[call]()
    text = render(call, assert_ok(response), width=72)
    assert max(len(line) for line in text.splitlines()) <= 72
    last = {"locate": "heat", "sniff": "snippet", "move": "heat"}[call]
    header = next((line for line in text.splitlines() if line.startswith("┃")), None)
    if header is not None:  # a table: its last column is on screen
        assert header.rstrip().endswith("┃") and last in header
    else:  # too narrow for the table: each row's cells stacked, the last one too
        assert re.search(rf"^{last}  ", text, re.M), text


def test_locate_truncated_warning_and_unknown_keys(brain: Vine) -> None:
    response = assert_ok(brain.locate("policy", k=1, since="2026"))
    assert response["truncated"] is True and "window" in response
    text = render("locate", response)
    assert TRUNCATED in text
    assert "window: " in text and '"since": "2026"' in text


def test_locate_nothing_found_shows_the_hint(brain: Vine) -> None:
    response = assert_ok(brain.locate("zzzqqqxx"))
    text = render("locate", response)
    assert "no entry points matched" in text
    assert "hint: " + response["hint"][:40] in text
    assert f"searched: {response['searched']}" in text
    assert TRUNCATED not in text


def test_look_digest_panel(brain: Vine) -> None:
    response = assert_ok(brain.look("sales/exchange-policy"))
    text = render("look", response)
    assert "sales/exchange-policy" in text and "Exchange policy" in text
    assert response["summary"] in text
    for header in response["outline"]:
        assert header in text
    for edge in response["edges_out"]:
        assert f"→ {edge['rel']} {edge['target']}" in text
    for edge in response["edges_in"]:
        assert f"← {edge['source']}  (this node {edge['rel']} it)" in text
    assert f"{response['stats']['body_tokens']} tokens" in text
    assert "2026-05-04" in text


def test_look_dataset_shows_manual_sample_rows_and_notes(brain: Vine) -> None:
    response = assert_ok(brain.look("sales/orders-2026"))
    text = render("look", response)
    assert "table orders" in text
    assert response["query_manual"]["example_queries"][0] in text
    assert "Lojas Pinhão" in text  # a sample row cell
    assert "value_cents is the same amount" in text  # the notes


def test_look_branch_keeps_wikilinks_literal(brain: Vine) -> None:
    response = assert_ok(brain.look("clients/_index"))
    text = render("look", response)
    for child in response["children"]:
        assert child["id"] in text
    # Square brackets in data are text, never rich markup.
    assert "[[contracts/master-agreement]]" in text
    assert response["coverage"] in text


def test_look_batch_renders_each_node_and_the_missing(brain: Vine) -> None:
    response = assert_ok(brain.look(["sales/price-list", "clients/_index", "nope/x"]))
    text = render("look", response)
    assert text.count("╭─ ") == 2
    assert "sales/price-list" in text and "clients/_index" in text
    assert "not found: nope/x" in text


def test_look_cut_digest_says_what_was_cut(brain: Vine) -> None:
    response = assert_ok(brain.look("operations/stock-levels"))
    assert response["truncated"] is True and "outline" in response["truncated_fields"]
    text = render("look", response)
    assert "cut to fit  " + ", ".join(response["truncated_fields"]) in text
    assert "outline: (cut to fit the budget: more exist)" in text
    assert "(no sections)" not in text
    assert TRUNCATED in text


def test_look_batch_over_budget_names_the_dropped(brain: Vine) -> None:
    ids = [
        n["id"]
        for n in brain.scan("_index", recursive=True, fields=["id"], limit=10, after="")["nodes"]
    ]
    response = assert_ok(brain.look(ids))
    assert response["dropped"], "the sample's first ten digests no longer overflow 2000 tokens"
    text = render("look", response)
    assert "dropped by the budget: " + ", ".join(response["dropped"]) in text
    assert TRUNCATED in text
    assert text.count("╭─ ") == len(response["nodes"])


def test_move_children_table(brain: Vine) -> None:
    response = assert_ok(brain.move("clients/_index", rel="children"))
    text = render("move", response)
    assert len(response["neighbors"]) == 3
    for item in response["neighbors"]:
        assert item["id"] in text
    assert "→ children" in text


def test_move_both_directions_show_arrows(brain: Vine) -> None:
    response = assert_ok(brain.move("sales/exchange-policy", direction="both"))
    text = render("move", response)
    assert "→ succeeds" in text
    assert "← mentions" in text
    assert "people/ana-ribeiro" in text


def test_pick_section_as_markdown(brain: Vine) -> None:
    response = assert_ok(brain.pick("sales/exchange-policy", section="Deadlines"))
    text = render("pick", response)
    assert "sales/exchange-policy" in text and "§ Deadlines" in text
    assert "NF-4412" in text
    assert "## Deadlines" not in text  # rendered, not shown as source


def test_pick_over_budget_shows_the_outline_and_hint(brain: Vine) -> None:
    response = assert_ok(brain.pick("contracts/master-agreement"))
    assert response["truncated"] is True and "body" not in response
    text = render("pick", response)
    assert "over the pick budget" in text
    assert "Annex E — Signatures" in text
    assert TRUNCATED in text
    assert "hint: Body is" in text


def test_pick_page_shows_the_next_cursor(brain: Vine) -> None:
    response = assert_ok(brain.pick("contracts/master-agreement", after=""))
    cursor = response["next"]
    text = render("pick", response)
    assert f"next: {cursor}" in text
    assert f"after='{cursor}'" in text
    with spelled(CLI):  # what `vine pick` prints: the option a person types
        assert f"--after {cursor} for the next page" in render("pick", response)
    assert response["total"] > 1
    assert f"page: {response['returned']} of {response['total']} blocks" in text
    assert TRUNCATED in text
    assert "MSA-2026-ACM-007" in text


def test_pick_sections_and_batch_say_what_is_missing(brain: Vine) -> None:
    sections = assert_ok(brain.pick("sales/exchange-policy", section=["Deadlines", "Nope"]))
    text = render("pick", sections)
    assert "sections not found: Nope" in text
    assert "hint: Outline: Channels; Deadlines; Invoice rules" in text
    batch = assert_ok(brain.pick(["sales/price-list", "nope/x"]))
    text = render("pick", batch)
    assert "sales/price-list" in text
    assert "not found: nope/x" in text


def test_scan_truncated_by_budget(brain: Vine) -> None:
    response = assert_ok(brain.scan("_index", recursive=True))
    assert response["truncated"] is True
    text = render("scan", response)
    assert f"scan: {response['returned']} of {response['total']}" in text
    for entry in response["nodes"]:
        assert entry["id"] in text
    assert TRUNCATED in text
    assert "hint: Cut by the 800-token budget" in text


def test_scan_page_shows_requested_fields_and_cursor(brain: Vine) -> None:
    response = assert_ok(
        brain.scan(
            "_index", recursive=True, limit=3, after="", fields=["id", "title", "heat", "tags"]
        )
    )
    text = render("scan", response)
    header = next(line for line in text.splitlines() if "title" in line and "heat" in line)
    assert "tags" in header and "system" in header  # every field that came back
    assert f"next: {response['next']}" in text
    assert "Forest dialect" in text


def test_sniff_table(brain: Vine) -> None:
    response = assert_ok(brain.sniff(["invoice", "NF-4412"], k=2))
    text = render("sniff", response)
    first = response["results"][0]
    assert first["id"] in text
    assert "return with invoice NF-4412 within 30 days of receipt" in text
    assert response["scanned_nodes"] > 1 and f"scanned {response['scanned_nodes']} nodes" in text
    hidden = first["match_count"] - len(first["matches"])
    more = f"… {hidden} more matching line{'' if hidden == 1 else 's'} in this node"
    assert first["truncated_matches"] and more in text


def test_query_columns_rows_and_nulls(brain: Vine) -> None:
    response = assert_ok(
        brain.query(
            "sales/pipeline/prospects-q2",
            "SELECT prospect_id, company, next_step FROM prospects ORDER BY prospect_id LIMIT 3",
        )
    )
    assert any(None in row for row in response["rows"])
    text = render("query", response)
    for column in response["columns"]:
        assert column in text
    assert "P-26-0401" in text
    assert "NULL" in text
    assert "3 rows" in text


def test_query_cells_are_text_not_markup(brain: Vine) -> None:
    response = assert_ok(
        brain.query("sales/orders-2026", "SELECT '[bold]x[/bold] :smile:' AS odd, 1.5 AS ratio")
    )
    text = render("query", response)
    assert "[bold]x[/bold] :smile:" in text
    assert "1.5" in text and "ratio" in text


def test_query_truncated_shows_its_hint(brain: Vine) -> None:
    response = assert_ok(brain.query("sales/orders-2026", "SELECT * FROM orders"))
    assert response["truncated"] is True
    text = render("query", response)
    assert TRUNCATED in text
    assert "do NOT report these" in text
    assert "limited: the row limit was reached" in text


# -- writes --------------------------------------------------------------------------


def test_write_panels(brain_copy: Path) -> None:
    with Vine(brain_copy) as vine:
        note = node(
            "sales/render-note",
            "sales/_index",
            "Render note",
            "A note planted to see how plant renders.",
        )
        planted = assert_ok(vine.plant(note))
        dataset = assert_ok(
            vine.plant(PROSPECTING | {"id": "sales/prospecting-2026", "parent": "sales/_index"})
        )
        link = {"add_links": [{"rel": "related-to", "target": "sales/exchange-policy"}]}
        grafted = assert_ok(vine.graft("sales/render-note", link))
        fortified = assert_ok(vine.graft("sales/render-note", link))
        tended = assert_ok(
            vine.tend(
                dataset["id"],
                "INSERT INTO clients VALUES ('Globex', 'globex.example', 'retail', '2026-08-14')",
            )
        )
    text = render("plant", planted)
    assert "planted sales/render-note" in text
    assert planted["commit"][:12] in text and planted["commit"] not in text
    assert "_index › sales/_index" in text
    assert "grafted sales/render-note" in render("graft", grafted)
    text = render("graft", fortified)
    assert fortified["commit"] is None
    assert "graft: no commit" in text
    assert "related-to → sales/exchange-policy" in text
    text = render("tend", tended)
    assert "tended sales/prospecting-2026" in text
    assert "rows_affected" in text and tended["payload_hash"] in text
    assert "elapsed_ms" in text


# -- composites, the fallback and errors --------------------------------------------


def test_harvest_results_and_content() -> None:
    response = {
        "query": "what is the deadline to exchange a retail order?",
        "terms": ["deadline", "exchange"],
        "results": [
            {
                "id": "sales/exchange-policy",
                "title": "Exchange policy",
                "type": "note",
                "trail": ["_index", "sales/_index"],
                "summary": "Return and exchange windows.",
                "score": 0.0328,
                "found_by": ["locate", "sniff"],
                "matches": [
                    {
                        "section": "Deadlines",
                        "line": 23,
                        "snippet": "return with invoice NF-4412 within 30 days",
                    }
                ],
                "content": [
                    {
                        "section": None,
                        "body": "# Exchange policy\n\nRetail closes in 30.",
                        "body_tokens": 12,
                    }
                ],
            }
        ],
        "truncated": True,
    }
    text = render("harvest", response)
    assert "sales/exchange-policy" in text and "locate, sniff" in text
    assert "Deadlines:23" in text and "NF-4412" in text
    assert "Retail closes in 30." in text
    assert "type: note" in text
    assert TRUNCATED in text


def test_unknown_call_falls_back_to_json() -> None:
    response = {
        "nodes": 57,
        "skipped": 0,
        "odd_key": {"nested": [1, 2]},
        "hint": "plain [bold]text[/bold]",
    }
    text = render("mystery", response)  # a call no layout knows
    for key in ('"nodes": 57', '"skipped": 0', '"odd_key"', '"nested"'):
        assert key in text
    assert "hint: plain [bold]text[/bold]" in text


def test_error_envelope(brain: Vine) -> None:
    response = brain.move("nope/x")
    text = render("move", response)
    assert "E_NOT_FOUND" in text
    assert "hint: " + response["error"]["hint"][:30] in text


def test_truthy_truncated_and_hints_list() -> None:
    text = render(
        "scan",
        {
            "nodes": [],
            "truncated": "by budget",
            "total": 0,
            "returned": 0,
            "hints": ["first hint", "second hint"],
        },
    )
    assert TRUNCATED in text and "(by budget)" in text
    assert "hint: first hint" in text and "hint: second hint" in text


# -- heat and colour -----------------------------------------------------------------


def test_heat_bar_colours_width_and_value() -> None:
    cool, hot = heat_bar(0.05), heat_bar(0.9)
    assert colours(cool) and colours(hot)
    assert colours(cool).isdisjoint(colours(hot))
    assert heat_bar(0.38).plain == "▇▇▇░░░░░ 0.38"
    assert heat_bar(0.5, width=20).plain.split(" ")[0] == "▇" * 10 + "░" * 10
    assert heat_bar(1.0, width=4).plain == "▇▇▇▇ 1.00"
    assert heat_bar(0.005).plain.startswith("▇░")  # any heat at all shows
    assert heat_bar(0.0).plain == "░░░░░░░░ 0.00"
    assert heat_bar(None).plain.startswith("░" * 8)


@pytest.mark.parametrize("heat", [-0.5, 1.7])
def test_heat_bar_out_of_range_keeps_the_value(heat: float) -> None:
    bar = heat_bar(heat, width=6)
    assert len(bar.plain.split(" ")[0]) == 6
    assert str(heat) in bar.plain


def test_colour_console_uses_colour_and_no_color_does_not(brain: Vine) -> None:
    responses = [
        ("locate", brain.locate("invoice", k=3)),
        ("look", brain.look("sales/orders-2026")),
        ("sniff", brain.sniff("invoice", k=2)),
        ("scan", brain.scan("_index", recursive=True)),
        ("query", brain.query("sales/orders-2026", "SELECT * FROM orders LIMIT 3")),
        ("pick", brain.pick("sales/exchange-policy", section="Deadlines")),
        ("reindex", {"nodes": 1}),
    ]
    coloured, plain = console(), console(no_color=True)
    for call, response in responses:
        show(coloured, call, assert_ok(response))
        show(plain, call, response)
    coloured_raw = coloured.file.getvalue()  # type: ignore[attr-defined]
    plain_raw = plain.file.getvalue()  # type: ignore[attr-defined]
    assert colour_codes(coloured_raw)
    assert colour_codes(plain_raw) == []
    assert TRUNCATED in plain.export_text()


def test_init_reads_as_a_summary_not_json(tmp_path: Path) -> None:
    text = render(
        "init",
        {
            "forest": str(tmp_path / "brain"),
            "title": "Field notes",
            "commit": "b85b6b0c6005d1e2f3a4b5c6d7e8f9a0b1c2d3e4",
            "nodes": 1,
        },
    )
    assert "created forest 'Field notes'" in text
    assert str(tmp_path / "brain") in text and "b85b6b0c6005" in text
    assert "_meta/schema" in text and "vine browse" in text and "vine ingest" in text
    assert '"commit"' not in text and "{" not in text.split("Next:")[0]


def test_the_truncation_note_says_what_truncated_means_for_the_call(brain: Vine) -> None:
    """Not one sentence for every call: for locate it is more entry points than k, for
    query rows dropped by the budget, for a batch the ids in dropped."""
    cases = {
        "locate": (brain.locate("policy", k=1), "more entry points matched than k"),
        "sniff": (brain.sniff("the", k=1), "more bodies matched than k"),
        "scan": (
            brain.scan("_index", recursive=True, limit=2),
            "more nodes matched than the limit",
        ),
        "look": (
            brain.look(
                [
                    "_index",
                    "sales/_index",
                    "_meta/schema",
                    "finance/_index",
                    "sales/orders-2026",
                    "people/_index",
                    "products/_index",
                    "engineering/_index",
                    "operations/_index",
                    "contracts/_index",
                ]
            ),
            "whole nodes were dropped to fit the look batch",
        ),
    }
    for call, (response, meaning) in cases.items():
        assert assert_ok(response)["truncated"], call
        text = render(call, response)
        assert TRUNCATED + meaning in text.replace("\n", " "), (call, text[-400:])
    with spelled(CLI):
        text = render("locate", brain.locate("policy", k=1))
    assert "more entry points matched than -k" in text


def test_an_incoming_contains_reads_from_the_childs_side(brain: Vine) -> None:
    """A child's part-of link is its branch's contains: the branch contains the child,
    and the line must not read as if the child contained the branch."""
    response = assert_ok(brain.look("sales/_index"))
    edge = next(e for e in response["edges_in"] if e["rel"] == "contains")
    text = render("look", response)
    assert f"← {edge['source']}  (this node contains it)" in text
    assert f"← contains {edge['source']}" not in text
    assert "edges in (" in text and "named from this node's side" in text
