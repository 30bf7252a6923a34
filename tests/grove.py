"""A small git forest for the lifecycle tests (prune, transplant, history), built
through the engine so every file is exactly what the engine writes."""

from __future__ import annotations

from pathlib import Path

from monkeyllm import Vine

from .forestkit import assert_ok, counter, git, node

EM = "\u2014"

ALPHA_BODY = """# Alpha

Alpha is the first letter; see [[kb/beta]] for the second.

## Usage

Daily, by everyone who writes the kb.
"""

BETA_BODY = """# Beta

Beta follows [[kb/alpha]], and [[kb/alpha|the first letter]] comes before it.
The section [[kb/alpha#Usage]] says how alpha is used.

```text
An example, not a link: [[kb/alpha]]
```

## Notes

Nothing else here.
"""

GAMMA_BODY = """# Gamma

Gamma cites [[kb/alpha]] once, in prose.
"""


def grow(root: Path) -> Path:
    """kb/ (alpha, beta, data) and other/ (gamma), with links in both directions:

    - beta links to alpha (related-to) and names it three times in prose, once more in
      a fenced example; alpha links to beta and names it once;
    - gamma links to alpha twice (related-to, mentioned-in) and once in prose;
    - the master index lists alpha among its Landmarks (an entry line, not a link).
    """
    with Vine.init(root, "Grove") as v:
        for spec in (
            node("kb", "_index", "Knowledge", "Letters and their uses.", type="branch"),
            node("other", "_index", "Other", "Everything that is not a letter.", type="branch"),
            node(
                "kb/alpha",
                "kb",
                "Alpha",
                "Alpha, the first letter of the kb.",
                tags=["letter"],
                body=ALPHA_BODY,
            ),
            node(
                "kb/beta",
                "kb",
                "Beta",
                "Beta, the second letter of the kb.",
                links=[{"rel": "related-to", "target": "kb/alpha"}],
                body=BETA_BODY,
            ),
            node(
                "other/gamma",
                "other",
                "Gamma",
                "Gamma, a letter filed elsewhere.",
                links=[
                    {"rel": "related-to", "target": "kb/alpha"},
                    {"rel": "mentioned-in", "target": "kb/alpha"},
                ],
                body=GAMMA_BODY,
            ),
            counter("A counter kept by the kb.", 0),
        ):
            assert_ok(v.plant(spec))
        assert_ok(v.graft("kb/alpha", {"add_links": [{"rel": "related-to", "target": "kb/beta"}]}))
        index = root / "_index.md"
        text = index.read_text(encoding="utf-8").rstrip("\n")
        index.write_text(
            text + f"\n\n- [[kb/alpha]] {EM} Alpha, the first letter of the kb.\n", encoding="utf-8"
        )
        assert_ok(v.graft("_index", {"set_frontmatter": {"tags": ["grove"]}}))
    return root


def body_of(path: Path) -> str:
    """A node file's body."""
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[1]


# A node file whose frontmatter no YAML parser reads (the catalog skips it).
BROKEN = """---
id: other/{name}
type: note
title: [unclosed
summary: A file whose frontmatter no YAML parser reads.
{links}---

# {name}

{body}
"""


def write_unparsed(root: Path) -> dict[str, str]:
    """Three skipped files naming kb/stray (a link ``target:``), kb/lone (a wikilink) and
    kb/quiet (in prose only), committed; returns their texts by path."""
    files = {
        "other/linked.md": BROKEN.format(
            name="linked", links="links:\n  - {rel: related-to, target: kb/stray}\n", body="Hi."
        ),
        "other/prose.md": BROKEN.format(name="prose", links="", body="See [[kb/lone|it]]."),
        "other/plain.md": BROKEN.format(name="plain", links="", body="kb/quiet is no link."),
    }
    for path, text in files.items():
        (root / path).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "broken")
    return files
