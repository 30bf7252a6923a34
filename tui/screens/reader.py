"""The reader: a node's body (``pick``) as rendered markdown, with its outline.

A body within the pick budget is read whole and a section is a jump; a body over the
budget opens on its outline and reads one section at a time, as the engine intends.
``[[wikilinks]]`` become links: click one, or choose it from the list on the left.
"""

from __future__ import annotations

import re
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from monkeyllm.errors import error_of

from ..deliver import deliver
from ..heat import escape
from ..host import browser, session_of

WIKILINK = re.compile(r"\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|([^\]\n]+))?\]\]")
SCHEME = "vine:"


def linkify(body: str) -> tuple[str, list[str]]:
    """``body`` with each ``[[target|label]]`` as a markdown link, and the targets."""
    targets: list[str] = []

    def swap(match: re.Match[str]) -> str:
        target = match.group(1).strip()
        if target not in targets:
            targets.append(target)
        text = (match.group(2) or target).strip()
        return f"[{text}]({SCHEME}{target.replace(' ', '%20')})"

    return WIKILINK.sub(swap, body), targets


class ReaderScreen(Screen[str | None]):
    """Read one node; dismisses with a node id when a wikilink is followed."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("o", "outline", "Outline"),
        Binding("question_mark", "app.help", "Keys"),
    ]

    def __init__(self, node_id: str, section: str | None = None) -> None:
        super().__init__()
        self.node_id = node_id
        self.wanted = section
        self.outline: list[str] = []
        self.links: list[str] = []
        self.whole = False
        self.section: str | None = None
        self.source = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="reader"):
            yield OptionList(id="reader-outline")
            with VerticalScroll(id="reader-scroll"):
                yield Markdown("", id="reader-body", open_links=False)
        yield Static("", id="reader-status")
        yield Footer()

    def on_mount(self) -> None:
        self.app.sub_title = self.node_id
        self._load(self.wanted)

    @work(thread=True, exclusive=True, group="pick")
    def _load(self, section: str | None) -> None:
        session = session_of(self)
        picked = session.read("pick", id=self.node_id)
        outline = picked.get("outline")
        if outline is None and not error_of(picked):
            looked = session.read("look", id=self.node_id, fields=["outline"])
            outline = looked.get("outline") or []
        part = None
        if picked.get("truncated") and section:
            part = session.read("pick", id=self.node_id, section=section)
        deliver(self, self._loaded, picked, outline or [], part, section)

    async def _loaded(
        self,
        picked: dict[str, Any],
        outline: list[str],
        part: dict[str, Any] | None,
        section: str | None,
    ) -> None:
        if error_of(picked):
            browser(self).report(picked, f"Cannot read {self.node_id}")
            return
        self.outline = outline
        self.whole = not picked.get("truncated")
        status = self.query_one("#reader-status", Static)
        if self.whole:
            await self._show_markdown(picked.get("body") or "")
            status.update(
                f"{escape(str(picked.get('title')))} · "
                f"{picked.get('body_tokens')} tokens, read whole"
            )
        else:
            await self._show_markdown(
                f"# {picked.get('title')}\n\nThis body is **{picked.get('body_tokens')} "
                "tokens**, over the pick budget, so it reads section by section: choose "
                "one in the outline on the left."
            )
            # In the browser's words (the engine's hint names --section and --after).
            status.update(
                f"[$warning]{escape(str(picked.get('title')))} · "
                f"{picked.get('body_tokens')} tokens, over the pick budget: "
                "Enter on a section of the outline reads it[/]"
            )
        self._fill_outline()
        if part is not None:
            await self._show_part(part)
        elif section:
            self.jump(section)
        self.query_one("#reader-outline", OptionList).focus()

    def _fill_outline(self) -> None:
        options = self.query_one("#reader-outline", OptionList)
        options.clear_options()
        if self.outline:
            options.add_option(Option("[b $secondary]Outline[/]", disabled=True))
            for n, header in enumerate(self.outline):
                options.add_option(Option(f"§ {escape(header)}", id=f"sec:{n}:{header}"))
        if self.links:
            options.add_option(Option("[b $secondary]Links[/]", disabled=True))
            for n, target in enumerate(self.links):
                options.add_option(Option(f"⇢ {escape(target)}", id=f"go:{n}:{target}"))

    async def _show_markdown(self, body: str) -> None:
        text, self.links = linkify(body)
        self.source = text
        await self.query_one("#reader-body", Markdown).update(text)
        self.query_one("#reader-scroll", VerticalScroll).scroll_home(animate=False)

    async def _show_part(self, part: dict[str, Any]) -> None:
        if error_of(part):
            browser(self).report(part, "Cannot read that section")
            return
        self.section = part.get("section")
        await self._show_markdown(part.get("body") or "")
        self._fill_outline()
        self.query_one("#reader-status", Static).update(
            f"section {escape(str(self.section))} · {part.get('body_tokens')} tokens"
        )

    def jump(self, header: str) -> None:
        """Show the section ``header``: scroll to it, or read it when the body is big."""
        if not self.whole:
            self._read_section(header)
            return
        md = self.query_one("#reader-body", Markdown)
        wanted = header.casefold()
        for _level, title, block_id in md.table_of_contents:
            if str(title).strip().casefold().startswith(wanted) and block_id:
                md.query_one(f"#{block_id}").scroll_visible(top=True, animate=False)
                self.section = header
                return
        self.notify(f"No section {header!r} in this body.", severity="warning")

    @work(thread=True, exclusive=True, group="pick")
    def _read_section(self, header: str) -> None:
        part = session_of(self).read("pick", id=self.node_id, section=header)
        deliver(self, self._show_part, part)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        kind, _, rest = (event.option.id or "").partition(":")
        target = rest.partition(":")[2]
        if kind == "sec":
            self.jump(target)
        elif kind == "go":
            self.dismiss(target)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        href = event.href
        if href.startswith(SCHEME):
            self.dismiss(href[len(SCHEME) :].replace("%20", " "))
        else:
            self.app.open_url(href)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_outline(self) -> None:
        self.query_one("#reader-outline", OptionList).focus()
