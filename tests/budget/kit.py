"""Helpers the budget properties share: the stress forest's model and the hypothesis
strategies over it."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from monkeyllm import Vine
from monkeyllm.budget import cost

from ..forestkit import leaf

LOCATE, LOOK, LOOK_BATCH, MOVE, PICK, SCAN, SNIFF, QUERY = 800, 500, 2000, 600, 4000, 800, 800, 2000
SETTINGS = settings(max_examples=60, deadline=None, database=None)

WORDS = [
    "zebrafish",
    "harbor",
    "ledger",
    "quartz",
    "monsoon",
    "violet",
    "tundra",
    "ember",
    "cobalt",
    "saffron",
    "glacier",
    "orchid",
]
INVERSE = {
    "part-of": "contains",
    "related-to": "related-to",
    "mentioned-in": "mentions",
    "supersedes": "superseded-by",
    "discovered-shortcut": None,
}
RELS = list(INVERSE)
WIDE_COLS = 60
ELLIPSIS = "…"


def _tokens(text: str) -> int:
    """§7: 0 when empty, else max(1, ceil(len/4))."""
    return 0 if not text else max(1, math.ceil(len(text) / 4))


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _nodes(rng: random.Random) -> dict[str, tuple[str, dict[str, Any], str]]:
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {}
    nodes["big/_index"] = (
        "branch",
        {"title": "Big branch", "summary": "Eighty notes " + _sentence(rng, 20)},
        "# Big\n\n## Cross trails\n\n- graph/hub\n- docs/manual\n",
    )
    for i in range(80):
        sections = []
        for s in range(6):
            lines = [
                f"Line {s}.{j} "
                + _sentence(rng, 20)
                + (" zebrafish " if j % 2 else " ")
                + _sentence(rng, 8)
                for j in range(4)
            ]
            sections.append(f"## Part {s} of note {i}\n\n" + "\n".join(lines))
        links = [{"rel": "related-to", "target": f"big/n{(i + 1) % 80:02d}"}]
        if i % 10 == 0:
            links.append({"rel": "mentioned-in", "target": "graph/hub"})
        nodes[f"big/n{i:02d}"] = leaf(
            f"# Note {i}\n\n" + "\n\n".join(sections),
            title=f"Note {i} " + _sentence(rng, 3),
            summary=f"Summary of note {i}: " + _sentence(rng, 45),
            tags=rng.sample(WORDS, 3),
            links=links,
        )
    nodes["graph/hub"] = leaf(
        "# Hub\n\n## About\n\nThe hub of the graph.\n",
        "entity",
        title="The hub",
        summary="A hub " + _sentence(rng, 40),
        tags=["hub"],
        links=[{"rel": RELS[k % len(RELS)], "target": f"graph/spoke-{k:02d}"} for k in range(50)],
    )
    for k in range(50):
        nodes[f"graph/spoke-{k:02d}"] = leaf(
            f"# Spoke {k}\n\n## Body\n\nSpoke text {_sentence(rng, 10)}.\n",
            title=f"Spoke {k}",
            summary=f"Spoke {k} " + _sentence(rng, 35),
            links=[(RELS[(k + 1) % len(RELS)], "graph/hub")],
        )
    nodes["misc/long-title"] = leaf(
        "# Long\n\n" + "\n".join(f"### Heading {n} " + _sentence(rng, 12) for n in range(80)),
        title="A very long title " + _sentence(rng, 70),
        summary="Long everything " + _sentence(rng, 120),
        tags=[f"{w}{n}" for n in range(8) for w in WORDS[:6]],
        aliases=[f"alias {n} " + _sentence(rng, 6) for n in range(20)],
    )
    manual = []
    for s in range(40):
        paras = ["\n".join(_sentence(rng, 18) for _ in range(3)) for _ in range(3)]
        sub = f"\n\n### Detail {s}\n\n{_sentence(rng, 30)}" if s % 4 == 0 else ""
        manual.append(f"## Chapter {s:02d}\n\n" + "\n\n".join(paras) + sub)
    nodes["docs/manual"] = leaf(
        "# Manual\n\n" + "\n\n".join(manual),
        title="Manual",
        summary="A long manual " + _sentence(rng, 10),
        tags=["docs"],
    )
    nodes["docs/paragraph"] = leaf(
        " ".join(_sentence(rng, 12) + "." for _ in range(330)),
        title="Paragraph",
        summary="One paragraph " + _sentence(rng, 10),
    )
    nodes["docs/short"] = leaf(
        "# Short\n\n## Only\n\nzebrafish harbor.\n", title="Short", summary="A short note."
    )
    nodes["misc/huge-summary"] = leaf(
        "# Huge summary\n\n## Text\n\nzebrafish once.\n",
        title="Huge summary",
        summary="Huge " + _sentence(rng, 500),
        tags=["huge"],
        links=[("related-to", "graph/hub")],
    )
    nodes["misc/huge-title"] = leaf(
        "# Huge title\n\n## Text\n\nzebrafish and harbor.\n",
        title="Huge title " + _sentence(rng, 500),
        summary="A node with a huge title.",
    )
    nodes["data/many-tables"] = leaf(
        "# Many\n\n## Notes\n\nShort notes.\n",
        "dataset",
        title="Many tables",
        summary="Thirty tables " + _sentence(rng, 8),
        payload="many.db",
        payload_type="sqlite",
    )
    nodes["data/wide"] = leaf(
        "# Wide\n\n## Query manual\n\n`SELECT * FROM wide LIMIT 5`\n\n"
        "`SELECT COUNT(*) FROM wide`\n\n## Sample rows\n\nGenerated.\n\n## Notes\n\n"
        + " ".join(_sentence(rng, 15) + "." for _ in range(25)),
        "dataset",
        title="Wide data",
        summary="Rows with sixty columns " + _sentence(rng, 10),
        payload="wide.db",
        payload_type="sqlite",
        tags=["data"],
    )
    return nodes


@dataclass(repr=False)
class Model:
    """The forest as written: everything a property needs to know, from the files."""

    root: Path
    vine: Vine
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    body: dict[str, str] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    out_links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    in_links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def __repr__(self) -> str:  # short: hypothesis prints it with a failing example
        return f"Model({len(self.meta)} nodes)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @property
    def ids(self) -> list[str]:
        return sorted(self.meta)

    @property
    def branches(self) -> list[str]:
        return [i for i in self.ids if i == "_index" or i.endswith("/_index")]

    def summary(self, node_id: str) -> str:
        return str(self.meta[node_id].get("summary") or "")

    def is_branch(self, node_id: str) -> bool:
        return self.meta[node_id].get("type") == "branch"

    def outline(self, node_id: str) -> list[str]:
        return [
            m.group(2)
            for m in re.finditer(r"^(#{2,3}) +(.*?) *$", self.body[node_id], re.MULTILINE)
        ]


def parent_of(node_id: str) -> str | None:
    """§1.4, re-derived here."""
    if node_id == "_index":
        return None
    parts = node_id.split("/")
    if parts[-1] == "_index":
        parts = parts[:-1]
    folders = parts[:-1]
    return "/".join([*folders, "_index"]) if folders else "_index"


def no_internal(out: dict[str, Any]) -> None:
    assert isinstance(out, dict)
    if "error" in out:
        assert set(out) == {"error"}
        assert out["error"]["code"] != "E_INTERNAL", out


def fits(out: dict[str, Any], limit: int) -> None:
    spent = cost(out)
    assert spent <= limit, f"{spent} tokens over a {limit}-token budget"


SEED = 20260704
STRESS = [
    "graph/hub",
    "big/_index",
    "docs/manual",
    "data/wide",
    "misc/long-title",
    "no/such-node",
    "misc/huge-summary",
    "misc/huge-title",
    "data/many-tables",
]


def _all_ids() -> list[str]:
    """Every id the module forest holds, known before it is built."""
    ids = set(_nodes(random.Random(SEED)))
    for node_id in list(ids):
        folders = node_id.split("/")[:-1]
        ids.update("/".join(folders[:d]) + "/_index" for d in range(1, len(folders) + 1))
    return sorted(ids | {"_index", "_meta/schema"})


ALL_IDS = _all_ids()
NODE_IDS = st.one_of(st.sampled_from(ALL_IDS), st.sampled_from(STRESS))
