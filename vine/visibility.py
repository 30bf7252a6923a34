"""What part of a forest a call may see: subtrees allowed and denied by id prefix.

The engine knows no principals. A host that serves a forest to many (the Station)
hands the calls that must count or touch nodes beyond their argument (calendar,
coverage, history, prune, transplant) the prefixes its caller may see, and those
calls keep every count, id and write inside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def prefix(raw: str) -> str:
    """A prefix in its stored form: no leading slash, ending in ``/`` (``""`` for the
    whole forest)."""
    text = raw.strip().strip("/")
    return "" if text in ("", "_index") else text + "/"


def _upper(start: str) -> str:
    """The smallest string above every id that starts with ``start`` (which ends in
    ``/``), for a range predicate the primary key can serve."""
    return start[:-1] + chr(ord("/") + 1)


@dataclass(frozen=True)
class Visibility:
    """Ids under no deny prefix and, unless the whole forest is allowed, under some
    allow prefix.

    Args:
        allow: Prefixes (``"sales/"``); ``""`` (or none at all) is the whole forest.
        deny: Prefixes hidden even inside an allowed one.
    """

    allow: tuple[str, ...] = ("",)
    deny: tuple[str, ...] = ()

    @classmethod
    def of(cls, allow: Any = ("",), deny: Any = ()) -> Visibility:
        """A visibility from prefixes in any spelling (``sales``, ``/sales/``); a value
        that is not a list or tuple of strings is ``E_SCHEMA``."""
        from .argcheck import strings

        allow = strings(allow, "allow", "id prefixes")
        deny = strings(deny, "deny", "id prefixes")
        return cls(
            tuple(prefix(a) for a in allow), tuple(d for d in (prefix(x) for x in deny) if d)
        )

    @property
    def whole(self) -> bool:
        """True when the allow list covers the whole forest."""
        return "" in self.allow or not self.allow

    @property
    def restricted(self) -> bool:
        """True when some node is hidden."""
        return bool(self.deny) or not self.whole

    def sees(self, node_id: str) -> bool:
        """True when ``node_id`` is visible."""
        if any(node_id.startswith(d) for d in self.deny):
            return False
        return self.whole or any(node_id.startswith(a) for a in self.allow)

    def sql(self, column: str = "id") -> tuple[str, list[str]]:
        """The same rule as a SQL predicate (starting with `` AND``) and its parameters:
        range comparisons on the bare column."""
        parts: list[str] = []
        args: list[str] = []
        if not self.whole:
            ors = []
            for start in self.allow:
                ors.append(f"({column} >= ? AND {column} < ?)")
                args += [start, _upper(start)]
            parts.append(" AND (" + " OR ".join(ors) + ")")
        for start in self.deny:
            parts.append(f" AND NOT ({column} >= ? AND {column} < ?)")
            args += [start, _upper(start)]
        return "".join(parts), args


EVERYTHING = Visibility()
