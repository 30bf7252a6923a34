"""``vine validate``: the checks a forest repository runs in CI, and the safe repairs.

:func:`validate` reads every file of a forest (never the catalog, which could be
stale, and never writing anything) and returns :class:`Finding` objects. Each has a
severity, a stable ``code``, the node id and file path, the line where it is known, a
message and how to fix it. :func:`fix` makes the repairs that need no judgement in
one commit.

Errors are what breaks reading or writing the forest, or what a writer would refuse;
warnings are drift that readers survive and that a mechanical pass or a person can
settle later. Run ``--strict`` in CI to fail on both.

==========================  ========  ===========================================
code                        severity  what it means
==========================  ========  ===========================================
file.unparseable            error     no or unterminated frontmatter, bad YAML, not a
                                      mapping, binary or not UTF-8
frontmatter.missing-key     error     a required key is absent (a branch may take
                                      title, summary and created from its H1, its
                                      blockquote and ``updated``)
frontmatter.invalid         error     a key of the wrong shape: dates, confidence,
                                      tags, aliases, origin, enums, links
frontmatter.id-mismatch     error     ``id`` is not the file's path id
schema.unknown-type         error     ``type`` is not declared in _meta/schema.md
schema.unknown-rel          error     a link's ``rel`` is not declared there
links.too-many              error     more than 50 links
links.dangling              error     a link target that is not a node
tree.missing-parent         error     a folder holds nodes but has no _index.md
tree.parent-not-branch      error     an _index.md whose type is not ``branch``
payload.undeclared          error     a dataset without a ``payload`` key
payload.invalid             error     a payload path leaving the forest or inside
                                      _derived/ or .git/
payload.missing             error     a local payload file that is not there
summary.empty               warning   the summary is empty
summary.too-long            warning   the summary is over 60 estimated tokens
summary.boilerplate         warning   "This document describes...", "File containing..."
body.broken-wikilink        warning   a ``[[id]]`` in a body that is not a node
index.missing-entry         warning   a child the parent index does not list
index.extra-entry           warning   an entry for something that is not a child
index.duplicate-entry       warning   a child listed twice
index.misplaced-entry       warning   a branch under Direct bananas, or a leaf under
                                      Sub-branches
index.stale-summary         warning   an entry whose text is not the child's summary
index.coverage              warning   ``coverage`` differs from the entry lines
payload.hash-drift          warning   the payload's sha256 is not ``payload_hash``
payload.hash-missing        warning   a dataset payload with no ``payload_hash``
payload.orphan              warning   a ``.db``/``.sqlite`` file or an ``_assets/`` file
                                      that no node names
==========================  ========  ===========================================

The reference's upstream validator makes the first group errors and summary rules,
broken wikilinks and hash drift warnings; the index, coverage and orphan checks are
ours and are warnings because the files still read correctly and :func:`fix` (or
``vine validate --fix``) repairs all of them but orphans. ``_meta/*`` is only
parse-checked. Remote payloads (``s3://...``) are not checked; ``payloads=False``
skips every check that needs payload files, for checkouts without them (``*.db`` and
``_assets/`` never enter git).
"""

from __future__ import annotations

import datetime
import os
import posixpath
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import budget, ids
from .dialect import Dialect, parse_dialect
from .errors import NotFound, VineError
from .indexing import clean_target
from .nodes import BOUNDARY, REQUIRED, Node, ParseError, blockquote_summary, parse_text
from .writes import render, rules

