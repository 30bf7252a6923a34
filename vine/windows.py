"""Date windows (``since``/``until``/``date_field``) shared by the listing reads."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .errors import SchemaError

_BOUND = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
DATE_FIELDS = ("created", "updated")


@dataclass(frozen=True)
class Window:
    """An inclusive date window over one catalog date column."""

    since: str | None
    until: str | None
    field: str
    lo: str | None  # first day, inclusive
    hi: str | None  # day after the last, exclusive
    empty: bool = False  # since falls after until: no day is in the window

    @property
    def active(self) -> bool:
        """True when either bound is set."""
        return self.lo is not None or self.hi is not None

    def sql(self, alias: str = "") -> tuple[str, list[str]]:
        """A SQL predicate (starting with `` AND``) and its parameters."""
        if not self.active:
            return "", []
        col = f"{alias}{self.field}"
        if self.empty:
            return " AND 0", []
        parts = [f" AND {col} IS NOT NULL AND {col} != ''"]
        args: list[str] = []
        if self.lo:
            parts.append(f" AND substr({col}, 1, 10) >= ?")
            args.append(self.lo)
        if self.hi:
            parts.append(f" AND substr({col}, 1, 10) < ?")
            args.append(self.hi)
        return "".join(parts), args

    def echo(self) -> dict[str, Any]:
        """The ``window`` object echoed in responses (``empty`` when since falls after
        until, so that nothing can match)."""
        out: dict[str, Any] = {"since": self.since, "until": self.until, "date_field": self.field}
        if self.empty:
            out["empty"] = True
        return out


def _expand(raw: str, name: str, *, end: bool) -> date:
    m = _BOUND.match(raw.strip()) if isinstance(raw, str) else None
    if not m:
        raise SchemaError(f"{name} must be YYYY, YYYY-MM or YYYY-MM-DD, got {raw!r}")
    year, month, day = int(m.group(1)), m.group(2), m.group(3)
    try:
        if day:
            return date(year, int(month), int(day))
        if month:
            mo = int(month)
            return date(year, mo, calendar.monthrange(year, mo)[1] if end else 1)
        return date(year, 12, 31) if end else date(year, 1, 1)
    except ValueError:
        raise SchemaError(f"{name} is not a real date: {raw!r}") from None


def window(since: str | None, until: str | None, date_field: str | None) -> Window:
    """Validate and expand a window; a partial bound covers its whole period."""
    field = date_field or "created"
    if field not in DATE_FIELDS:
        raise SchemaError(f"date_field must be one of {', '.join(DATE_FIELDS)}, got {field!r}")
    lo = _expand(since, "since", end=False) if since else None
    last = _expand(until, "until", end=True) if until else None
    if lo and last and lo > last:
        return Window(since, until, field, lo.isoformat(), lo.isoformat(), empty=True)
    hi = last + timedelta(days=1) if last and last < date.max else None
    hi_text: str | None
    if last is not None and hi is None:
        hi_text = "9999-12-31~"  # past the last representable day, still a string bound
    else:
        hi_text = hi.isoformat() if hi else None
    return Window(since, until, field, lo.isoformat() if lo else None, hi_text)
