"""The error family of the engine.

Every expected failure is a :class:`VineError`; the call boundary turns it into
the wire envelope ``{"error": {"code", "message", "hint", ...extras}}``::

    VineError
    ├── NotFound          E_NOT_FOUND        404
    ├── Moved             E_MOVED            404
    ├── SchemaError       E_SCHEMA           400
    ├── FrontmatterError  E_FRONTMATTER      400
    ├── ReadOnly          E_READONLY         403
    ├── QueryForbidden    E_QUERY_FORBIDDEN  403
    ├── QueryInvalid      E_QUERY_INVALID    400
    ├── Timeout           E_TIMEOUT          504
    ├── Locked            E_LOCKED           409
    ├── Conflict          E_CONFLICT         409  (the node changed since the caller read it)
    ├── Anchored          E_ANCHORED         409
    ├── Forbidden         E_FORBIDDEN        403
    ├── ProviderError     E_PROVIDER         502  (a model provider failed)
    └── Internal          E_INTERNAL         500
"""

from __future__ import annotations

import errno
import sys
from typing import Any

# What a file system that refuses a write says: full, read-only, over quota, a file
# over its size limit, or no permission; and SQLite's words for the same.
CANNOT_WRITE = frozenset(
    {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EFBIG, errno.EACCES, errno.EPERM}
)
_SQLITE_REFUSALS = frozenset({8, 10, 13, 14})  # READONLY, IOERR, FULL, CANTOPEN


# Every kind that names its own code, however deep it subclasses (filled as they are
# declared).
_KINDS: dict[str, type[VineError]] = {}


class VineError(Exception):
    """Base of every expected failure; carries its wire code and HTTP status."""

    code = "E_SCHEMA"
    status = 400

    def __init_subclass__(
        cls, *, code: str | None = None, status: int | None = None, **kwargs: Any
    ) -> None:
        """A kind of failure names its wire code and HTTP status in its class line."""
        super().__init_subclass__(**kwargs)
        cls.code = code or cls.code
        cls.status = status or cls.status
        if code is not None:
            _KINDS[code] = cls

    def __init__(self, message: str, hint: str | None = None, **extras: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.extras = extras

    def envelope(self) -> dict[str, Any]:
        """The wire form: one ``error`` key holding code, message, hint and extras."""
        from .budget import ENVELOPE_TEXT_MAX

        body: dict[str, Any] = {
            "code": self.code,
            "message": _clip(self.message, ENVELOPE_TEXT_MAX),
        }
        if self.hint:
            body["hint"] = _clip(self.hint, ENVELOPE_TEXT_MAX)
        body.update(self.extras)
        return {"error": body}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class NotFound(VineError, code="E_NOT_FOUND", status=404): ...


class Moved(VineError, code="E_MOVED", status=404): ...


class SchemaError(VineError, code="E_SCHEMA", status=400): ...


class FrontmatterError(VineError, code="E_FRONTMATTER", status=400): ...


class ReadOnly(VineError, code="E_READONLY", status=403): ...


class QueryForbidden(VineError, code="E_QUERY_FORBIDDEN", status=403): ...


class QueryInvalid(VineError, code="E_QUERY_INVALID", status=400): ...


class Timeout(VineError, code="E_TIMEOUT", status=504): ...


class Locked(VineError, code="E_LOCKED", status=409): ...


class Conflict(VineError, code="E_CONFLICT", status=409): ...


class Anchored(VineError, code="E_ANCHORED", status=409): ...


class Forbidden(VineError, code="E_FORBIDDEN", status=403): ...


class ProviderError(VineError, code="E_PROVIDER", status=502): ...


class Internal(VineError, code="E_INTERNAL", status=500): ...


# Every kind above, by its wire code.
ERRORS: dict[str, type[VineError]] = dict(_KINDS)
ERROR_STATUS: dict[str, int] = {code: cls.status for code, cls in ERRORS.items()}


def _is_sqlite_error(exc: BaseException) -> bool:
    """True for a SQLite error (without importing sqlite3: when it is not loaded,
    nothing could have raised one)."""
    module = sys.modules.get("sqlite3")
    return module is not None and isinstance(exc, module.Error)


def refused_write(exc: BaseException) -> ReadOnly | None:
    """``E_READONLY`` for an error that says the file system refused a write (a full
    disk, a read-only mount, a size limit), from the OS or from SQLite; else None."""
    if isinstance(exc, OSError) and exc.errno in CANNOT_WRITE:
        cause = exc.strerror or str(exc)
    elif (
        _is_sqlite_error(exc)
        and (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in _SQLITE_REFUSALS
    ):
        cause = str(exc)
    else:
        return None
    return ReadOnly(
        f"the forest's files cannot be written: {cause}",
        hint="Nothing was changed. Free space, or make the forest writable, and try again.",
    )


def provider_detail(raw: bytes, key: str | None, limit: int = 200) -> str:
    """A model provider's own error message, from its JSON reply body (``{"error":
    {"message": ...}}`` or ``{"error": "..."}``): at most ``limit`` characters, and never
    the API key ``key``. "" when the body says nothing readable."""
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    text = error.get("message") if isinstance(error, dict) else error
    if not isinstance(text, str):
        return ""
    if key:
        text = text.replace(key, "***")
    return text[:limit]


def is_error(response: Any) -> bool:
    """True when ``response`` is an error envelope: an object whose one key is
    ``error``. Every surface asks this one test."""
    return isinstance(response, dict) and set(response) == {"error"}


def error_of(response: Any) -> dict[str, Any] | None:
    """The ``{code, message, hint}`` of an error envelope, or None for a result."""
    body = response["error"] if is_error(response) else None
    return body if isinstance(body, dict) else None
