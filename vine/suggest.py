"""Near names for a mistyped one: a field, a rel, a node id."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


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


# Candidates compared per mistyped id (difflib costs about 10 µs each): the kin of the
# id's nearest existing branch, and the ids with a leaf like its leaf anywhere.
_KIN_MAX = 3000
_LEAF_MAX = 1000


def near_ids(
    conn: Any, node_id: str, *, keep: Callable[[str], bool] | None = None, n: int = 3
) -> list[str]:
    """Up to ``n`` existing ids nearest to ``node_id`` (a mistyped or guessed id), best
    first; ``keep`` limits them to ids a caller may see.

    Compared: the ids under its nearest existing branch at about its depth (so
    ``sales/exchange-polcy`` meets ``sales/exchange-policy`` and ``sale/x`` meets
    ``sales/x``), and ids anywhere whose last segment starts like its own (a guess
    at the folder). Bounded, so a forest of any size answers quickly.
    """
    from .ids import folder_prefix, parent_of

    depth = node_id.count("/")
    anchor = parent_of(node_id)
    # A branch the caller may not see must not steer the search either.
    while anchor is not None and (
        (keep is not None and not keep(anchor))
        or conn.execute(
            "SELECT 1 FROM nodes WHERE id = ? AND kind = 'branch'", (anchor,)
        ).fetchone()
        is None
    ):
        anchor = parent_of(anchor)
    prefix = folder_prefix(anchor) if anchor is not None else ""
    kin = _kept(
        conn.execute(
            "SELECT id FROM nodes WHERE id >= ? AND id < ? "
            "AND length(id) - length(replace(id, '/', '')) BETWEEN ? AND ? ORDER BY rowid",
            (prefix, prefix + "\U0010ffff", depth - 1, depth + 1),
        ),
        keep,
        _KIN_MAX,
    )
    parts = node_id.split("/")
    leaf = parts[-2] if len(parts) > 1 and parts[-1] == "_index" else parts[-1]
    start = _like(leaf[:4])
    alike = (
        _kept(
            conn.execute(
                "SELECT id FROM nodes WHERE (id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\') "
                "ORDER BY rowid",
                (start + "%", "%/" + start + "%"),
            ),
            keep,
            _LEAF_MAX,
        )
        if len(leaf) >= 3
        else []
    )
    pool = [i for i in dict.fromkeys(kin + alike) if i != node_id]
    return close(node_id, pool, n=n)


def _kept(rows: Any, keep: Callable[[str], bool] | None, limit: int) -> list[str]:
    """The first ``limit`` ids of ``rows`` that ``keep`` accepts (hidden ids take no
    place, so what is hidden never changes what is suggested)."""
    out: list[str] = []
    for (node_id,) in rows:
        if keep is None or keep(node_id):
            out.append(node_id)
            if len(out) >= limit:
                break
    return out


def _like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (escape character ``\\``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
