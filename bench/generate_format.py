"""Small pieces of a synthetic forest's files: slugs, dates, YAML scalars and frontmatter,
and weighted draws."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import unicodedata
from functools import lru_cache

_SLUG_RUN = re.compile(r"[^a-z0-9]+")
_PLAIN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ_][\w .,/()'&+\-—]*")
_YAML_RESERVED = {"yes", "no", "true", "false", "on", "off", "null", "y", "n"}


def slugify(text: str, limit: int = 48) -> str:
    """Lowercase ASCII slug of ``[a-z0-9-]``, clipped at a hyphen near ``limit``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _SLUG_RUN.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > limit:
        cut = slug.rfind("-", 0, limit)
        slug = slug[: cut if cut > 8 else limit].strip("-")
    return slug or "node"


@lru_cache(maxsize=4096)
def day(ordinal: int) -> str:
    return dt.date.fromordinal(ordinal).isoformat()


def _yaml_scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    if _PLAIN.fullmatch(s) and not s.endswith(" ") and s.lower() not in _YAML_RESERVED:
        return s
    return json.dumps(s, ensure_ascii=False)


def render_frontmatter(fm: dict) -> str:
    """Block YAML in insertion order; keys ``created``/``updated`` are quoted dates."""
    out: list[str] = []
    for key, value in fm.items():
        if key in ("created", "updated"):
            out.append(f"{key}: '{value}'")
        elif isinstance(value, list):
            out.append(f"{key}:")
            for item in value:
                if isinstance(item, dict):
                    pairs = list(item.items())
                    out.append(f"- {pairs[0][0]}: {_yaml_scalar(pairs[0][1])}")
                    out.extend(f"  {k}: {_yaml_scalar(v)}" for k, v in pairs[1:])
                else:
                    out.append(f"- {_yaml_scalar(item)}")
        else:
            out.append(f"{key}: {_yaml_scalar(value)}")
    return "\n".join(out)


def render_node(fm: dict, body: str) -> bytes:
    return f"---\n{render_frontmatter(fm)}\n---\n\n{body.rstrip()}\n".encode()


def clip(text: str, limit: int = 200) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[:cut].rstrip(",;:—- ") + "."


def cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def weighted(rng: random.Random, pairs: list[tuple[str, int]]) -> str:
    return rng.choices([p[0] for p in pairs], [p[1] for p in pairs])[0]
