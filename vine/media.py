"""Media nodes: where the original of an image or a recording lives.

Ingest keeps a media node's original beside it under ``_assets/`` (outside git) and
names it in the node's ``payload`` key; ``payload_type`` says ``image`` or ``audio``.
"""

from __future__ import annotations

import mimetypes
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import NotFound, SchemaError

if TYPE_CHECKING:
    from .forest import Forest

MEDIA_TYPES = ("image", "audio")
# Never served as an asset: the engine's own files and the repository.
_HIDDEN = ("_derived", ".git")


def asset(forest: Forest, node_id: Any) -> dict[str, Any]:
    """The local original of a media node.

    Returns:
        ``id``, ``title``, ``payload_type``, ``payload_hash``, ``media_type`` (a MIME
        type guessed from the file name, or None), ``size`` in bytes and ``path``.

    Raises:
        VineError: ``E_NOT_FOUND`` for no such node or a missing original (or one
            that escapes the forest); ``E_SCHEMA`` for a node that is not media or
            whose original is not a local file.
    """
    row = forest.resolve(node_id)
    payload = row["payload"]
    if row["type"] != "media" and row["payload_type"] not in MEDIA_TYPES:
        raise SchemaError(
            f"{row['id']} is a {row['type']}, not a media node",
            hint="Only media nodes (images, recordings) have an original "
            "to view; pick reads a note's body.",
        )
    if not payload or "://" in str(payload):
        raise SchemaError(
            f"{row['id']} has no local original", hint="Its payload is remote or unset."
        )
    root = str(forest.root)
    full = os.path.realpath(os.path.join(root, os.path.dirname(row["id"]), str(payload)))
    first = os.path.relpath(full, root).split(os.sep)[0]
    if not full.startswith(root + os.sep) or first in _HIDDEN:
        raise NotFound(f"the original of {row['id']} escapes the forest")
    path = Path(full)
    if not path.is_file():
        raise NotFound(
            f"the original of {row['id']} is missing: {payload}",
            hint="Re-ingest the file; `vine validate` reports missing payloads.",
        )
    return {
        "id": row["id"],
        "title": row["title"],
        "payload_type": row["payload_type"],
        "payload_hash": row["payload_hash"],
        "media_type": mimetypes.guess_type(path.name)[0],
        "size": path.stat().st_size,
        "path": path,
    }
