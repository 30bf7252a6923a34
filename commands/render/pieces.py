"""The small pieces every layout shares: cells, heat bars, tables and the footer."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from monkeyllm.text import counted

Response = dict[str, Any]
# Keys the shared footer speaks about itself, after any call-specific layout.
NOTICE_KEYS = ("truncated", "hint", "hints", "next")
# Bookkeeping lists that say nothing when empty.
QUIET_WHEN_EMPTY = ("missing", "dropped", "truncated_fields", "fortified")
# Heat colours from cool to hot: (upper bound, style).
HEAT_STEPS = (
    (0.15, "grey58"),
    (0.35, "steel_blue1"),
    (0.6, "yellow"),
    (0.8, "dark_orange"),
    (float("inf"), "red"),
)
SHA_SHOWN = 12
NARROW_COLUMN = 30
# Ids are copied back into the next call: they fold only when the terminal is too narrow.
UNCAPPED = ("id", "node")
# Columns whose first line is copied (an id, a sha): a table keeps it whole, or stacks.
WHOLE = (*UNCAPPED, "child", "region", "commit")
# The narrowest a column may get before a table reads worse than a list; a table's
# prose column (a summary, a snippet) needs more: at ten cells a two-line summary folds
# into a dozen lines, taller than the same row stacked.
COMFORT = 10
PROSE = ("summary", "snippet")
PROSE_COMFORT = 24
DIM = "dim"
NONE = "—"


# -- small pieces --------------------------------------------------------------------


def heat_bar(heat: float | None, width: int = 8) -> Text:
    """A coloured bar for heat in 0..1 with its value, e.g. ``▇▇▇░░░░░ 0.38``.

    Cool grey and blue for low heat, yellow in the middle, orange to red for high.
    Values outside 0..1 fill the bar to its nearest end and still print as given.

    Args:
        heat: The heat, or None when the response carried none (a dim empty bar).
        width: How many cells the bar takes (the number comes after).
    """
    width = max(int(width), 1)
    if heat is None or heat != heat:  # absent, or NaN
        return Text("░" * width + " " + NONE, style=DIM)
    level = min(max(float(heat), 0.0), 1.0)
    filled = round(level * width)
    if level > 0 and filled == 0:
        filled = 1  # any heat at all shows, so "warm" is never read as "never visited"
    colour = next(style for bound, style in HEAT_STEPS if level < bound)
    bar = Text()
    bar.append("▇" * filled, style=colour)
    bar.append("░" * (width - filled), style="grey37")
    bar.append(" " + _number(heat), style=colour)
    return bar


def _number(value: float) -> str:
    """At least two decimals, up to three, without trailing noise: 0.38, 0.005, 1.00."""
    text = f"{value:.3f}"
    return text[:-1] if text.endswith("0") else text


def plain(value: Any) -> str:
    """A value as one line of text: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def count(value: Any, noun: str, plural: str | None = None) -> str:
    """A count with its noun as the count needs (``"1 node"``, ``"3 nodes"``); a count
    a response leaves out or gives as no whole number is shown as it is, plural."""
    if isinstance(value, int) and not isinstance(value, bool):
        return counted(value, noun, plural)
    return f"{'?' if value is None else plain(value)} {plural or noun + 's'}"


def cell(value: Any) -> Text:
    """A table cell; None is a dim dash, lists are joined, numbers as written."""
    if value is None:
        return Text(NONE, style=DIM)
    if isinstance(value, bool):
        return Text("yes" if value else "no")
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return Text(", ".join(str(v) for v in value))
    return Text(plain(value))


def short_sha(sha: Any) -> Text:
    """A commit's short sha, or a dim note that nothing was committed."""
    if not sha:
        return Text("no commit (nothing changed on disk)", style=DIM)
    return Text(str(sha)[:SHA_SHOWN], style="bold")


def trail_text(trail: Any) -> str:
    """A trail as ``a › b › c``."""
    return " › ".join(trail) if isinstance(trail, list) else plain(trail)


def extras(item: dict[str, Any], known: Iterable[str]) -> Text | None:
    """The keys of ``item`` no column shows, as dim ``key: value`` pairs."""
    skip = set(known)
    parts = [_extra(k, v) for k, v in item.items() if k not in skip]
    return Text(" · ".join(parts), style=DIM) if parts else None


