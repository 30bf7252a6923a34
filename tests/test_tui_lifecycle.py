"""``vine browse``: delete (the anchors shown, a box to tick for force), move/rename (the
links it rewrites shown as the id is typed), a node's history and the overview, driven
by Pilot on git copies of sample-brain."""

from __future__ import annotations

import re
from pathlib import Path

from rich.table import Table
from textual.widgets import Button, Checkbox, DataTable, Input, Static

from monkeyllm.tui.dialogs.prune_node import PruneDialog, anchors_markup
from monkeyllm.tui.dialogs.transplant_node import TransplantDialog, plan_markup
from monkeyllm.tui.history import History
from monkeyllm.tui.screens.node_history import HistoryScreen
from monkeyllm.tui.screens.overview import OverviewScreen
from monkeyllm.tui.widgets.forest_tree import ForestTree

from .forestkit import git
from .tui.kit import drive, go, opened_at, press, settle


def text_of(screen: object, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


def test_history_follows_a_move_and_drops_a_prune() -> None:
    h = History()
    for node in ("a", "b", "c", "b"):
        h.visit(node)
    h.replace("b", "z")
    assert h.items == ["a", "z", "c", "z"] and h.current == "z"
    h.replace("z", None)
    assert h.items == ["a", "c"] and h.current == "c"
    assert h.back() == "a"


def test_the_dialogs_count_in_words() -> None:
    one = {"anchor_count": 1, "anchors": [{"source": "kb/a", "rel": "related-to"}]}
    assert anchors_markup(one).startswith("[$warning]1 link in other nodes point here:")
    plan = {"backlinks_rewritten": 1, "sources": ["kb/a"], "source_count": 1}
    assert plan_markup(plan).startswith("Rewrites 1 link in 1 node:")
    plan = {"backlinks_rewritten": 3, "sources": ["kb/a", "kb/b"], "source_count": 2}
    assert plan_markup(plan).startswith("Rewrites 3 links in 2 nodes:")
    assert plan_markup({"backlinks_rewritten": 0}).startswith("Rewrites 0 links in 0 nodes.")


@drive
async def test_delete_shows_the_anchors_and_asks_before_forcing(brain_copy: Path) -> None:
    before = git(brain_copy, "rev-parse", "HEAD").strip()
    async with opened_at(brain_copy, "sales/exchange-policy", "x") as (pilot, app):
        dialog = app.screen
        assert isinstance(dialog, PruneDialog)
        anchors = text_of(dialog, "#prune-anchors")
        assert "5 links in other nodes point here" in anchors and "(s)" not in anchors
        assert "people/ana-ribeiro" in anchors
        delete = dialog.query_one("#prune-go", Button)
        assert delete.disabled
        assert str(dialog.query_one("#prune-force", Checkbox).label) == (
            "Also drop those 5 links (force)"
        )
        await pilot.click("#prune-go")  # nothing: the box is not ticked
        await settle(pilot)
        assert app.screen is dialog
        assert git(brain_copy, "rev-parse", "HEAD").strip() == before
        dialog.query_one("#prune-force", Checkbox).value = True
        await settle(pilot)
        assert not delete.disabled
        await pilot.click("#prune-go")
        await settle(pilot)
        assert app.screen is app.browse
        assert git(brain_copy, "log", "-1", "--format=%s").strip() == "prune(sales/exchange-policy)"
        assert not (brain_copy / "sales/exchange-policy.md").exists()
        assert app.browse.current == "sales/_index"
        assert app.browse.query_one(ForestTree).node_for("sales/exchange-policy") is None
        assert "sales/exchange-policy" not in app.browse.history.items
        assert git(brain_copy, "status", "--porcelain").strip() == ""


@drive
async def test_delete_a_branch_with_children_is_explained_not_offered(brain_copy: Path) -> None:
    async with opened_at(brain_copy, "sales/_index", "x") as (pilot, app):
        dialog = app.screen
        assert "pruned once it is empty" in text_of(dialog, "#prune-preview")
        assert dialog.query_one("#prune-go", Button).disabled
        assert not dialog.query_one("#prune-force", Checkbox).display
        await press(pilot, "escape")
        assert app.screen is app.browse and (brain_copy / "sales/_index.md").exists()


@drive
async def test_delete_a_free_leaf(brain_copy: Path) -> None:
    async with opened_at(brain_copy, "sales/pipeline/2026/q2-forecast", "delete") as (pilot, app):
        dialog = app.screen
        assert "Its entry leaves sales/pipeline/2026/_index" in text_of(dialog, "#prune-preview")
        await pilot.click("#prune-go")
        await settle(pilot)
        assert not (brain_copy / "sales/pipeline/2026/q2-forecast.md").exists()
        assert app.browse.current == "sales/pipeline/2026/_index"


@drive
async def test_move_shows_what_it_rewrites_then_moves(brain_copy: Path) -> None:
    async with opened_at(brain_copy, "sales/price-list", "m") as (pilot, app):
        dialog = app.screen
        assert isinstance(dialog, TransplantDialog)
        field = dialog.query_one("#move-id", Input)
        assert field.value == "sales/price-list"  # named after its title: the same
        field.value = "nowhere/price-list"
        await settle(pilot)
        assert "parent branch not found" in text_of(dialog, "#move-plan")
        field.value = "sales/pipeline/price-list"
        await settle(pilot)
        plan = text_of(dialog, "#move-plan")
        assert "Rewrites" in plan and "contracts/master-agreement" in plan
        assert re.search(r"Rewrites \d+ links? in \d+ nodes?:", plan) and "(s)" not in plan
        assert git(brain_copy, "status", "--porcelain").strip() == ""  # a dry run wrote nothing
        await press(pilot, "ctrl+s")
        assert app.screen is app.browse
        # The branches redrawn under the cursor are the app's doing, not a person's:
        # once a glance would have fired, the moved leaf is still the one shown.
        await pilot.pause(0.6)
        await settle(pilot)
        assert (brain_copy / "sales/pipeline/price-list.md").exists()
        assert not (brain_copy / "sales/price-list.md").exists()
        assert app.browse.current == "sales/pipeline/price-list"
        assert app.browse.query_one(ForestTree).node_for("sales/price-list") is None
        assert "sales/price-list" not in app.browse.history.items
        # A leaf whose id differs from its title gets the title's id proposed, and what
        # that move would rewrite is shown at once.
        await go(pilot, "sales/discount-ladder")
        await press(pilot, "m")
        dialog = app.screen
        assert dialog.query_one("#move-id", Input).value == "sales/discount-approval-ladder"
        assert "people/ana-ribeiro" in text_of(dialog, "#move-plan")
        await press(pilot, "escape")
        assert "transplant(sales/price-list -> sales/pipeline/price-list)" in git(
            brain_copy, "log", "-1", "--format=%s"
        )


@drive
async def test_history_and_overview(brain_copy: Path) -> None:
    async with opened_at(brain_copy, "sales/exchange-policy", "e") as (pilot, app):
        app.screen.query_one("#edit-summary", Input).value = "Windows per channel, edited."
        await press(pilot, "ctrl+s")
        await press(pilot, "h")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        assert table.get_cell_at((0, 1)) == "graft" and table.get_cell_at((1, 1)) == "plant"
        status = text_of(screen, "#history-status")
        assert "2 commits" in status and "(s)" not in status
        await press(pilot, "escape")
        await press(pilot, "c")
        overview = app.screen
        assert isinstance(overview, OverviewScreen)
        regions = overview.query_one("#overview-regions", Static).content
        assert isinstance(regions, Table) and regions.row_count == 9
        assert "Sales" in list(regions.columns[0].cells)
        months = overview.query_one("#overview-calendar", Static).content
        assert isinstance(months, Table) and months.row_count > 5
        await press(pilot, "escape")
        assert app.screen is app.browse
        names = [c.title for c in app.get_system_commands(app.browse)]
        assert {"Move", "Delete", "History", "Overview"} <= set(names)
