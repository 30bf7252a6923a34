"""The options ``vine`` takes before any subcommand, in one table.

The hot path (:mod:`.main`), the Typer application (:mod:`.app`, :mod:`.options`) and
the name a process gives itself on the writer lock's card all read their spellings
here. No third-party import: the hot path reads this table without Typer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    """One global option: its spellings (the long one first), whether it takes a value,
    and its help."""

    names: tuple[str, ...]
    takes_value: bool
    help: str

    @property
    def long(self) -> str:
        """The long spelling, ``--forest``."""
        return self.names[0]

    def given(self, arg: str) -> bool:
        """Whether ``arg`` spells this option (``--forest=DIR`` included)."""
        return arg in self.names or (self.takes_value and arg.startswith(self.long + "="))


FOREST = Flag(
    ("--forest", "-f"),
    True,
    "The forest's folder (default: $VINE_FOREST, else the nearest forest at or "
    "above the current folder).",
)
JSON = Flag(("--json",), False, "Print JSON, even on a terminal (the default when piped).")
VERSION = Flag(("--version",), False, "Print the version and exit.")
HELP = Flag(("--help", "-h"), False, "Show this message and exit.")
GLOBAL = (FOREST, JSON, VERSION, HELP)


def value_follows(arg: str) -> bool:
    """Whether ``arg`` is a global option whose value is the next argument (``-f DIR``),
    so a scan for the subcommand's name skips that value."""
    return any(arg in flag.names for flag in GLOBAL if flag.takes_value)
