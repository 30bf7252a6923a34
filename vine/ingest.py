"""``ingest``: turn folders and files a person already has into forest nodes, with no
model, in one commit.

Directories become branches (planted before their children); files become nodes by
extension: notes, datasets (CSV, TSV, flat JSON arrays, adopted SQLite files, and
``.xlsx`` with the optional extra), documents (other JSON, ``.docx`` with the extra) and
media (images and audio, the original kept under ``_assets/``, outside git). Anything
else is listed as unsupported. Every file is first planned (read, classified, its
passport built, a dataset's payload born in ``_derived/tmp``), then everything lands in
one transaction and one commit.

Re-running is idempotent: a node remembers its source by ``origin`` (a ``file://`` URI)
and ``source_hash``; an unchanged source writes nothing, a changed one refreshes the
node and keeps what a person curated, a vanished one is reported ``stale`` and kept.
A malformed file is reported as failed and never stops the run.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import sqlite3
import stat
import struct
import tempfile
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import budget, ids
from .errors import NotFound, SchemaError, VineError
from .nodes import ParseError, parse_text
from .writes import dataset, render, rules
from .writes.plant import _validate

if TYPE_CHECKING:
    from .vine import Vine
    from .writes.context import WriteContext

# Limits: a note or document body is read whole; tables and payloads are streamed.
MAX_TEXT_BYTES = 4 << 20
MAX_FILE_BYTES = 256 << 20
BAD_ROWS_SHOWN = 5            # bad CSV rows named in a report entry
SUMMARY_CHARS = 200           # about 50 tokens: the first sentences
INGEST_CONFIDENCE = 0.7

NOTE_EXT = (".md", ".markdown", ".txt")
TABLE_EXT = {".csv": ",", ".tsv": "\t"}
SQLITE_EXT = (".db", ".sqlite", ".sqlite3")
OFFICE_EXT = (".docx", ".xlsx")
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".gif", ".webp")
AUDIO_EXT = (".mp3", ".wav", ".m4a", ".ogg", ".flac")
EXTRA_HINT = 'install the optional extra: pip install "monkeyllm[ingest]"'

Progress = Callable[[int, int], None]


class FileProblem(Exception):
    """One source file cannot be ingested; the message says why."""


@dataclass
class Item:
    """One source file found by the walk."""

    path: Path          # as found (a symlink stays a symlink)
    real: Path          # what it resolves to
    rel: str            # POSIX path relative to its source root
    shown: str          # the path as the person spelled it
    folder: str         # slugged folder prefix of its node id ("" at the source root)


@dataclass
class Content:
    """What a source file becomes: everything but its id."""

    type: str
    title: str
    summary: str
    body: str
    meta: dict[str, Any] = field(default_factory=dict)
    payload: Path | None = None         # a prepared payload in the scratch folder
    payload_name: str | None = None     # its final name beside the node (or _assets/...)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """One node to write: created or updated."""

    item: Item | None
    id: str
    meta: dict[str, Any]
    body: str
    payload: Path | None = None
    payload_name: str | None = None
    old_payload: str | None = None
    created: bool = True
    warnings: list[str] = field(default_factory=list)


def ingest(vine: Vine, sources: list[Path], into: str = "_index", *,
           progress: Progress | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """Ingest folders and files under the branch ``into``, in one commit.

    Args:
        vine: A writable forest.
        sources: Folders (their contents go under ``into``) and files.
        into: The destination branch (``x`` or ``x/_index``); missing ones are planted.
        progress: Called as ``progress(done, total)`` while files are read.
        max_bytes: A lower size limit per file than the defaults (4 MiB of text,
            256 MiB for tables, databases and media).

    Returns:
        The report: ``created``, ``updated``, ``unchanged``, ``unsupported``, ``failed``
        and ``stale`` entries (each with ``path``, and ``id`` or ``reason``),
        ``branches`` planted, ``counts``, ``commit`` (None when nothing changed) and
        ``elapsed_ms``.

    Raises:
        VineError: A read-only forest, a bad ``into``, or a failed commit (nothing is
            written then).
    """
    started = time.perf_counter()
    with vine._write_mutex:
        ctx = vine._writing()
        ctx.forest.catalog.sync()
        run = _Run(ctx, _into_id(ctx, into), max_bytes, progress)
        try:
            report = run.go([Path(s) for s in sources])
        finally:
            shutil.rmtree(run.scratch, ignore_errors=True)
    report["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return report


def _into_id(ctx: WriteContext, into: str) -> str:
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


# -- the run -------------------------------------------------------------------------


class _Run:
    """One ingest: the walk, the plans, the report and the write."""

    def __init__(self, ctx: WriteContext, into: str, max_bytes: int | None,
                 progress: Progress | None) -> None:
        self.ctx = ctx
        self.into = into
        self.prefix = ids.folder_prefix(into)
        cap = max_bytes if max_bytes is not None else MAX_FILE_BYTES
        self.text_cap = min(MAX_TEXT_BYTES, cap)
        self.file_cap = min(MAX_FILE_BYTES, cap)
        self.progress = progress
        scratch = ctx.root / "_derived" / "tmp"
        scratch.mkdir(parents=True, exist_ok=True)
        self.scratch = Path(tempfile.mkdtemp(prefix="ingest-", dir=scratch))
        self.report: dict[str, list[dict[str, Any]]] = {
            k: [] for k in ("created", "updated", "unchanged", "unsupported", "failed",
                            "stale")}
        self.origins = {r["origin"]: r["id"] for r in ctx.forest.catalog.rows(
            "SELECT id, origin FROM nodes WHERE origin LIKE 'file:%'")}
        self.taken = {r["id"] for r in ctx.forest.catalog.rows("SELECT id FROM nodes")}
        self.seen: set[str] = set()
        self.folders: dict[str, tuple[str, str, str]] = {}   # slug prefix -> dir info
        self.plans: list[Plan] = []
        self.made = 0   # files prepared in the scratch folder

    def go(self, sources: list[Path]) -> dict[str, Any]:
        items: list[Item] = []
        roots: list[Path] = []
        for source in sources:
            items += self._walk(source, roots)
        for done, item in enumerate(items, 1):
            self._plan_file(item)
            if self.progress is not None:
                self.progress(done, len(items))
        for root in roots:
            prefix = root.as_uri() + "/"
            for origin, node_id in sorted(self.origins.items()):
                if origin.startswith(prefix) and origin not in self.seen:
                    self.report["stale"].append(
                        {"path": str(root / _uri_rel(origin, prefix)), "id": node_id})
        branches = self._plan_branches()
        commit = self._write(branches) if self.plans else None
        out: dict[str, Any] = {"into": self.into, "commit": commit,
                               "branches": [p.id for p in branches]}
        out.update(self.report)
        out["counts"] = {k: len(v) for k, v in self.report.items()}
        return out

    # -- walking ---------------------------------------------------------------------

    def _walk(self, source: Path, roots: list[Path]) -> list[Item]:
        shown = str(source)
        path = source.expanduser()
        if not path.exists():
            self._fail(shown, "no such file or folder")
            return []
        real = path.resolve()
        forest = self.ctx.root
        if real == forest or forest in real.parents or real in forest.parents:
            self._fail(shown, "overlaps the forest (a source must lie outside it)")
            return []
        if real.is_file():
            folder = ""
            return [Item(path, real, real.name, shown, folder)]
        if not real.is_dir():
            self._unsupported(shown, "not a regular file or folder")
            return []
        roots.append(real)
        items: list[Item] = []
        for dirpath, dirnames, filenames in os.walk(real):
            here = Path(dirpath)
            rel_dir = here.relative_to(real).as_posix()
            rel_dir = "" if rel_dir == "." else rel_dir
            self._note_folder(real, rel_dir, source)
            keep = []
            for name in sorted(dirnames):
                sub = here / name
                sub_shown = str(Path(shown) / rel_dir / name)
                if name.startswith("."):
                    continue
                if sub.is_symlink():
                    self.seen.add(sub.as_uri())
                    if not _inside(sub.resolve(), real):
                        self._fail(sub_shown, "symlink leads outside the source")
                    else:
                        self._unsupported(sub_shown, "symlinked folder, not followed")
                    continue
                if (sub / "_index.md").is_file() and (sub / "_meta" / "schema.md").is_file():
                    self._unsupported(sub_shown, "a forest of its own, not ingested")
                    continue
                keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                file = here / name
                rel = f"{rel_dir}/{name}" if rel_dir else name
                item = self._item(file, real, rel, str(Path(shown) / rel))
                if item is not None:
                    items.append(item)
        return items

    def _note_folder(self, root: Path, rel_dir: str, source: Path) -> None:
        if not rel_dir:
            return
        slug = "/".join(slug_segment(p) for p in rel_dir.split("/"))
        self.seen.add((root / rel_dir).as_uri())
        self.folders.setdefault(slug, ((root / rel_dir).name, rel_dir,
                                       (root / rel_dir).as_uri()))

    def _item(self, file: Path, root: Path, rel: str, shown: str) -> Item | None:
        self.seen.add(file.as_uri())
        try:
            real = file.resolve(strict=True)
            mode = os.stat(real).st_mode
        except (OSError, RuntimeError):
            self._fail(shown, "broken symlink" if file.is_symlink() else "cannot be read")
            return None
        if not _inside(real, root):
            self._fail(shown, "symlink leads outside the source")
            return None
        if not stat.S_ISREG(mode):
            self._unsupported(shown, "not a regular file")
            return None
        folder = "/".join(slug_segment(p) for p in rel.split("/")[:-1])
        return Item(file, real, rel, shown, folder)

    # -- planning one file -----------------------------------------------------------

    def _plan_file(self, item: Item) -> None:
        ext = item.real.suffix.lower()
        if _kind(ext) is None:
            self._unsupported(item.shown, f"no converter for '{ext or item.real.name}'")
            return
        if ext in OFFICE_EXT and not _extra_installed(ext):
            self._unsupported(item.shown, f"{ext} needs the ingest extra: {EXTRA_HINT}")
            return
        origin = Path(os.path.abspath(item.path)).as_uri()
        self.seen.add(origin)
        existing = self.origins.get(origin)
        try:
            st = os.stat(item.real)
            cap = self.text_cap if _kind(ext) == "text" else self.file_cap
            if st.st_size > cap:
                raise FileProblem(f"too large ({st.st_size} bytes; the limit is {cap})")
            old = self.ctx.forest.read(existing) if existing else None
            if old is not None and _same_stat(old.meta, st):
                self._unchanged(item, existing)
                return
            digest = dataset.sha256_of(item.real)
            if old is not None and old.meta.get("source_hash") == digest:
                self._unchanged(item, existing)
                return
            content = self._convert(item, ext)
        except (FileProblem, VineError, OSError, ValueError, csv.Error, sqlite3.Error) as exc:
            self._fail(item.shown, _reason(exc))
            return
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
            self._fail(item.shown, f"unexpected {type(exc).__name__}: {exc}")
            return
        passport = {"source": "ingest", "confidence": INGEST_CONFIDENCE,
                    "source_path": item.rel, "source_hash": digest,
                    "source_size": st.st_size, "source_mtime": round(st.st_mtime, 3)}
        if len(origin) <= 2048:
            passport["origin"] = origin
        try:
            if old is None:
                self._plan_new(item, content, passport)
            else:
                self._plan_update(item, old, content, passport)
        except VineError as exc:
            self._fail(item.shown, _reason(exc))

    def _convert(self, item: Item, ext: str) -> Content:
        stem = item.real.stem
        if ext in NOTE_EXT:
            return note_content(_read_text(item.real), stem)
        if ext in TABLE_EXT:
            return self._table(item, TABLE_EXT[ext])
        if ext == ".json":
            return self._json(item)
        if ext in SQLITE_EXT:
            return self._sqlite(item)
        if ext == ".docx":
            return docx_content(item.real, stem)
        if ext == ".xlsx":
            return self._xlsx(item)
        return self._media(item, ext)

    def _table(self, item: Item, delimiter: str) -> Content:
        text = _read_text(item.real, limit=self.file_cap)
        if delimiter == ",":
            delimiter = _sniff_delimiter(text[:8192])
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        header = next(rows, None)
        if not header or not any(h.strip() for h in header):
            raise FileProblem("no header row (the first line names the columns)")
        columns = column_names(header)
        good: list[list[str]] = []
        bad: list[int] = []
        for number, row in enumerate(rows, 2):
            if not row or not any(cell.strip() for cell in row):
                continue
            if len(row) != len(columns):
                bad.append(number)
                continue
            good.append(row)
        types, values = infer_columns(good, len(columns))
        table = sql_name(item.real.stem, "t")
        tmp = self._birth({table: {"columns": dict(zip(columns, types, strict=True)),
                                   "primary_key": []}}, {table: values})
        content = dataset_content(item.real, tmp, {table: (header, columns)})
        if bad:
            shown = ", ".join(str(n) for n in bad[:BAD_ROWS_SHOWN])
            more = f" and {len(bad) - BAD_ROWS_SHOWN} more" if len(bad) > BAD_ROWS_SHOWN else ""
            content.warnings.append(
                f"{len(bad)} row(s) skipped: wrong number of fields (line {shown}{more})")
        return content

    def _json(self, item: Item) -> Content:
        text = _read_text(item.real, limit=self.file_cap)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FileProblem(f"not valid JSON (line {exc.lineno} column {exc.colno}: "
                              f"{exc.msg})") from None
        if _flat_records(data):
            columns_raw = list(dict.fromkeys(str(k) for rec in data for k in rec))
            columns = column_names(columns_raw)
            rows = [[_json_cell(rec.get(k)) for k in columns_raw] for rec in data]
            types = [_json_type([r[i] for r in rows]) for i in range(len(columns))]
            table = sql_name(item.real.stem, "t")
            tmp = self._birth({table: {"columns": dict(zip(columns, types, strict=True)),
                                       "primary_key": []}}, {table: rows})
            return dataset_content(item.real, tmp, {table: (columns_raw, columns)})
        if item.real.stat().st_size > self.text_cap:
            raise FileProblem(f"too large for a document ({item.real.stat().st_size} bytes; "
                              f"the limit is {self.text_cap})")
        return json_content(data, item.real.stem, item.real.name)

    def _sqlite(self, item: Item) -> Content:
        tmp = self._scratch_file(".db")
        shutil.copyfile(item.real, tmp)
        try:
            conn = sqlite3.connect(tmp)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                    conn.execute("PRAGMA journal_mode=DELETE")
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise FileProblem(f"not a SQLite database ({exc})") from None
        return dataset_content(item.real, tmp, None)

    def _xlsx(self, item: Item) -> Content:
        sheets = xlsx_sheets(item.real)
        schema: dict[str, Any] = {}
        rows: dict[str, list[list[Any]]] = {}
        names: dict[str, tuple[list[str], list[str]]] = {}
        for sheet, table_rows in sheets:
            if not table_rows or not any(str(h or "").strip() for h in table_rows[0]):
                continue
            header = [str(h) if h is not None else "" for h in table_rows[0]]
            columns = column_names(header)
            body = [list(r[:len(columns)]) + [None] * (len(columns) - len(r))
                    for r in table_rows[1:] if any(c not in (None, "") for c in r)]
            table = _unique(sql_name(sheet, "sheet"), schema)
            types = [_json_type([_json_cell(r[i]) for r in body]) for i in range(len(columns))]
            schema[table] = {"columns": dict(zip(columns, types, strict=True)),
                             "primary_key": []}
            rows[table] = [[_json_cell(c) for c in r] for r in body]
            names[table] = (header, columns)
        if not schema:
            raise FileProblem("no sheet with a header row")
        return dataset_content(item.real, self._birth(schema, rows), names)

    def _media(self, item: Item, ext: str) -> Content:
        tmp = self._scratch_file(ext)
        shutil.copyfile(item.real, tmp)
        return media_content(tmp, item.real.name, ext)

    def _birth(self, schema: dict[str, Any], rows: dict[str, list[list[Any]]]) -> Path:
        tmp = self._scratch_file(".db")
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                # A scratch file: nothing to journal or sync until it is whole.
                conn.execute("PRAGMA journal_mode=OFF")
                conn.execute("PRAGMA synchronous=OFF")
                conn.execute("BEGIN")
                for table, spec in schema.items():
                    conn.execute(dataset.ddl(table, spec))
                    marks = ", ".join("?" for _ in spec["columns"])
                    conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
                conn.execute("COMMIT")
            finally:
                conn.close()
        except (sqlite3.Error, OverflowError) as exc:
            raise FileProblem(f"could not build its table: {exc}") from None
        return tmp

    def _scratch_file(self, ext: str) -> Path:
        self.made += 1
        return self.scratch / f"{self.made}{ext}"

    # -- ids, creations and updates --------------------------------------------------

    def _plan_new(self, item: Item, content: Content, passport: dict[str, Any]) -> None:
        node_id = self._new_id(item, content)
        meta = {"id": node_id, "type": content.type, "parent": ids.parent_of(node_id),
                "title": content.title, "summary": content.summary,
                **passport, **content.meta}
        aliases = _union(content.meta.get("aliases") or [], make_aliases(
            item.path.stem, item.rel, content.title, node_id.rsplit("/", 1)[-1]))
        if aliases:
            meta["aliases"] = aliases
        if content.payload is not None:
            meta["payload"] = content.payload_name or ""
        meta["source_digest"] = _digest(content.title, content.summary)
        spec = _validate(self.ctx, {**meta, "body": content.body})
        self.taken.add(node_id)
        self.plans.append(Plan(item, node_id, spec["meta"], spec["body"], content.payload,
                               content.payload_name, warnings=content.warnings))

    def _new_id(self, item: Item, content: Content) -> str:
        base = self.prefix + (item.folder + "/" if item.folder else "")
        leaf = slug_segment(item.path.stem)
        candidates = [leaf, f"{leaf}-{hashlib.sha256(item.rel.encode()).hexdigest()[:6]}"]
        for name in candidates:
            node_id = base + name
            if node_id in self.taken or (self.ctx.root / (node_id + ".md")).exists():
                continue
            if content.type == "dataset":
                content.payload_name = f"{name}.db"
                if (self.ctx.root / (base + content.payload_name)).exists():
                    continue
            return node_id
        raise FileProblem(f"no free id for it (tried {base}{candidates[0]} and "
                          f"{base}{candidates[1]})")

    def _plan_update(self, item: Item, old: Any, content: Content,
                     passport: dict[str, Any]) -> None:
        node_id = old.id
        if old.meta.get("type") != content.type:
            raise FileProblem(f"its node {node_id} is a {old.meta.get('type')}, the file "
                              f"now reads as a {content.type}; prune the node to re-ingest it")
        meta = dict(old.meta)
        generated = old.meta.get("source_digest") == _digest(
            str(old.meta.get("title")), str(old.meta.get("summary")))
        if generated:
            meta["title"], meta["summary"] = content.title, content.summary
            meta["source_digest"] = _digest(content.title, content.summary)
        for key in ("source_hash", "source_size", "source_mtime", "source_path"):
            meta[key] = passport[key]
        for key in ("payload_type", "payload_hash"):
            if key in content.meta:
                meta[key] = content.meta[key]
        if "origin" in passport:
            meta.setdefault("origin", passport["origin"])
        aliases = _union(meta.get("aliases") or [], make_aliases(
            item.path.stem, item.rel, str(meta["title"]), node_id.rsplit("/", 1)[-1]))
        if aliases:
            meta["aliases"] = aliases
        old_payload = old.meta.get("payload") if content.payload is not None else None
        if content.type == "dataset":
            content.payload_name = str(old_payload or node_id.rsplit("/", 1)[-1] + ".db")
        if content.payload is not None:
            meta["payload"] = content.payload_name
        meta["updated"] = render.today()
        body = _keep_notes(content.body, old.body) if content.type == "dataset" \
            else content.body
        body = _with_title(str(meta["title"]), body)
        rules.check_summary(meta["summary"])
        try:
            parse_text(node_id, render.render(meta, body))
        except ParseError as exc:
            raise FileProblem(f"the refreshed node would not parse: {exc}") from None
        self.plans.append(Plan(item, node_id, meta, body, content.payload,
                               content.payload_name, old_payload, created=False,
                               warnings=content.warnings))

    def _plan_branches(self) -> list[Plan]:
        """Every missing branch above a new node, shallowest first."""
        wanted: dict[str, None] = {}
        for plan in self.plans:
            if not plan.created:
                continue
            parent = ids.parent_of(plan.id)
            chain = []
            while parent is not None and parent not in self.taken:
                chain.append(parent)
                parent = ids.parent_of(parent)
            for branch in reversed(chain):
                wanted[branch] = None
        branches = []
        for branch in sorted(wanted, key=lambda b: (b.count("/"), b)):
            branches.append(self._branch_plan(branch))
            self.taken.add(branch)
        return branches

    def _branch_plan(self, branch: str) -> Plan:
        folder = ids.folder_prefix(branch).rstrip("/")
        slug = folder[len(self.prefix):] if folder.startswith(self.prefix) else None
        info = self.folders.get(slug) if slug else None
        node: dict[str, Any] = {"id": branch, "type": "branch",
                                "parent": ids.parent_of(branch), "source": "ingest"}
        if info is not None:
            name, rel_dir, uri = info
            node.update(title=name, summary=f"Files ingested from the folder {rel_dir}/.",
                        source_path=rel_dir)
            if len(uri) <= 2048:
                node["origin"] = uri
        else:
            name = folder.rsplit("/", 1)[-1]
            node.update(title=name, summary=f"{name}: the branch vine ingest files into.")
        node["body"] = render.index_body(node["title"], node["summary"], master=False)
        spec = _validate(self.ctx, node)
        return Plan(None, branch, spec["meta"], spec["body"])

    # -- the write -------------------------------------------------------------------

    def _write(self, branches: list[Plan]) -> str:
        """Every node file, payload and index entry, in one transaction and one commit."""
        ctx = self.ctx
        plans = branches + self.plans
        docs: dict[str, tuple[dict[str, Any], str]] = {p.id: (p.meta, p.body) for p in plans}
        entries: dict[str, dict[str, list[tuple[str, str]]]] = {}
        for plan in plans:
            if plan.created:
                section = render.SUB_BRANCHES if plan.meta["type"] == "branch" \
                    else render.DIRECT_BANANAS
                parent = str(ids.parent_of(plan.id))
                entries.setdefault(parent, {}).setdefault(section, []).append(
                    (plan.id, render.entry_line(plan.id, plan.meta["summary"])))
        for parent, sections in entries.items():
            meta, body = docs.get(parent) or _read_doc(ctx, parent)
            for section, lines in sections.items():
                body = add_entries(body, section, lines)
            docs[parent] = (dict(meta, coverage=render.coverage(body),
                                 updated=render.today()), body)
        for plan in self.plans:
            if not plan.created:
                self._relist(plan, docs)
        texts = {ctx.root / (node_id + ".md"): render.render(meta, body)
                 for node_id, (meta, body) in docs.items()}
        moved: list[tuple[Path, Path | None]] = []   # (final, backup of what it replaced)
        created = sum(p.created for p in self.plans)
        message = (f"ingest({self.into}): {created} created, "
                   f"{len(self.plans) - created} updated")
        finals = {id(p): self.ctx.root / os.path.dirname(p.id) / p.payload_name
                  for p in self.plans if p.payload is not None and p.payload_name}
        with ctx.transaction() as txn:
            txn.touch(*texts)
            txn.created(*(f for f in finals.values() if not f.exists()))
            try:
                for plan in self.plans:
                    if id(plan) in finals:
                        self._place_payload(plan, finals[id(plan)], moved)
                for path, text in texts.items():
                    txn.write(path, text)
                sha = txn.commit(message)
            except BaseException:
                for final, backup in reversed(moved):
                    if backup is not None:
                        os.replace(backup, final)
                raise
        for plan in self.plans:
            if plan.old_payload and plan.old_payload != plan.payload_name:
                old = ctx.root / os.path.dirname(plan.id) / plan.old_payload
                if "_assets" in Path(plan.old_payload).parts:
                    old.unlink(missing_ok=True)
        self._log_plans()
        return sha

    def _place_payload(self, plan: Plan, final: Path,
                       moved: list[tuple[Path, Path | None]]) -> None:
        """Move a prepared payload into place (what it replaces kept until the commit)."""
        assert plan.payload is not None
        final.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if final.exists():
            backup = self.scratch / f"old-{len(moved)}"
            os.replace(final, backup)
        os.replace(plan.payload, final)
        moved.append((final, backup))

    def _relist(self, plan: Plan, docs: dict[str, tuple[dict[str, Any], str]]) -> None:
        """A refreshed summary replaces the node's line in every index listing it."""
        line = render.entry_line(plan.id, plan.meta["summary"])
        pattern = render.entry_pattern(plan.id)
        for branch in self.ctx.forest.catalog.listing_branches(plan.id):
            meta, body = docs.get(branch) or _read_doc(self.ctx, branch)
            new, count = pattern.subn(lambda _: line, body, count=1)
            if count and new != body:
                docs[branch] = (dict(meta, updated=render.today()), new)

    def _log_plans(self) -> None:
        for plan in self.plans:
            assert plan.item is not None
            entry: dict[str, Any] = {"path": plan.item.shown, "id": plan.id,
                                     "type": plan.meta["type"]}
            if plan.warnings:
                entry["warnings"] = plan.warnings
            self.report["created" if plan.created else "updated"].append(entry)

    # -- the report ------------------------------------------------------------------

    def _fail(self, shown: str, reason: str) -> None:
        self.report["failed"].append({"path": shown, "reason": reason})

    def _unsupported(self, shown: str, reason: str) -> None:
        self.report["unsupported"].append({"path": shown, "reason": reason})

    def _unchanged(self, item: Item, node_id: str) -> None:
        self.report["unchanged"].append({"path": item.shown, "id": node_id})


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
    title = _str(meta.get("title")) or _first_h1(body) or stem.replace("_", " ").strip() \
        or "Untitled"
    summary = _str(meta.get("summary"))
    if summary is None or _summary_problem(summary):
        summary = summarize(body, title)
    extra: dict[str, Any] = {}
    tags = meta.get("tags")
    if isinstance(tags, list) and all(isinstance(t, str) and t.strip() for t in tags):
        extra["tags"] = tags
    aliases = meta.get("aliases")
    content = Content("note", " ".join(title.split()), summary, _with_title(title, body),
                      extra, warnings=warnings)
    if isinstance(aliases, list):
        content.meta["aliases"] = [a for a in aliases if isinstance(a, str) and a.strip()]
    return content


