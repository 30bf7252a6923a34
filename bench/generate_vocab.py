"""The vocabulary of synthetic forests: a few tens of thousands of English and Portuguese
tokens (word forms, made-up names), ranked for a Zipf-Mandelbrot draw."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from bench.generate_words import (
    DOUBLING,
    EN_ADJ_PREFIXES,
    EN_ADJECTIVES,
    EN_FUNCTION,
    EN_NOUN_PREFIXES,
    EN_NOUNS,
    EN_VERB_PREFIXES,
    EN_VERBS,
    PT_FUNCTION,
    PT_STEMS,
    PT_SUFFIXES,
    PT_WORDS,
    TABLE_BITS,
    ZIPF_Q,
    ZIPF_S,
)


def _plural(w: str) -> str:
    if w.endswith(("s", "x", "ch", "sh", "z")):
        return w + "es"
    if len(w) > 1 and w[-1] == "y" and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    return w + "s"


def _verb_forms(v: str) -> list[tuple[str, float]]:
    stem = v + v[-1] if v in DOUBLING else v
    if v.endswith("e"):
        ed, ing, er, able = v + "d", v[:-1] + "ing", v + "r", v[:-1] + "able"
    elif v[-1] == "y" and v[-2] not in "aeiou":
        ed, ing, er, able = v[:-1] + "ied", v + "ing", v[:-1] + "ier", v[:-1] + "iable"
    else:
        ed, ing, er, able = stem + "ed", stem + "ing", stem + "er", v + "able"
    return [
        (v, 1.0),
        (_plural(v), 1.8),
        (ed, 2.0),
        (ing, 2.4),
        (er, 5.0),
        (_plural(er), 7.0),
        (able, 9.0),
        (v + "ment", 12.0),
    ]


def _adj_forms(a: str) -> list[tuple[str, float]]:
    if a.endswith("le"):
        ly = a[:-1] + "y"
    elif a.endswith("y"):
        ly = a[:-1] + "ily"
    elif a.endswith("ic"):
        ly = a + "ally"
    else:
        ly = a + "ly"
    forms = [(a, 1.0), (ly, 2.5), (a + "ness", 8.0)]
    if len(a) <= 5 and not a.endswith("e"):
        forms += [(a + "er", 6.0), (a + "est", 9.0)]
    return forms


def _syllable_names(rng: random.Random, n: int) -> list[str]:
    """Pronounceable invented names (places, brands, codenames)."""
    onsets = "b c d f g j k l m n p r s t v z br tr dr pl st ch".split()
    inner = onsets + ["lh", "nh", "rr", "ss", "qu"]
    vowels = ["a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou", "ia"]
    endings = ["", "", "", "", "n", "r", "s", "l", "x", "ão", "é", "á", "ó", "ia", "ana"]
    seen: dict[str, None] = {}
    while len(seen) < n:
        k = rng.randint(2, 3)
        parts = [rng.choice(onsets if i == 0 else inner) + rng.choice(vowels) for i in range(k)]
        name = "".join(parts)
        end = rng.choice(endings)
        if end and end[0] in "aeiouáéóã":
            name = name[:-1] if name[-1] in "aeiou" else name
        name = (name + end).capitalize()
        if 4 <= len(name) <= 11:
            seen[name] = None
    return list(seen)


@dataclass
class Vocab:
    """Ranked token lists and Zipf sampling tables for English and Portuguese prose."""

    en_table: list[str]
    pt_table: list[str]
    en_topics: list[str]
    pt_topics: list[str]
    en_nouns: list[str]
    idents: list[str]
    proper: list[str]


def _rank_scored(scored: list[tuple[float, str]], head: list[str]) -> list[str]:
    """Order tokens by score; function words lead but interleave with common roots."""
    scored = [((i + 1) * 0.2, w) for i, w in enumerate(head)] + scored
    ranked: list[str] = []
    seen: set[str] = set()
    for _, w in sorted(scored):
        if w not in seen:
            seen.add(w)
            ranked.append(w)
    return ranked


def _zipf_table(ranked: list[str]) -> list[str]:
    """Exactly 2**TABLE_BITS slots, each token at least once: a uniform slot is a Zipf draw."""
    size = 1 << TABLE_BITS
    weights = [(r + ZIPF_Q) ** -ZIPF_S for r in range(1, len(ranked) + 1)]
    total = sum(weights)
    counts = [max(1, int(size * p / total)) for p in weights]
    spare = size - sum(counts)
    for i in range(abs(spare)):  # settle rounding on the head, where it is invisible
        counts[i % 50] += 1 if spare > 0 else -1
    table: list[str] = []
    for w, c in zip(ranked, counts, strict=True):
        table.extend([w] * c)
    return table


def _english_scored(r: random.Random, proper: list[str]) -> list[tuple[float, str]]:
    scored: list[tuple[float, str]] = []
    roots = (
        [("n", w) for w in EN_NOUNS]
        + [("v", w) for w in EN_VERBS]
        + [("a", w) for w in EN_ADJECTIVES]
    )
    r.shuffle(roots)
    for rank, (kind, root) in enumerate(roots, start=1):
        if kind == "n":
            forms = [(root, 1.0), (_plural(root), 1.6)]
            prefixes = EN_NOUN_PREFIXES
        elif kind == "v":
            forms = _verb_forms(root)
            prefixes = EN_VERB_PREFIXES
        else:
            forms = _adj_forms(root)
            prefixes = EN_ADJ_PREFIXES
        for form, pen in forms:
            scored.append(((rank + 15) * pen * r.uniform(0.7, 1.3), form))
            for i, pre in enumerate(prefixes):
                scored.append((rank * pen * (120 + 40 * i) * r.uniform(0.5, 2.0), pre + form))
    for i, name in enumerate(proper):
        scored.append(((i + 1) * 8.0 * r.uniform(0.5, 1.5) + 400, name))
    years = [str(y) for y in range(1998, 2031)]
    numbers = [str(n) for n in range(2, 400)] + [f"{n}%" for n in range(1, 100)]
    for i, tok in enumerate(years + numbers):
        scored.append((100 + i * 12.0 * r.uniform(0.5, 1.5), tok))
    return scored


def _portuguese_scored(r: random.Random, proper: list[str]) -> list[tuple[float, str]]:
    scored: list[tuple[float, str]] = []
    words = list(dict.fromkeys(PT_WORDS))
    r.shuffle(words)
    for rank, w in enumerate(words, start=1):
        scored.append((rank * r.uniform(0.7, 1.3), w))
        if not w.endswith(("s", "ão")):
            scored.append((rank * 3.0 * r.uniform(0.7, 1.3), w + "s"))
    stems = list(PT_STEMS)
    r.shuffle(stems)
    for rank, stem in enumerate(stems, start=1):
        for suf, pen in PT_SUFFIXES:
            scored.append((rank * pen * 2.5 * r.uniform(0.6, 1.4), stem + suf))
    for i, name in enumerate(proper[:1500]):
        scored.append(((i + 1) * 6.0 * r.uniform(0.5, 1.5) + 300, name))
    en = [w for w in EN_NOUNS[:200]]
    for i, w in enumerate(en):  # loanwords: the tech vocabulary crosses languages
        scored.append((300 + i * 6.0 * r.uniform(0.5, 1.5), w))
    for i, tok in enumerate([str(y) for y in range(2010, 2031)] + [str(n) for n in range(2, 200)]):
        scored.append((60 + i * 10.0 * r.uniform(0.5, 1.5), tok))
    return scored


@lru_cache(maxsize=1)
def vocab() -> Vocab:
    """Build the (seed-independent) vocabulary once per process."""
    r = random.Random(20260413)
    proper = _syllable_names(r, 3000)
    en_ranked = _rank_scored(_english_scored(r, proper), EN_FUNCTION)
    pt_ranked = _rank_scored(_portuguese_scored(r, proper), PT_FUNCTION)
    en_topics = (
        [w for n in EN_NOUNS for w in (n, _plural(n))]
        + list(EN_ADJECTIVES)
        + [f for v in EN_VERBS for f, pen in _verb_forms(v) if 1.5 < pen < 3]
    )
    pt_topics = list(PT_WORDS) + [st + suf for st in PT_STEMS for suf in ("ação", "amento")]
    idents = sorted({w for w in EN_NOUNS + EN_VERBS if w.isascii()})
    return Vocab(
        en_table=_zipf_table(en_ranked),
        pt_table=_zipf_table(pt_ranked),
        en_topics=list(dict.fromkeys(en_topics)),
        pt_topics=list(dict.fromkeys(pt_topics)),
        en_nouns=list(EN_NOUNS),
        idents=idents,
        proper=proper,
    )
