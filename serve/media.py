"""The ``view`` tool: a media node's image, read from its original under ``_assets/``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monkeyllm import Vine
from monkeyllm.errors import SchemaError

MAX_VIEW_BYTES = 6 << 20


@dataclass(frozen=True)
class Image:
    """An image to send as MCP image content."""

    data: bytes
    mime_type: str


def view(vine: Vine, node_id: Any) -> tuple[dict[str, Any], Image]:
    """The JSON header and the bytes of a media node's image.

    Raises:
        VineError: ``E_NOT_FOUND`` (no node, missing original), ``E_SCHEMA`` (not
            media, not an image, or larger than 6 MiB).
    """
    if not isinstance(node_id, str):
        raise SchemaError("view: id must be a string", hint="view takes: id.")
    found = vine.asset(node_id)
    media_type = found["media_type"] or ""
    if not media_type.startswith("image/"):
        raise SchemaError(
            f"{found['id']} is not an image ({media_type or 'unknown type'})",
            hint="view serves images only; look describes any node.",
        )
    if found["size"] > MAX_VIEW_BYTES:
        raise SchemaError(f"{found['id']} is {found['size']} bytes, over the 6 MiB view limit")
    data = found["path"].read_bytes()
    header = {
        "id": found["id"],
        "media_type": media_type,
        "size": len(data),
        "payload_hash": found["payload_hash"],
    }
    return header, Image(data, media_type)