def json_content(data: Any, stem: str, name: str) -> Content:
    """A JSON document that is not a table: its text, pretty-printed, as the body."""
    if isinstance(data, dict):
        keys = list(data)[:8]
        what = "a JSON object with keys " + ", ".join(str(k) for k in keys) + \
            (", …" if len(data) > len(keys) else "") if data else "an empty JSON object"
    elif isinstance(data, list):
        what = f"a JSON list of {len(data)} item(s)"
    else:
        what = f"a JSON {type(data).__name__} value"
    title = stem.replace("_", " ").strip() or name
    pretty = json.dumps(data, ensure_ascii=False, indent=2)
    body = f"# {title}\n\nFrom `{name}`: {what}.\n\n```json\n{pretty}\n```\n"
    return Content("document", title, _fit(f"{title}: {what}.", title), body)


def dataset_content(source: Path, payload: Path,
                    names: dict[str, tuple[list[str], list[str]]] | None) -> Content:
    """A dataset around a prepared SQLite payload: the query manual and sample rows."""
    title = source.stem.replace("_", " ").strip() or source.name
    conn = sqlite3.connect(f"file:{payload}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid")]
        counts = {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
        columns = {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')]
                   for t in tables}
    finally:
        conn.close()
    if len(tables) == 1:
        cols = columns[tables[0]]
        shown = ", ".join(cols[:6]) + (", …" if len(cols) > 6 else "")
        what = f"{counts[tables[0]]} row(s) of {shown}"
    elif tables:
        what = "tables " + ", ".join(f"{t} ({counts[t]} rows)" for t in tables[:5]) + \
            (", …" if len(tables) > 5 else "")
    else:
        what = "an empty SQLite database"
    lines = [f"# {title}", "", f"Adopted from `{source.name}`: {what}."]
    renamed = [(t, raw, col) for t, (raws, cols) in (names or {}).items()
               for raw, col in zip(raws, cols, strict=True) if raw != col]
    if renamed:
        lines += ["", "Columns as named in the source:", ""]
        lines += [f"- `{col}` ← {' '.join(raw.split()) or '(empty)'}"
                  for _, raw, col in renamed[:50]]
    body = "\n".join(lines) + "\n\n" + dataset.manual(payload, with_samples=True)
    meta = {"payload_type": "sqlite", "payload_hash": dataset.sha256_of(payload)}
    return Content("dataset", title, _fit(f"{title}: {what}.", title), body, meta,
                   payload=payload)


def media_content(copy: Path, name: str, ext: str) -> Content:
    """A media passport: what the file is, its size, and that it has no description."""
    audio = ext in AUDIO_EXT
    kind = "audio" if audio else "image"
    fmt = ext.lstrip(".").upper().replace("JPG", "JPEG")
    size = copy.stat().st_size
    facts = [fmt, _size(size)]
    dims = image_size(copy) if not audio else None
    if dims:
        facts.append(f"{dims[0]}×{dims[1]} pixels")
    digest = dataset.sha256_of(copy)
    title = Path(name).stem.replace("_", " ").strip() or name
    desc = f"{'An audio recording' if audio else 'An image'} ({', '.join(facts)})"
    body = (f"# {title}\n\n{desc}, kept as `{name}`. No description yet: "
            f"{'a transcript' if audio else 'what it shows'} belongs here.\n")
    summary = _fit(f"{title}: {desc[0].lower() + desc[1:]}, not yet described.", title)
    meta = {"payload_type": kind, "payload_hash": digest}
    content = Content("media", title, summary, body, meta, payload=copy)
    content.payload_name = f"_assets/{digest[:8]}-{slug_segment(Path(name).stem)}{ext}"
    return content


def docx_content(path: Path, stem: str) -> Content:
    """A ``.docx`` as a document: paragraphs, headings as markdown headers, tables as
    pipe tables (headers and footers dropped). Needs python-docx."""
    import docx

    try:
        doc = docx.Document(str(path))
    except Exception as exc:  # noqa: BLE001 - python-docx raises many kinds
        raise FileProblem(f"not a readable .docx ({type(exc).__name__})") from None
    blocks: list[str] = []
    body = doc.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = docx.text.paragraph.Paragraph(child, doc)
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
            rows = [[" ".join(c.text.split()).replace("|", "\\|") for c in r.cells]
                    for r in table.rows]
            if rows:
                lines = ["| " + " | ".join(rows[0]) + " |",
                         "|" + " --- |" * len(rows[0])]
                lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
                blocks.append("\n".join(lines))
    text = "\n\n".join(blocks)
    title = _first_h1(text) or stem.replace("_", " ").strip() or path.name
    return Content("document", title, summarize(text, title), _with_title(title, text))


def xlsx_sheets(path: Path) -> list[tuple[str, list[list[Any]]]]:
    """Every sheet's rows (values only). Needs openpyxl."""
    import openpyxl

    try:
        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds
        raise FileProblem(f"not a readable .xlsx ({type(exc).__name__})") from None
    try:
        return [(ws.title, [list(r) for r in ws.iter_rows(values_only=True)])
                for ws in book.worksheets]
    finally:
        book.close()


# -- text helpers ----------------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9À-Ý\"'(\[])")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")
_CODE = re.compile(r"\b[A-Z]{2,}-\d+\b")


def summarize(body: str, title: str) -> str:
    """The first sentences of the prose (about 50 tokens), or a fallback saying the node
    awaits curation. Deterministic."""
    prose: list[str] = []
    fenced = False
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if prose and stripped.startswith("#"):
            break   # the lead: the prose before the first section
        if fenced or not stripped or stripped.startswith(("#", "|", "---", "<")):
            if prose and not stripped:
                prose.append("\n")
            continue
        stripped = re.sub(r"^(?:>+\s*|[-*+]\s+|\d+[.)]\s+)", "", stripped)
        prose.append(stripped)
    text = " ".join(" ".join(prose).split())
    text = _WIKI.sub(r"\1", _LINK.sub(r"\1", text)).replace("**", "").replace("__", "")
    out = ""
    for count, sentence in enumerate(_SENTENCE.split(text)):
        candidate = f"{out} {sentence}".strip()
        if len(candidate) > SUMMARY_CHARS or count == 3:
            break
        out = candidate
    if not out and text:
        cut = text[:SUMMARY_CHARS].rsplit(" ", 1)[0] if len(text) > SUMMARY_CHARS else text
        out = cut.rstrip(",;:") + ("…" if len(text) > SUMMARY_CHARS else "")
    return _fit(out, title)


def _fit(summary: str, title: str) -> str:
    """A summary that passes the rules, else the fallback."""
    summary = " ".join(summary.split())
    if summary and _summary_problem(summary):
        summary = f"{title}: {summary}"
    if not summary or _summary_problem(summary):
        summary = f"{' '.join(title.split())[:80]}: adopted, pending curation."
    return summary


def _summary_problem(summary: str) -> bool:
    try:
        rules.check_summary(summary)
    except VineError:
        return True
    return budget.tokens(summary) > budget.SUMMARY_MAX


def _first_h1(body: str) -> str | None:
    for line in body.split("\n"):
        match = re.match(r"^#[ \t]+(.+?)[ \t#]*$", line)
        if match:
            return match.group(1).strip()
    return None


def _with_title(title: str, body: str) -> str:
    text = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not text.strip():
        return f"# {title}\n"
    if text.startswith("#"):
        return text + "\n"
    return f"# {title}\n\n{text}\n"


def _str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _keep_notes(new_body: str, old_body: str) -> str:
    """A refreshed dataset body keeps the operator's ``## Notes``."""
    span = render.section_span(old_body, "Notes")
    if span is None:
        return new_body
    notes = "\n".join(old_body.split("\n")[span[0]:span[1]]).strip("\n")
    return new_body.rstrip("\n") + "\n\n" + notes + "\n"


def _digest(title: str, summary: str) -> str:
    """What ingest wrote as title and summary: equal later means nobody curated them."""
    return hashlib.sha256(f"{title}\0{summary}".encode()).hexdigest()[:16]


def slug_segment(name: str) -> str:
    """One id segment: lowercase ASCII ``[a-z0-9._-]``, other runs collapsed to ``-``;
    never empty and never starting with ``_`` or ``.`` (private names in a forest)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9._-]+", "-", ascii_name.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-._")
    return slug or "untitled"


def sql_name(name: str, prefix: str) -> str:
    """A table or column name matching ``^[a-z_][a-z0-9_]{0,63}$``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_name.lower()).strip("_")
    if not slug:
        return prefix
    if slug[0].isdigit():
        slug = f"{prefix}_{slug}"
    return slug[:64].rstrip("_") or prefix


