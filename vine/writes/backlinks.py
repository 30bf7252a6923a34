"""What points at a node, and rewriting it: the links in other nodes' frontmatter (the
edges, which anchor a node against prune), the ``[[wikilinks]]`` in bodies, and the
entry lines of the indexes that list it. Shared by prune and transplant."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .. import bodyindex
from ..forest import Forest
from ..indexing import clean_target
from ..text import TOKEN, fold
from . import render

# How many anchors an E_ANCHORED names (the count is always exact).
ANCHORS_SHOWN = 20
# A wikilink: ``[[id]]``, ``[[id|text]]`` or ``[[id#anchor]]`` (group 1 is the target).
WIKILINK = re.compile(r"\[\[([^\]\[|#\n]+)((?:[|#][^\]\n]*)?)\]\]")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A frontmatter link's target as it may be written in any YAML form: ``target: kb/x``,
# ``{rel: r, target: "[[kb/x]]"}`` (group 1 is the target).
_TARGET = re.compile(r"\btarget\s*:\s*[\"']?(?:\[\[)?\s*([^\s\"'\]\[{},|#]+)")


def anchors(forest: Forest, node_id: str) -> list[tuple[str, str]]:
    """``(source, rel)`` of every link another node holds to ``node_id``, by source."""
    return [
        (src, rel)
        for src, rel in forest.catalog.conn.execute(
            "SELECT src, rel FROM edges WHERE dst = ? AND src != ? ORDER BY src, ord",
            (node_id, node_id),
        )
    ]


def unparsed_mentions(forest: Forest, node_id: str) -> list[tuple[str, str]]:
    """``(path, reason)`` of every file the catalog skipped (its frontmatter cannot be
    parsed) whose text names ``node_id`` as a link ``target:`` or a ``[[wikilink]]``.

    Such a file is no node, so it holds no edge and no write can edit its links; read
    as plain text, it still says where it points."""
    out = []
    for problem in forest.catalog.problems():
        if problem.path == node_id + ".md":
            continue
        try:
            text = (forest.root / problem.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if node_id not in text:
            continue
        found = [m.group(1) for m in WIKILINK.finditer(text)]
        found += [m.group(1) for m in _TARGET.finditer(text)]
        if any(clean_target(t) == node_id for t in found):
            out.append((problem.path, problem.reason))
    return out


def children(forest: Forest, index_id: str) -> list[str]:
    """Every node below a branch (its whole subtree, itself excluded)."""
    if index_id == "_index":
        return [
            r[0]
            for r in forest.catalog.conn.execute(
                "SELECT id FROM nodes WHERE id != '_index' ORDER BY id"
            )
        ]
    start = index_id[: -len("_index")]
    return [
        r[0]
        for r in forest.catalog.conn.execute(
            "SELECT id FROM nodes WHERE id >= ? AND id < ? AND id != ? ORDER BY id",
            (start, start[:-1] + chr(ord("/") + 1), index_id),
        )
    ]


def wikilink_sources(forest: Forest, node_id: str) -> list[str]:
    """Nodes (``node_id`` itself included) whose body holds a wikilink to ``node_id``.

    The body index narrows the candidates to bodies holding every token of the id
    (a wikilink's brackets and slashes are not tokens); each candidate's file decides.
    """
    folded = fold(node_id)
    tokens = list(dict.fromkeys(TOKEN.findall(folded)))
    conn = forest.catalog.conn
    if tokens and folded.isascii():
        expr = " AND ".join('"' + t + '"' for t in tokens)
        gens = sorted({r >> bodyindex.LINE_BITS for r in bodyindex.match_rowids(conn, expr)})
        candidates = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM nodes WHERE body_gen IN (SELECT value FROM json_each(?)) "
                "ORDER BY id",
                (json.dumps(gens),),
            )
        ]
    else:
        candidates = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id")]
    out = []
    for candidate in candidates:
        try:
            body = forest.read(candidate).body
        except Exception:  # noqa: BLE001 - an unreadable node holds no link we can rewrite
            continue
        if node_id in body and rewrite_wikilinks(body, node_id, node_id)[1:] != (0, 0):
            out.append(candidate)
    return out


def _entry_line(line: str, target: str) -> bool:
    m = WIKILINK.match(line, 2) if line.startswith("- [[") else None
    return m is not None and clean_target(m.group(1)) == target


def rewrite_wikilinks(body: str, old: str, new: str) -> tuple[str, int, int]:
    """``body`` with every wikilink to ``old`` pointing at ``new`` instead (its text or
    anchor kept; fenced code left alone): the new body, how many links were rewritten
    in prose, and how many in index entry lines (``- [[id]] — ...``)."""
    if "[[" not in body:
        return body, 0, 0
    lines = body.split("\n")
    fence: str | None = None
    prose = entries = 0
    for i, line in enumerate(lines):
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        if "[[" not in line or old not in line:
            continue
        count = 0

        def swap(m: re.Match[str]) -> str:
            nonlocal count
            if clean_target(m.group(1)) != old:
                return m.group(0)
            count += 1
            return f"[[{new}{m.group(2)}]]"

        entry = _entry_line(line, old)
        lines[i] = WIKILINK.sub(swap, line)
        if entry:
            entries += 1
            prose += count - 1
        else:
            prose += count
    return "\n".join(lines), prose, entries


def retarget(links: Any, old: str, new: str | None) -> tuple[list[Any], int]:
    """Frontmatter ``links`` with those pointing at ``old`` retargeted to ``new`` (or
    dropped, for ``None``), and how many matched. A retargeted link that duplicates
    one already there is dropped too: a node holds each (rel, target) once."""
    if not isinstance(links, list):
        return links, 0
    out: list[Any] = []
    seen: set[tuple[Any, Any]] = set()
    matched = 0
    for link in links:
        if isinstance(link, dict) and clean_target(link.get("target")) == old:
            matched += 1
            if new is None:
                continue
            link = {**link, "target": new}
        if isinstance(link, dict):
            key = (link.get("rel"), clean_target(link.get("target")))
            if key in seen:
                continue
            seen.add(key)
        out.append(link)
    return out, matched


@dataclass
class Doc:
    """A node file being edited by one write: its frontmatter and body, and whether
    they changed."""

    id: str
    meta: dict[str, Any]
    body: str
    changed: bool = False

    def text(self) -> str:
        """The file as it will be written."""
        return render.render(self.meta, self.body)


@dataclass
class Docs:
    """The node files one write edits, each read once however many edits it gets."""

    forest: Forest
    docs: dict[str, Doc] = field(default_factory=dict)

    def get(self, node_id: str) -> Doc:
        """The document of ``node_id`` (read on first use)."""
        doc = self.docs.get(node_id)
        if doc is None:
            node = self.forest.read(node_id)
            doc = Doc(node_id, dict(node.meta), node.body)
            self.docs[node_id] = doc
        return doc

    def changed(self) -> list[Doc]:
        """The documents that changed, marked updated today."""
        out = []
        for doc in self.docs.values():
            if doc.changed:
                doc.meta["updated"] = render.today()
                out.append(doc)
        return out


def drop_entry(doc: Doc, node_id: str) -> None:
    """Remove an index's entry lines for ``node_id`` and re-count its coverage."""
    body = render.entry_pattern(node_id).sub("", doc.body)
    if body == doc.body:
        return
    doc.body = re.sub(r"\n{3,}", "\n\n", body)
    doc.meta["coverage"] = render.coverage(doc.body)
    doc.changed = True


def shown(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Anchors as an envelope names them: at most :data:`ANCHORS_SHOWN`."""
    return [{"source": s, "rel": r} for s, r in pairs[:ANCHORS_SHOWN]]
