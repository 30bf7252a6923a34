"""``vine browse``: the Textual app driven by Pilot on copies of sample-brain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList, Static

from monkeyllm import Vine
from monkeyllm.tui.app import BrowseApp
from monkeyllm.tui.history import History
from monkeyllm.tui.screens.dataset import DatasetScreen
from monkeyllm.tui.screens.help import HelpScreen
from monkeyllm.tui.screens.reader import ReaderScreen, linkify
from monkeyllm.tui.screens.search import SearchScreen
from monkeyllm.tui.widgets.forest_tree import ForestTree

from ..forestkit import copy_sample, git
from .kit import SIZE, drive, go, opened_at, press, ready, settle


def digest_text(app: BrowseApp) -> str:
    return str(app.browse.query_one("#digest-head", Static).render())


def option_ids(options: OptionList) -> list[str]:
    return [o.id or "" for o in options.options]


async def choose(pilot: Pilot[None], options: OptionList, suffix: str) -> None:
    """Highlight the option whose id ends with ``suffix`` and press Enter on it."""
    index = next(i for i, oid in enumerate(option_ids(options)) if oid.endswith(suffix))
    options.focus()
    options.highlighted = index
    await press(pilot, "enter")


def test_history_back_and_forward() -> None:
    h = History()
    for node in ("a", "b", "c"):
        h.visit(node)
    assert (h.back(), h.back(), h.back()) == ("b", "a", None)
    assert h.forward() == "b"
    h.visit("d")
    assert h.items == ["a", "b", "d"] and h.forward() is None


def test_wikilinks_become_links() -> None:
    text, targets = linkify("See [[finance/dso]] and [[people/ana-ribeiro|Ana]].")
    assert targets == ["finance/dso", "people/ana-ribeiro"]
    assert "[Ana](vine:people/ana-ribeiro)" in text


@drive
async def test_start_shows_branches_with_counts_and_the_root_digest(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        labels = [str(n.label) for n in app.browse.query_one(ForestTree).root.children]
        assert "Sales 5 bananas, 1 sub-branch" in labels
        assert any(label.startswith("Company timeline") for label in labels)
        assert "Acme Trading brain" in digest_text(app)
        assert "read-only" in str(app.browse.query_one("#mode", Static).render())


@drive
async def test_navigate_follow_back_forward_and_jump(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        tree = app.browse.query_one(ForestTree)
        sales = tree.node_for("sales/_index")
        assert sales is not None
        tree.select_node(sales)  # Enter or a click on the tree
        await settle(pilot)
        assert app.browse.current == "sales/_index"
        assert "Commercial policy" in digest_text(app)
        assert tree.node_for("sales/exchange-policy") is not None  # the branch opened

        links = app.browse.query_one("#digest-links", OptionList)
        await choose(pilot, links, ":sales/exchange-policy")  # a child
        assert app.browse.current == "sales/exchange-policy"
        assert "Return and exchange windows" in digest_text(app)
        assert any(o.endswith(":people/ana-ribeiro") for o in option_ids(links))  # edge in

        await choose(pilot, links, ":sales/exchange-policy-2025")  # an edge out
        assert app.browse.current == "sales/exchange-policy-2025"
        assert tree.cursor_node is not None
        assert tree.cursor_node.data == "sales/exchange-policy-2025"

        await press(pilot, "left_square_bracket")
        assert app.browse.current == "sales/exchange-policy"
        await press(pilot, "left_square_bracket")
        assert app.browse.current == "sales/_index"
        await press(pilot, "right_square_bracket")
        assert app.browse.current == "sales/exchange-policy"

        app.browse.action_jump("_index")  # a click on the trail's first crumb
        await settle(pilot)
        assert app.browse.current == "_index"
        assert app.browse.history.items == [
            "_index",
            "sales/_index",
            "sales/exchange-policy",
            "_index",
        ]


@drive
async def test_read_a_body_a_section_and_a_wikilink(forest: Path) -> None:
    async with opened_at(forest, "sales/exchange-policy", "r") as (pilot, app):
        reader = app.screen
        assert isinstance(reader, ReaderScreen)
        assert reader.whole and "Deadlines" in reader.source
        outline = reader.query_one("#reader-outline", OptionList)
        await choose(pilot, outline, ":Deadlines")
        assert reader.section == "Deadlines"
        scroll = reader.query_one("#reader-scroll")
        assert scroll.scroll_y > 0  # the view moved down to the section
        await press(pilot, "escape")
        assert app.screen is app.browse

        # Over the pick budget: it opens on the outline and reads section by section.
        await go(pilot, "contracts/master-agreement")
        links = app.browse.query_one("#digest-links", OptionList)
        await choose(pilot, links, ":Scope")
        reader = app.screen
        assert isinstance(reader, ReaderScreen)
        assert not reader.whole and reader.section == "Scope"
        assert reader.source.lstrip().startswith("## Scope")
        assert "Payment terms" in reader.outline  # the whole outline, not look's
        await choose(pilot, reader.query_one("#reader-outline", OptionList), ":Payment terms")
        assert reader.section == "Payment terms"
        assert reader.source.lstrip().startswith("## Payment terms")
        await press(pilot, "escape")

        # [[wikilinks]] are followable.
        await go(pilot, "sales/_index")
        await press(pilot, "r")
        reader = app.screen
        assert isinstance(reader, ReaderScreen)
        assert "operations/returns-handling" in reader.links
        await choose(
            pilot, reader.query_one("#reader-outline", OptionList), ":operations/returns-handling"
        )
        assert app.screen is app.browse
        assert app.browse.current == "operations/returns-handling"


@drive
async def test_search_concepts_and_exact_text(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press("slash")
        search = app.screen
        assert isinstance(search, SearchScreen) and search.mode == "locate"
        await press(pilot, *"exchange policy", "enter")
        ids = [r["id"] for r in search.response["results"]]
        assert "sales/exchange-policy" in ids
        status = str(search.query_one("#search-status", Static).render())
        assert "lexical (no Canopy: vine canopy build)" in status
        found = len(search.response["results"])
        assert f"{found} results for" in status and "(s)" not in status

        await pilot.press("ctrl+t")  # exact text: sniff
        await settle(pilot)
        assert search.mode == "sniff"
        field = search.query_one("#search-input", Input)
        field.value = "NF-4412"
        field.focus()
        await press(pilot, "enter")
        hits = search.response["results"]
        assert hits and "NF-4412" in json.dumps(hits[0]["matches"])
        first = search.query_one("#search-results", OptionList).get_option_at_index(0)
        matching = hits[0]["match_count"]
        assert f"{matching} matching line{'' if matching == 1 else 's'}" in str(first.prompt)
        assert "(s)" not in str(first.prompt)
        results = search.query_one("#search-results", OptionList)
        await choose(pilot, results, ":" + hits[0]["id"])
        assert app.screen is app.browse
        assert app.browse.current == hits[0]["id"]


@drive
async def test_concept_search_is_hybrid_with_a_canopy_and_says_so(forest: Path) -> None:
    from ..embedkit import EmbedServer
    from ..test_canopy import PARAPHRASE

    with EmbedServer() as srv:
        with Vine(forest, writable=False) as vine:
            vine.canopy_build({"kind": "http", "model": srv.model, "url": srv.url})
        async with BrowseApp(forest).run_test(size=SIZE) as pilot:
            app = await ready(pilot)
            await pilot.press("slash")
            search = app.screen
            assert isinstance(search, SearchScreen)
            await press(pilot, *PARAPHRASE, "enter")
            assert search.response["hybrid"] == {"ran": True, "model": "kit-embed"}
            assert "sales/exchange-policy" in [r["id"] for r in search.response["results"]]
            status = str(search.query_one("#search-status", Static).render())
            assert "hybrid (lexical + vector, kit-embed)" in status


@drive
async def test_dataset_query_shows_rows_and_errors(forest: Path) -> None:
    async with opened_at(forest, "sales/orders-2026", "d") as (pilot, app):
        screen = app.screen
        assert isinstance(screen, DatasetScreen)
        assert "orders(id, customer" in str(screen.query_one("#dataset-manual", Static).render())
        assert "total_invoice is TEXT" in str(screen.query_one("#dataset-notes", Static).render())
        assert screen.query_one("#dataset-sample", DataTable).row_count == 3
        sql = screen.query_one("#sql", Input)
        sql.value = "SELECT COUNT(*) FROM orders"
        await press(pilot, "enter")
        table = screen.query_one("#query-result", DataTable)
        assert table.row_count == 1 and table.get_cell_at((0, 0)) == "1545"
        status = str(screen.query_one("#query-status", Static).render())
        assert status.startswith("1 row in ") and "(s)" not in status

        sql.value = "SELECT nope FROM orders"
        await press(pilot, "enter")
        status = str(screen.query_one("#query-status", Static).render())
        assert "E_QUERY_INVALID" in status and "orders(" in status  # the hint names columns
        assert app.is_running

        sql.value = "SELECT * FROM orders"  # many rows: the budget cuts, and says so
        await press(pilot, "enter")
        assert screen.result.get("truncated")
        assert "do NOT report" in str(screen.query_one("#query-status", Static).render())


@drive
async def test_graft_a_summary_and_see_the_commit(brain_copy: Path) -> None:
    before = git(brain_copy, "rev-list", "--count", "HEAD").strip()
    async with opened_at(brain_copy, "sales/exchange-policy", "e") as (pilot, app):
        field = app.screen.query_one("#edit-summary", Input)
        field.value = "Return windows per channel, edited in the browser."
        await press(pilot, "ctrl+s")
        assert app.screen is app.browse
        sha = git(brain_copy, "rev-parse", "HEAD").strip()
        assert str(int(before) + 1) == git(brain_copy, "rev-list", "--count", "HEAD").strip()
        assert sha[:12] in str(app.browse.query_one("#status-text", Static).render())
        assert "edited in the browser" in (brain_copy / "sales/exchange-policy.md").read_text()
        assert "edited in the browser" in digest_text(app)
        assert not (brain_copy / ".vine.lock").exists()  # the lock was held only while saving


@drive
async def test_plant_append_and_link(brain_copy: Path) -> None:
    async with opened_at(brain_copy, "sales/_index", "p") as (pilot, app):
        app.screen.query_one("#plant-title", Input).value = "Counter etiquette"
        app.screen.query_one("#plant-summary", Input).value = "How the counter greets."
        await press(pilot, "ctrl+s")
        assert (brain_copy / "sales/counter-etiquette.md").exists()
        # a person planted it: the format's source for a person's own writing
        assert "\nsource: manual\n" in (brain_copy / "sales/counter-etiquette.md").read_text()
        assert git(brain_copy, "log", "-1", "--format=%s").strip().endswith("[source=manual]")
        assert app.browse.current == "sales/counter-etiquette"
        assert app.browse.query_one(ForestTree).node_for("sales/counter-etiquette")

        await press(pilot, "a")
        app.screen.query_one("#section-header", Input).value = "Greeting"
        app.screen.query_one("#section-body").insert("Say good morning.")
        await press(pilot, "ctrl+s")
        assert "## Greeting" in (brain_copy / "sales/counter-etiquette.md").read_text()

        await press(pilot, "l")
        dialog = app.screen
        dialog.query_one("#link-search", Input).value = "exchange policy"
        await settle(pilot)
        await choose(pilot, dialog.query_one("#link-targets", OptionList), ":sales/exchange-policy")
        await press(pilot, "ctrl+s")
        digest = app.browse.digest or {}
        assert {"rel": "related-to", "target": "sales/exchange-policy"} in [
            {"rel": e["rel"], "target": e["target"]} for e in digest["edges_out"]
        ]
        assert git(brain_copy, "status", "--porcelain").strip() == ""


@drive
async def test_a_forest_held_open_refuses_the_save_and_keeps_browsing(brain_copy: Path) -> None:
    before = git(brain_copy, "rev-parse", "HEAD")
    with Vine(brain_copy):  # another writer holds the lock for as long as it stays open
        async with BrowseApp(brain_copy).run_test(size=SIZE) as pilot:
            app = await ready(pilot)
            mode = str(app.browse.query_one("#mode", Static).render())
            assert f"pid {os.getpid()}" in mode and "holds the forest open" in mode, mode
            await go(pilot, "sales/exchange-policy")
            await press(pilot, "e")
            app.screen.query_one("#edit-summary", Input).value = "Never saved."
            started = time.monotonic()
            await press(pilot, "ctrl+s")
            shown = [n.message for n in app._notifications]
            assert any(
                "Another writer holds the forest" in m
                and f"pid {os.getpid()}" in m
                and 'lock="per-write"' in m
                for m in shown
            ), shown
            # A holder for life is not waited for: the refusal is at once.
            assert time.monotonic() - started < 3
            await go(pilot, "sales/_index")  # browsing goes on
            assert "Commercial policy" in digest_text(app)
    assert git(brain_copy, "rev-parse", "HEAD") == before
    assert "Never saved." not in (brain_copy / "sales/exchange-policy.md").read_text()


@drive
async def test_help_and_command_palette(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is app.browse
        names = [c.title for c in app.get_system_commands(app.browse)]
        assert {"Search", "Read", "Dataset", "Edit", "Plant note", "Back"} <= set(names)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "CommandPalette"


@drive
async def test_a_missing_node_is_a_notification(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        app.browse.go("no/such-node")
        await settle(pilot)
        assert app.is_running and app.browse.current == "_index"
        assert any("E_NOT_FOUND" in n.message for n in app._notifications)


def test_the_cli_and_a_read_never_import_textual(tmp_path: Path) -> None:
    # The real packages (no stand-ins): textual is installed beside the CLI.
    root = copy_sample(tmp_path / "brain")
    script = textwrap.dedent(f"""
        import json, sys, io, contextlib
        sys.argv = ["vine", "look", "sales/exchange-policy", "-f", {str(root)!r}]
        import monkeyllm.commands.app as app
        import monkeyllm.commands.browse
        import monkeyllm.tui
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                app.main()
            except SystemExit:
                pass
        print(json.dumps({{"id": json.loads(out.getvalue())["id"],
                          "textual": sorted(m for m in sys.modules
                                            if m.split(".")[0] == "textual")}}))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"id": "sales/exchange-policy", "textual": []}


