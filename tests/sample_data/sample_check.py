"""``build_datasets.py --check``: the sample forest is well formed (frontmatter, links,
branch entries, dataset passports and payloads). Needs PyYAML, imported inside the
check so that building never does."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

from sample_passport import FM_RE, render_map, sha256_file

REQUIRED = ("id", "type", "title", "summary", "created", "updated")
ENTITY_KINDS = {"person", "organization", "product", "place", "other"}
SOURCES = {"manual", "ingest", "agent"}
PAYLOAD_TYPES = {"sqlite", "pdf", "docx", "image", "audio"}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
ENTRY = re.compile(r"^- \[\[([^\]|]+)\]\] — (.*)$")
CROSS_TRAIL = re.compile(r"^- .+ → \[\[([^\]|#]+)\]\]$")
GITIGNORE = "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n"
INDEX_SECTIONS = ["Sub-branches", "Direct bananas", "Cross trails"]


# Exact codes that live in bodies only: a metadata search must not find them.
BODY_ONLY_CODES = [
    "NF-4412",
    "MSA-2026-ACM-007",
    "AK-200-BR-127V",
    "E-SYNC-1107",
    "ERR-SKU-404",
    "SIN-2026-03117",
    "DESC-NAO-APROVADO",
    "ADT-01/2026",
]


def tokens(text: str) -> int:
    return 0 if not text else max(1, math.ceil(len(text) / 4))


def iter_node_files(forest: Path) -> Iterator[Path]:
    for path in sorted(forest.rglob("*.md")):
        rel = path.relative_to(forest).parts
        if rel[0] in ("_derived", ".git") or "_assets" in rel:
            continue
        yield path


def split_sections(body: str, level: int = 2) -> dict[str, str]:
    """Section text by header (same or higher level ends it), fences respected."""
    out: dict[str, str] = {}
    current, buf, fence = None, [], False
    for line in body.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if m and len(m.group(1)) <= level:
            if current is not None:
                out[current] = "\n".join(buf)
            current, buf = (m.group(2) if len(m.group(1)) == level else None), []
            continue
        buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf)
    return out


def dialect(forest: Path) -> tuple[set[str], dict[str, str | None]]:
    types: set[str] = set()
    rels: dict[str, str | None] = {}
    in_rels = False
    text = (forest / "_meta" / "schema.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("#"):
            low = line.lower()
            in_rels = "edge" in low or "rel" in low
            continue
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*)\|", line.strip())
        if not m:
            continue
        if in_rels:
            inv = m.group(2).strip().strip("`")
            rels[m.group(1)] = None if inv in ("", "—", "-") else inv
        else:
            types.add(m.group(1))
    return types, rels


def check(forest: Path) -> int:
    import yaml

    errors: list[str] = []

    def err(node: str, msg: str) -> None:
        errors.append(f"{node}: {msg}")

    if (forest / ".gitignore").read_text(encoding="utf-8") != GITIGNORE:
        err(".gitignore", "is not the five forest patterns, one a line")
    types, rels = dialect(forest)
    nodes: dict[str, tuple[dict, str, str]] = {}
    for path in iter_node_files(forest):
        nid = path.relative_to(forest).with_suffix("").as_posix()
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        if "\r" in text:
            err(nid, "CR line endings")
        m = FM_RE.match(text)
        if not m:
            err(nid, "no frontmatter block")
            continue
        fm = yaml.safe_load(m.group(1))
        if not isinstance(fm, dict):
            err(nid, "frontmatter is not a mapping")
            continue
        rest = text[m.end() :]
        if (
            not rest.startswith("\n")
            or rest.startswith("\n\n")
            or not rest.endswith("\n")
            or rest.endswith("\n\n")
        ):
            err(nid, "file shape is not ---\\n<yaml>\\n---\\n\\n<body>\\n")
        canon = yaml.safe_dump(fm, allow_unicode=True, sort_keys=False, default_flow_style=False)
        if canon != m.group(1) + "\n":
            err(nid, "frontmatter is not in the engine's canonical YAML form")
        nodes[nid] = (fm, rest.lstrip("\n"), m.group(1))

    edges: dict[str, int] = {}
    for nid, (fm, body, raw_fm) in nodes.items():
        for key in REQUIRED:
            if key not in fm or fm[key] in (None, ""):
                err(nid, f"missing {key}")
        if fm.get("id") != nid:
            err(nid, f"id {fm.get('id')!r} does not match the path")
        for key in ("created", "updated"):
            if not (isinstance(fm.get(key), str) and ISO_DATE.match(fm[key])):
                err(nid, f"{key} must be a quoted ISO date string")
            elif f"{key}: '{fm[key]}'" not in raw_fm:
                err(nid, f"{key} is not single-quoted as the engine writes it")
        if body.split("\n", 1)[0] != f"# {fm.get('title')}":
            err(nid, "body does not open with '# <title>'")
        if fm.get("type") not in types:
            err(nid, f"type {fm.get('type')!r} is not declared")
        if fm.get("type") == "entity" and fm.get("entity_kind") not in ENTITY_KINDS:
            err(nid, "entity without a valid entity_kind")
        if fm.get("source") not in (None, *SOURCES):
            err(nid, "bad source")
        summary = str(fm.get("summary", ""))
        low = summary.strip().lower()
        if (
            not summary.strip()
            or tokens(summary) > 60
            or low.startswith(("this document describes", "file containing"))
        ):
            err(nid, "summary breaks the scent rules")
        for tag in fm.get("tags", []) or []:
            if tag != tag.lower() or " " in tag:
                err(nid, f"tag {tag!r} is not a lowercase token")
        if len(fm.get("aliases", []) or []) > 16:
            err(nid, "more than 16 aliases")
        links = fm.get("links", []) or []
        if len(links) > 50:
            err(nid, "more than 50 links")
        for link in links:
            if link.get("rel") not in rels:
                err(nid, f"rel {link.get('rel')!r} is not declared")
            if link.get("target") not in nodes:
                err(nid, f"link target {link.get('target')!r} does not exist")
            edges[link.get("rel")] = edges.get(link.get("rel"), 0) + 1
        for target in WIKILINK.findall(body):
            if target.strip() not in nodes:
                err(nid, f"wikilink [[{target}]] does not resolve")
        meta = " ".join(
            [
                str(fm.get("title", "")),
                summary,
                " ".join(fm.get("tags", []) or []),
                " ".join(fm.get("aliases", []) or []),
            ]
        )
        for code in BODY_ONLY_CODES:
            if code.lower() in meta.lower():
                err(nid, f"body-only code {code} appears in metadata")
        if fm.get("type") == "dataset":
            check_dataset(forest, nid, fm, body, err)

    for nid, (fm, body, _raw) in nodes.items():
        if fm.get("type") == "branch":
            check_branch(nid, fm, body, nodes, err)
        elif nid.endswith("/_index") or nid == "_index":
            err(nid, "an _index that is not a branch")

    found = {}
    for code in BODY_ONLY_CODES:
        found[code] = [n for n, (_fm, b, _r) in nodes.items() if code in b]
        if not found[code]:
            err("(codes)", f"{code} is not in any body")

    by_type: dict[str, int] = {}
    for fm, _b, _r in nodes.values():
        by_type[fm.get("type")] = by_type.get(fm.get("type"), 0) + 1
    branches = [n for n, (fm, _b, _r) in nodes.items() if fm.get("type") == "branch"]
    depth = max(n.count("/") for n in branches)
    longest = max(nodes, key=lambda n: tokens(nodes[n][1]))
    print(f"nodes: {len(nodes)} (branches {len(branches)}, leaves {len(nodes) - len(branches)})")
    print("types: " + ", ".join(f"{t} {c}" for t, c in sorted(by_type.items())))
    print(
        "rels: "
        + ", ".join(f"{r} {c}" for r, c in sorted(edges.items()))
        + f" (total {sum(edges.values())})"
    )
    print(
        f"max branch depth: {depth} (deepest: "
        f"{', '.join(n for n in branches if n.count('/') == depth)})"
    )
    print(f"longest body: {longest}, {tokens(nodes[longest][1])} est. tokens")
    for e in errors:
        print("ERROR", e)
    print(f"{len(errors)} error(s)")
    return 1 if errors else 0


def check_dataset(forest: Path, nid: str, fm: dict, body: str, err) -> None:
    if fm.get("payload_type") != "sqlite":
        err(nid, "dataset without payload_type sqlite")
    db = forest / Path(nid).parent / str(fm.get("payload"))
    if not db.is_file():
        err(nid, f"payload {fm.get('payload')!r} is missing (run the build)")
        return
    if sha256_file(db) != fm.get("payload_hash"):
        err(nid, "payload_hash does not match the .db bytes")
    sections = split_sections(body)
    for name in ("Query manual", "Sample rows", "Notes"):
        if name not in sections:
            err(nid, f"dataset body lacks ## {name}")
    start = body.find("## Query manual")
    end = body.find("\n\n## Notes")
    if start < 0 or end < 0 or body[start:end] != render_map(db):
        err(nid, "generated sections differ from a fresh rendering of the payload")


def check_branch(nid: str, fm: dict, body: str, nodes: dict, err) -> None:
    folder = "" if nid == "_index" else nid[: -len("/_index")]
    prefix = folder + "/" if folder else ""
    children = set()
    for other in nodes:
        if other == nid or not other.startswith(prefix) or other.startswith("_meta/"):
            continue
        rest = other[len(prefix) :]
        if "/" not in rest or (rest.count("/") == 1 and rest.endswith("/_index")):
            children.add(other)
    title_line = body.split("\n", 1)[0]
    if title_line != f"# {fm.get('title')}":
        err(nid, "branch body does not start with '# <title>'")
    quote = body.split("\n")[2] if body.count("\n") > 2 else ""
    if not quote.startswith("> "):
        err(nid, "branch body lacks the '> ' blurb after the title")
    order = re.findall(r"^## (.+)$", body, re.M)
    want = INDEX_SECTIONS + (["Landmarks"] if nid == "_index" else [])
    if order != want:
        err(nid, f"sections {order} should be {want}")
    sections = split_sections(body)
    listed: list[str] = []
    counts = {}
    for name in ("Sub-branches", "Direct bananas"):
        lines = [ln for ln in sections.get(name, "").split("\n") if ln.startswith("- [[")]
        counts[name] = len(lines)
        for line in lines:
            m = ENTRY.match(line)
            if not m:
                err(nid, f"malformed entry line {line!r}")
                continue
            cid, summary = m.groups()
            listed.append(cid)
            if cid not in nodes:
                err(nid, f"entry for missing node {cid}")
                continue
            is_branch = nodes[cid][0].get("type") == "branch"
            if is_branch != (name == "Sub-branches"):
                err(nid, f"{cid} listed under the wrong section")
            if summary != nodes[cid][0].get("summary"):
                err(nid, f"entry summary of {cid} differs from its frontmatter")
    if sorted(listed) != sorted(children):
        err(nid, f"entries {sorted(listed)} != children {sorted(children)}")
    coverage = f"{counts['Direct bananas']} bananas, {counts['Sub-branches']} sub-branches"
    if fm.get("coverage") != coverage:
        err(nid, f"coverage {fm.get('coverage')!r} should be {coverage!r}")
    for line in sections.get("Cross trails", "").split("\n"):
        if line.startswith("- "):
            m = CROSS_TRAIL.match(line)
            if not m or m.group(1) not in nodes:
                err(nid, f"bad cross trail {line!r}")
    for line in sections.get("Landmarks", "").split("\n"):
        if line.startswith("- "):
            m = ENTRY.match(line)
            if (
                not m
                or m.group(1) not in nodes
                or nodes[m.group(1)][0].get("summary") != m.group(2)
            ):
                err(nid, f"bad landmark {line!r}")
