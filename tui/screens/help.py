"""The key map (``?``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

KEYS = """\
# Keys

| key | where | what |
|---|---|---|
| ↑ ↓ Enter, click | tree, digest | move (the digest follows); Enter opens a branch or a link |
| Tab / Shift+Tab | everywhere | move between the tree and the digest |
| `[` / `]` | browser | back / forward through the history |
| `u` | browser | up to the parent branch (click a crumb of the trail to jump further) |
| `r` | browser | read the body (Enter on an outline line reads that section) |
| `/` | browser | search: concepts (locate) or exact text (sniff), Ctrl+T switches |
| `d` | browser | a dataset's manual, sample rows and SQL (Enter runs it) |
| `e` | browser | edit title, summary and tags (graft) |
| `l` | browser | add a typed link to a node you pick (graft) |
| `a` | browser | append a section to the body (graft) |
| `p` | browser | plant a new note under the current branch |
| `m` | browser | move or rename the current leaf (transplant): shows the links it rewrites |
| `x`, Delete | browser | delete the current node (prune): what goes, and the links anchoring it |
| `h` | browser | the current node's history: its commits, who and when |
| `c` | browser | the forest at a glance: regions (coverage) and months (calendar) |
| `w` | browser | a writable copy, when this forest cannot be written |
| `o` | reader | focus the outline and the `[[wikilinks]]` |
| Ctrl+P | everywhere | the command palette (also: jump to an ancestor) |
| Enter, Ctrl+S | dialogs | save (beside a body to write, Enter goes to the next field) |
| Escape | screens, dialogs | close |
| `?` | everywhere | this list |
| `q` | browser | quit |

Colours are heat: how much a node has been used lately, cold blue to hot red.
Each save opens the forest for writing just for that commit and shows the commit;
when another writer holds the forest, browsing goes on and the save says so.
"""


class HelpScreen(ModalScreen[None]):
    """Every key, in one table, in a box that says when there is more to scroll to."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]
    AUTO_FOCUS = "#help-scroll"

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            with VerticalScroll(id="help-scroll"):
                yield Markdown(KEYS)
            yield Static("", id="help-more")

    def on_mount(self) -> None:
        box = self.query_one("#help", Vertical)
        box.border_title = "Keys"
        box.border_subtitle = "↑ ↓ PgUp PgDn Home End scroll · Esc closes"
        scroll = self.query_one("#help-scroll", VerticalScroll)
        self.watch(scroll, "scroll_y", self._where, init=False)
        self.watch(scroll, "max_scroll_y", self._where, init=False)
        self.call_after_refresh(self._where)

    def on_resize(self) -> None:
        self.call_after_refresh(self._where)

    def _where(self, *_: object) -> None:
        """Say whether the list goes on below (or above) what the box shows."""
        scroll = self.query_one("#help-scroll", VerticalScroll)
        more = self.query_one("#help-more", Static)
        top, end = scroll.scroll_y, scroll.max_scroll_y
        if end <= 0:
            more.update("[dim]Every key is shown.[/dim]")
        elif top < end - 0.5:
            shown = round(
                100
                * (top + scroll.scrollable_content_region.height)
                / (end + scroll.scrollable_content_region.height)
            )
            more.update(
                f"[b $accent]↓ More below[/] [dim]({shown}% shown so far): "
                "scroll with ↓ or PgDn[/dim]"
            )
        else:
            more.update("[dim]End of the list; ↑ or PgUp scrolls back.[/dim]")

    def action_close(self) -> None:
        self.dismiss(None)
