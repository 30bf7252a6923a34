"""Words from a question: what ``locate`` searches the catalog for, and the terms
``harvest`` asks the body sweep for. Tokens are folded, English and Portuguese stopwords
dropped (they weigh nothing), code-shaped tokens (a digit, all capitals, or one of
``- _ . /``) kept as they are, and the words of a question's language(s) are given their
word forms (:mod:`monkeyllm.stems`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..language import ENGLISH, PORTUGUESE, languages
from ..stems import LANGUAGES, stemmable
from ..text import TOKEN, fold

TERMS_MAX = 8
CODE_WEIGHT = 2  # an exact identifier counts twice a word
ACRONYM_MAX = 5  # a word in capitals this short is a name (IT, ICMS, SEFAZ)
_TOKEN = re.compile(r"[\w\-./]{2,}")
_CODE_MARKS = set("-_./")

STOPWORDS = ENGLISH | PORTUGUESE


def _tokens(query: str) -> list[tuple[str, bool]]:
    """(folded token, code-shaped) for each non-stopword token of a question."""
    out = []
    for raw in _TOKEN.findall(query):
        token = raw.strip("./-")
        if len(token) < 2:
            continue
        letters = [c for c in token if c.isalpha()]
        code = (
            any(c.isdigit() for c in token)
            or (len(letters) >= 2 and all(c.isupper() for c in letters))
            or any(c in _CODE_MARKS for c in token)
        )
        folded = fold(token)
        if folded not in STOPWORDS:
            out.append((folded, code))
    return out


def is_code(term: str) -> bool:
    """A folded term that names something exactly: an identifier with ``- _ . /`` or
    with letters and digits mixed (``nf-4412``, ``l2503``); a bare number such as a
    year is not one."""
    if any(c in _CODE_MARKS for c in term.strip("-_./")):
        return any(c.isdigit() for c in term) or len(term) >= 4
    return any(c.isdigit() for c in term) and any(c.isalpha() for c in term)


@dataclass
class Words:
    """What ``locate`` searches for in a query.

    ``tokens`` are single folded tokens; ``phrases`` are words with punctuation inside
    (``NF-4412``), searched as a phrase besides their parts; ``stem`` are the tokens whose
    word forms are searched too, in ``langs``. Empty when the query holds nothing to
    search for (only stopwords or punctuation).
    """

    tokens: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    stem: list[str] = field(default_factory=list)
    langs: tuple[str, ...] = LANGUAGES

    def __bool__(self) -> bool:
        return bool(self.tokens or self.phrases)


def _shouting(query: str) -> bool:
    """A query of several words written all in capitals (its capitals name nothing)."""
    letters = [c for c in query if c.isalpha()]
    return len(query.split()) > 1 and bool(letters) and all(c.isupper() for c in letters)


def query_words(query: str, *, drop_stopwords: bool = True) -> Words:
    """The words of a query worth searching: stopwords dropped (a short word in capitals,
    such as ``IT``, is a name, unless the whole query is in capitals), words of one or two
    letters dropped unless they are code-shaped, words with punctuation kept as a phrase
    and by their parts. ``drop_stopwords=False`` keeps every token."""
    out = Words(langs=languages(query))
    capitals_mean_names = not _shouting(query)
    for word in query.split():
        raw_parts = TOKEN.findall(word)
        # A word with punctuation and a digit inside (NF-4412, 6.202) is a code throughout.
        coded = len(raw_parts) > 1 and any(c.isdigit() for c in word)
        kept: list[str] = []
        for raw in raw_parts:
            folded = fold(raw)
            letters = [c for c in raw if c.isalpha()]
            code = (
                coded
                or any(c.isdigit() for c in raw)
                or (
                    capitals_mean_names
                    and 2 <= len(letters) <= ACRONYM_MAX
                    and all(c.isupper() for c in letters)
                )
            )
            if drop_stopwords and not code and (folded in STOPWORDS or len(folded) < 3):
                continue
            kept.append(folded)
            if stemmable(folded) and not code:
                out.stem.append(folded)
        if not kept:
            continue
        if len(raw_parts) > 1:
            out.phrases.append(word)
        out.tokens.extend(kept)
    out.tokens = list(dict.fromkeys(out.tokens))
    out.phrases = list(dict.fromkeys(out.phrases))
    out.stem = list(dict.fromkeys(out.stem))
    return out


PERSON_WORDS = frozenset({"who", "whom", "whose", "quem"})
PLACE_WORDS = frozenset({"where", "onde", "aonde"})
# The entity kind (the format's ``entity_kind``) each question word asks for.
ASKED_KINDS = {**dict.fromkeys(PERSON_WORDS, "person"), **dict.fromkeys(PLACE_WORDS, "place")}


# Words with which a question asks for a version replaced since (English, Portuguese).
OLDER_WORDS = frozenset(
    {
        "old", "older", "previous", "former", "earlier", "prior", "superseded",
        "antigo", "antiga", "antigos", "antigas", "anterior", "anteriores",
        "velho", "velha", "velhos", "velhas",
    }
)  # fmt: skip


def asks_for_older(query: str) -> bool:
    """Whether a question asks for an old version (the old rules, a previous policy)."""
    return any(fold(token) in OLDER_WORDS for token in TOKEN.findall(query))


def asked_kinds(query: str) -> frozenset[str]:
    """The entity kinds a question asks for: ``person`` for *who* (quem), ``place`` for
    *where* (onde), in English or Portuguese."""
    return frozenset(
        ASKED_KINDS[word] for token in TOKEN.findall(query) if (word := fold(token)) in ASKED_KINDS
    )


def locate_query(query: str) -> str:
    """The question without its stopwords, for ``locate`` (function words of a question
    would otherwise match every summary written in the same language)."""
    words = [t for t, code in _tokens(query) if code or len(t) >= 3]
    return " ".join(dict.fromkeys(words)) or query


def derive_terms(query: str) -> list[str]:
    """Sniff terms from a question: code-shaped tokens (a digit, all capitals, or one of
    ``- _ . /``) at any length and first, other words of 4+ characters; stopwords and
    duplicates dropped; folded; at most 8."""
    codes = [t for t, code in _tokens(query) if code]
    words = [t for t, code in _tokens(query) if not code and len(t) >= 4]
    return list(dict.fromkeys(codes + words))[:TERMS_MAX]
