"""``vine browse`` as a newcomer meets it: Enter in a dialog's field does what the dialog
says it does, and the footer shows the keys list and quit on an 80-column terminal."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets._footer import FooterKey

from monkeyllm.tui.app import BrowseApp

from ..forestkit import copy_sample, git
from .kit import SIZE, drive, go, press, ready, settle


def subject(root: Path) -> str:
    return git(root, "log", "-1", "--format=%s").strip()


@drive
async def test_enter_in_the_edit_dialog_saves_and_the_dialog_says_so(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    async with BrowseApp(root).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/price-list")
        await press(pilot, "e")
        dialog = app.screen
        keys = str(dialog.query_one(".dialog-keys", Static).render())
        assert "Enter or Ctrl+S saves" in keys and "Esc cancels" in keys
        await pilot.press(*" Checked")
        await press(pilot, "enter")
        await pilot.pause(0.2)
        await settle(pilot)
        assert app.screen is app.browse
    assert subject(root) == "graft(sales/price-list): set summary"
    assert "Checked" in (root / "sales/price-list.md").read_text(encoding="utf-8")


@drive
async def test_enter_in_the_plant_dialog_goes_from_field_to_field(tmp_path: Path) -> None:
    """The body is a text area, so Enter moves on (title, id, summary, body) and Ctrl+S
    saves; an Enter after the title plants nothing half-written."""
    root = copy_sample(tmp_path / "brain", git=True)
    before = subject(root)
    async with BrowseApp(root).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/_index")
        await press(pilot, "p")
        dialog = app.screen
        assert "Enter or Tab moves" in str(dialog.query_one(".dialog-keys", Static).render())
        await pilot.press(*"Fraud signs")
        await press(pilot, "enter")
        slug = dialog.query_one("#plant-slug", Input)
        assert app.focused is slug and slug.placeholder == "fraud-signs"  # the id it gets
        assert subject(root) == before
        await press(pilot, "enter")
        assert app.focused is dialog.query_one("#plant-summary", Input)
        await pilot.press(*"What a clerk checks.")
        await press(pilot, "enter")
        assert app.focused is dialog.query_one("#plant-body", TextArea)
        await pilot.press(*"Serial", "enter", *"Seal")
        assert dialog.query_one("#plant-body", TextArea).text == "Serial\nSeal"
        await press(pilot, "ctrl+s")
        await pilot.pause(0.2)
        await settle(pilot)
        assert app.screen is app.browse
    assert subject(root).startswith("plant(sales/fraud-signs): Fraud signs")
    text = (root / "sales/fraud-signs.md").read_text(encoding="utf-8")
    assert "summary: What a clerk checks." in text and "Serial\nSeal" in text


@drive
async def test_enter_in_the_link_search_goes_to_its_results(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    async with BrowseApp(root).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/discount-ladder")
        await press(pilot, "l")
        dialog = app.screen
        await pilot.press(*"exchange policy")
        await pilot.pause(0.3)
        await settle(pilot)
        await press(pilot, "enter")
        targets = dialog.query_one("#link-targets", OptionList)
        assert app.focused is targets and targets.highlighted == 0
        assert app.screen is dialog  # not saved without a target
        await press(pilot, "enter")  # picks the first result
        await press(pilot, "ctrl+s")
        await pilot.pause(0.2)
        await settle(pilot)
        assert app.screen is app.browse
    assert subject(root) == "graft(sales/discount-ladder): +1 links"


@drive
async def test_the_footer_shows_keys_and_quit_on_80_columns(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        shown = {
            key.key
            for key in app.browse.query(FooterKey)
            if key.region.width and key.region.right <= 80
        }
        assert {"question_mark", "q"} <= shown, shown


@drive
async def test_a_search_result_is_shown_whole_on_80_columns(tmp_path: Path) -> None:
    """A result whose summary wraps to three lines on 80 columns keeps its last line
    (the note that a newer node supersedes it): the results are laid out with room for
    their scrollbar from the start."""
    root = copy_sample(tmp_path / "brain")
    old = root / "sales/exchange-policy-2025.md"
    old.write_text(
        old.read_text(encoding="utf-8").replace(
            "back-office ticket.", "back-office ticket. Edited."
        ),
        encoding="utf-8",
    )
    async with BrowseApp(root).run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        await press(pilot, "slash")
        await pilot.press(*"exchange")
        await press(pilot, "enter")
        results = app.screen.query_one("#search-results", OptionList)
        shown = [results.render_line(y).text for y in range(results.size.height)]
        assert any("Edited." in line for line in shown), shown
        assert any("superseded by sales/exchange-policy" in line for line in shown), shown


@drive
async def test_the_copy_dialog_is_not_covered_by_the_read_only_notice(forest: Path) -> None:
    async with BrowseApp(forest).run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        assert any("read-only" in (n.title or "") for n in app._notifications)
        await press(pilot, "w")
        assert app.screen.query_one("#copy-dest", Input)
        assert not list(app._notifications)


def test_the_key_list_names_every_key_the_browser_binds() -> None:
    from monkeyllm.tui.screens.browse import BrowseScreen
    from monkeyllm.tui.screens.help import KEYS

    spelled = {"left_square_bracket": "[", "right_square_bracket": "]", "slash": "/"}
    spelled |= {"question_mark": "?"}
    for binding in BrowseScreen.BINDINGS:
        key = binding.key.split(",")[0]  # type: ignore[union-attr]
        assert f"`{spelled.get(key, key)}`" in KEYS, binding


@drive
async def test_a_long_body_in_the_reader_speaks_the_browsers_words(tmp_path: Path) -> None:
    from monkeyllm import Vine

    root = copy_sample(tmp_path / "brain", git=True)
    parts = "\n\n".join(f"## Part {n}\n\n" + "word " * 300 for n in range(20))
    with Vine(root) as vine:
        node = {"id": "sales/long", "type": "note", "parent": "sales/_index"}
        vine.plant({**node, "title": "Long", "summary": "A long note.", "body": parts})
    async with BrowseApp(root).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await go(pilot, "sales/long")
        await press(pilot, "r")
        status = str(app.screen.query_one("#reader-status", Static).render())
        assert "over the pick budget" in status and "outline" in status, status
        assert "--section" not in status and "--after" not in status