# -- looks (pytest-textual-snapshot; update with --snapshot-update) ------------------


async def pinned(pilot: Pilot[None]) -> None:
    """No blinking cursors, so every run draws the same frame."""
    for field in pilot.app.screen.query(Input):
        field.cursor_blink = False
    await pilot.pause()


@pytest.mark.parametrize("keys", [[], ["r"], ["d"]], ids=["browse", "reader", "dataset"])
def test_snapshots(snap_compare, tmp_path: Path, keys: list[str]) -> None:  # noqa: ANN001
    # A fresh copy each time: no heat yet, so the colours are the same on every run; its
    # own git repository, so it is the writable forest a person normally browses.
    forest = copy_sample(tmp_path / "brain", git=True)

    async def run_before(pilot: Pilot[None]) -> None:
        await ready(pilot)
        target = {"r": "sales/exchange-policy", "d": "sales/orders-2026"}
        if keys:
            await go(pilot, target[keys[0]])
            await press(pilot, *keys)
        await pinned(pilot)

    assert snap_compare(BrowseApp(forest), terminal_size=SIZE, run_before=run_before)


@drive
async def test_an_incoming_contains_reads_from_the_childs_side(forest: Path) -> None:
    """sales/_index's incoming part-of links are its contains: "this node contains it"
    beside the child, never "← contains child" as if the child contained the branch."""
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/_index")
        links = app.browse.query_one("#digest-links", OptionList)
        prompts = [str(o.prompt) for o in links.options]
        assert any("named from this node's side" in p for p in prompts)
        contains = [p for p in prompts if "contains" in p and "sales/exchange-policy" in p]
        assert contains and "this node [i]contains[/i] it" in contains[0], contains
        assert not any("← [i]contains" in p for p in prompts)


def test_the_readme_picture_is_the_browse_snapshot() -> None:
    """README.md shows docs/browse.svg: the browse snapshot above, copied, so the picture
    a newcomer sees is what the TUI draws today (after --snapshot-update, copy it again)."""
    root = Path(__file__).resolve().parents[2]
    shot = Path(__file__).parent / "__snapshots__" / "test_tui" / "test_snapshots[browse].svg"
    assert (root / "docs" / "browse.svg").read_text(encoding="utf-8") == shot.read_text(
        encoding="utf-8"
    )
    assert "(docs/browse.svg)" in (root / "README.md").read_text(encoding="utf-8")
