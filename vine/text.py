"""Text folding and tokenizing shared by the catalog, locate and sniff."""

from __future__ import annotations

import codecs
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
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _fold_char(match: re.Match[str]) -> str:
    return chr(_FOLD[ord(match.group())])


def fold(text: str) -> str:
    """Case- and diacritic-blind form of ``text`` with positions kept 1:1."""
    if text.isascii():
        return text.lower()
    # Fold the (rare) non-ASCII characters one by one, then lowercase in C: a folded
    # character is already lowercase, so the result keeps the text's length.
    return _NON_ASCII.sub(_fold_char, text).lower()


# Runs of letters and digits: the tokens of the body index, searched by sniff.
TOKEN = re.compile(r"[^\W_]+")


class _GapTable(dict[int, int]):
    """``str.translate`` table: letters, digits and newlines stay, all else is a space."""

    def __missing__(self, code: int) -> int:
        char = chr(code)
        keep = char == "\n" or char.isalnum()
        self[code] = code if keep else 32
        return self[code]


_GAPS = _GapTable()
for _code in range(128):
    _GAPS[_code]  # noqa: B018 - prefill the ASCII range


_ASCII_GAPS = bytes(c if (chr(c).isalnum() or c == 10) else 32 for c in range(128)) + bytes(
    range(128, 256)
)


class _IndexTable(dict[int, int]):
    """``str.translate`` table from raw text to index text in one pass: a letter or
    digit becomes its folded form, a newline stays, anything else is a space."""

    def __missing__(self, code: int) -> int:
        char = chr(code)
        if char == "\n":
            out = code
        else:
            folded = _FOLD[code]
            out = folded if chr(folded).isalnum() else 32
        self[code] = out
        return out


_INDEX = _IndexTable()


class _NeedsGeneralPath(Exception):
    """A letter or digit beyond Latin-1: the text takes the general path."""


def _gap_or_give_up(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)  # registered for encoding only
    bad = error.object[error.start : error.end]
    if any(ch.isalnum() for ch in bad):
        raise _NeedsGeneralPath
    return " " * len(bad), error.end


codecs.register_error("monkeyllm-index", _gap_or_give_up)


def _latin1_table() -> tuple[bytes, str]:
    table = bytearray(range(256))
    general = []
    for code in range(256):
        char = chr(code)
        if char == "\n":
            continue
        if char.isalnum():
            folded = _FOLD[code]
            if folded < 256:
                table[code] = folded
            else:
                general.append(char)
        else:
            table[code] = 32
    return bytes(table), "".join(general)


_LATIN1, _LATIN1_GENERAL = _latin1_table()


def index_text(text: str) -> str:
    """The folded text's tokens, line by line, separated by spaces (a line's count and
    order kept): what the body index stores for ``text``.

    Same tokens as ``gaps_to_spaces(fold(text))``. Text within Latin-1 (with stray
    punctuation beyond it) takes C-speed byte translation; other letters take the
    general path.
    """
    if text.isascii():
        return text.encode("ascii").lower().translate(_ASCII_GAPS).decode("ascii")
    if any(ch in text for ch in _LATIN1_GENERAL):
        return gaps_to_spaces(fold(text))
    try:
        raw = text.encode("latin-1", "monkeyllm-index")
    except _NeedsGeneralPath:
        return gaps_to_spaces(fold(text))
    return raw.translate(_LATIN1).decode("latin-1")


def gaps_to_spaces(folded: str) -> str:
    """The text with every character but letters, digits and newlines turned into a space.

    Its whitespace-separated words are exactly the :data:`TOKEN` runs, line by line.
    """
    if folded.isascii():
        return folded.encode("ascii").translate(_ASCII_GAPS).decode("ascii")
    return folded.translate(_GAPS)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` in the form the count needs: ``"1 node"``, ``"2 nodes"``,
    ``"1 sub-branch"``, ``"3 sub-branches"`` (``plural`` when adding ``s`` is wrong)."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {plural or noun + 's'}"
