"""The one place an envelope becomes an HTTP status."""

from __future__ import annotations

from typing import Any

from monkeyllm.errors import ERROR_STATUS, is_error

# A missing, unknown or revoked key: E_FORBIDDEN, but 401 rather than 403.
UNAUTHORIZED = 401


def status_of(result: dict[str, Any]) -> int:
    """200 for a result; the error code's status for an envelope (400 if unmapped)."""
    if not is_error(result):
        return 200
    return ERROR_STATUS.get(result["error"].get("code", ""), 400)
