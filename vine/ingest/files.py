"""File helpers: kinds, capped reads, stats, image sizes, index entries."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import hints, ids
from ..errors import NotFound, SchemaError, VineError
from ..writes import render, rules

if TYPE_CHECKING:
    from ..writes.context import WriteContext
from .model import AUDIO_EXT, IMAGE_EXT, NOTE_EXT, OFFICE_EXT, SQLITE_EXT, TABLE_EXT, FileProblem


def file_kind(ext: str) -> str | None:
    """What an ingested file becomes (``text``, ``data`` or ``media``) by its extension;
    None when ingest does not take it."""
    if ext in NOTE_EXT:
        return "text"
    if ext in TABLE_EXT or ext == ".json" or ext in SQLITE_EXT or ext in OFFICE_EXT:
        return "data"
    if ext in IMAGE_EXT or ext in AUDIO_EXT:
        return "media"
    return None


def extra_installed(ext: str) -> bool:
    """Whether the optional library that reads ``.docx`` or ``.xlsx`` files is installed."""
    import importlib.util

    return importlib.util.find_spec("docx" if ext == ".docx" else "openpyxl") is not None


def read_text(path: Path, limit: int | None = None) -> str:
    """A file's UTF-8 text with its line ends made LF; FileProblem for binary, non-UTF-8
    or (past ``limit`` bytes) too large a file."""
    data = path.read_bytes() if limit is None else _read_capped(path, limit)
    if b"\x00" in data:
        raise FileProblem("binary content (NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileProblem(
            f"not UTF-8 text (invalid byte at offset {exc.start}); "
            "convert it to UTF-8 and ingest again"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_capped(path: Path, limit: int) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileProblem(f"too large (over {limit} bytes)")
    return data


def same_stat(meta: dict[str, Any], st: os.stat_result) -> bool:
    """Whether a node's recorded source size and mtime still match the source file's."""
    return meta.get("source_size") == st.st_size and meta.get("source_mtime") == round(
        st.st_mtime, 3
    )


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or below it."""
    return path == root or root in path.parents


def uri_rel(origin: str, prefix: str) -> str:
    """The path below ``prefix`` of a source's file URI, unquoted."""
    from urllib.parse import unquote

    return unquote(origin[len(prefix) :])


def read_doc(ctx: WriteContext, node_id: str) -> tuple[dict[str, Any], str]:
    """A parent branch's frontmatter and body (NotFound when there is none)."""
    try:
        node = ctx.forest.read(node_id)
    except VineError:
        raise NotFound(f"parent branch not found: {node_id}") from None
    return dict(node.meta), node.body


def reason_of(exc: BaseException) -> str:
    """The one-line reason a report gives for a file that failed."""
    if isinstance(exc, VineError):
        return f"{exc.code}: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def human_size(n: int) -> str:
    """A byte count as people read it (``812 bytes``, ``1.4 MB``)."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"


def image_size(path: Path) -> tuple[int, int] | None:
    """Width and height of a PNG or GIF, read from its header (others: None)."""
    with open(path, "rb") as fh:
        head = fh.read(32)
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    return None


def add_entries(body: str, section: str, lines: list[tuple[str, str]]) -> str:
    """Many entry lines at the end of ``section`` at once (what repeated
    :func:`render.add_entry` calls give, without re-reading the body per entry)."""
    listed = {node_id for node_id, _ in lines}
    kept = [
        ln
        for ln in body.split("\n")
        if not (ln.startswith("- [[") and re.split(r"[\]|]", ln[4:], maxsplit=1)[0] in listed)
    ]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(kept))
    return render.insert_entry(body, section, [text for _, text in lines])


def walk_count(sources: list[Path]) -> int:
    """How many files the sources hold (hidden ones skipped): a cheap count for a
    caller deciding whether to show progress."""
    total = 0
    for source in sources:
        path = Path(source).expanduser()
        if path.is_file():
            total += 1
        elif path.is_dir():
            for _, dirnames, filenames in os.walk(path):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                total += sum(1 for f in filenames if not f.startswith("."))
    return total


def into_id(ctx: WriteContext, into: str) -> str:
    """The branch an ingest writes into (``_index`` is the root): ``E_SCHEMA`` when it
    names no branch id, or a node that is not a branch."""
    if not isinstance(into, str) or not into.strip():
        raise SchemaError("into: a branch id is required", hint="'_index' is the root.")
    raw = into.strip().strip("/").removesuffix(".md")
    if raw == ids.ROOT_INDEX:
        return raw
    branch = ids.branch_id(rules.check_new_id(raw))
    row = ctx.forest.catalog.row(branch)
    if row is not None and row["kind"] != "branch":
        raise SchemaError(f"into: {branch} is not a branch")
    return branch


def lives_elsewhere(catalog: Any, node_id: str, into: str, folder: str) -> str | None:
    """Why a file ingested before as ``node_id`` is not re-ingested under the branch
    ``into``: its node lives outside it, and one file is one node. None when the node is
    under ``into`` (or a transplant moved it out of there), where a re-run refreshes it.
    ``folder`` is the file's slugged folder below the source root."""
    prefix = ids.folder_prefix(into)
    olds, seen = [node_id], set()
    while olds:
        old = olds.pop()
        if old.startswith(prefix):
            return None
        if old not in seen:
            seen.add(old)
            olds += [r[0] for r in catalog.rows("SELECT old_id FROM moves WHERE new_id=?", [old])]
    home = str(ids.parent_of(node_id))
    wanted = prefix + (folder + "/" if folder else "") + node_id.rsplit("/", 1)[-1]
    return (
        f"ingested before as {node_id}, in {home} (not under {into}): one file is one "
        f"node, so it is not planted twice. Ingest it with "
        f"{hints.option('ingest', 'into', home.removesuffix('/_index'))} to refresh it "
        f"there, or move the node first: {hints.call('transplant', id=node_id, new_id=wanted)}"
    )
