"""Words across the two languages: what lets a question in Portuguese find a node written
in English (``prazo`` -> ``deadline``) and the other way round, with no model.

The pairs come from ``lexicon-en-pt.tsv`` beside this module: general vocabulary of
organisations' notes (people and roles, money, contracts, operations, time, places and
everyday words), one ``english<TAB>portuguese`` pair a line, written for this project.
A query word is looked up by its stems in its own language, so ``prazos`` reaches the
entry for ``prazo``; what it gives are the translations' stem tokens in the other
language (``0deadlin``), which the catalog's stem columns hold, so a node reached only
through a translation ranks as a stem match does: below an exact word.

Codes, numbers, short tokens and function words are never translated, and a word gets at most
``TARGETS_MAX`` translations (the most usual first, as the lexicon lists them).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from functools import lru_cache
from os.path import commonprefix
from pathlib import Path

from .language import ENGLISH, PORTUGUESE
from .stems import PREFIX, forms_start, stemmable, stems
from .text import fold

LEXICON = Path(__file__).with_name("lexicon-en-pt.tsv")
TARGETS_MAX = 3
OTHER = {"en": "pt", "pt": "en"}
# Function words of either language weigh nothing in a query: neither a word to
# translate nor a translation.
_FUNCTION = ENGLISH | PORTUGUESE

# lang -> (headword -> its translations, the headwords sorted).
_Index = dict[str, tuple[dict[str, tuple[str, ...]], list[str]]]
_index: _Index | None = None
_lock = threading.Lock()


def _load(path: Path = LEXICON) -> _Index:
    """Both directions of the lexicon: each folded headword's translations, and the
    headwords in order (for finding those that start like a word)."""
    words: dict[str, dict[str, list[str]]] = {"en": {}, "pt": {}}
    try:
        text = fold(path.read_text(encoding="utf-8"))
    except OSError:
        return {"en": ({}, []), "pt": ({}, [])}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        en, _, pt = line.partition("\t")
        en, pt = en.strip(), pt.strip()
        if not en or not pt or en == pt or en in _FUNCTION or pt in _FUNCTION:
            continue
        for lang, word, other in (("en", en, pt), ("pt", pt, en)):
            targets = words[lang].setdefault(word, [])
            if other not in targets:
                targets.append(other)
    return {
        lang: ({w: tuple(t) for w, t in table.items()}, sorted(table))
        for lang, table in words.items()
    }


def _table() -> _Index:
    global _index
    if _index is None:
        with _lock:
            if _index is None:
                _index = _load()
    return _index


def headwords(word: str, lang: str) -> list[str]:
    """The lexicon's entries a folded word in ``lang`` stands for: itself when it is
    one, else the entries sharing its stem that share the most letters with it from
    the start (``prazos`` -> ``prazo``, not ``prazer``, which Snowball stems alike)."""
    table, ordered = _table()[lang]
    if word in table:
        return [word]
    roots = set(stems(word, lang))
    if not roots:
        return []
    start = forms_start(roots)
    found = []
    for entry in ordered[bisect_left(ordered, start) :]:
        if not entry.startswith(start):
            break
        if roots & set(stems(entry, lang)):
            found.append(entry)
    if not found:
        return []
    best = max(len(commonprefix([word, w])) for w in found)
    return [w for w in found if len(commonprefix([word, w])) == best]


@lru_cache(maxsize=16384)
def translations(word: str, langs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``(language, word)`` of what a folded query word translates to, for a word
    written in one of ``langs``: at most ``TARGETS_MAX`` per source language (kept
    once looked up: the lexicon is the package's and never changes)."""
    if not stemmable(word) or word in _FUNCTION:
        return ()
    out: list[tuple[str, str]] = []
    for lang in langs:
        table = _table()[lang][0]
        targets: list[str] = []
        for entry in headwords(word, lang):
            targets += [t for t in table[entry] if t not in targets and t != word]
        out.extend((OTHER[lang], t) for t in targets[:TARGETS_MAX])
    return tuple(out)


def translated_stems(word: str, langs: tuple[str, ...]) -> list[str]:
    """The prefixed stem tokens (``0deadlin``) of a query word's translations, each in
    its own language, as the catalog's stem columns hold them."""
    out: list[str] = []
    for lang, target in translations(word, langs):
        for part in target.split("-"):
            out.extend(PREFIX[lang] + s for s in stems(part, lang))
    return list(dict.fromkeys(out))
