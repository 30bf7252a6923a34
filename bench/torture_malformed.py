"""Malformed forests: every defect is named by validate, and the healthy nodes beside
them are still served."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.torture_repair import node_ids_of
from monkeyllm import Vine
from monkeyllm.registry import CALLS
from monkeyllm.validate import validate


def note(node_id: str, summary: str, body: str, links: list[str] = ()) -> str:
    linked = "".join(f"- rel: related-to\n  target: {t}\n" for t in links)
    return (
        f"---\nid: {node_id}\ntype: note\ntitle: {node_id.rsplit('/', 1)[-1]}\n"
        f"summary: {summary}\ncreated: '2026-01-05'\nupdated: '2026-01-05'\n"
        + (f"links:\n{linked}" if linked else "")
        + f"---\n\n{body}\n"
    )


# Each defect planted by hand (outside the engine), with the validate codes it must draw.
DEFECTS: dict[str, tuple[str, bytes, set[str]]] = {
    "bad YAML": (
        "sales/bad-yaml.md",
        b"---\nid: sales/bad-yaml\ntitle: [unclosed\nsummary: : :\n---\n\nBody.\n",
        {"file.unparseable"},
    ),
    "binary file named .md": ("sales/binary.md", bytes(range(256)) * 64, {"file.unparseable"}),
    "not UTF-8": (
        "sales/latin.md",
        "---\nid: sales/latin\n---\n\ncaf\u00e9\n".encode("latin-1"),
        {"file.unparseable"},
    ),
    "no frontmatter": ("sales/plain.md", b"# Just text\n\nNo frontmatter.\n", {"file.unparseable"}),
    "id claimed twice": (
        "sales/impostor.md",
        note(
            "sales/exchange-policy", "An impostor claiming the exchange policy's id.", "# Impostor"
        ).encode(),
        {"frontmatter.id-mismatch"},
    ),
    "link to nowhere": (
        "sales/dangling.md",
        note(
            "sales/dangling",
            "A note whose link leads nowhere.",
            "# Dangling",
            ["sales/no-such-node"],
        ).encode(),
        {"links.dangling"},
    ),
}


# Hostile but healthy: they must be served like any other node.
HEALTHY_EXTRAS = {
    "sales/huge.md": note(
        "sales/huge",
        "A note with a 5 MB body.",
        "# Huge\n\n## Bulk\n\n" + ("lorem ipsum dolor " * 60 + "\n") * 4700,
    ),
    "sales/cycle-a.md": note("sales/cycle-a", "Half of a link cycle, A.", "# A", ["sales/cycle-b"]),
    "sales/cycle-b.md": note("sales/cycle-b", "Half of a link cycle, B.", "# B", ["sales/cycle-a"]),
}


@dataclass
class MalformedFigures:
    """What the malformed-forest probe found."""

    defects: int = 0
    named: int = 0  # defects validate names with the expected code
    healthy: int = 0
    served: int = 0  # healthy nodes answering look, pick and locate
    failures: list[str] = field(default_factory=list)


def plant_defects(forest: Path) -> None:
    """Write every defect and hostile-but-healthy node into ``forest``'s files."""
    for path, data, _ in DEFECTS.values():
        (forest / path).write_bytes(data)
    for path, text in HEALTHY_EXTRAS.items():
        (forest / path).write_text(text, encoding="utf-8")


def probe_malformed(forest: Path) -> MalformedFigures:
    """Plant the defects in ``forest`` (a copy), then: every healthy node answers look,
    pick and locate within budget, and ``validate`` names each defect."""
    from monkeyllm import budget

    healthy = {i: None for i in node_ids_of(forest)}
    plant_defects(forest)
    healthy.update({p[:-3]: None for p in HEALTHY_EXTRAS})
    figures = MalformedFigures(defects=len(DEFECTS), healthy=len(healthy))
    findings = validate(forest)
    for name, (path, _, codes) in DEFECTS.items():
        found = {f.code for f in findings if f.path == path}
        if codes <= found:
            figures.named += 1
        else:
            figures.failures.append(f"validate does not name {name}: {sorted(found)}")
    with Vine(forest, writable=False) as vine:
        for node_id in healthy:
            answers = {
                "look": vine.look(node_id),
                "pick": vine.pick(node_id),
                "move": vine.move(node_id),
            }
            title = answers["look"].get("title") or node_id
            answers["locate"] = vine.locate(str(title), k=5)
            wrong = [
                f"{call}: {str(out)[:160]}"
                for call, out in answers.items()
                if "error" in out or budget.cost(out) > CALLS[call].budget
            ]
            if (
                "error" not in answers["locate"]
                and not any(r["id"] == node_id for r in answers["locate"]["results"])
                and not node_id.endswith("_index")
            ):
                wrong.append(f"locate {title!r} does not find it")
            if wrong:
                figures.failures.append(f"{node_id}: " + "; ".join(wrong))
            else:
                figures.served += 1
        own = vine.look("sales/exchange-policy")
        if own.get("summary", "").startswith("An impostor"):
            figures.failures.append("the impostor took over sales/exchange-policy")
    return figures
