"""Near names for a mistyped one: a field, a rel, a node id."""

from __future__ import annotations

from collections.abc import Iterable


def close(word: str, choices: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``choices`` nearest to ``word`` (case-blind), best first."""
    import difflib  # only a mistake needs it

    pool = list(dict.fromkeys(choices))
    folded = {c.casefold(): c for c in pool}
    found = difflib.get_close_matches(word.casefold(), list(folded), n=n, cutoff=cutoff)
    return [folded[f] for f in found]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the nearest choice, or ``""``."""
    near = close(word, choices, n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""
