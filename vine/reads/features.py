"""The ranking's parts that can be switched off one by one, so ``bench.quality`` can
measure what each is worth (an ablation). Every surface runs with all of them on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Features:
    """Which parts of the ranking run.

    Attributes:
        stems: locate searches each word's stems beside it (word forms).
        headers: locate reads section headers beside titles, tags and summaries.
        stopwords: locate drops function words (what, the, qual, de, ...).
        codes: locate weighs an exact identifier (NF-4412) twice a word.
        succession: locate ranks a superseded node below its successor.
        forms: harvest's body sweep reaches the body words that share a derived term's
            stem.
        weighted: harvest's rank fusion scales each entry's credit by its score as a
            share of its ranking's best (off: plain reciprocal rank fusion).
        tiers: harvest ranks branch indexes and _meta nodes after every other node.
        edges: harvest brings in linked nodes that carry question terms its hits lack.
        places: a question that asks *where* misses a place, as one asking *who* misses
            a person, until a linked place supplies it.
        translations: locate and harvest's body sweep search a word's translations in
            the other language (English, Portuguese) as they search its word forms.
        older: a question that asks for an old version (old, previous, antigo,
            anterior) gets it: harvest does not skip superseded nodes, and an older
            version one link away supplies what its successor lacks.
        support: a node the rankers found that is also linked to a hit, supplying
            terms the hit lacks, adds what its link credits for them to its own score,
            up to the hit's (off: it takes the higher of the two).
    """

    stems: bool = True
    headers: bool = True
    stopwords: bool = True
    codes: bool = True
    succession: bool = True
    forms: bool = True
    weighted: bool = True
    tiers: bool = True
    edges: bool = True
    places: bool = True
    older: bool = True
    translations: bool = True
    support: bool = True


NAMES = tuple(f.name for f in fields(Features))
_active = Features()


def active() -> Features:
    """The features in force."""
    return _active


@contextmanager
def without(*names: str) -> Iterator[Features]:
    """Run the block with the named features off (for measuring them)."""
    global _active
    unknown = set(names) - set(NAMES)
    if unknown:
        raise ValueError(f"unknown ranking features: {sorted(unknown)}")
    previous = _active
    _active = replace(previous, **{name: False for name in names})
    try:
        yield _active
    finally:
        _active = previous
