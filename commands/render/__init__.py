"""Render call responses for people at a terminal, with rich.

Pure data to rich: no engine import, so the CLI loads this module only when standard
output is a terminal. Every renderer shows what it knows how to lay out and hands the
rest to a footer, so no key of a response is ever hidden. Three things are always said
plainly, whatever the call: a ``truncated`` response (cut by its budget, not the whole
set), its ``hint`` or ``hints``, and its ``next`` page cursor."""

from __future__ import annotations

from .dispatch import show
from .pieces import heat_bar

__all__ = ['show', 'heat_bar']