ERROR = "error"
WARNING = "warning"
SCHEMA_ID = "_meta/schema"
PAYLOAD_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_SKIP_DIRS = frozenset({".git", "_derived"})
_WIKILINK = re.compile(r"\[\[([^\]\[|#\n]+)(?:[|#][^\]\n]*)?\]\]")
_ENTRY = re.compile(r"^- \[\[([^\]|#]+)(?:[|#][^\]]*)?\]\](.*)$")
_COVERAGE_SUFFIX = re.compile(r" \d+ bananas?, \d+ sub-branch(?:es)?\.$")
_YAML_LINE = re.compile(r"at line (\d+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ENTRY_SECTIONS = (render.SUB_BRANCHES, render.DIRECT_BANANAS)


@dataclass(frozen=True)
class Finding:
    """One problem: where it is, how bad, and how to fix it.

    Attributes:
        severity: ``"error"`` or ``"warning"``.
        code: A short stable slug such as ``"index.missing-entry"``.
        id: The node id, or None for a file that is not a node (an orphan payload).
        path: The file, relative to the forest root, POSIX separators.
        line: The 1-based line in that file, when known.
        message: What is wrong.
        fix: How to fix it.
        fixable: True when ``vine validate --fix`` repairs it.
    """

    severity: str
    code: str
    id: str | None
    path: str
    line: int | None
    message: str
    fix: str
    fixable: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The finding as a JSON-ready dict."""
        return asdict(self)


@dataclass
class _File:
    """One node file as read: its text and parsed node, or why it does not parse."""

    path: str
    id: str
    text: str = ""
    node: Node | None = None
    error: str | None = None
    _body_start: int | None = None

    def key_line(self, key: str) -> int | None:
        """The file line of a top-level frontmatter key."""
        return self.find_line(re.compile(rf"^{re.escape(key)}\s*:"), front=True)

    def find_line(self, pattern: re.Pattern[str], *, front: bool = False) -> int | None:
        """The first file line matching ``pattern`` (within the frontmatter if asked)."""
        end = self.body_line(0) if front and self.node is not None else None
        for number, line in enumerate(self.text.split("\n"), start=1):
            if end is not None and number >= end:
                return None
            if pattern.search(line):
                return number
        return None

    def body_line(self, index: int) -> int | None:
        """The file line of body line ``index`` (0-based)."""
        if self._body_start is None:
            self._body_start = _body_start(self.text)
        return None if self._body_start is None else self._body_start + index


def _body_start(text: str) -> int | None:
    """The 1-based file line where the parsed body begins."""
    bounds = BOUNDARY.finditer(text)
    closing = next(bounds, None) and next(bounds, None)
    if closing is None:
        return None
    pos = closing.end()
    while pos < len(text) and text[pos] == "\n":
        pos += 1
    if pos < len(text) and text[pos - 1] != "\n":
        pos = text.find("\n", pos) + 1 or len(text)
    return text.count("\n", 0, pos) + 1


@dataclass
class _Issue:
    """An index entry problem of one branch, as both validate and fix need it."""

    kind: str           # extra | duplicate | misplaced | stale | missing
    child: str
    section: str        # where an entry for the child belongs
    line: int | None    # body line of the offending entry
    new: str | None     # the entry line to write (stale, misplaced, missing)
    exists: bool = True


@dataclass
class _Run:
    """One validation pass over a forest."""

    root: Path
    payloads: bool = True
    files: dict[str, _File] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)
    dialect: Dialect = field(default_factory=Dialect)
    moves: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    referenced: set[str] = field(default_factory=set)
    hashes: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def add(self, f: _File, severity: str, code: str, message: str, fix: str, *,
            line: int | None = None, fixable: bool = False) -> None:
        """Record a finding on file ``f``."""
        self.findings.append(Finding(severity, code, f.id, f.path, line, message, fix,
                                     fixable))


def validate(root: str | os.PathLike[str], *, payloads: bool = True) -> list[Finding]:
    """Every finding in the forest at ``root``, sorted by file and line.

    Reads the files only: nothing is written, not even the catalog.

    Args:
        root: The forest's root folder (it holds ``_index.md``).
        payloads: Check payload files (missing, hash drift, orphans); False for a
            checkout that lacks them.

    Raises:
        NotFound: ``root`` holds no ``_index.md``.
    """
    return _check(_load(Path(root), payloads)).findings


def _load(root: Path, payloads: bool) -> _Run:
    root = root.expanduser().resolve()
    if not (root / "_index.md").is_file():
        raise NotFound(f"no forest at {root} (no _index.md)",
                       hint="Point at a forest's root folder, or create one with vine init.")
    run = _Run(root, payloads)
    nodes, run.others = _walk(root)
    for path in sorted(nodes):
        f = _read(root, path)
        run.files[f.id] = f
    schema = run.files.get(SCHEMA_ID)
    if schema is not None and schema.node is not None:
        run.dialect = parse_dialect(schema.node.body)
    for f in run.files.values():
        if f.node is not None:
            for old in _str_list(f.node.meta.get("moved_from")):
                run.moves[old] = f.id
        if f.id != ids.ROOT_INDEX and not _private(f.id):
            run.children.setdefault(ids.parent_of(f.id) or "", []).append(f.id)
    return run


def _walk(root: Path) -> tuple[list[str], list[str]]:
    """Node files (``.md`` outside private and hidden folders) and payload-like files
    (SQLite files anywhere outside ``_derived``/``.git``, everything under ``_assets``)."""
    nodes: list[str] = []
    others: list[str] = []
    stack: list[tuple[str, bool]] = [("", False)]
    while stack:
        rel, assets = stack.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIP_DIRS and not entry.name.startswith("."):
                        stack.append((child, assets or entry.name == "_assets"))
                elif not entry.is_file(follow_symlinks=False):
                    continue
                elif assets or entry.name.endswith(PAYLOAD_SUFFIXES):
                    others.append(child)
                elif entry.name.endswith(".md"):
                    nodes.append(child)
            except OSError:
                continue
    return nodes, others


def _read(root: Path, path: str) -> _File:
    f = _File(path, ids.id_of(path))
    try:
        with open(os.path.join(root, path), "rb") as fh:
            data = fh.read()
    except OSError as exc:
        f.error = f"unreadable: {exc.strerror}"
        return f
    if b"\x00" in data:
        f.error = "binary content (NUL bytes)"
        return f
    try:
        f.text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        f.error = f"not UTF-8 text (byte {exc.start})"
        return f
    try:
        f.node = parse_text(f.id, f.text)
    except ParseError as exc:
        f.error = str(exc)
    return f


def _private(node_id: str) -> bool:
    """Ids inside a folder whose name starts with ``_`` (``_meta/...``)."""
    return any(part.startswith("_") for part in node_id.split("/")[:-1])


def _str_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _check(run: _Run) -> _Run:
    for f in run.files.values():
        if f.node is None:
            run.add(f, ERROR, "file.unparseable", f"{f.path} is not a node: {f.error}",
                    "Give the file a '---' YAML frontmatter block closed by '---', or move "
                    "it out of the forest.", line=_error_line(f))
        elif not f.id.startswith("_meta/"):
            _check_node(run, f)
    _check_tree(run)
    for f in run.files.values():
        if f.node is not None and ids.is_index(f.id) and not _private(f.id):
            _check_index(run, f)
    if run.payloads:
        _check_orphans(run)
    run.findings.sort(key=lambda x: (x.path, x.line or 0, x.code))
    return run


def _error_line(f: _File) -> int:
    """The file line a parse error names (counted from the first '---'), else 1."""
    found = _YAML_LINE.search(f.error or "")
    if found is None:
        return 1
    text = f.text.lstrip("\ufeff")
    return int(found.group(1)) + text[:len(text) - len(text.lstrip())].count("\n")


# -- one node ----------------------------------------------------------------------


def _check_node(run: _Run, f: _File) -> None:
    _check_required(run, f)
    _check_values(run, f)
    _check_links(run, f)
    _check_summary(run, f)
    _check_wikilinks(run, f)
    _check_payload(run, f)


def _check_required(run: _Run, f: _File) -> None:
    """Required keys present and of the right shape; ``id`` and ``type`` right."""
    assert f.node is not None
    meta = f.node.meta
    branch = meta.get("type") == "branch"
    for key in REQUIRED:
        if meta.get(key) is None and not (branch and _branch_fallback(f.node, key)):
            run.add(f, ERROR, "frontmatter.missing-key", f"required key '{key}' is missing",
                    f"Add '{key}:' to the frontmatter.", line=1)
    node_id, ntype = meta.get("id"), meta.get("type")
    if node_id is not None and node_id != f.id:
        run.add(f, ERROR, "frontmatter.id-mismatch",
                f"id is {node_id!r} but the file's path makes it {f.id!r}",
                f"Set 'id: {f.id}', or move the file to {node_id}.md (ids are paths).",
                line=f.key_line("id"))
    if ntype is not None and ntype not in run.dialect.types:
        run.add(f, ERROR, "schema.unknown-type", f"type {ntype!r} is not declared",
                "Use a declared type (" + ", ".join(run.dialect.types) +
                "), or declare it in _meta/schema.md.", line=f.key_line("type"))
    for key in ("title", "summary"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            _invalid(run, f, key, f"{key}: a string is required")
    if isinstance(meta.get("title"), str) and not meta["title"].strip():
        _invalid(run, f, "title", "title: a non-empty string is required")
    for key in ("created", "updated"):
        if meta.get(key) is not None and not _is_date(meta[key]):
            _invalid(run, f, key, f"{key}: a date (YYYY-MM-DD) is required, "
                     f"got {meta[key]!r}")


def _branch_fallback(node: Node, key: str) -> bool:
    """A branch may leave title, summary and created to its H1, blockquote and updated."""
    if key == "title":
        return any(h.level == 1 for h in node.headers)
    if key == "summary":
        return bool(blockquote_summary(node.lines))
    return key == "created" and node.meta.get("updated") is not None


def _is_date(value: Any) -> bool:
    if isinstance(value, datetime.date):
        return True
    if not isinstance(value, str):
        return False
    try:
        datetime.date.fromisoformat(value[:10])
        return len(value) == 10 or bool(datetime.datetime.fromisoformat(value))
    except ValueError:
        return False


def _invalid(run: _Run, f: _File, key: str, message: str) -> None:
    run.add(f, ERROR, "frontmatter.invalid", message,
            f"Correct '{key}' in the frontmatter (see the forest format, frontmatter keys).",
            line=f.key_line(key))


def _check_values(run: _Run, f: _File) -> None:
    """Optional keys through the same rules plant and graft apply."""
    assert f.node is not None
    meta = f.node.meta
    checks = [("confidence", rules.check_confidence), ("tags", rules.check_tags),
              ("origin", rules.check_origin)]
    for key, check in checks:
        if meta.get(key) is not None:
            try:
                check(meta[key])
            except VineError as exc:
                _invalid(run, f, key, f"{exc.code}: {exc.message}")
    aliases = meta.get("aliases")
    if aliases is not None and not (isinstance(aliases, list) and all(
            isinstance(a, str | int | float) for a in aliases)):
        _invalid(run, f, "aliases", "aliases: a list of strings is required")
    try:
        rules.check_enums(meta)
    except VineError as exc:
        key = exc.message.split(":", 1)[0]
        _invalid(run, f, key if key in meta else "type", f"{exc.code}: {exc.message}")


def _check_links(run: _Run, f: _File) -> None:
    """Shape, declared rels, the cap, and targets that exist."""
    assert f.node is not None
    links = f.node.meta.get("links")
    if links is None:
        return
    if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
        _invalid(run, f, "links", "links: a list of {rel, target} objects is required")
        return
    if len(links) > rules.MAX_LINKS:
        run.add(f, ERROR, "links.too-many",
                f"{len(links)} links, a node holds at most {rules.MAX_LINKS}",
                "Move some relations to a hub node, or drop the weakest.",
                line=f.key_line("links"))
    for link in links:
        rel, target = link.get("rel"), clean_target(link.get("target"))
        if not isinstance(rel, str) or target is None:
            _invalid(run, f, "links", "links: every link needs a string rel and target")
            continue
        if rel not in run.dialect.rels:
            run.add(f, ERROR, "schema.unknown-rel", f"rel {rel!r} is not declared",
                    "Use a declared rel (" + ", ".join(run.dialect.rels) +
                    "), or declare it in _meta/schema.md.",
                    line=f.find_line(re.compile(rf"\brel:\s*['\"]?{re.escape(rel)}"),
                                     front=True))
        if "confidence" in link:
            try:
                rules.check_confidence(link["confidence"])
            except VineError as exc:
                _invalid(run, f, "links", f"links: {exc.message}")
        if target not in run.files:
            line = f.find_line(re.compile(rf"\btarget:\s*['\"]?{re.escape(str(link['target']))}"),
                               front=True)
            run.add(f, ERROR, "links.dangling", _absent(run, target, "link target"),
                    _retarget(run, target, "Point the link at an existing node or remove it."),
                    line=line)


def _absent(run: _Run, target: str, what: str) -> str:
    moved = run.moves.get(target)
    return f"{what} {target!r} does not exist" + (f" (it moved to {moved!r})" if moved else "")


def _retarget(run: _Run, target: str, otherwise: str) -> str:
    moved = run.moves.get(target)
    return f"Replace {target!r} with {moved!r}." if moved else otherwise


def _check_summary(run: _Run, f: _File) -> None:
    """The scent rules, as warnings: non-empty, at most 60 tokens, no boilerplate."""
    assert f.node is not None
    raw = f.node.meta.get("summary")
    if raw is None and f.node.meta.get("type") == "branch":
        raw = blockquote_summary(f.node.lines)
    if not isinstance(raw, str):
        return
    if not raw.strip():
        run.add(f, WARNING, "summary.empty", "the summary is empty",
                "Write 1 to 3 sentences saying what the node holds.",
                line=f.key_line("summary"))
        return
    size = budget.tokens(raw)
    if size > budget.SUMMARY_MAX:
        run.add(f, WARNING, "summary.too-long",
                f"the summary is {size} tokens, the limit is {budget.SUMMARY_MAX}",
                "Keep the scent to 1-3 sentences; the body holds the rest.",
                line=f.key_line("summary"))
    try:
        rules.check_summary(raw, length=False)
    except VineError:
        run.add(f, WARNING, "summary.boilerplate",
                f"the summary opens with boilerplate ({raw.strip()[:24]!r}...)",
                "Lead with the subject: say what the node holds.", line=f.key_line("summary"))


def _check_wikilinks(run: _Run, f: _File) -> None:
    """``[[id]]``, ``[[id|text]]`` and ``[[id#anchor]]`` must name a node."""
    assert f.node is not None
    body = f.node.body
    if "[[" not in body:
        return
    broken = [m for m in _WIKILINK.finditer(body)
              if (clean_target(m.group(1)) or m.group(1)) not in run.files]
    if not broken:
        return
    skip = _fenced_lines(f.node.lines) | _entry_lines(f)
    for m in broken:
        index = body.count("\n", 0, m.start())
        if index in skip or _in_code_span(body, m.start()):
            continue
        target = clean_target(m.group(1)) or m.group(1)
        run.add(f, WARNING, "body.broken-wikilink", _absent(run, target, "wikilink to"),
                _retarget(run, target, "Link an existing id, or remove the brackets."),
                line=f.body_line(index))


def _in_code_span(body: str, at: int) -> bool:
    """True when ``at`` is inside an inline code span (`` `[[id]]` `` is an example,
    not a link): an odd number of backticks before it on its line."""
    start = body.rfind("\n", 0, at) + 1
    return body.count("`", start, at) % 2 == 1


def _fenced_lines(lines: list[str]) -> set[int]:
    """Body lines inside fenced code blocks."""
    inside: set[int] = set()
    fence: str | None = None
    for i, line in enumerate(lines):
        marker = _FENCE.match(line)
        if fence is not None:
            inside.add(i)
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
        elif marker:
            fence = marker.group(1)
            inside.add(i)
    return inside


def _entry_lines(f: _File) -> set[int]:
    """A branch's entry lines (the index checks report those)."""
    assert f.node is not None
    if not ids.is_index(f.id):
        return set()
    out: set[int] = set()
    for _, start, end in _spans(f.node):
        out.update(i for i in range(start + 1, end) if f.node.lines[i].startswith("- [["))
    return out


def _check_payload(run: _Run, f: _File) -> None:
    """A local payload inside the forest, present, with the hash it declares."""
    assert f.node is not None
    meta = f.node.meta
    payload = meta.get("payload")
    dataset = meta.get("type") == "dataset" or meta.get("payload_type") == "sqlite"
    if payload is None:
        if meta.get("type") == "dataset":
            run.add(f, ERROR, "payload.undeclared", "a dataset with no 'payload' key",
                    f"Add 'payload: {f.id.rsplit('/', 1)[-1]}.db' naming its SQLite file.",
                    line=f.key_line("type"))
        return
    if isinstance(payload, str) and "://" in payload:
        return
    rel = _payload_rel(run.root, f.id, payload)
    if rel is None:
        run.add(f, ERROR, "payload.invalid", f"payload {payload!r} is not a file inside "
                "the forest (or it is inside _derived/ or .git/)",
                "Name a file relative to the node's folder, such as 'name.db'.",
                line=f.key_line("payload"))
        return
    run.referenced.add(rel)
    if run.payloads:
        _check_payload_file(run, f, rel, dataset)


def _payload_rel(root: Path, node_id: str, payload: Any) -> str | None:
    """The payload's POSIX path relative to the root, or None when it is not allowed."""
    if not isinstance(payload, str) or not payload.strip() or payload.startswith("/") \
            or "\\" in payload:
        return None
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(node_id), payload.strip()))
    first = rel.split("/", 1)[0]
    if rel.startswith("..") or rel == "." or first in _SKIP_DIRS:
        return None
    real = os.path.realpath(root / rel)
    return rel if real.startswith(str(root) + os.sep) else None


def _check_payload_file(run: _Run, f: _File, rel: str, dataset: bool) -> None:
    assert f.node is not None
    full = run.root / rel
    if not full.is_file():
        run.add(f, ERROR, "payload.missing", f"payload file {rel} is missing",
                "Restore the file (payloads never enter git: copy it from where the forest "
                "was written), or run validate with --no-payloads on a checkout.",
                line=f.key_line("payload"))
        return
    declared = f.node.meta.get("payload_hash")
    if declared is None and not dataset:
        return
    actual = _sha256(run, rel)
    if declared is None:
        run.add(f, WARNING, "payload.hash-missing", f"payload {rel} has no payload_hash",
                f"Add 'payload_hash: {actual}' (vine validate --fix does).",
                line=f.key_line("payload"), fixable=True)
    elif str(declared).strip().lower() != actual:
        run.add(f, WARNING, "payload.hash-drift",
                f"payload {rel} has sha256 {actual[:12]}..., payload_hash says "
                f"{str(declared)[:12]}...",
                "Set payload_hash to the file's sha256 if the change was intended "
                "(vine validate --fix does), else restore the file.",
                line=f.key_line("payload_hash"), fixable=True)


def _sha256(run: _Run, rel: str) -> str:
    if rel not in run.hashes:
        from .writes.dataset import sha256_of

        run.hashes[rel] = sha256_of(run.root / rel)
    return run.hashes[rel]


def _check_orphans(run: _Run) -> None:
    for rel in sorted(run.others):
        if rel in run.referenced:
            continue
        run.findings.append(Finding(
            WARNING, "payload.orphan", None, rel, None,
            f"{rel} is not the payload of any node",
            "Delete it, or name it in a node's 'payload' key."))


# -- the tree and the indexes ------------------------------------------------------


def _check_tree(run: _Run) -> None:
    """Every node's folder has an index, and every index is a branch."""
    for f in run.files.values():
        if f.node is None or not ids.is_index(f.id) or _private(f.id):
            continue
        ntype = f.node.meta.get("type")
        if ntype != "branch":
            count = len(run.children.get(f.id, []))
            run.add(f, ERROR, "tree.parent-not-branch",
                    f"{f.id} is the index of its folder ({count} children) but its type "
                    f"is {ntype!r}, not 'branch'",
                    "Set 'type: branch' (an _index.md is always a branch), or rename the "
                    "file.", line=f.key_line("type") or 1)
    for parent, kids in sorted(run.children.items()):
        if parent and parent not in run.files:
            first = run.files[sorted(kids)[0]]
            run.add(first, ERROR, "tree.missing-parent",
                    f"{parent}.md is missing: the folder holds {len(kids)} node(s) "
                    "but no index",
                    f"Create {parent}.md with 'type: branch' listing them (vine plant "
                    "a branch).", line=None)


def _spans(node: Node) -> list[tuple[str, int, int]]:
    """(section, start, end) body line spans of the two entry sections present."""
    out = []
    for name in ENTRY_SECTIONS:
        span = render.section_span(node.body, name)
        if span is not None:
            out.append((name, *span))
    return out


def _home(child: str) -> str:
    return render.SUB_BRANCHES if ids.is_index(child) else render.DIRECT_BANANAS


def _entry(run: _Run, child: str, old_rest: str | None = None) -> str | None:
    """The entry line ``child`` should have (a branch keeps a coverage suffix it had)."""
    node = run.files[child].node
    if node is None:
        return None
    line = render.entry_line(child, node.summary)
    cover = node.meta.get("coverage")
    if old_rest and _COVERAGE_SUFFIX.search(old_rest) and isinstance(cover, str):
        line += f" {cover.strip().rstrip('.')}."
    return line


def _index_issues(run: _Run, f: _File) -> list[_Issue]:
    """The entry problems of branch ``f``: extra, duplicate, misplaced, stale, missing."""
    assert f.node is not None
    kids = set(run.children.get(f.id, []))
    issues: list[_Issue] = []
    seen: set[str] = set()
    for section, start, end in _spans(f.node):
        for i in range(start + 1, end):
            m = _ENTRY.match(f.node.lines[i])
            if not m:
                continue
            child, rest = m.group(1).strip(), m.group(2)
            if child not in kids:
                issues.append(_Issue("extra", child, section, i, None, child in run.files))
            elif child in seen:
                issues.append(_Issue("duplicate", child, section, i, None))
            elif section != _home(child):
                issues.append(_Issue("misplaced", child, _home(child), i, _entry(run, child)))
            elif _stale(run, child, rest):
                issues.append(_Issue("stale", child, section, i, _entry(run, child, rest)))
            seen.add(child)
    for child in sorted(kids - seen):
        if run.files[child].node is None:
            continue    # reported as unparseable; its entry needs its summary
        issues.append(_Issue("missing", child, _home(child), None, _entry(run, child)))
    return issues


def _stale(run: _Run, child: str, rest: str) -> bool:
    node = run.files[child].node
    if node is None:
        return False
    want = render.entry_line(child, node.summary).split("]]", 1)[1].rstrip()
    have = rest.rstrip()
    return have != want and _COVERAGE_SUFFIX.sub("", have) != want


_ISSUE_TEXT = {
    "extra": ("index.extra-entry", "lists {child}, which {why}",
              "Remove the entry line (plant and transplant keep indexes in step)."),
    "duplicate": ("index.duplicate-entry", "lists {child} more than once",
                  "Keep one entry line for it."),
    "misplaced": ("index.misplaced-entry", "lists {child} outside '## {section}'",
                  "Move the entry under '## {section}'."),
    "stale": ("index.stale-summary", "the entry for {child} is not its summary",
              "Replace the line with: {new}"),
    "missing": ("index.missing-entry", "does not list its child {child}",
                "Add under '## {section}': {new}"),
}


def _check_index(run: _Run, f: _File) -> None:
    assert f.node is not None
    for issue in _index_issues(run, f):
        code, message, hint = _ISSUE_TEXT[issue.kind]
        why = "is not in this folder" if issue.exists else "does not exist"
        values = {"child": issue.child, "section": issue.section, "new": issue.new, "why": why}
        line = f.body_line(issue.line) if issue.line is not None else \
            _section_line(f, issue.section)
        run.add(f, WARNING, code, message.format(**values), hint.format(**values),
                line=line, fixable=issue.new is not None or issue.kind in ("extra", "duplicate"))
    have = f.node.meta.get("coverage")
    want = render.coverage(f.node.body)
    if have is None or str(have).strip() != want:
        run.add(f, WARNING, "index.coverage",
                f"coverage is {have!r}, the entry lines count {want!r}",
                f"Set 'coverage: \"{want}\"' (vine validate --fix does).",
                line=f.key_line("coverage") or 1, fixable=True)


def _section_line(f: _File, section: str) -> int | None:
    assert f.node is not None
    span = render.section_span(f.node.body, section)
    return f.body_line(span[0]) if span is not None else None


# -- repairs -----------------------------------------------------------------------


def fix(root: str | os.PathLike[str], *, payloads: bool = True) -> dict[str, Any]:
    """Repair what needs no judgement, in one commit ``validate(fix): N repairs``.

    Index entries (missing, extra, duplicate, misplaced, stale), coverage strings and
    payload hashes (when ``payloads``); every rewritten file gets ``updated`` = today.
    It opens the forest writable (taking its lock) and writes through the engine's
    transaction, so a failure leaves every file as it was. Nothing to repair: no commit.

    Returns:
        ``{"commit": sha or None, "repairs": [{code, id, path, message}], "files": [...]}``.
    """
    from .vine import Vine

    with Vine(root) as vine:
        run = _check(_load(vine.root, payloads))
        plan = _plan(run)
        if not plan:
            return {"commit": None, "repairs": [], "files": []}
        repairs = [r for _, done in plan.values() for r in done]
        ctx = vine._writing()
        with ctx.transaction() as txn:
            paths = [vine.root / path for path in plan]
            txn.touch(*paths)
            for path, (text, _) in plan.items():
                txn.write(vine.root / path, text)
            sha = txn.commit(f"validate(fix): {len(repairs)} repairs")
    return {"commit": sha, "repairs": repairs, "files": sorted(plan)}


def _plan(run: _Run) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each file to rewrite: its new text and the repairs it carries."""
    fixable: dict[str, list[Finding]] = {}
    for finding in run.findings:
        if finding.fixable and finding.id is not None:
            fixable.setdefault(finding.id, []).append(finding)
    plan = {}
    for node_id, found in fixable.items():
        f = run.files[node_id]
        assert f.node is not None
        meta, body = dict(f.node.meta), f.node.body
        codes = {x.code for x in found}
        if any(code.startswith("index.") for code in codes):
            body = _repair_entries(body, _index_issues(run, f))
            meta["coverage"] = render.coverage(body)
        if codes & {"payload.hash-drift", "payload.hash-missing"}:
            rel = _payload_rel(run.root, node_id, meta.get("payload"))
            assert rel is not None
            meta["payload_hash"] = _sha256(run, rel)
        meta["updated"] = render.today()
        done = [{"code": x.code, "id": x.id, "path": x.path, "message": x.message}
                for x in found]
        plan[f.path] = (render.render(meta, body), done)
    return plan


def _repair_entries(body: str, issues: list[_Issue]) -> str:
    """The body with extra, duplicate and misplaced lines gone, stale ones rewritten and
    missing ones added at the end of their section."""
    lines: list[str | None] = list(body.split("\n"))
    for issue in issues:
        if issue.line is None:
            continue
        if issue.kind == "stale" and issue.new is not None:
            lines[issue.line] = issue.new
        elif issue.kind in ("extra", "duplicate") or (issue.kind == "misplaced" and issue.new):
            lines[issue.line] = None
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(line for line in lines if line is not None))
    for issue in issues:
        if issue.kind in ("missing", "misplaced") and issue.new is not None:
            text = render.insert_entry(text, issue.section, issue.new)
    return text
