"""Text folding and tokenizing shared by the catalog, locate and sniff."""

from __future__ import annotations

import re
import unicodedata


class _FoldTable(dict[int, int]):
    """``str.translate`` table: each character to the first code point of its
    NFD form, lowercased, so folding never changes a string's length."""

    def __missing__(self, code: int) -> int:
        base = unicodedata.normalize("NFD", chr(code))[0].lower()[0]
        self[code] = ord(base)
        return ord(base)


_FOLD = _FoldTable()


def fold(text: str) -> str:
    """Case- and diacritic-blind form of ``text`` with positions kept 1:1."""
    if text.isascii():
        return text.lower()
    return text.translate(_FOLD)


# Runs of letters and digits: the tokens of the body index, searched by sniff.
TOKEN = re.compile(r"[^\W_]+")


def index_tokens(folded_line: str) -> list[str]:
    """The body-index tokens of one folded line."""
    return TOKEN.findall(folded_line)


def fts_query(text: str) -> str:
    """An FTS5 expression that searches ``text`` literally, so no input is a syntax
    error: each whitespace word quoted (``"`` doubled) and OR-joined.

    A word with punctuation (``NF-4412``, ``col:x``) is searched as a phrase and
    also by its parts, so the exact form ranks first and loose forms still match.
    """
    terms: list[str] = []
    for word in text.split():
        parts = TOKEN.findall(word)
        if not parts:
            continue
        terms.append('"' + word.replace('"', '""') + '"')
        if len(parts) > 1 or parts[0] != word:
            terms.extend('"' + p + '"' for p in parts)
    return " OR ".join(dict.fromkeys(terms))
