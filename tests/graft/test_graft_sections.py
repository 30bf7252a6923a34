"""graft's sections and bodies: append, replace and replace_body, each naming what it
replaced; the commit subject of every kind of edit; and the contract's example on
sample-brain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from ..forestkit import assert_error, assert_ok, git, head, meta_of, node_path, status
from .kit import (
    ALPHA_BODY,
    ALPHA_SUMMARY,
    EM,
    TODAY,
    blob,
    body_of,
    changed_files,
    split,
    subject,
    tracked,
    unchanged,
)


def test_append_section(vine: Vine) -> None:
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {"append_section": {"header": "Notes", "body": "\n  Learned during a hunt.  \n\n"}},
        )
    )
    assert out["summary_stale"] is True
    assert body_of(vine, "kb/alpha") == ALPHA_BODY + "\n## Notes\n\nLearned during a hunt.\n"
    assert subject(vine.root) == "graft(kb/alpha): append 'Notes'"
    assert changed_files(vine.root) == {"kb/alpha.md"}
    assert meta_of(node_path(vine.root, "kb/alpha"))["updated"] == TODAY
    assert assert_ok(vine.pick("kb/alpha", section="Notes"))["body"].endswith(
        "Learned during a hunt."
    )
    assert "Notes" in assert_ok(vine.look("kb/alpha"))["outline"]


@pytest.mark.parametrize(
    "header, expected",
    [
        (
            "Usage",
            "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nNew text.\n\n## History\n\n"
            "Alpha began in 2020.\n",
        ),
        (
            "usage",
            "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nNew text.\n\n## History\n\n"
            "Alpha began in 2020.\n",
        ),
        (
            "Details",
            "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nUse alpha daily.\n\n"
            "### Details\n\nNew text.\n\n## History\n\nAlpha began in 2020.\n",
        ),
        (
            "History",
            "# Alpha\n\nIntro paragraph.\n\n## Usage\n\nUse alpha daily.\n\n"
            "### Details\n\nFine print.\n\n## History\n\nNew text.\n",
        ),
    ],
)
def test_replace_section(vine: Vine, header: str, expected: str) -> None:
    out = assert_ok(
        vine.graft("kb/alpha", {"replace_section": {"header": header, "body": "New text."}})
    )
    assert out["summary_stale"] is True
    assert body_of(vine, "kb/alpha") == expected
    assert subject(vine.root) == f"graft(kb/alpha): replace '{header}'"
    assert status(vine.root) == ""


def test_replace_section_stops_at_a_higher_header(vine: Vine) -> None:
    assert_ok(vine.graft("kb/beta", {"replace_body": "# Beta\n\n## One\n\nx\n\n# Two\n\ny"}))
    assert_ok(vine.graft("kb/beta", {"replace_section": {"header": "One", "body": "z"}}))
    assert body_of(vine, "kb/beta") == "# Beta\n\n## One\n\nz\n\n# Two\n\ny\n"


def test_missing_section(shared: Vine) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(
        vine.graft("kb/alpha", {"replace_section": {"header": "Nowhere", "body": "x"}}),
        "E_NOT_FOUND",
    )
    assert_error(
        vine.graft(
            "kb/alpha",
            {
                "set_frontmatter": {"title": "New"},
                "replace_section": {"header": "Nowhere", "body": "x"},
            },
        ),
        "E_NOT_FOUND",
    )
    unchanged(vine, before, files)


@pytest.mark.parametrize(
    "arg",
    [{"header": "", "body": "x"}, {"header": "H"}, "H", {"body": "x"}],
    ids=["empty-header", "no-body", "string", "no-header"],
)
def test_bad_section_argument(shared: Vine, arg: Any) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft("kb/alpha", {"append_section": arg}), "E_SCHEMA")
    assert_error(vine.graft("kb/alpha", {"replace_section": arg}), "E_SCHEMA")
    unchanged(vine, before, files)


def test_replace_body(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": "# Alpha\n\nOne two three."}))
    assert out["summary_stale"] is True
    assert body_of(vine, "kb/alpha") == "# Alpha\n\nOne two three.\n"
    assert subject(vine.root) == "graft(kb/alpha): replace body (5 words)"
    assert assert_ok(vine.look("kb/alpha"))["outline"] == []
    assert assert_ok(vine.sniff("One two three"))["results"][0]["id"] == "kb/alpha"
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": ""}))
    assert out["commit"] == head(vine.root)
    assert subject(vine.root) == "graft(kb/alpha): replace body (0 words)"
    assert assert_ok(vine.look("kb/alpha"))["summary"] == ALPHA_SUMMARY


def test_replace_body_with_summary_is_not_stale(vine: Vine) -> None:
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {"replace_body": "# Alpha\n\nShort.", "set_frontmatter": {"summary": "Short alpha."}},
        )
    )
    assert "summary_stale" not in out
    assert subject(vine.root) == "graft(kb/alpha): set summary; replace body (3 words)"
    assert changed_files(vine.root) == {"kb/alpha.md", "kb/_index.md", "_index.md"}


@pytest.mark.parametrize(
    "node_id, patch",
    [
        ("kb/alpha", {"replace_body": "x", "append_section": {"header": "H", "body": "b"}}),
        ("kb/alpha", {"replace_body": "x", "replace_section": {"header": "Usage", "body": "b"}}),
        ("kb/_index", {"replace_body": "# Knowledge\n"}),
        ("_index", {"replace_body": "# Title\n"}),
        ("kb/alpha", {"replace_body": 3}),
        ("kb/alpha", {}),
        ("kb/alpha", {"rename": "x"}),
        ("kb/alpha", {"set_frontmatter": {"title": "T"}, "bogus": 1}),
        ("kb/alpha", {"set_frontmatter": "title"}),
        ("kb/alpha", {"remove_links": "kb/beta"}),
    ],
    ids=[
        "body+append",
        "body+replace",
        "body-of-branch",
        "body-of-master",
        "body-not-str",
        "empty",
        "unknown-key",
        "unknown-beside-known",
        "frontmatter-not-object",
        "remove-not-list",
    ],
)
def test_patch_shape_refusals(shared: Vine, node_id: str, patch: dict[str, Any]) -> None:
    vine = shared
    before, files = head(vine.root), tracked(vine.root)
    assert_error(vine.graft(node_id, patch), "E_SCHEMA")
    unchanged(vine, before, files)


def test_unknown_node(shared: Vine) -> None:
    vine = shared
    assert_error(vine.graft("kb/nothing", {"set_frontmatter": {"title": "T"}}), "E_NOT_FOUND")
    assert_error(vine.graft("../outside", {"set_frontmatter": {"title": "T"}}), "E_NOT_FOUND")


def test_summary_stale_only_when_the_body_changed(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"set_frontmatter": {"tags": ["x"]}}))
    assert "summary_stale" not in out
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "append_section": {"header": "N", "body": "b"},
                "set_frontmatter": {"summary": "Alpha noted."},
            },
        )
    )
    assert "summary_stale" not in out


def test_index_sections_can_be_appended(vine: Vine) -> None:
    assert_ok(
        vine.graft(
            "kb/_index", {"append_section": {"header": "Reading order", "body": "Alpha first."}}
        )
    )
    meta, body = split(vine.root / "kb/_index.md")
    assert body.endswith("## Reading order\n\nAlpha first.\n")
    assert meta["coverage"] == "3 bananas, 0 sub-branches"


@pytest.mark.parametrize(
    "patch",
    [
        {"append_section": {"header": "First\nSecond", "body": "Text."}},
        {"replace_section": {"header": "Usage\nInjected", "body": "Text."}},
    ],
    ids=["append", "replace"],
)
def test_a_header_never_breaks_the_commit_subject(vine: Vine, patch: dict[str, Any]) -> None:
    """§9: one subject line. A header with a line break must be refused (it would also
    write a second line under the ``##``), or flattened."""
    before, files = head(vine.root), tracked(vine.root)
    out = vine.graft("kb/alpha", patch)
    if "error" in out:
        assert out["error"]["code"] in ("E_SCHEMA", "E_NOT_FOUND"), out
        unchanged(vine, before, files)
        return
    message = git(vine.root, "log", "-1", "--format=%B").strip()
    assert "\n" not in message, message


def test_subject_parts_in_reference_order(vine: Vine) -> None:
    assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "set_frontmatter": {"title": "Alpha prime", "tags": ["a"]},
                "add_links": [
                    {"rel": "related-to", "target": "kb/beta"},
                    {"rel": "related-to", "target": "kb/gamma"},
                ],
                "remove_links": [{"rel": "part-of", "target": "kb/_index"}],
                "append_section": {"header": "Notes", "body": "Seen."},
            },
        )
    )
    assert (
        subject(vine.root) == "graft(kb/alpha): set tags,title; +2 links; -1 links; append 'Notes'"
    )
    assert meta_of(node_path(vine.root, "kb/alpha"))["updated"] == TODAY
    assert status(vine.root) == ""


