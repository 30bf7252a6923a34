"""The checks of the tree: parents that are branches, index entries and coverage."""

from __future__ import annotations

from .. import ids
from ..forest import coverage_text
from ..nodes import Node
from ..text import counted
from ..writes import render
from .model import (
    COVERAGE_SUFFIX,
    ENTRY,
    ENTRY_SECTIONS,
    ERROR,
    WARNING,
    EntryIssue,
    Finding,
    NodeFile,
    ValidationRun,
    is_private,
)

# -- the tree and the indexes ------------------------------------------------------


def check_tree(run: ValidationRun) -> None:
    """Every node's folder has an index, and every index is a branch."""
    for f in run.files.values():
        if f.node is None or not ids.is_index(f.id) or is_private(f.id):
            continue
        ntype = f.node.meta.get("type")
        if ntype != "branch":
            count = len(run.children.get(f.id, []))
            run.add(
                f,
                ERROR,
                "tree.parent-not-branch",
                f"{f.id} is the index of its folder ({count} children) but its type "
                f"is {ntype!r}, not 'branch'",
                "Set 'type: branch' (an _index.md is always a branch), or rename the file.",
                line=f.key_line("type") or 1,
            )
    for parent, kids in sorted(run.children.items()):
        if parent and parent not in run.files:
            first = run.files[sorted(kids)[0]]
            run.add(
                first,
                ERROR,
                "tree.missing-parent",
                f"{parent}.md is missing: the folder holds {counted(len(kids), 'node')} "
                "but no index",
                f"Create {parent}.md with 'type: branch' listing them (vine plant a branch).",
                line=None,
            )


def entry_spans(node: Node) -> list[tuple[str, int, int]]:
    """(section, start, end) body line spans of the two entry sections present."""
    out = []
    for name in ENTRY_SECTIONS:
        span = render.section_span(node.body, name)
        if span is not None:
            out.append((name, *span))
    return out


def _home(child: str) -> str:
    return render.SUB_BRANCHES if ids.is_index(child) else render.DIRECT_BANANAS


def _entry(run: ValidationRun, child: str, old_rest: str | None = None) -> str | None:
    """The entry line ``child`` should have (a branch keeps a coverage suffix it had)."""
    node = run.files[child].node
    if node is None:
        return None
    line = render.entry_line(child, node.summary)
    cover = node.meta.get("coverage")
    if old_rest and COVERAGE_SUFFIX.search(old_rest) and isinstance(cover, str):
        line += f" {coverage_text(cover.strip()).rstrip('.')}."
    return line


def index_issues(run: ValidationRun, f: NodeFile) -> list[EntryIssue]:
    """The entry problems of branch ``f``: extra, duplicate, misplaced, stale, missing."""
    assert f.node is not None
    kids = set(run.children.get(f.id, []))
    issues: list[EntryIssue] = []
    seen: set[str] = set()
    for section, start, end in entry_spans(f.node):
        for i in range(start + 1, end):
            m = ENTRY.match(f.node.lines[i])
            if not m:
                continue
            child, rest = m.group(1).strip(), m.group(2)
            if child not in kids:
                issues.append(EntryIssue("extra", child, section, i, None, child in run.files))
            elif child in seen:
                issues.append(EntryIssue("duplicate", child, section, i, None))
            elif section != _home(child):
                issues.append(EntryIssue("misplaced", child, _home(child), i, _entry(run, child)))
            elif _stale(run, child, rest):
                issues.append(EntryIssue("stale", child, section, i, _entry(run, child, rest)))
            seen.add(child)
    for child in sorted(kids - seen):
        if run.files[child].node is None:
            continue  # reported as unparseable; its entry needs its summary
        issues.append(EntryIssue("missing", child, _home(child), None, _entry(run, child)))
    return issues


def _stale(run: ValidationRun, child: str, rest: str) -> bool:
    node = run.files[child].node
    if node is None:
        return False
    want = render.entry_line(child, node.summary).split("]]", 1)[1].rstrip()
    have = rest.rstrip()
    return have != want and COVERAGE_SUFFIX.sub("", have) != want


_ISSUE_TEXT = {
    "extra": (
        "index.extra-entry",
        "lists {child}, which {why}",
        "Remove the entry line (plant and transplant keep indexes in step).",
    ),
    "duplicate": (
        "index.duplicate-entry",
        "lists {child} more than once",
        "Keep one entry line for it.",
    ),
    "misplaced": (
        "index.misplaced-entry",
        "lists {child} outside '## {section}'",
        "Move the entry under '## {section}'.",
    ),
    "stale": (
        "index.stale-summary",
        "the entry for {child} is not its summary",
        "Replace the line with: {new}",
    ),
    "missing": (
        "index.missing-entry",
        "does not list its child {child}",
        "Add under '## {section}': {new}",
    ),
}


def issue_finding(f: NodeFile, issue: EntryIssue) -> Finding:
    """The finding an index entry problem is reported as."""
    code, message, hint = _ISSUE_TEXT[issue.kind]
    why = "is not in this folder" if issue.exists else "does not exist"
    values = {"child": issue.child, "section": issue.section, "new": issue.new, "why": why}
    line = f.body_line(issue.line) if issue.line is not None else _section_line(f, issue.section)
    return Finding(
        WARNING,
        code,
        f.id,
        f.path,
        line,
        message.format(**values),
        hint.format(**values),
        issue.new is not None or issue.kind in ("extra", "duplicate"),
    )


def coverage_finding(f: NodeFile, body: str) -> Finding | None:
    """The finding for a ``coverage`` that is not what ``body``'s entry lines count."""
    assert f.node is not None
    have = f.node.meta.get("coverage")
    want = render.coverage(body)
    if have is not None and str(have).strip() == want:
        return None
    return Finding(
        WARNING,
        "index.coverage",
        f.id,
        f.path,
        f.key_line("coverage") or 1,
        f"coverage is {have!r}, the entry lines count {want!r}",
        f"Set 'coverage: \"{want}\"' (vine validate --fix does).",
        True,
    )


def check_index(run: ValidationRun, f: NodeFile) -> None:
    """The entry and coverage findings of one branch."""
    assert f.node is not None
    run.findings += [issue_finding(f, issue) for issue in index_issues(run, f)]
    found = coverage_finding(f, f.node.body)
    if found is not None:
        run.findings.append(found)


def _section_line(f: NodeFile, section: str) -> int | None:
    assert f.node is not None
    span = render.section_span(f.node.body, section)
    return f.body_line(span[0]) if span is not None else None