def column_names(header: list[str]) -> list[str]:
    """SQL column names for a header: slugged, numbered when empty, unique."""
    out: list[str] = []
    for index, raw in enumerate(header, 1):
        name = sql_name(str(raw), "c") if str(raw).strip() else f"col_{index}"
        out.append(_unique(name, out))
    return out


def _unique(name: str, taken: Any) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name[:60]}_{n}" in taken:
        n += 1
    return f"{name[:60]}_{n}"


def make_aliases(stem: str, rel: str, title: str, leaf: str) -> list[str]:
    """Aliases for code-like names: for a numeric stem N in folder F, the initials of a
    compound F as ``XY-N``, then ``F/N`` and ``N``; any ``ABC-123`` code in the title;
    and the file's own name when its slug differs from it."""
    out: list[str] = []
    folder = rel.split("/")[-2] if "/" in rel else ""
    if stem.isdigit():
        words = [w for w in re.split(r"[-_ .]+", folder) if w]
        if len(words) >= 2:
            out.append("".join(w[0] for w in words).upper() + f"-{stem}")
        if folder:
            out.append(f"{folder}/{stem}")
        out.append(stem)
    out += _CODE.findall(title)
    if stem.lower() != leaf and stem != title:
        out.append(stem)
    return [a[:rules.ALIAS_CHARS] for a in out if a.strip()]


