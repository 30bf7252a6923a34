"""The plan of a synthetic forest: branches, leaves (their types, titles and summaries),
date branches, and the links between nodes."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from bench.generate_format import cap, clip, day, slugify, weighted
from bench.generate_vocab import Vocab
from bench.generate_words import (
    CITIES,
    DATE_SPAN,
    DATE_START,
    EN_ADJECTIVES,
    EN_NOUNS,
    ENTITY_KINDS,
    FIRST_NAMES,
    LAST_NAMES,
    LINK_COUNT_WEIGHTS,
    REL_WEIGHTS,
    SOURCES,
    TAG_VOCAB,
    TOP_BRANCHES,
    TYPE_WEIGHTS,
)


@dataclass(slots=True)
class Branch:
    id: str
    folder: str
    title: str
    summary: str
    level: int
    top: int
    topics: list[str]
    tags: list[str]
    subs: list[Branch] = field(default_factory=list)
    leaves: list[Leaf] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    created: int = 0
    updated: int = 0


@dataclass(slots=True)
class Leaf:
    id: str
    type: str
    title: str
    summary: str
    created: int
    updated: int
    lang: str
    topics: list[str]
    tags: list[str]
    aliases: list[str]
    top: int
    source: str
    entity_kind: str | None = None
    dataset: list[dict] | None = None
    links: list[dict] = field(default_factory=list)


def _fan_out(nodes: int) -> tuple[int, float]:
    top = round(10 + 5 * (math.log10(nodes) - 3))
    top = max(1, min(min(20, max(10, top)), (nodes - 2) // 12))
    target = nodes / 42 / top  # branches per top-level subtree
    r = (-1 + math.sqrt(max(1.0, 4 * target - 3))) / 2
    return top, max(1.0, r)


def _branch_meta(rng: random.Random, v: Vocab, parent: Branch, name: str | None):
    topics = [rng.choice(v.en_topics) for _ in range(4)]
    if rng.random() < 0.3:
        topics[rng.randrange(1, 4)] = rng.choice(v.proper)
    if name:
        title = cap(name)
    elif rng.random() < 0.6:
        title = f"{cap(rng.choice(EN_ADJECTIVES + EN_NOUNS))} {rng.choice(EN_NOUNS)}"
    else:
        title = cap(rng.choice(EN_NOUNS + v.proper[:300]))
    topics[0] = title.split()[-1].lower() if name is None else name
    area = f"the {parent.title} area" if parent.title else "the whole organisation"
    templates = [
        f"{title}: {topics[1]}, {topics[2]} and {topics[3]} material from {area}.",
        f"Everything about {topics[0]} and {topics[2]} in {area}; start here for {topics[3]}.",
        f"{title} work: {topics[2]} records, {topics[3]} decisions and related {topics[1]} notes.",
    ]
    summary = clip(rng.choice(templates))
    tags = rng.sample(TAG_VOCAB, 3)
    return title, summary, topics, tags


def _new_branch(rng, v, parent: Branch, level: int, top: int, name: str | None) -> Branch:
    title, summary, topics, tags = _branch_meta(rng, v, parent, name)
    slug = slugify(name or title, 32)
    base, n = slug, 2
    while slug in parent.used:
        slug, n = f"{base}-{n}", n + 1
    parent.used.add(slug)
    folder = f"{parent.folder}{slug}/"
    b = Branch(
        id=f"{folder}_index",
        folder=folder,
        title=title,
        summary=summary,
        level=level,
        top=top,
        topics=topics,
        tags=tags,
    )
    parent.subs.append(b)
    return b


def plan_branches(rng: random.Random, v: Vocab, nodes: int) -> tuple[Branch, list[Branch]]:
    """Root plus three levels of branches; returns (root, the other branches in DFS order)."""
    n_top, r = _fan_out(nodes)
    lo, hi = max(1, math.floor(r * 0.6)), max(1, math.ceil(r * 1.4))
    root = Branch(id="_index", folder="", title="", summary="", level=0, top=-1, topics=[], tags=[])
    names = rng.sample(TOP_BRANCHES, n_top) if n_top <= len(TOP_BRANCHES) else None
    ordered: list[Branch] = []
    for t in range(n_top):
        b1 = _new_branch(rng, v, root, 1, t, names[t] if names else None)
        ordered.append(b1)
        for _ in range(rng.randint(lo, hi)):
            b2 = _new_branch(rng, v, b1, 2, t, None)
            ordered.append(b2)
            for _ in range(rng.randint(lo, hi)):
                ordered.append(_new_branch(rng, v, b2, 3, t, None))
    return root, ordered


def allocate_leaves(
    rng: random.Random, root: Branch, branches: list[Branch], n_leaves: int
) -> list[int]:
    """Leaf count per branch (root first): deeper branches hold more."""
    n_root = min(3, n_leaves // 50)
    rest = n_leaves - n_root
    level_w = {1: 0.3, 2: 0.65, 3: 1.0}
    weights = [level_w[b.level] * rng.uniform(0.6, 1.4) for b in branches]
    total = sum(weights)
    counts = [int(rest * w / total) for w in weights]
    for i in rng.sample(range(len(branches)), rest - sum(counts)):
        counts[i] += 1
    return [n_root] + counts


_EVENT_KINDS_EN = [
    "review",
    "kickoff",
    "release",
    "meeting",
    "decision",
    "incident",
    "workshop",
    "audit",
    "launch",
    "retrospective",
]
_EVENT_KINDS_PT = ["Reunião", "Lançamento", "Decisão", "Revisão", "Oficina", "Auditoria"]


ORG_SUFFIX = [
    "Labs",
    "Ltda",
    "Logística",
    "Systems",
    "Group",
    "Cooperativa",
    "Holdings",
    "Partners",
    "Indústria",
    "Works",
]


_ROLES = [
    "analyst",
    "engineer",
    "account manager",
    "researcher",
    "coordinator",
    "designer",
    "auditor",
    "lawyer",
    "operator",
    "director",
]


def _entity_title(rng: random.Random, v: Vocab, kind: str, topics: list[str]):
    if kind == "person":
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        title = f"{first} {last}"
        aliases = [f"{first[0]}. {last}"] if rng.random() < 0.5 else []
        summary = (
            f"{cap(rng.choice(_ROLES))} working on {topics[0]} and {topics[1]}; "
            f"based in {rng.choice(CITIES)} and reachable for {topics[2]} questions."
        )
    elif kind == "organization":
        title = f"{rng.choice(v.proper)} {rng.choice(ORG_SUFFIX)}"
        aliases = ["".join(p[0] for p in title.split()).upper()] if rng.random() < 0.5 else []
        summary = (
            f"Organization that supplies {topics[0]} and {topics[1]}; main "
            f"counterpart for {topics[2]} in {rng.choice(CITIES)}."
        )
    elif kind == "product":
        title = f"{rng.choice(v.proper)} {rng.choice('XSRTM')}{rng.randint(10, 990)}"
        aliases = [title.split()[0].lower()] if rng.random() < 0.4 else []
        summary = (
            f"Product line for {topics[0]} {topics[1]}; current version "
            f"{rng.randint(1, 9)}.{rng.randint(0, 20)} with {topics[2]} support."
        )
    elif kind == "place":
        site = rng.choice(["warehouse", "plant", "office", "depot", "lab"])
        title = f"{rng.choice(CITIES)} {site}"
        aliases = []
        summary = f"Site used for {topics[0]} and {topics[1]}, with {topics[2]} on site."
    else:
        title = f"{cap(topics[0])} {topics[1]} registry"
        aliases = []
        summary = f"Reference entity grouping {topics[0]}, {topics[1]} and {topics[2]} records."
    return title, summary, aliases


def _leaf_title(rng: random.Random, ltype: str, lang: str, t: list[str], when: int):
    a, b, c, d = t[0], t[1], t[2], t[3]
    year = day(when)[:4]
    if lang == "pt":
        table = {
            "note": [f"Notas sobre {a} {b}", f"{cap(a)} e {b}", f"Anotações de {a}"],
            "document": [f"Relatório de {a} {b}", f"Manual de {a}", f"Proposta de {a} {b}"],
            "concept": [f"{cap(a)} {b}", cap(a)],
            "event": [f"{rng.choice(_EVENT_KINDS_PT)} de {a} — {day(when)}"],
            "dataset": [f"{cap(a)} {b} {year}"],
        }
        summ = [
            f"Registro de {a} e {b} com pontos sobre {c} e {d}.",
            f"{cap(a)}: {b}, {c} e {d} para a equipe, com dados de {year}.",
        ]
    else:
        table = {
            "note": [
                f"{cap(a)} {b} notes",
                f"Notes on {a} {b}",
                f"{cap(a)} and {b}",
                f"Working notes: {a} {b}",
                f"{cap(a)} follow-up",
            ],
            "document": [
                f"{cap(a)} {b} report",
                f"{cap(a)} {b} specification",
                f"{cap(a)} {b} handbook",
                f"Proposal for {a} {b}",
                f"{cap(a)} {b} review {year}",
                f"{cap(a)} {b} guidelines",
            ],
            "concept": [f"{cap(a)} {b}", cap(a), f"{cap(a)} {b} model", f"{cap(a)} principle"],
            "event": [f"{cap(a)} {b} {rng.choice(_EVENT_KINDS_EN)} — {day(when)}"],
            "dataset": [f"{cap(a)} {b} {year}", f"{cap(a)} {b} ledger", f"{cap(a)} metrics"],
        }
        summ = [
            f"Working notes on {a} and {b}, with open points about {c} and {d}.",
            f"Covers {a}, {b} and {c}; includes figures for {year} and advice on {d}.",
            f"How {a} relates to {b} and {c}, and what changes for {d}.",
            f"{cap(a)} {b} in practice: {c} first, then {d}, with the numbers from {year}.",
        ]
    title = rng.choice(table[ltype])
    return title, rng.choice(summ)


def make_leaf(rng: random.Random, v: Vocab, br: Branch, ltype: str, created: int, top: int) -> Leaf:
    lang = "pt" if rng.random() < 0.15 else "en"
    pool = v.pt_topics if lang == "pt" else v.en_topics
    own = [rng.choice(pool) for _ in range(rng.randint(2, 4))]
    if rng.random() < 0.2:
        own[-1] = rng.choice(v.proper)
    topics = own + (rng.sample(br.topics, 2) if br.topics else own) + [rng.choice(pool)]
    kind = None
    aliases: list[str] = []
    if ltype == "entity":
        kind = weighted(rng, ENTITY_KINDS)
        title, summary, aliases = _entity_title(rng, v, kind, topics)
    else:
        title, summary = _leaf_title(rng, ltype, lang, topics, created)
        if rng.random() < 0.15:
            words = title.split()
            aliases = ["".join(w[0] for w in words).upper()] if len(words) > 1 else []
            if rng.random() < 0.5:
                aliases.append(f"{topics[0]} {topics[-1]}")
    tags = list(
        dict.fromkeys(
            rng.sample(br.tags, min(len(br.tags), rng.randint(0, 2)))
            + rng.sample(TAG_VOCAB, rng.randint(1, 2))
        )
    )[:4]
    slug = slugify(title)
    base, n = slug, 2
    while slug in br.used:
        slug, n = f"{base}-{n}", n + 1
    br.used.add(slug)
    updated = (
        created
        if rng.random() < 0.4
        else created + rng.randint(0, max(0, min(400, DATE_START + DATE_SPAN - created)))
    )
    return Leaf(
        id=f"{br.folder}{slug}",
        type=ltype,
        title=title,
        summary=clip(summary),
        created=created,
        updated=updated,
        lang=lang,
        topics=topics,
        tags=tags,
        aliases=list(dict.fromkeys(a for a in aliases if a)),
        top=top,
        source=weighted(rng, SOURCES),
        entity_kind=kind,
    )


def plan_leaves(
    rng: random.Random, v: Vocab, root: Branch, branches: list[Branch], n_leaves: int
) -> list[Leaf]:
    """Create every leaf's metadata; dataset leaves are chosen up front (~2%)."""
    counts = allocate_leaves(rng, root, branches, n_leaves)
    n_data = max(1, round(n_leaves * 0.02))
    data_idx = set(rng.sample(range(n_leaves), n_data))
    leaves: list[Leaf] = []
    for br, count in zip([root] + branches, counts, strict=True):
        dates = sorted(DATE_START + rng.randrange(DATE_SPAN) for _ in range(count))
        for created in dates:
            ltype = "dataset" if len(leaves) in data_idx else weighted(rng, TYPE_WEIGHTS)
            leaf = make_leaf(rng, v, br, ltype, created, max(br.top, 0))
            br.leaves.append(leaf)
            leaves.append(leaf)
    return leaves


