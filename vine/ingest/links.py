"""Wikilinks as the source meant them: ``[[pao-de-queijo]]`` (an Obsidian-style short
name) and ``[[recipes/pao-de-queijo]]`` (a path in the source folder) become links to
the node that file became, ``[[notes/recipes/pao-de-queijo|pao-de-queijo]]``, when
exactly one file matches; the rest are listed for the report."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .model import NOTE_EXT, Plan

_WIKILINK = re.compile(r"(!?)\[\[([^\]\[|#\n]+)((?:#[^\]|\n]*)?)((?:\|[^\]\n]*)?)\]\]")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _path_of(uri: str) -> str:
    return unquote(urlparse(uri).path)


class Files:
    """The source files a forest knows (this run's and earlier ones'), by path."""

    def __init__(self, ids_by_uri: dict[str, str]) -> None:
        self.ids = {_path_of(uri): node_id for uri, node_id in ids_by_uri.items()}
        self.stems: dict[str, list[str]] = {}
        for path in self.ids:
            stem = posixpath.splitext(posixpath.basename(path))[0].casefold()
            self.stems.setdefault(stem, []).append(path)

    def at(self, path: str) -> str | None:
        """The file at ``path`` (any note extension left out), or None."""
        if path in self.ids:
            return path
        for ext in NOTE_EXT:
            if path + ext in self.ids:
                return path + ext
        return None

    def named(self, name: str, root: str) -> list[str]:
        """Files under ``root`` whose name (without extension) is ``name`` (case-blind)
        or whose path ends with ``name`` (a partial path)."""
        leaf = posixpath.basename(name)
        stem = posixpath.splitext(leaf)[0] if posixpath.splitext(leaf)[1] else leaf
        found = [p for p in self.stems.get(stem.casefold(), []) if p.startswith(root + "/")]
        if "/" in name:
            tail = "/" + name.strip("/").casefold()
            found = [
                p
                for p in found
                if posixpath.splitext(p)[0].casefold().endswith(tail) or p.casefold().endswith(tail)
            ]
        return sorted(found)


def resolve(
    plans: list[Plan], files: Files, is_node: Callable[[str], bool]
) -> list[dict[str, Any]]:
    """Rewrite every ingested body's wikilinks to the ids their files became; the
    links that name no file, or several, as report entries (``path``, ``id``, ``link``,
    ``reason``). Links inside code, and links that are node ids already, stay."""
    unresolved: list[dict[str, Any]] = []
    for plan in plans:
        if (
            plan.item is None
            or "[[" not in plan.body
            or plan.meta.get("type") in ("dataset", "media")
        ):
            continue
        here = os.path.abspath(plan.item.path)
        root = here[: len(here) - len(plan.item.rel)].rstrip("/") or "/"
        folder = os.path.dirname(here)

        def target(
            match: re.Match[str], _folder: str = folder, _root: str = root, _plan: Plan = plan
        ) -> str:
            bang, name, anchor, label = match.groups()
            name = name.strip()
            if not name or is_node(name.removesuffix(".md")):
                return match.group(0)
            found, problem = _find(files, name, _folder, _root)
            if found is None:
                unresolved.append(
                    {
                        "path": _plan.item.shown if _plan.item else _plan.id,
                        "id": _plan.id,
                        "link": match.group(0),
                        "reason": problem,
                    }
                )
                return match.group(0)
            node_id = files.ids[found]
            return f"{bang}[[{node_id}{anchor}{label or '|' + name}]]"

        plan.body = _outside_code(plan.body, partial(_WIKILINK.sub, target))
    return unresolved


def _find(files: Files, name: str, folder: str, root: str) -> tuple[str | None, str]:
    """The one file ``name`` means, first as a path (from the note's folder, then from
    the source folder), then as a short name; else None and why."""
    for base in (folder, root):
        hit = files.at(posixpath.normpath(posixpath.join(base, name)))
        if hit is not None and hit.startswith(root + "/"):
            return hit, ""
    named = files.named(name, root)
    if len(named) == 1:
        return named[0], ""
    if named:
        shown = ", ".join(files.ids[p] for p in named[:5])
        return None, f"ambiguous: {len(named)} files are named so ({shown})"
    return None, "no file of the source is named so"


def _outside_code(body: str, change: Callable[[str], str]) -> str:
    """``body`` with ``change`` applied to its text outside fenced blocks and inline
    code spans (an example there is not a link)."""
    out: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if marker:
            fence = marker.group(1)
            out.append(line)
            continue
        parts = re.split(r"(`+[^`]*`+)", line)
        out.append("".join(p if p.startswith("`") else change(p) for p in parts))
    return "\n".join(out)


def known_files(origins: dict[str, str], plans: list[Plan]) -> Files:
    """The forest's source files: earlier ingests' (their ``origin``) and this run's."""
    ids = dict(origins)
    for plan in plans:
        if plan.item is not None:
            ids[Path(os.path.abspath(plan.item.path)).as_uri()] = plan.id
    return Files(ids)