def _union(first: list[Any], second: list[Any]) -> list[str]:
    merged = [a for a in dict.fromkeys([*first, *second]) if isinstance(a, str) and a.strip()]
    return merged[:rules.MAX_ALIASES]


# -- table helpers ---------------------------------------------------------------------

_INT = re.compile(r"^[+-]?(0|[1-9]\d*)$")
_REAL = re.compile(r"^[+-]?((0|[1-9]\d*)(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def infer_columns(rows: list[list[str]], width: int) -> tuple[list[str], list[list[Any]]]:
    """Per column INTEGER, REAL or TEXT (dates stay TEXT; codes with leading zeros stay
    TEXT), and the rows converted: empty cells become NULL."""
    types = []
    for i in range(width):
        cells = [r[i].strip() for r in rows if r[i].strip()]
        if cells and all(_INT.match(c) and -(1 << 63) <= int(c) < (1 << 63) for c in cells):
            types.append("INTEGER")
        elif cells and all(_REAL.match(c) for c in cells):
            types.append("REAL")
        else:
            types.append("TEXT")
    convert = {"INTEGER": int, "REAL": float, "TEXT": str}
    values = [[convert[types[i]](r[i].strip()) if r[i].strip() else None
               for i in range(width)] for r in rows]
    return types, values


def _sniff_delimiter(sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _flat_records(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and all(
        isinstance(rec, dict) and rec and all(
            v is None or isinstance(v, str | int | float | bool) for v in rec.values())
        for rec in data)


def _json_cell(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and not -(1 << 63) <= value < (1 << 63):
        return str(value)
    if value is None or isinstance(value, int | float | str):
        return value
    return str(value)


def _json_type(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, int) for v in present):
        return "INTEGER"
    if present and all(isinstance(v, int | float) for v in present):
        return "REAL"
    return "TEXT"


# -- file helpers ----------------------------------------------------------------------


def _kind(ext: str) -> str | None:
    if ext in NOTE_EXT:
        return "text"
    if ext in TABLE_EXT or ext == ".json" or ext in SQLITE_EXT or ext in OFFICE_EXT:
        return "data"
    if ext in IMAGE_EXT or ext in AUDIO_EXT:
        return "media"
    return None


def _extra_installed(ext: str) -> bool:
    import importlib.util

    return importlib.util.find_spec("docx" if ext == ".docx" else "openpyxl") is not None


def _read_text(path: Path, limit: int | None = None) -> str:
    data = path.read_bytes() if limit is None else _read_capped(path, limit)
    if b"\x00" in data:
        raise FileProblem("binary content (NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileProblem(f"not UTF-8 text (invalid byte at offset {exc.start}); "
                          "convert it to UTF-8 and ingest again") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_capped(path: Path, limit: int) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileProblem(f"too large (over {limit} bytes)")
    return data


def _same_stat(meta: dict[str, Any], st: os.stat_result) -> bool:
    return meta.get("source_size") == st.st_size and \
        meta.get("source_mtime") == round(st.st_mtime, 3)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _uri_rel(origin: str, prefix: str) -> str:
    from urllib.parse import unquote

    return unquote(origin[len(prefix):])


def _read_doc(ctx: WriteContext, node_id: str) -> tuple[dict[str, Any], str]:
    try:
        node = ctx.forest.read(node_id)
    except VineError:
        raise NotFound(f"parent branch not found: {node_id}") from None
    return dict(node.meta), node.body


def _reason(exc: BaseException) -> str:
    if isinstance(exc, VineError):
        return f"{exc.code}: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _size(n: int) -> str:
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
    kept = [ln for ln in body.split("\n") if not (
        ln.startswith("- [[") and re.split(r"[\]|]", ln[4:], maxsplit=1)[0] in listed)]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(kept))
    span = render.section_span(body, section)
    if span is None:
        body = body.rstrip("\n") + f"\n\n## {section}\n"
        span = render.section_span(body, section)
        assert span is not None
    out = body.split("\n")
    start, end = span
    at = start + 1
    for i in range(start + 1, end):
        if out[i].startswith("- [["):
            at = i + 1
    new = [text for _, text in lines]
    out[at:at] = ["", *new] if at == start + 1 else new
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


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