def _extra(key: str, value: Any) -> str:
    if key == "body_tokens" and isinstance(value, int):
        return f"{value} tokens"
    if key == "match_count" and isinstance(value, int):
        return count(value, "matching line")
    if key == "trail":
        return trail_text(value)
    return f"{key}: {plain(value)}"


def stack(*parts: Text | str | None) -> Text:
    """Join the present parts into one cell, one per line."""
    out = Text()
    for part in parts:
        if part is None or part == "":
            continue
        if out:
            out.append("\n")
        out.append(part if isinstance(part, Text) else Text(part))
    return out


def columns_table(*headers: str, title: str | None = None, wide: str | None = None) -> Table:
    """A table with these headers; the others are capped so the ``wide`` column (prose)
    keeps room to read. A floor would push columns off a narrow terminal, a cap cannot."""
    table = Table(
        title=title, title_justify="left", show_lines=False, expand=False, header_style="bold"
    )
    for header in headers:
        cap = NARROW_COLUMN if wide is not None and header not in (wide, *UNCAPPED) else None
        table.add_column(header, overflow="fold", max_width=cap)
    return table


def fit(console: Console, table: Table, options: ConsoleOptions | None = None) -> RenderableType:
    """``table`` as wide as the terminal allows it to stay readable, else its rows stacked.

    A table is kept when every id (and sha) column can show its ids whole on one line
    and every other column keeps at least ``COMFORT`` cells (``PROSE_COMFORT`` for a
    summary or a snippet, which folded into a dozen lines at ten), or all it needs;
    those id columns are then fixed at that width, so rich squeezes the prose instead
    of folding an id mid-word. On a terminal narrower than that (40 columns, or 80 for
    a wide table), each row is a block of ``header  value`` lines under a rule instead:
    a table of 3-cell columns cannot be read, and a folded id cannot be copied. Within
    a panel, ``options`` (the room inside it) decide instead of the terminal's width."""
    options = options or console.options
    widths: dict[int, int] = {}
    need = len(table.columns) + 1  # the vertical borders
    for n, column in enumerate(table.columns):
        header = _longest_word(column.header)
        lines = [_lines(cell) for cell in column.cells]
        if column.header in WHOLE:
            want = max([header, *(len(ls[0]) for ls in lines if ls)])
            widths[n] = want
        else:
            widest = max(
                [header, *(Measurement.get(console, options, c).maximum for c in column.cells)]
            )
            floor = PROSE_COMFORT if column.header in PROSE else COMFORT
            want = max(header, min(widest, floor))
        need += want + 2  # padding
    if need > options.max_width:
        return stacked(table, options.max_width)
    for n, width in widths.items():
        table.columns[n].width = width
    return table


