"""Passport text: summaries, titles, slugs, column names and aliases."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from .. import budget
from ..errors import VineError
from ..writes import render, rules
from .model import SUMMARY_CHARS

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
            break  # the lead: the prose before the first section
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
    return fit_summary(out, title)


def fit_summary(summary: str, title: str) -> str:
    """A summary that passes the rules, else the fallback."""
    summary = " ".join(summary.split())
    if summary and summary_problem(summary):
        summary = f"{title}: {summary}"
    if not summary or summary_problem(summary):
        summary = f"{' '.join(title.split())[:80]}: adopted, pending curation."
    return summary


def summary_problem(summary: str) -> bool:
    """Whether a summary breaks the summary rules or the summary budget."""
    try:
        rules.check_summary(summary)
    except VineError:
        return True
    return budget.tokens(summary) > budget.SUMMARY_MAX


def first_h1(body: str) -> str | None:
    """The text of a body's first level-one heading, if any."""
    for line in body.split("\n"):
        match = re.match(r"^#[ \t]+(.+?)[ \t#]*$", line)
        if match:
            return match.group(1).strip()
    return None


def with_title(title: str, body: str) -> str:
    """A body that opens with a heading: ``# title`` above one that has none."""
    text = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if not text.strip():
        return f"# {title}\n"
    if text.startswith("#"):
        return text + "\n"
    return f"# {title}\n\n{text}\n"


def clean_str(value: Any) -> str | None:
    """A stripped non-empty string, else None."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def keep_notes(new_body: str, old_body: str) -> str:
    """A refreshed dataset body keeps the operator's ``## Notes``."""
    span = render.section_span(old_body, "Notes")
    if span is None:
        return new_body
    notes = "\n".join(old_body.split("\n")[span[0] : span[1]]).strip("\n")
    return new_body.rstrip("\n") + "\n\n" + notes + "\n"


def title_digest(title: str, summary: str) -> str:
    """What ingest wrote as title and summary: equal later means nobody curated them."""
    return hashlib.sha256(f"{title}\0{summary}".encode()).hexdigest()[:16]


def body_digest(body: str, node_type: Any) -> str:
    """What ingest wrote as a node's body, as the file will read back (a dataset's
    ``## Notes`` left out: they are the operator's, kept on every refresh). Equal later
    means nobody edited the body."""
    text = body.strip("\n").rstrip() if body.strip() else ""
    if node_type == "dataset":
        span = render.section_span(text, "Notes")
        if span is not None:
            lines = text.split("\n")
            text = "\n".join(lines[: span[0]] + lines[span[1] :]).strip("\n").rstrip()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
        out.append(unique_name(name, out))
    return out


def unique_name(name: str, taken: Any) -> str:
    """``name``, or ``name_2``, ``name_3``... the first that ``taken`` does not hold."""
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
    return [a[: rules.ALIAS_CHARS] for a in out if a.strip()]


def alias_union(first: list[Any], second: list[Any]) -> list[str]:
    """Both alias lists merged in order, without repeats or blanks, within the alias limit."""
    merged = [a for a in dict.fromkeys([*first, *second]) if isinstance(a, str) and a.strip()]
    return merged[: rules.MAX_ALIASES]