def test_append_comes_before_replace_in_the_subject(vine: Vine) -> None:
    """§6.9 lists the parts as ... `append '<h>'`, `replace '<h>'`, `replace body`."""
    assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "replace_section": {"header": "History", "body": "Older than thought."},
                "append_section": {"header": "Notes", "body": "Seen."},
            },
        )
    )
    assert subject(vine.root) == "graft(kb/alpha): append 'Notes'; replace 'History'"


def test_seed_example_on_the_sample_brain(brain_copy: Path) -> None:
    root = brain_copy
    new = "Return and exchange windows per channel, superseded for 2027."
    with Vine(root) as vine:
        before = head(root)
        others = {
            rel: (root / rel).read_bytes()
            for rel in ("operations/_index.md", "contracts/_index.md", "people/ana-ribeiro.md")
        }
        out = assert_ok(
            vine.graft(
                "sales/exchange-policy",
                {
                    "set_frontmatter": {"summary": new},
                    "add_links": [{"rel": "succeeds", "target": "sales/exchange-policy-2025"}],
                    "append_section": {
                        "header": "Notes",
                        "body": "Superseded by the 2027 policy from January.",
                    },
                },
            )
        )
        assert out == {
            "id": "sales/exchange-policy",
            "commit": head(root),
            "fortified": [{"rel": "succeeds", "target": "sales/exchange-policy-2025"}],
            "trail": ["_index", "sales/_index"],
            "revision": blob(root, "sales/exchange-policy"),
        }
        assert git(root, "rev-parse", "HEAD~1").strip() == before
        assert subject(root) == "graft(sales/exchange-policy): set summary; append 'Notes'"
        assert changed_files(root) == {"sales/exchange-policy.md", "sales/_index.md", "_index.md"}
        assert status(root) == ""
        meta, body = split(root / "sales/exchange-policy.md")
        assert meta["summary"] == new and meta["updated"] == TODAY
        assert meta["created"] == "2026-01-05"
        assert [link for link in meta["links"] if link["rel"] == "succeeds"] == [
            {"rel": "succeeds", "target": "sales/exchange-policy-2025"}
        ]
        assert body.endswith("## Notes\n\nSuperseded by the 2027 policy from January.\n")
        for index in ("sales/_index.md", "_index.md"):
            lines = split(root / index)[1].split("\n")
            assert f"- [[sales/exchange-policy]] {EM} {new}" in lines
        for rel, data in others.items():
            assert (root / rel).read_bytes() == data
        assert assert_ok(vine.look("sales/exchange-policy"))["summary"] == new
        found = assert_ok(vine.locate("exchange policy superseded 2027"))["results"]
        assert "sales/exchange-policy" in [r["id"] for r in found]
    with Vine(root, writable=False) as reader:
        assert assert_ok(reader.look("sales/exchange-policy"))["summary"] == new


