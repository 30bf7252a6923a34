"""``vine browse`` in its first hour: the search box, dialog focus, and the digest
following the cursor."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import Input, OptionList, RadioButton, Static

from monkeyllm.tui.app import BrowseApp
from monkeyllm.tui.screens.help import HelpScreen
from monkeyllm.tui.widgets.forest_tree import ForestTree

from ..forestkit import copy_sample, git
from .kit import SIZE, drive, go, press, ready, settle


@drive
async def test_the_search_box_is_wide_and_enter_moves_to_the_results(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await press(pilot, "slash")
        box = app.screen.query_one("#search-input", Input)
        assert app.focused is box
        assert box.content_region.width >= SIZE[0] * 0.8, box.content_region
        await pilot.press(*"exchange policy")
        assert box.value == "exchange policy"
        assert "exchange policy" in str(box.render_line(0).text)  # what is typed shows
        await press(pilot, "enter")
        results = app.screen.query_one("#search-results", OptionList)
        assert app.focused is results and results.highlighted == 0
        second = results.options[1].id.partition(":")[2]
        await press(pilot, "down", "enter")
        assert app.browse.current == second


@drive
async def test_dialogs_take_focus_and_keep_what_is_there(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    async with BrowseApp(root).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/_index")
        # Typed straight after p, as a terminal delivers them: all at once, before the
        # dialog is up (the first keystrokes went nowhere).
        for key, char in [
            ("p", "p"),
            *((c, c) for c in "Quick"),
            ("space", " "),
            *((c, c) for c in "note"),
        ]:
            app.post_message(events.Key(key, char))
        await pilot.pause(0.5)
        await settle(pilot)
        assert app.screen.query_one("#plant-title", Input).value == "Quick note"
        await press(pilot, "escape")
        await go(pilot, "sales/price-list")
        summary = app.browse.digest["summary"]
        await press(pilot, "e")
        field = app.screen.query_one("#edit-summary", Input)
        assert app.focused is field and field.selection.is_empty
        assert field.cursor_position == len(summary)
        await pilot.press(*" Checked")
        assert field.value == summary + " Checked"  # nothing erased
        await press(pilot, "escape")
        for key, wanted in (("a", "#section-header"), ("l", "#link-search")):
            await press(pilot, key)
            assert app.focused is app.screen.query_one(wanted), key
            await press(pilot, "escape")


@drive
async def test_the_digest_follows_the_tree_cursor(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        tree = app.browse.query_one(ForestTree)
        tree.focus()
        start = app.browse.current
        for _ in range(3):  # quick moves: one digest for where the cursor rests
            await pilot.press("down")
        await pilot.pause(0.6)
        await settle(pilot)
        under = tree.cursor_node.data
        assert under != start and app.browse.current == under
        assert (app.browse.digest or {}).get("id") == under
        await pilot.press("left_square_bracket")  # back goes to where browsing was
        await settle(pilot)
        assert app.browse.current == start


@drive
async def test_a_cursor_the_app_moves_shows_no_other_digest(forest: Path) -> None:
    """A branch redrawn under the cursor (after a save, a move, a delete) lands it on
    another node: that is not a person choosing it, so the digest stays."""
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/price-list")
        tree = app.browse.query_one(ForestTree)
        tree.focus()
        await settle(pilot)
        other = tree.node_for("acme-trading")
        assert other is not None
        tree.move_cursor(other, animate=False)  # as a redraw does: no key pressed
        await pilot.pause(0.6)
        await settle(pilot)
        assert tree.cursor_node is other
        assert app.browse.current == "sales/price-list"
        await pilot.press("down")  # a person's key still glances
        await pilot.pause(0.6)
        await settle(pilot)
        assert app.browse.current == tree.cursor_node.data != "sales/price-list"


@drive
async def test_the_key_list_shows_that_it_scrolls(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await press(pilot, "question_mark")
        screen = pilot.app.screen
        assert isinstance(screen, HelpScreen)
        more = screen.query_one("#help-more", Static)
        assert "More below" in str(more.render())
        assert "scroll" in str(screen.query_one("#help").border_subtitle)
        await pilot.press("end")
        await pilot.pause(0.5)
        await settle(pilot)
        assert "End of the list" in str(more.render())
    async with BrowseApp(forest).run_test(size=(120, 90)) as pilot:  # all of it fits
        await ready(pilot)
        await press(pilot, "question_mark")
        assert "Every key is shown" in str(
            pilot.app.screen.query_one("#help-more", Static).render()
        )


@drive
async def test_a_forest_that_is_not_its_own_repository_says_so_and_offers_a_copy(
    forest: Path, tmp_path: Path
) -> None:
    """Read-only up front (and why), not an E_SCHEMA at the save; an edit key offers a
    writable copy, and the edit then lands there as a commit."""
    original = {p: p.read_bytes() for p in forest.rglob("*.md")}
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        mode = str(app.browse.query_one("#mode", Static).render())
        assert "read-only" in mode and "not its own git repository" in mode
        assert any("read-only" in (n.title or "") for n in app._notifications)
        await go(pilot, "sales/price-list")
        await pilot.press("e")  # an edit: the copy is offered instead
        await settle(pilot)
        dialog = app.screen
        assert dialog.query_one("#copy-dest", Input).value.endswith("/brain")
        assert "not a git repository" in str(dialog.query_one("#copy-why", Static).render())
        dialog.query_one("#copy-dest", Input).value = str(tmp_path / "mine")
        await press(pilot, "ctrl+s")
        await pilot.pause(0.2)
        await settle(pilot)
        assert app.session.root == (tmp_path / "mine").resolve()
        assert app.session.cannot_write is None
        assert "read-only: not its own" not in str(app.browse.query_one("#mode", Static).render())
        await go(pilot, "sales/price-list")
        await press(pilot, "e")
        await pilot.press(*" Checked")
        await press(pilot, "ctrl+s")
    copy = tmp_path / "mine"
    assert "Checked" in (copy / "sales/price-list.md").read_text()
    assert git(copy, "log", "--format=%s").split("\n")[:2] == [
        "graft(sales/price-list): set summary",
        "copy: forest 'Acme Trading brain' from brain",
    ]
    assert {p: p.read_bytes() for p in forest.rglob("*.md")} == original


@drive
async def test_a_superseded_result_says_which_node_replaces_it(forest: Path) -> None:
    """Concept search shows, under a superseded node, the node that replaces it, as
    locate says; the box names what locate reads, section headers included."""
    async with BrowseApp(forest).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await press(pilot, "slash")
        assert "headers" in str(app.screen.query_one("#locate", RadioButton).label)
        await press(pilot, *"exchange policy", "enter")
        results = app.screen.query_one("#search-results", OptionList)
        shown = {o.id.partition(":")[2]: str(o.prompt) for o in results.options}
        assert "superseded by sales/exchange-policy" in shown["sales/exchange-policy-2025"]
        assert "superseded by" not in shown["sales/exchange-policy"]
