"""pick: whole bodies, named sections, section lists, pages, and the over-budget map."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from monkeyllm import Vine, budget
from monkeyllm.reads.pick import blocks

from .forestkit import assert_error, assert_ok, make_forest

POLICY = """# Policy

Intro line.

## Channels

Retail and online.

### Retail

Counter exchanges.

## Deadlines

Thirty days.

```sh
# a comment, not a header
echo ok
```

## Invoice rules

Reissue under the same series.
"""


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    big = "# Big\n\n" + "\n\n".join(
        f"## Part {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(300)) for i in range(12)
    )
    giant = "# Giant\n\n" + " ".join(f"token{j}" for j in range(6000))
    return make_forest(
        tmp_path / "f",
        {
            "s/policy": ("note", {"title": "Policy"}, POLICY),
            "s/big": ("document", {"title": "Big"}, big),
            "s/giant": ("document", {"title": "Giant"}, giant),
        },
    )


def test_whole_body(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.pick("s/policy"))
    data = (forest / "s/policy.md").read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    # The revision is the file's git blob id (git hash-object), cut to 12 characters.
    assert out == {
        "id": "s/policy",
        "title": "Policy",
        "body": POLICY.strip(),
        "body_tokens": budget.tokens(POLICY.strip()),
        "truncated": False,
        "revision": blob[:12],
    }


@pytest.mark.parametrize(
    "name, header",
    [
        ("Deadlines", "Deadlines"),
        ("deadlines", "Deadlines"),
        ("DEAD", "Deadlines"),
        ("## Deadlines", "Deadlines"),
        ("Retail", "Retail"),
        ("invoice", "Invoice rules"),
    ],
)
def test_section_matching(forest: Path, name: str, header: str) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.pick("s/policy", section=name))
    assert out["section"] == header and out["truncated"] is False


def test_section_runs_to_next_header_of_same_or_higher_level(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        channels = vine.pick("s/policy", section="Channels")["body"]
        deadlines = vine.pick("s/policy", section="Deadlines")["body"]
    assert channels.startswith("## Channels") and "### Retail" in channels
    assert "Deadlines" not in channels
    assert "# a comment, not a header" in deadlines and "Invoice" not in deadlines


def test_missing_section_lists_the_outline(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        err = assert_error(vine.pick("s/policy", section="Refunds"), "E_NOT_FOUND")
    assert "Deadlines" in err["hint"] and "Channels" in err["hint"]


def test_section_list(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.pick("s/policy", section=["Deadlines", "Nope", "Channels"]))
    assert [s["header"] for s in out["sections"]] == ["Deadlines", "Channels"]
    assert out["missing"] == ["Nope"] and "Invoice rules" in out["hint"]


def test_over_budget_body_answers_a_map_never_a_slice(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.pick("s/big"))
    assert "body" not in out
    assert out["truncated"] is True and out["outline"][0] == "Part 0"
    assert out["body_tokens"] > budget.PICK
    assert "section=" in out["hint"]


def test_a_named_section_has_no_cap(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.pick("s/big", section="Part 3"))
    assert "word3x299" in out["body"]


def test_pages_rebuild_the_exact_body(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        body = vine.pick("s/big", section="Part 0")  # warm the node cache
        pages, cursor = [], ""
        while True:
            page = assert_ok(vine.pick("s/big", after=cursor))
            assert budget.cost(page) <= budget.PICK
            pages.append(page["body"])
            if not page["truncated"]:
                break
            cursor = page["next"]
        full = (forest / "s" / "big.md").read_text().split("---\n", 2)[2].strip()
    assert body
    assert "".join(pages) == full
    assert len(pages) > 1


def test_a_block_larger_than_a_page_is_read_in_parts(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        first = assert_ok(vine.pick("s/giant", after=""))
        assert first["returned"] == 1 and first["next"] == "b0"
        parts, cursor = [first["body"]], first["next"]
        while cursor:
            page = assert_ok(vine.pick("s/giant", after=cursor))
            assert budget.cost(page) <= budget.PICK
            if page.get("cut"):
                assert page["next"].startswith("b1:")
            parts.append(page["body"])
            cursor = page.get("next")
        full = (forest / "s" / "giant.md").read_text().split("---\n", 2)[2].strip()
        assert "".join(parts) == full
        assert len(parts) >= 3
        assert all(not p.endswith("…") for p in parts)
        end = assert_ok(vine.pick("s/giant", after="b99"))
        assert end["body"] == "" and end["returned"] == 0 and end["truncated"] is False


def test_paging_errors(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert_error(vine.pick("s/big", after="7"), "E_SCHEMA")
        assert_error(vine.pick("s/big", after="b1:x"), "E_SCHEMA")
        assert_error(vine.pick("s/big", after="b1", section="Part 1"), "E_SCHEMA")
        assert_error(vine.pick(["s/big"], after=""), "E_SCHEMA")


def test_batch(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        out = assert_ok(vine.pick(["s/policy", "s/none", "s/big"]))
        assert [n["id"] for n in out["nodes"]] == ["s/policy", "s/big"]
        assert out["missing"] == ["s/none"]
        assert budget.cost(out) <= budget.PICK_BATCH
        assert_error(vine.pick([f"s/{i}" for i in range(6)]), "E_SCHEMA")


def test_blocks_join_back() -> None:
    text = "a\n\nb\n\n\n\nc\nd\n\ne"
    assert "".join(blocks(text)) == text
    assert blocks(text) == ["a\n\n", "b\n\n\n\n", "c\nd\n\n", "e"]


def test_seed_example_literally(sample_root: Path) -> None:
    with Vine(sample_root, writable=False) as vine:
        out = assert_ok(vine.pick("sales/exchange-policy", section="Deadlines"))
        assert out["body"].startswith("## Deadlines") and "NF-4412" in out["body"]
        big = assert_ok(vine.pick("contracts/master-agreement"))
    assert big["truncated"] is True and big["body_tokens"] > 4000
    for name in ("Parties", "Scope", "Payment terms", "Termination", "Annexes"):
        assert name in big["outline"]
