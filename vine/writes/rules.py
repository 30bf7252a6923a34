"""Validation shared by plant and graft: frontmatter fields, summaries, links, ids."""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import budget
from ..dialect import Dialect
from ..errors import FrontmatterError, SchemaError

ENTITY_KINDS = ("person", "organization", "product", "place", "other")
PAYLOAD_TYPES = ("sqlite", "pdf", "docx", "image", "audio")
SOURCES = ("manual", "ingest", "agent")
MAX_LINKS = 50
# File systems cap a name at 255 bytes (the engine adds ".md" and temporary prefixes).
MAX_SEGMENT_CHARS = 200
MAX_ID_CHARS = 1000
MAX_ALIASES = 16
ALIAS_CHARS = 80
_SEGMENT = re.compile(r"^[a-z0-9._-]+$")
_ANTI = ("this document describes", "file containing")


def check_new_id(raw: Any) -> str:
    """A planted id: ``/``-joined segments of ``[a-z0-9._-]``, no ``..``."""
    if not isinstance(raw, str) or not raw.strip():
        raise FrontmatterError("id: a non-empty string is required")
    node_id = raw.strip().strip("/")
    if node_id.endswith(".md"):
        node_id = node_id[:-3]
    parts = node_id.split("/")
    if len(node_id) > MAX_ID_CHARS or any(len(p) > MAX_SEGMENT_CHARS for p in parts):
        raise SchemaError(
            f"id {node_id[:60]!r}... is too long",
            hint=f"Keep an id under {MAX_ID_CHARS} characters and each "
            f"segment under {MAX_SEGMENT_CHARS} (file names have limits).",
        )
    bad = [p for p in parts if p in ("", ".", "..") or not _SEGMENT.match(p)]
    if bad or (parts[-1] == "_index" and len(parts) == 1 and False):
        raise SchemaError(
            f"id {raw!r} is not a valid node id",
            hint="Ids are /-joined segments of lowercase letters, digits, "
            "'.', '_' and '-', like 'sales/exchange-policy-2027'.",
        )
    if parts[0] in ("_derived", "_assets", ".git") or any(p.startswith(".") for p in parts):
        raise SchemaError(f"id {raw!r} is inside a private folder")
    return node_id


def check_summary(summary: Any, *, length: bool = True) -> str:
    """The scent rules: non-empty, at most 60 tokens, no boilerplate opening."""
    if not isinstance(summary, str) or not summary.strip() or "\x00" in summary:
        raise FrontmatterError(
            "summary: a non-empty string (no NUL) is required",
            hint="1 to 3 sentences saying what the node holds.",
        )
    if length and budget.tokens(summary) > budget.SUMMARY_MAX:
        raise FrontmatterError(
            f"summary: {budget.tokens(summary)} tokens, the limit is {budget.SUMMARY_MAX}",
            hint="Keep the scent to 1-3 sentences; the body holds the rest.",
        )
    if summary.strip().lower().startswith(_ANTI):
        raise FrontmatterError(
            f"summary: must say what the node holds, not start with '{summary.strip()[:24]}...'",
            hint="Lead with the subject: 'Return windows per channel...'.",
        )
    return summary


def check_title(title: Any) -> str:
    """A non-empty string title."""
    if not isinstance(title, str) or not title.strip() or "\x00" in title:
        raise FrontmatterError("title: a non-empty string (no NUL) is required")
    return title


def check_confidence(value: Any) -> float:
    """A number in 0..1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise FrontmatterError(f"confidence: a number from 0 to 1 is required, got {value!r}")
    return float(value)


def check_tags(value: Any) -> list[str]:
    """A list of non-empty strings."""
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise FrontmatterError("tags: a list of non-empty strings is required")
    return value


def check_aliases(value: Any) -> list[str]:
    """At most 16 non-empty strings of at most 80 characters."""
    if (
        not isinstance(value, list)
        or len(value) > MAX_ALIASES
        or not all(isinstance(a, str) and a.strip() and len(a) <= ALIAS_CHARS for a in value)
    ):
        raise SchemaError(
            f"aliases: at most {MAX_ALIASES} non-empty strings of at most {ALIAS_CHARS} characters"
        )
    return value


def check_origin(value: Any) -> str:
    """One URI: at most 2048 characters, no spaces or control characters."""
    if (
        not isinstance(value, str)
        or not value
        or len(value) > 2048
        or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in value)
    ):
        raise SchemaError(
            "origin: one URI of at most 2048 characters, with no spaces or control characters"
        )
    return value


def check_links(links: Any, dialect: Dialect) -> list[dict[str, Any]]:
    """``[{rel, target, ...}]`` with declared rels and at most 50 links."""
    if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
        raise SchemaError("links: a list of {rel, target} objects is required")
    out = []
    for link in links:
        rel, target = link.get("rel"), link.get("target")
        if not isinstance(rel, str) or not isinstance(target, str) or not target.strip():
            raise SchemaError("links: every link needs a string rel and target")
        if rel not in dialect.rels:
            raise SchemaError(
                f"unknown rel: {rel}", hint="Declared rels: " + ", ".join(dialect.rels) + "."
            )
        if "confidence" in link:
            check_confidence(link["confidence"])
        out.append({**link, "target": target.strip().strip("/").removesuffix(".md")})
    if len(out) > MAX_LINKS:
        raise SchemaError(f"a node holds at most {MAX_LINKS} links, got {len(out)}")
    return out


def check_enums(meta: Mapping[str, Any]) -> None:
    """entity_kind (required on entities), payload_type and source."""
    if meta.get("type") == "entity" and meta.get("entity_kind") not in ENTITY_KINDS:
        raise FrontmatterError(
            "entity_kind: one of " + ", ".join(ENTITY_KINDS) + " is required on an entity"
        )
    if "entity_kind" in meta and meta["entity_kind"] not in ENTITY_KINDS:
        raise FrontmatterError("entity_kind: one of " + ", ".join(ENTITY_KINDS))
    if "payload_type" in meta and meta["payload_type"] not in PAYLOAD_TYPES:
        raise FrontmatterError("payload_type: one of " + ", ".join(PAYLOAD_TYPES))
    if "source" in meta and meta["source"] not in SOURCES:
        raise FrontmatterError("source: one of " + ", ".join(SOURCES))


def dangling(
    root: Path, links: Iterable[Mapping[str, Any]], planted: Container[str] = ()
) -> list[str]:
    """The targets of ``links`` that are no node's id (nor among ``planted``, written in
    the same commit). The format keeps such links; ``vine validate`` reports each one
    (``links.dangling``) until the node exists."""
    out: list[str] = []
    for link in links:
        target = link.get("target")
        if isinstance(target, str) and target not in planted and target not in out:
            try:
                there = (root / (target + ".md")).is_file()
            except (OSError, ValueError):  # a name no file can have (too long, a NUL)
                there = False
            if not there:
                out.append(target)
    return out


def say_dangling(out: dict[str, Any], targets: list[str]) -> dict[str, Any]:
    """Name the dangling targets of a write in its response, with a hint."""
    if not targets:
        return out
    out["dangling"] = targets
    names = ", ".join(repr(t) for t in targets)
    said = (
        f"Linked to {names}, which is not a node yet: the link is kept, and "
        "`vine validate` reports it (links.dangling) until that node is planted."
    )
    out["hint"] = f"{out['hint']} {said}" if out.get("hint") else said
    return out
