"""Heat (0..1) as colour: a five-step scale from cold blue to hot red, and its legend."""

from __future__ import annotations

# From cold to hot; a heat falls into the step of its value.
SCALE = ["#5f87af", "#5faf87", "#d7af5f", "#ff8700", "#ff3030"]
STEPS = [0.0, 0.01, 0.08, 0.25, 0.5]


def heat_colour(heat: float | None) -> str:
    """The colour of a heat value."""
    value = heat or 0.0
    step = 0
    for i, floor in enumerate(STEPS):
        if value >= floor:
            step = i
    return SCALE[step]


def heat_markup(text: str, heat: float | None) -> str:
    """``text`` as content markup coloured by ``heat``."""
    return f"[{heat_colour(heat)}]{escape(text)}[/]"


def heat_dot(heat: float | None) -> str:
    """A coloured dot for ``heat``."""
    return f"[{heat_colour(heat)}]●[/]"


def legend() -> str:
    """The scale as markup: a labelled run of blocks."""
    blocks = "".join(f"[{c}]██[/]" for c in SCALE)
    return f"heat  cold {blocks} hot"


def escape(text: str) -> str:
    """Escape content markup in ``text``."""
    return text.replace("[", r"\[")
