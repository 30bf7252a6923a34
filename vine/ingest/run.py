"""One ingest run: walk the sources, plan every node, write them in one transaction."""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import sqlite3
import stat
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import argcheck, ids
from ..errors import VineError
from ..nodes import ParseError, parse_text
from ..writes import dataset, render, rules
from ..writes.plant import validate_node

if TYPE_CHECKING:
    from ..vine import Vine
    from ..writes.context import WriteContext
from .contents import Contents
from .files import (
    add_entries,
    extra_installed,
    file_kind,
    inside,
    into_id,
    lives_elsewhere,
    read_doc,
    reason_of,
    same_stat,
    uri_rel,
)
from .links import known_files, resolve
from .model import (
    EXTRA_HINT,
    INGEST_CONFIDENCE,
    MAX_FILE_BYTES,
    MAX_TEXT_BYTES,
    OFFICE_EXT,
    REPORT_KEYS,
    Content,
    FileProblem,
    Item,
    Plan,
    Progress,
)
from .passport import (
    alias_union,
    body_digest,
    keep_notes,
    make_aliases,
    slug_segment,
    title_digest,
    with_title,
)


def ingest(
    vine: Vine,
    sources: list[Path],
    into: str = "_index",
    *,
    progress: Progress | None = None,
    max_bytes: int | None = None,
    prefer_source: bool = False,
) -> dict[str, Any]:
    """Ingest folders and files under the branch ``into``, in one commit.

    A note's ``[[wikilinks]]`` are resolved as the source meant them: a short name
    (``[[pao-de-queijo]]``, as Obsidian writes) or a path from the note's folder or the
    source folder (``[[recipes/pao-de-queijo]]``) becomes a link to the node that file
    became, when exactly one file matches.

    A node whose body a person edited since its ingest (its ``body_digest`` no longer
    matches) is left as they left it when its source changes, and reported as a
    ``conflict``; ``prefer_source`` refreshes it from the source anyway (curated tags,
    links and an edited title or summary are kept either way).

    Args:
        vine: A writable forest.
        sources: Folders (their contents go under ``into``) and files.
        into: The destination branch (``x`` or ``x/_index``); missing ones are planted.
        progress: Called as ``progress(done, total)`` while files are read.
        max_bytes: A lower size limit per file than the defaults (4 MiB of text,
            256 MiB for tables, databases and media).
        prefer_source: On a conflict, take the source's body over the edited one.

    Returns:
        The report: ``created``, ``updated``, ``unchanged``, ``unsupported``, ``failed``,
        ``stale`` and ``conflict`` entries (each with ``path``, and ``id`` or
        ``reason``), ``unresolved_links`` (wikilinks that name no source file, or
        several: ``path``, ``id``, ``link``, ``reason``), ``branches`` planted,
        ``counts``, ``commit`` (None when nothing changed) and ``elapsed_ms``.

    Raises:
        VineError: A read-only forest, a bad ``into``, or a failed commit (nothing is
            written then).
    """
    started = time.perf_counter()
    paths = argcheck.paths(sources, "sources")
    argcheck.function(progress, "progress", "a function called as progress(done, total)")
    argcheck.count_or_none(max_bytes, "max_bytes", 1)
    argcheck.flag(prefer_source, "prefer_source")
    with vine.writing() as ctx:
        run = _Run(ctx, into_id(ctx, into), max_bytes, progress, prefer_source)
        try:
            report = run.go(paths)
        finally:
            shutil.rmtree(run.scratch, ignore_errors=True)
    report["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return report


class _Run:
    """One ingest: the walk, the plans, the report and the write."""

    def __init__(
        self,
        ctx: WriteContext,
        into: str,
        max_bytes: int | None,
        progress: Progress | None,
        prefer_source: bool = False,
    ) -> None:
        self.ctx = ctx
        self.prefer_source = prefer_source
        self.into = into
        self.prefix = ids.folder_prefix(into)
        cap = max_bytes if max_bytes is not None else MAX_FILE_BYTES
        self.text_cap = min(MAX_TEXT_BYTES, cap)
        self.file_cap = min(MAX_FILE_BYTES, cap)
        self.progress = progress
        scratch = ctx.root / "_derived" / "tmp"
        scratch.mkdir(parents=True, exist_ok=True)
        self.scratch = Path(tempfile.mkdtemp(prefix="ingest-", dir=scratch))
        self.report: dict[str, list[dict[str, Any]]] = {k: [] for k in REPORT_KEYS}
        self.origins = {
            r["origin"]: r["id"]
            for r in ctx.forest.catalog.rows(
                "SELECT id, origin FROM nodes WHERE origin LIKE 'file:%'"
            )
        }
        # An old address a transplant left (a waymark) is not free either.
        self.taken = {
            r["id"]
            for r in ctx.forest.catalog.rows("SELECT id FROM nodes UNION SELECT old_id FROM moves")
        }
        self.seen: set[str] = set()
        self.folders: dict[str, tuple[str, str, str]] = {}  # slug prefix -> dir info
        self.plans: list[Plan] = []
        self.contents = Contents(self.scratch, self.text_cap, self.file_cap)

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
                        {"path": str(root / uri_rel(origin, prefix)), "id": node_id}
                    )
        # Wikilinks to the nodes their files became (every file of the run is planned).
        self.report["unresolved_links"] = resolve(
            self.plans, known_files(self.origins, self.plans), self.taken.__contains__
        )
        branches = self._plan_branches()
        commit = self._write(branches) if self.plans else None
        out: dict[str, Any] = {
            "into": self.into,
            "commit": commit,
            "branches": [p.id for p in branches],
        }
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
                    if not inside(sub.resolve(), real):
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
        self.folders.setdefault(slug, ((root / rel_dir).name, rel_dir, (root / rel_dir).as_uri()))

    def _item(self, file: Path, root: Path, rel: str, shown: str) -> Item | None:
        self.seen.add(file.as_uri())
        try:
            real = file.resolve(strict=True)
            mode = os.stat(real).st_mode
        except (OSError, RuntimeError):
            self._fail(shown, "broken symlink" if file.is_symlink() else "cannot be read")
            return None
        if not inside(real, root):
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
        if file_kind(ext) is None:
            self._unsupported(item.shown, f"no converter for '{ext or item.real.name}'")
            return
        if ext in OFFICE_EXT and not extra_installed(ext):
            self._unsupported(item.shown, f"{ext} needs the ingest extra: {EXTRA_HINT}")
            return
        origin = Path(os.path.abspath(item.path)).as_uri()
        self.seen.add(origin)
        existing = self.origins.get(origin)
        catalog = self.ctx.forest.catalog
        if existing and (elsewhere := lives_elsewhere(catalog, existing, self.into, item.folder)):
            self._fail(item.shown, elsewhere)
            return
        try:
            st = os.stat(item.real)
            cap = self.text_cap if file_kind(ext) == "text" else self.file_cap
            if st.st_size > cap:
                raise FileProblem(f"too large ({st.st_size} bytes; the limit is {cap})")
            old = self.ctx.forest.read(existing) if existing else None
            if existing and old is not None and same_stat(old.meta, st):
                self._unchanged(item, existing)
                return
            digest = dataset.sha256_of(item.real)
            if existing and old is not None and old.meta.get("source_hash") == digest:
                self._unchanged(item, existing)
                return
            content = self.contents.of(item, ext)
        except (FileProblem, VineError, OSError, ValueError, csv.Error, sqlite3.Error) as exc:
            self._fail(item.shown, reason_of(exc))
            return
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
            self._fail(item.shown, f"unexpected {type(exc).__name__}: {exc}")
            return
        passport = {
            "source": "ingest",
            "confidence": INGEST_CONFIDENCE,
            "source_path": item.rel,
            "source_hash": digest,
            "source_size": st.st_size,
            "source_mtime": round(st.st_mtime, 3),
        }
        if len(origin) <= 2048:
            passport["origin"] = origin
        try:
            if old is None:
                self._plan_new(item, content, passport)
            else:
                self._plan_update(item, old, content, passport)
        except VineError as exc:
            self._fail(item.shown, reason_of(exc))

    # -- ids, creations and updates --------------------------------------------------

    def _plan_new(self, item: Item, content: Content, passport: dict[str, Any]) -> None:
        node_id = self._new_id(item, content)
        meta = {
            "id": node_id,
            "type": content.type,
            "parent": ids.parent_of(node_id),
            "title": content.title,
            "summary": content.summary,
            **passport,
            **content.meta,
        }
        aliases = alias_union(
            content.meta.get("aliases") or [],
            make_aliases(item.path.stem, item.rel, content.title, node_id.rsplit("/", 1)[-1]),
        )
        if aliases:
            meta["aliases"] = aliases
        if content.payload is not None:
            meta["payload"] = content.payload_name or ""
        meta["source_digest"] = title_digest(content.title, content.summary)
        spec = validate_node(self.ctx, {**meta, "body": content.body})
        self.taken.add(node_id)
        self.plans.append(
            Plan(
                item,
                node_id,
                spec["meta"],
                spec["body"],
                content.payload,
                content.payload_name,
                warnings=content.warnings,
            )
        )

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
        raise FileProblem(
            f"no free id for it (tried {base}{candidates[0]} and {base}{candidates[1]})"
        )

    def _plan_update(
        self, item: Item, old: Any, content: Content, passport: dict[str, Any]
    ) -> None:
        node_id = old.id
        if old.meta.get("type") != content.type:
            raise FileProblem(
                f"its node {node_id} is a {old.meta.get('type')}, the file "
                f"now reads as a {content.type}; prune the node to re-ingest it"
            )
        recorded = old.meta.get("body_digest")
        if recorded and recorded != body_digest(old.body, content.type) and not self.prefer_source:
            self.report["conflict"].append(
                {
                    "path": item.shown,
                    "id": node_id,
                    "reason": "the source changed, and so did the node's body since it was "
                    "ingested: the node is kept as it was edited (ingest with "
                    "prefer_source to take the source's body)",
                }
            )
            return
        meta = dict(old.meta)
        generated = old.meta.get("source_digest") == title_digest(
            str(old.meta.get("title")), str(old.meta.get("summary"))
        )
        if generated:
            meta["title"], meta["summary"] = content.title, content.summary
            meta["source_digest"] = title_digest(content.title, content.summary)
        for key in ("source_hash", "source_size", "source_mtime", "source_path"):
            meta[key] = passport[key]
        for key in ("payload_type", "payload_hash"):
            if key in content.meta:
                meta[key] = content.meta[key]
        if "origin" in passport:
            meta.setdefault("origin", passport["origin"])
        aliases = alias_union(
            meta.get("aliases") or [],
            make_aliases(item.path.stem, item.rel, str(meta["title"]), node_id.rsplit("/", 1)[-1]),
        )
        if aliases:
            meta["aliases"] = aliases
        old_payload = old.meta.get("payload") if content.payload is not None else None
        if content.type == "dataset":
            content.payload_name = str(old_payload or node_id.rsplit("/", 1)[-1] + ".db")
        if content.payload is not None:
            meta["payload"] = content.payload_name
        meta["updated"] = render.today()
        body = keep_notes(content.body, old.body) if content.type == "dataset" else content.body
        body = with_title(str(meta["title"]), body)
        rules.check_summary(meta["summary"])
        try:
            parse_text(node_id, render.render(meta, body))
        except ParseError as exc:
            raise FileProblem(f"the refreshed node would not parse: {exc}") from None
        self.plans.append(
            Plan(
                item,
                node_id,
                meta,
                body,
                content.payload,
                content.payload_name,
                old_payload,
                created=False,
                warnings=content.warnings,
            )
        )

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
        slug = folder[len(self.prefix) :] if folder.startswith(self.prefix) else None
        info = self.folders.get(slug) if slug else None
        node: dict[str, Any] = {
            "id": branch,
            "type": "branch",
            "parent": ids.parent_of(branch),
            "source": "ingest",
        }
        if info is not None:
            name, rel_dir, uri = info
            node.update(
                title=name,
                summary=f"Files ingested from the folder {rel_dir}/.",
                source_path=rel_dir,
            )
            if len(uri) <= 2048:
                node["origin"] = uri
        else:
            name = folder.rsplit("/", 1)[-1]
            node.update(title=name, summary=f"{name}: the branch vine ingest files into.")
        node["body"] = render.index_body(node["title"], node["summary"], master=False)
        spec = validate_node(self.ctx, node)
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
                section = (
                    render.SUB_BRANCHES if plan.meta["type"] == "branch" else render.DIRECT_BANANAS
                )
                parent = str(ids.parent_of(plan.id))
                entries.setdefault(parent, {}).setdefault(section, []).append(
                    (plan.id, render.entry_line(plan.id, plan.meta["summary"]))
                )
        for parent, sections in entries.items():
            meta, body = docs.get(parent) or read_doc(ctx, parent)
            for section, lines in sections.items():
                body = add_entries(body, section, lines)
            docs[parent] = (
                dict(meta, coverage=render.coverage(body), updated=render.today()),
                body,
            )
        for plan in self.plans:
            if not plan.created:
                self._relist(plan, docs)
            # What ingest wrote, so a later run can tell a person's edit from its own.
            meta, body = docs[plan.id]
            docs[plan.id] = (dict(meta, body_digest=body_digest(body, plan.meta["type"])), body)
        texts = {
            ctx.root / (node_id + ".md"): render.render(meta, body)
            for node_id, (meta, body) in docs.items()
        }
        moved: list[tuple[Path, Path | None]] = []  # (final, backup of what it replaced)
        created = sum(p.created for p in self.plans)
        message = f"ingest({self.into}): {created} created, {len(self.plans) - created} updated"
        finals = {
            id(p): self.ctx.root / os.path.dirname(p.id) / p.payload_name
            for p in self.plans
            if p.payload is not None and p.payload_name
        }
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

    def _place_payload(
        self, plan: Plan, final: Path, moved: list[tuple[Path, Path | None]]
    ) -> None:
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
            meta, body = docs.get(branch) or read_doc(self.ctx, branch)
            new, count = pattern.subn(lambda _: line, body, count=1)
            if count and new != body:
                docs[branch] = (dict(meta, updated=render.today()), new)

    def _log_plans(self) -> None:
        for plan in self.plans:
            assert plan.item is not None
            entry: dict[str, Any] = {
                "path": plan.item.shown,
                "id": plan.id,
                "type": plan.meta["type"],
            }
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
