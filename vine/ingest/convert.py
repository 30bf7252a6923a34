"""Converters: a source file in, the content of its node out (pure)."""

from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

from ..datasets import tables_of
from ..nodes import ParseError, parse_text
from ..text import counted
from ..writes import dataset
from .files import human_size, image_size
from .model import AUDIO_EXT, Content, FileProblem
from .passport import (
    clean_str,
    first_h1,
    fit_summary,
    slug_segment,
    summarize,
    summary_problem,
    with_title,
)

# -- converters (pure: a file in, a Content out) -------------------------------------


def note_content(text: str, stem: str) -> Content:
    """A markdown or text note: its own frontmatter's title, summary, tags and aliases
    are kept; the title falls back to the first H1, then the file name."""
    meta: dict[str, Any] = {}
    body = text
    warnings = []
    if text.startswith("---"):
        try:
            own = parse_text("source", text)
            meta, body = own.meta, own.body
        except ParseError as exc:
            warnings.append(f"its frontmatter was not read ({exc}); kept as text")
    title = (
        clean_str(meta.get("title"))
        or first_h1(body)
        or stem.replace("_", " ").strip()
        or "Untitled"
    )
    summary = clean_str(meta.get("summary"))
    if summary is None or summary_problem(summary):
        summary = summarize(body, title)
    extra: dict[str, Any] = {}
    tags = meta.get("tags")
    if isinstance(tags, list) and all(isinstance(t, str) and t.strip() for t in tags):
        extra["tags"] = tags
    aliases = meta.get("aliases")
    content = Content(
        "note", " ".join(title.split()), summary, with_title(title, body), extra, warnings=warnings
    )
    if isinstance(aliases, list):
        content.meta["aliases"] = [a for a in aliases if isinstance(a, str) and a.strip()]
    return content


# JSON's own names for the scalars json.loads gives (not Python's: str, NoneType).
_JSON_KINDS = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def json_content(data: Any, stem: str, name: str) -> Content:
    """A JSON document that is not a table: its text, pretty-printed, as the body."""
    if isinstance(data, dict):
        keys = list(data)[:8]
        what = (
            "a JSON object with keys "
            + ", ".join(str(k) for k in keys)
            + (", …" if len(data) > len(keys) else "")
            if data
            else "an empty JSON object"
        )
    elif isinstance(data, list):
        what = f"a JSON list of {counted(len(data), 'item')}"
    else:
        what = f"a JSON {_JSON_KINDS.get(type(data), 'scalar')} value"
    title = stem.replace("_", " ").strip() or name
    pretty = json.dumps(data, ensure_ascii=False, indent=2)
    body = f"# {title}\n\nFrom `{name}`: {what}.\n\n```json\n{pretty}\n```\n"
    return Content("document", title, fit_summary(f"{title}: {what}.", title), body)


def dataset_content(
    source: Path, payload: Path, names: dict[str, tuple[list[str], list[str]]] | None
) -> Content:
    """A dataset around a prepared SQLite payload: the query manual and sample rows."""
    title = source.stem.replace("_", " ").strip() or source.name
    conn = sqlite3.connect(f"file:{payload}?mode=ro", uri=True)
    try:
        tables = tables_of(conn)
        counts = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        columns = {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in tables}
    finally:
        conn.close()
    if len(tables) == 1:
        cols = columns[tables[0]]
        shown = ", ".join(cols[:6]) + (", …" if len(cols) > 6 else "")
        what = f"{counted(counts[tables[0]], 'row')} of {shown}"
    elif tables:
        what = (
            "tables "
            + ", ".join(f"{t} ({counted(counts[t], 'row')})" for t in tables[:5])
            + (", …" if len(tables) > 5 else "")
        )
    else:
        what = "an empty SQLite database"
    lines = [f"# {title}", "", f"Adopted from `{source.name}`: {what}."]
    renamed = [
        (t, raw, col)
        for t, (raws, cols) in (names or {}).items()
        for raw, col in zip(raws, cols, strict=True)
        if raw != col
    ]
    if renamed:
        lines += ["", "Columns as named in the source:", ""]
        lines += [
            f"- `{col}` ← {' '.join(raw.split()) or '(empty)'}" for _, raw, col in renamed[:50]
        ]
    body = "\n".join(lines) + "\n\n" + dataset.manual(payload, with_samples=True)
    meta = {"payload_type": "sqlite", "payload_hash": dataset.sha256_of(payload)}
    return Content(
        "dataset", title, fit_summary(f"{title}: {what}.", title), body, meta, payload=payload
    )


