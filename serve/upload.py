"""The ``ingest`` tool: files sent by the client become nodes through the importer.

The files are written to a staging folder outside the forest that is the same for
every upload to that forest, so a node remembers its upload by name (its ``origin``):
sending the same name again with the same content changes nothing, and with new
content refreshes the node. The folder holds only the current upload, and the
importer's ``stale`` list (files of earlier uploads) is dropped: an upload is partial
by nature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import shutil
import tempfile
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from monkeyllm import Vine
from monkeyllm.errors import SchemaError

from .tools import MAX_UPLOAD_BYTES, MAX_UPLOAD_FILES


def staging_folder(forest_root: Path) -> Path:
    """The per-forest staging folder (outside the forest, in the system's temp dir)."""
    key = hashlib.sha256(str(forest_root).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "monkeyllm-uploads" / key


def ingest_upload(vine: Vine, files: Any, into: Any, lock: threading.Lock) -> dict[str, Any]:
    """Stage the files and run the importer on them; the importer's report.

    Raises:
        VineError: ``E_SCHEMA`` for malformed files (nothing is written), or what the
            importer raises (read-only forest, bad ``into``).
    """
    staged = _decode(files)
    if into is None:
        into = "_index"
    if not isinstance(into, str):
        raise SchemaError("ingest: into must be a string", hint="'_index' is the root.")
    from monkeyllm.ingest import ingest

    folder = staging_folder(vine.root)
    with lock:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        try:
            for name, data in staged.items():
                path = folder.joinpath(*PurePosixPath(name).parts)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            report = ingest(vine, [folder], into)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    prefix = str(folder) + "/"
    for bucket in ("created", "updated", "unchanged", "unsupported", "failed"):
        for entry in report.get(bucket, []):
            if isinstance(entry.get("path"), str) and entry["path"].startswith(prefix):
                entry["path"] = entry["path"][len(prefix) :]
    report["stale"] = []
    report["counts"]["stale"] = 0
    return report


def _decode(files: Any) -> dict[str, bytes]:
    """Check every file entry and decode it: {relative name: bytes}."""
    if not isinstance(files, list) or not files:
        raise SchemaError(
            "ingest: files must be a non-empty list",
            hint='files: [{"name": "notes/a.md", "content": "# A\\n..."}]',
        )
    if len(files) > MAX_UPLOAD_FILES:
        raise SchemaError(f"ingest: at most {MAX_UPLOAD_FILES} files per call, got {len(files)}")
    out: dict[str, bytes] = {}
    total = 0
    for n, entry in enumerate(files):
        where = f"files[{n}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise SchemaError(f"ingest: {where} must be an object with a name")
        extra = sorted(set(entry) - {"name", "content", "b64"})
        if extra:
            raise SchemaError(
                f"ingest: {where} has an unknown key {extra[0]!r}",
                hint="Each file takes name and content (text) or b64.",
            )
        name = _safe_name(entry["name"], where)
        has_text, has_b64 = entry.get("content") is not None, entry.get("b64") is not None
        if has_text == has_b64:
            raise SchemaError(f"ingest: {where} needs exactly one of content and b64")
        if has_text:
            if not isinstance(entry["content"], str):
                raise SchemaError(f"ingest: {where}.content must be a string")
            data = entry["content"].encode("utf-8")
        else:
            try:
                data = base64.b64decode(entry["b64"], validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise SchemaError(f"ingest: {where}.b64 is not valid base64") from None
        if name in out:
            raise SchemaError(f"ingest: {name!r} is sent twice")
        total += len(data)
        if total > MAX_UPLOAD_BYTES:
            raise SchemaError(
                f"ingest: more than {MAX_UPLOAD_BYTES >> 20} MiB in one call",
                hint="Send the files over several calls.",
            )
        out[name] = data
    return out


def _safe_name(raw: str, where: str) -> str:
    """A relative POSIX path with no way out of the staging folder."""
    name = raw.strip()
    parts = PurePosixPath(name).parts
    bad = (
        not parts
        or name.startswith(("/", "~"))
        or "\\" in name
        or "\x00" in name
        or any(p in (".", "..") or p.startswith(".") for p in parts)
        or len(name) > 512
    )
    if bad:
        raise SchemaError(
            f"ingest: {where}.name {raw!r} is not a relative file name",
            hint="Use names like notes/a.md: no leading /, no .., no hidden parts.",
        )
    return "/".join(parts)