def date_branches(rng: random.Random, root: Branch, branches: list[Branch]) -> None:
    """Branches are planted before their children; the last plant re-renders the index."""
    for b in reversed(branches):
        child = [x.created for x in b.leaves] + [s.created for s in b.subs]
        b.created = (min(child) if child else DATE_START + rng.randrange(DATE_SPAN)) - rng.randint(
            0, 20
        )
        b.created = max(DATE_START - 30, b.created)
        b.updated = max([b.created] + child)
    child = [x.created for x in root.leaves] + [s.created for s in root.subs]
    root.created = min(child) - 1
    root.updated = max(child)


@dataclass
class Pools:
    """Candidate link targets, by top-level branch and by kind."""

    by_top: list[list[int]]
    persons: list[int]
    docs_by_top: list[list[int]]
    branch_ids: list[str]


def build_pools(leaves: list[Leaf], branches: list[Branch], n_top: int) -> Pools:
    by_top: list[list[int]] = [[] for _ in range(n_top)]
    docs: list[list[int]] = [[] for _ in range(n_top)]
    persons: list[int] = []
    for i, leaf in enumerate(leaves):
        by_top[leaf.top].append(i)
        if leaf.type in ("document", "note"):
            docs[leaf.top].append(i)
        if leaf.entity_kind == "person":
            persons.append(i)
    return Pools(by_top, persons, docs, [b.id for b in branches])


