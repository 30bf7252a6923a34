"""One search box: concepts go to ``locate`` (titles, aliases, tags, summaries,
section headers), exact strings to ``sniff`` (bodies). The choice is a visible switch;
results open with Enter."""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, RadioButton, RadioSet, Static
from textual.widgets.option_list import Option

from monkeyllm.errors import error_of
from monkeyllm.text import counted

from ..deliver import deliver
from ..heat import escape, heat_colour, heat_dot
from ..host import session_of

MODES = {
    "locate": "Concepts · locate (titles, tags, summaries, headers)",
    "sniff": "Exact text · sniff (bodies: codes, names, numbers)",
}


def ranking_note(info: Any) -> str:
    """How a concept search ranked: hybrid (the Canopy's vectors fused in) or lexical,
    and why (markup for the status line)."""
    if not isinstance(info, dict):
        return ""
    if info.get("ran"):
        waiting = info.get("stale")
        stale = f", {waiting} node{'' if waiting == 1 else 's'} waiting" if waiting else ""
        return f" · [b]hybrid[/b] (lexical + vector, {escape(str(info.get('model')))}{stale})"
    reason = {
        "no-index": "no Canopy: vine canopy build",
        "off": "hybrid off",
        "no-terms": "nothing to search for",
    }.get(str(info.get("reason")))
    why = reason or str(info.get("note") or info.get("reason"))
    return f" · [dim]lexical ({escape(why)})[/dim]"


def result_options(mode: str, response: dict[str, Any]) -> list[Option]:
    """One option per result (id ``n:<node id>``), sniff results with their snippets."""
    options = []
    for n, item in enumerate(response.get("results", [])):
        heat = item.get("heat")
        head = (
            f"{heat_dot(heat)} [b {heat_colour(heat)}]{escape(str(item.get('title')))}[/]"
            f"  [dim]{escape(item['id'])} · {escape(str(item.get('type')))}[/dim]"
        )
        if mode == "locate":
            lines = [head, f"  {escape(str(item.get('summary') or ''))}"]
            if item.get("superseded_by"):
                newer = ", ".join(str(i) for i in item["superseded_by"])
                lines.append(f"  [$warning]superseded by {escape(newer)}[/]")
            if item.get("coverage"):
                lines.append(f"  [dim]{escape(str(item['coverage']))}[/dim]")
        else:
            matching = counted(item.get("match_count") or 0, "matching line")
            lines = [head + f"  [dim]{matching}[/dim]"]
            for match in item.get("matches", []):
                lines.append(
                    f"  [dim]§ {escape(str(match.get('section') or '-'))}, "
                    f"line {match.get('line')}:[/dim] "
                    f"{escape(str(match.get('snippet') or ''))}"
                )
        options.append(Option("\n".join(lines), id=f"{n}:{item['id']}"))
    return options


class SearchScreen(Screen[str | None]):
    """Search, then dismiss with the chosen node id (None when closed)."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+t", "toggle_mode", "Concepts/Exact"),
        Binding("question_mark", "app.help", "Keys", show=False),
    ]

    def __init__(self, query: str = "", mode: str = "locate") -> None:
        super().__init__()
        self.initial = query
        self.mode = mode
        self.response: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        # The box has the whole width: what is typed stays visible; the mode switch is
        # one row under it.
        with Vertical(id="search-bar"):
            yield Input(
                self.initial, placeholder="Search the forest, then Enter", id="search-input"
            )
            with RadioSet(id="search-mode"):
                yield RadioButton(MODES["locate"], value=self.mode == "locate", id="locate")
                yield RadioButton(MODES["sniff"], value=self.mode == "sniff", id="sniff")
        yield Static(
            "Concepts search curated metadata; exact text searches bodies.", id="search-status"
        )
        yield OptionList(id="search-results")
        yield Footer()

    def on_mount(self) -> None:
        self.app.sub_title = "search"
        self.query_one("#search-input", Input).focus()

    @on(RadioSet.Changed, "#search-mode")
    def _mode_changed(self, event: RadioSet.Changed) -> None:
        self.mode = event.pressed.id or "locate"
        if self.query_one("#search-input", Input).value.strip():
            self.run_search()

    def action_toggle_mode(self) -> None:
        other = "sniff" if self.mode == "locate" else "locate"
        self.query_one(f"#{other}", RadioButton).value = True

    @on(Input.Submitted, "#search-input")
    def run_search(self) -> None:
        text = self.query_one("#search-input", Input).value.strip()
        if not text:
            return
        self.query_one("#search-status", Static).update(f"Searching ({self.mode})…")
        self._search(self.mode, text)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, mode: str, text: str) -> None:
        session = session_of(self)
        if mode == "locate":
            response = session.read("locate", query=text, k=20)
        else:
            response = session.read("sniff", terms=text.split() or [text], k=20)
        deliver(self, self._show, mode, text, response)

    def _show(self, mode: str, text: str, response: dict[str, Any]) -> None:
        status = self.query_one("#search-status", Static)
        results = self.query_one("#search-results", OptionList)
        results.clear_options()
        if error_of(response):
            err = error_of(response) or {}
            status.update(
                f"[$error]{escape(str(err.get('code')))}: "
                f"{escape(str(err.get('message')))}[/]\n"
                f"{escape(str(err.get('hint') or ''))}"
            )
            return
        self.response = response
        found = response.get("results", [])
        results.add_options(result_options(mode, response))
        note = f"{counted(len(found), 'result')} for {escape(text)!r} by {mode}"
        if mode == "locate":
            note += ranking_note(response.get("hybrid"))
        if mode == "sniff":
            note += f", {response.get('scanned_nodes')} bodies read"
        if response.get("truncated"):
            from monkeyllm.budget import truncation_note
            from monkeyllm.commands.spelling import CLI
            from monkeyllm.hints import spelled

            with spelled(CLI):
                meaning = truncation_note(mode, response) or "more matched than shown"
            note += f" [$warning]· truncated: {escape(meaning)}[/]"
        status.update(note + ("" if found else " · nothing found, try the other mode"))
        if found:
            results.highlighted = 0
            results.focus()

    @on(OptionList.OptionSelected, "#search-results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        self.dismiss((event.option.id or "").partition(":")[2] or None)

    def action_close(self) -> None:
        self.dismiss(None)