class Fitted:
    """A table that :func:`fit` lays out when it is drawn, in whatever room it is given
    (inside a digest panel: the panel's width, not the terminal's)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield fit(console, self.table, options)


def _lines(value: Any) -> list[str]:
    text = value.plain if isinstance(value, Text) else value if isinstance(value, str) else ""
    return text.split("\n") if text else []


def _longest_word(value: Any) -> int:
    words = " ".join(_lines(value)).split()
    return max((len(w) for w in words), default=0)


def stacked(table: Table, width: int) -> Group:
    """A table's rows one under another: a rule (with the row's number, if the first
    column is ``#``), then each non-empty cell beside its header; under it, indented,
    when an id would not fit beside the longest header (``width`` is the terminal's)."""
    from rich.padding import Padding

    headers = [" ".join(_lines(c.header)) for c in table.columns]
    rows = list(zip(*(list(c.cells) for c in table.columns), strict=True))
    numbered = bool(headers) and headers[0] == "#"
    label = max(map(len, headers), default=0)
    ids = [
        len(_lines(cell)[0])
        for column in table.columns
        if column.header in WHOLE
        for cell in column.cells
        if _lines(cell)
    ]
    beside = label + 2 + max(ids, default=0) <= width
    parts: list[RenderableType] = []
    if table.title:
        parts.append(Text(str(table.title), style="bold"))
    for row in rows:
        cells = list(zip(headers, row, strict=True))
        if numbered:
            (_, rank), *cells = cells
            if _lines(rank):  # a row that continues the one above (sniff) has none
                parts.append(Rule(Text(f"{' '.join(_lines(rank))} "), align="left", style=DIM))
        else:
            parts.append(Rule(style=DIM))
        present = [(h, v) for h, v in cells if not isinstance(v, str | Text) or _lines(v)]
        if beside:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column(overflow="fold")
            for header, value in present:
                grid.add_row(header or " ", value)
            parts.append(grid)
        else:
            for header, value in present:
                parts += [Text(header or " ", style="bold"), Padding(value, (0, 0, 0, 2))]
    return Group(*parts)


def counted_table(call: str, items: list[Any], noun: str, *headers: str, wide: str) -> Table:
    """A table of ``items`` with these headers, titled with the call and how many ``noun``s
    it lists."""
    return columns_table(*headers, title=f"{call}: {count(len(items), noun)}", wide=wide)


def id_cell(item: dict[str, Any]) -> Text:
    """A result's id in bold, its trail dim under it."""
    trail = Text(trail_text(item["trail"]), style=DIM) if item.get("trail") else None
    return stack(Text(str(item.get("id")), style="bold"), trail)


def pairs_grid(pairs: Iterable[tuple[str, Any]]) -> Table:
    """A two-column grid of labels and values (values already renderable or plain)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in pairs:
        grid.add_row(label, value if isinstance(value, Text | Table) else cell(value))
    return grid


# -- the footer every call shares ----------------------------------------------------


def footer(
    console: Console, response: Response, shown: Iterable[str], call: str | None = None
) -> None:
    """Unknown keys as ``key: value``, then the truncation warning (saying what it
    means for ``call``), hints and cursor."""
    done = set(shown) | set(NOTICE_KEYS)
    for key, value in response.items():
        if key in done or (key in QUIET_WHEN_EMPTY and not value):
            continue
        console.print(Text.assemble((f"{key}: ", "bold"), plain(value)))
    truncated = response.get("truncated")
    if truncated:
        from monkeyllm.budget import truncation_note

        meaning = truncation_note(call, response) if call else None
        warning = "⚠ truncated: " + (
            meaning or "this response was cut to fit its budget; more exists than is shown here."
        )
        if truncated is not True:
            warning += f" ({plain(truncated)})"
        console.print(Text(warning, style="bold yellow"))
    hints = response.get("hints")
    for hint in [response.get("hint"), *(hints if isinstance(hints, list) else [hints])]:
        if hint:
            console.print(Text.assemble(("hint: ", "bold cyan"), plain(hint)))
    if "next" in response and response["next"] is not None:
        from monkeyllm import hints

        cursor = plain(response["next"])
        again = (
            hints.option(call, "after", cursor)
            if call
            else f"after={json.dumps(cursor, ensure_ascii=False)}"
        )
        console.print(
            Text.assemble(
                ("next: ", "bold"), (cursor, "bold"), (f"  (pass {again} for the next page)", DIM)
            )
        )


def ranking_line(console: Console, response: Response) -> set[str]:
    """One dim line saying how a locate or harvest ranked: hybrid (lexical fused with
    the Canopy's vectors) or lexical, and why."""
    info = response.get("hybrid")
    if not isinstance(info, dict):
        return set()
    if info.get("ran"):
        text = f"ranking: hybrid, lexical + vector ({info.get('model')})"
    else:
        why = info.get("note") or {
            "off": "hybrid is off for this call",
            "no-terms": "nothing to search for",
            "no-index": "no Canopy index: vine canopy build makes one",
        }.get(str(info.get("reason")), str(info.get("reason")))
        text = f"ranking: lexical ({why})"
    if info.get("ran") and info.get("note"):
        text += f"; {info['note']}"
    console.print(Text(text, style=DIM))
    return {"hybrid"}


def markdown(text: str) -> RenderableType:
    """A body as rendered markdown."""
    from rich.markdown import Markdown  # markdown-it loads only when a body is shown

    return Markdown(text)


def terms_pattern(terms: Any) -> re.Pattern[str] | None:
    """A case-blind pattern of the searched terms, longest first (None without terms)."""
    if isinstance(terms, str):
        terms = [terms]
    if not isinstance(terms, list):
        return None
    words = sorted({str(t) for t in terms if str(t).strip()}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words)), re.IGNORECASE) if words else None


def highlight(snippet: str, pattern: re.Pattern[str] | None) -> Text:
    """A snippet with the searched terms shown in reverse."""
    text = Text(snippet)
    if pattern is not None:
        text.highlight_regex(pattern, style="bold reverse")
    return text
