"""The key map (``?``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

KEYS = """\
# Keys

| key | where | what |
|---|---|---|
| ↑ ↓ Enter, click | tree, digest | move; Enter opens a branch or follows a child or edge |
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
| `o` | reader | focus the outline and the `[[wikilinks]]` |
| Ctrl+P | everywhere | the command palette (also: jump to an ancestor) |
| Escape | screens, dialogs | close |
| `q` | browser | quit |

Colours are heat: how much a node has been used lately, cold blue to hot red.
Each save opens the forest for writing just for that commit and shows the commit;
when another writer holds the forest, browsing goes on and the save says so.
"""


class HelpScreen(ModalScreen[None]):
    """Every key, in one table."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(KEYS)

    def action_close(self) -> None:
        self.dismiss(None)
