"""Word forms: the Snowball stems that let ``deadlines`` find ``deadline`` and ``prazos``
find ``prazo``, in English and Portuguese.

Stems come from PyStemmer (the Snowball project's own C stemmers: the same algorithms
as the pure-Python snowballstemmer, about a hundred times faster, which matters when a
catalog build stems every word of every title and summary). A word is stemmed by each
language's stemmer on its own; a forest mixes both languages, often in one node.

Everything here works on folded text (lowercase, accents dropped), as the catalog and
sniff do, with one repair first: Portuguese typed without accents (``devolucoes``) gets
the accents of its common endings back before stemming, so it reaches the same stem as
``devoluções``. Tokens that name something exactly (a digit inside, or a short token)
are never stemmed. The Portuguese stemmer runs only where Portuguese is written
(:func:`node_languages`, :func:`search_languages`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from .language import LANGUAGES, writes_portuguese
from .text import fold

# Language marks of stem tokens in the catalog's stem columns: one column holds both
# languages' stems of a field, told apart by a leading digit, which no word a query
# searches for starts a stem with (so a query needs no column filter to keep words and
# stems apart).
PREFIX = {"en": "0", "pt": "1"}
MIN_LENGTH = 3  # shorter tokens are kept as they are
EVIDENCE = 3  # telling words a title and summary need to name a language

_SNOWBALL = {"en": "english", "pt": "portuguese"}
_local = threading.local()

# Portuguese endings that lose their accents when typed on a keyboard without them, in
# the order they are tried (longest first).
_PT_ENDINGS = (("coes", "ções"), ("cao", "ção"), ("oes", "ões"), ("aes", "ães"), ("ao", "ão"))
_WORD = re.compile(r"[^\W_]+")
_CODED = re.compile(r"\S*\d\S*")
# Whether a text holds a digit at all: most titles, summaries and headers hold none, and
# for them _CODED's scan (which tries every position of every word) is skipped.
_DIGIT = re.compile(r"\d")
# Each word's stem tokens, per set of languages, as a catalog build meets them.
_STEMMED: dict[tuple[str, ...], dict[str, str]] = {}
_STEMMED_MAX = 200_000
_SHORT = 120


def _stemmer(lang: str) -> Any:
    """This thread's stemmer for ``lang`` (Snowball stemmers keep state between calls)."""
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    stemmer = stemmers.get(lang)
    if stemmer is None:
        import Stemmer

        stemmer = stemmers[lang] = Stemmer.Stemmer(_SNOWBALL[lang])
    return stemmer


def stemmable(token: str) -> bool:
    """Whether a folded token is a word to stem (not a code, a number or a short token)."""
    return len(token) >= MIN_LENGTH and token.isalpha()


def _accented(word: str) -> str:
    """A folded Portuguese word with the accents of its ending restored, when it has one
    of the endings keyboards drop them from (``devolucoes`` -> ``devoluções``)."""
    for plain, accented in _PT_ENDINGS:
        if word.endswith(plain) and len(word) > len(plain) + 1:
            return word[: -len(plain)] + accented
    return word


@lru_cache(maxsize=65536)
def _stems(word: str, lang: str) -> tuple[str, ...]:
    stemmer = _stemmer(lang)
    folded = fold(word)
    if not stemmable(folded):
        return ()
    if lang == "en":
        return (stemmer.stemWord(folded),)
    out = {fold(stemmer.stemWord(word)), fold(stemmer.stemWord(_accented(folded)))}
    return tuple(sorted(out))


def stems(word: str, lang: str) -> tuple[str, ...]:
    """The folded stems of one word (a token of letters, any case, accents or not) in one
    language; empty for a code, a number or a token under three letters.

    Portuguese gives up to two: the stem of the word as written and of the word with the
    accents of its ending restored, so ``devolução``, ``devoluções`` and ``devolucoes``
    meet.
    """
    return _stems(word.lower(), lang)


def stem_text(text: str, langs: tuple[str, ...] = LANGUAGES) -> str:
    """Every word of ``text`` as its stem tokens in ``langs``, each prefixed by its
    language's digit (``Deadlines`` -> ``0deadlin 1deadlin``): what a catalog stem
    column holds. Codes keep no stems: a word with a digit, a word written in capitals
    (``ICMS``), and every part of a word with a digit and punctuation (``SKU-12``)."""
    if len(text) <= _SHORT:
        return _stem_short(text, langs)
    return _stem_text(text, langs)


@lru_cache(maxsize=8192)
def _stem_short(text: str, langs: tuple[str, ...]) -> str:
    # Tags, aliases and headers repeat across a forest: short texts are remembered whole.
    return _stem_text(text, langs)


def _stem_text(text: str, langs: tuple[str, ...]) -> str:
    if not text:
        return ""
    coded: set[str] = set()
    if _DIGIT.search(text):
        for chunk in _CODED.findall(text):
            parts = _WORD.findall(chunk)
            if len(parts) > 1:
                coded.update(parts)
    known = _STEMMED.setdefault(langs, {})
    out = []
    for word in _WORD.findall(text):
        if word in coded:
            continue
        got = known.get(word)
        if got is None:
            got = (
                ""
                if len(word) > 1 and word.isupper()
                else " ".join(PREFIX[lang] + s for lang in langs for s in stems(word, lang))
            )
            if len(known) < _STEMMED_MAX:
                known[word] = got
        if got:
            out.append(got)
    return " ".join(out)


def node_languages(text: str, more: Callable[[], str] | None = None) -> tuple[str, ...]:
    """The one stemmer a node's words get: Portuguese when the node writes Portuguese,
    else English (the Portuguese stemmer conflates what English keeps apart: note and
    not, data and date). One per node, so a word never matches twice by two stems.

    ``text`` is read first (a title and summary); ``more`` (the start of the body) only
    when ``text`` holds fewer than ``EVIDENCE`` telling words."""
    lang = writes_portuguese(text, more, enough=EVIDENCE)
    return ("pt",) if lang else ("en",)


def search_languages(asked: tuple[str, ...]) -> tuple[str, ...]:
    """The stemmers a query's words get, from the languages it is written in: English
    for an English question, both for a Portuguese one or one that does not say (its
    words meet Portuguese nodes through the Portuguese stemmer, and the Portuguese
    words of English nodes through the English one)."""
    return ("en",) if asked == ("en",) else LANGUAGES


def query_stems(word: str, langs: tuple[str, ...]) -> list[str]:
    """The prefixed stem tokens of one query word in the query's languages."""
    return list(dict.fromkeys(PREFIX[lang] + s for lang in langs for s in stems(word, lang)))


def forms_start(roots: Iterable[str]) -> str:
    """What every word with one of these stems starts with: Snowball stems are prefixes
    of their words but for a changed last letter (policy -> polici), so the shortest
    stem less one letter (three letters at least)."""
    start = min(roots, key=len)
    return start[: max(3, len(start) - 1)]


def same_stem(a: str, b: str, langs: tuple[str, ...] = LANGUAGES) -> bool:
    """Whether two words share a stem in one of ``langs``."""
    return any(set(stems(a, lang)) & set(stems(b, lang)) for lang in langs)