def test_replace_section_names_the_subsections_it_removed(vine: Vine) -> None:
    """Usage holds ### Details: replacing Usage with text that lacks it says so."""
    out = assert_ok(
        vine.graft("kb/alpha", {"replace_section": {"header": "usage", "body": "New text."}})
    )
    assert out["sections_replaced"] == ["Usage"]
    assert out["sections_removed"] == ["Details"]
    assert "removed its subsections 'Details'" in out["hint"]
    assert f"git show {out['commit'][:12]}^:kb/alpha.md" in out["hint"]
    assert "Details" not in assert_ok(vine.look("kb/alpha"))["outline"]


def test_replace_section_keeping_its_subsections_removes_nothing(vine: Vine) -> None:
    out = assert_ok(
        vine.graft(
            "kb/alpha",
            {
                "replace_section": {
                    "header": "Usage",
                    "body": "Use it weekly.\n\n### Details\n\nFiner print.",
                }
            },
        )
    )
    assert out["sections_replaced"] == ["Usage"]
    assert "sections_removed" not in out and "hint" not in out
    assert assert_ok(vine.look("kb/alpha"))["outline"] == ["Usage", "Details", "History"]


def test_replace_section_without_subsections_removes_nothing(vine: Vine) -> None:
    out = assert_ok(
        vine.graft("kb/alpha", {"replace_section": {"header": "History", "body": "Since 2019."}})
    )
    assert out["sections_replaced"] == ["History"] and "sections_removed" not in out


def test_replace_body_names_the_sections_it_removed(vine: Vine) -> None:
    out = assert_ok(vine.graft("kb/alpha", {"replace_body": "# Alpha\n\n## Usage\n\nDaily."}))
    assert out["sections_removed"] == ["Details", "History"]
    assert "sections_replaced" not in out
    assert "no longer holds the sections 'Details', 'History'" in out["hint"]