def _pick_target(rng, rel: str, leaf: Leaf, leaves: list[Leaf], pools: Pools) -> str:
    if rel == "author" and pools.persons:
        return leaves[rng.choice(pools.persons)].id
    if rel == "mentioned-in" and pools.docs_by_top[leaf.top]:
        return leaves[rng.choice(pools.docs_by_top[leaf.top])].id
    x = rng.random()
    if x < 0.05:
        return rng.choice(pools.branch_ids)
    if x < 0.6 and len(pools.by_top[leaf.top]) > 1:
        return leaves[rng.choice(pools.by_top[leaf.top])].id
    return leaves[rng.randrange(len(leaves))].id


_REL_NAMES = [r for r, _ in REL_WEIGHTS]
_REL_CUM = [sum(w for _, w in REL_WEIGHTS[: i + 1]) for i in range(len(REL_WEIGHTS))]
_LINK_NOTES = [
    "same figures, different period",
    "context for the decision",
    "source of the numbers",
    "see the appendix",
    "older draft",
    "cited in the summary",
    "proposed during review",
]


def make_links(
    rng: random.Random, leaf: Leaf, leaves: list[Leaf], pools: Pools, degree: dict[str, int]
) -> None:
    """0-8 typed links, unique per (rel, target), never to the node itself."""
    want = rng.choices(range(9), LINK_COUNT_WEIGHTS)[0]
    seen: set[tuple[str, str]] = set()
    tries = 0
    while len(leaf.links) < want and tries < want * 4:
        tries += 1
        rel = rng.choices(_REL_NAMES, cum_weights=_REL_CUM)[0]
        if rel == "mentioned-in" and leaf.type != "entity":
            rel = "related-to"
        target = _pick_target(rng, rel, leaf, leaves, pools)
        if target == leaf.id or (rel, target) in seen:
            continue
        seen.add((rel, target))
        link: dict = {"rel": rel, "target": target}
        if rel == "discovered-shortcut":
            link.update(confidence=0.5, discovered_by="agent")
        elif rng.random() < 0.04:
            link.update(confidence=0.3, discovered_by="agent")
        if rng.random() < 0.05:
            link["note"] = rng.choice(_LINK_NOTES)
        leaf.links.append(link)
        degree[leaf.id] = degree.get(leaf.id, 0) + 1
        degree[target] = degree.get(target, 0) + 1
