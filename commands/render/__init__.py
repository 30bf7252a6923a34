"""Render call responses for people at a terminal, with rich.

Pure data to rich: a response in, output out, the engine never called (only its error
test and wording are read); the CLI loads this package only when standard output is a
terminal, since rich costs imports a piped run does not need. Every renderer shows what
it knows how to lay out and hands the rest to a footer, so no key of a response is ever
hidden. Three things are always said plainly, whatever the call: a ``truncated``
response (cut by its budget, not the whole set), its ``hint`` or ``hints``, and its
``next`` page cursor."""

from __future__ import annotations

from .dispatch import show
from .pieces import heat_bar

__all__ = ["show", "heat_bar"]