def media_content(copy: Path, name: str, ext: str) -> Content:
    """A media passport: what the file is, its size, and that it has no description."""
    audio = ext in AUDIO_EXT
    kind = "audio" if audio else "image"
    fmt = ext.lstrip(".").upper().replace("JPG", "JPEG")
    size = copy.stat().st_size
    facts = [fmt, human_size(size)]
    dims = image_size(copy) if not audio else None
    if dims:
        facts.append(f"{dims[0]}×{dims[1]} pixels")
    digest = dataset.sha256_of(copy)
    title = Path(name).stem.replace("_", " ").strip() or name
    desc = f"{'An audio recording' if audio else 'An image'} ({', '.join(facts)})"
    body = (
        f"# {title}\n\n{desc}, kept as `{name}`. No description yet: "
        f"{'a transcript' if audio else 'what it shows'} belongs here.\n"
    )
    summary = fit_summary(f"{title}: {desc[0].lower() + desc[1:]}, not yet described.", title)
    meta = {"payload_type": kind, "payload_hash": digest}
    content = Content("media", title, summary, body, meta, payload=copy)
    content.payload_name = f"_assets/{digest[:8]}-{slug_segment(Path(name).stem)}{ext}"
    return content


def docx_content(path: Path, stem: str) -> Content:
    """A ``.docx`` as a document: paragraphs, headings as markdown headers, tables as
    pipe tables (headers and footers dropped). Needs python-docx."""
    import docx
    from docx.text.paragraph import Paragraph

    try:
        doc = docx.Document(str(path))
    except Exception as exc:  # noqa: BLE001 - python-docx raises many kinds
        raise FileProblem(f"not a readable .docx ({_office_problem(exc, '.doc')})") from None
    blocks: list[str] = []
    body = doc.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, doc)
            text = " ".join(para.text.split())
            if not text:
                continue
            style = (para.style.name if para.style is not None else "") or ""
            level = re.match(r"Heading (\d)", style)
            if style == "Title":
                blocks.append(f"# {text}")
            elif level:
                blocks.append("#" * min(6, int(level.group(1)) + 1) + " " + text)
            else:
                blocks.append(text)
        elif tag == "tbl":
            table = docx.table.Table(child, doc)
            rows = [
                [" ".join(c.text.split()).replace("|", "\\|") for c in r.cells] for r in table.rows
            ]
            if rows:
                lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
                lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
                blocks.append("\n".join(lines))
    text = "\n\n".join(blocks)
    title = first_h1(text) or stem.replace("_", " ").strip() or path.name
    return Content("document", title, summarize(text, title), with_title(title, text))


def _office_problem(exc: Exception, older: str) -> str:
    """Why a .docx or .xlsx did not open, in a reader's words rather than the name of
    the library's exception (PackageNotFoundError, BadZipFile, KeyError)."""
    if isinstance(exc, zipfile.BadZipFile) or type(exc).__name__ == "PackageNotFoundError":
        return f"not a zip package, as the format is: perhaps an older {older} renamed"
    return "a zip package without the parts the format needs, or damaged"


def xlsx_sheets(path: Path) -> list[tuple[str, list[list[Any]]]]:
    """Every sheet's rows (values only). Needs openpyxl."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds
        raise FileProblem(f"not a readable .xlsx ({_office_problem(exc, '.xls')})") from None
    try:
        return [
            (ws.title, [list(r) for r in ws.iter_rows(values_only=True)]) for ws in book.worksheets
        ]
    finally:
        book.close()
