"""harvest's evidence: the matched lines refined by term scarcity, the content of each
result (whole body, matched sections or outline), and the 4,000-token budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monkeyllm import Vine, budget
from monkeyllm.reads import features
from monkeyllm.text import fold

from ..forestkit import assert_ok, file_lines, forest_fixture, leaf, make_forest, reader
from .kit import MAX_K, QUESTION, assert_whole, by_id, fillers, fused, ids

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
    "incididunt ut labore et dolore magna aliqua. "
)


def long_body(title: str, sections: dict[str, str], preamble: str = "") -> str:
    """A body of several sections, each padded with filler text."""
    parts = [f"# {title}\n", preamble] if preamble else [f"# {title}\n"]
    for header, extra in sections.items():
        parts.append(f"## {header}\n\n{LOREM * 6}\n{extra}\n".rstrip() + "\n")
    return "\n".join(parts)


@pytest.fixture
def scarce(tmp_path: Path) -> Path:
    commons = "\n".join(f"common line {i}" for i in range(30))
    nodes: dict[str, tuple[str, dict[str, Any], str]] = {
        "m/_index": (
            "branch",
            {"title": "Rarity hub", "summary": "Rarity hub of the test."},
            "# Rarity hub\n\n"
            + "\n".join(f"common entry {i}" for i in range(4))
            + "\n\nthe rarity sits at the end\n",
        ),
        # the rare term shares a line with the common one, then comes twice much later
        "m/big": leaf(
            "# Big\n\n## Intro\n\ncommon and rarity together\n"
            + commons
            + "\n\n## Later\n\nthe rarity appears here\nand rarity once more\n",
            title="Big",
            summary="Mostly common words.",
        ),
        # three rare lines plus three common ones would be six: capped at five
        "m/big2": leaf(
            "# Big two\n\n" + commons + "\n\n## End\n\nrarity one\nrarity two\nrarity three\n",
            title="Big two",
            summary="More common words.",
        ),
    }
    nodes.update(fillers("m/c", 5, lambda i: f"common {i}"))
    return make_forest(tmp_path / "scarce", nodes)


def refined(vine: Vine, node_id: str, terms: list[str]) -> list[tuple[Any, ...]]:
    """The refinement the call contract describes: one scoped sniff per term, rarest
    term (fewest bodies) first, deduplicated by (section, line), at most 5."""
    bodies = {t: len(assert_ok(vine.sniff([t], k=20))["results"]) for t in terms}
    out: list[tuple[Any, ...]] = []
    for term in sorted(terms, key=lambda t: bodies[t]):
        hit = assert_ok(vine.sniff([term], scope=node_id))["results"]
        for m in hit[0]["matches"] if hit else []:
            key = (m["section"], m["line"], m["snippet"])
            if key[:2] not in [seen[:2] for seen in out]:
                out.append(key)
    return out[:5]


def test_matches_are_refined_rarest_term_first(scarce: Path) -> None:
    terms = ["common", "rarity"]
    with reader(scarce) as vine:
        plain = assert_ok(vine.sniff(terms, scope="m/big"))["results"][0]["matches"]
        out = assert_ok(vine.harvest("rarity hub big", terms=terms, k=5))
        expected = {i: refined(vine, i, terms) for i in ("m/big", "m/big2")}
    late = file_lines(scarce, "m/big").index("the rarity appears here") + 1
    assert late not in [m["line"] for m in plain]  # a plain sniff drowns it
    results = by_id(out)
    for node_id, want in expected.items():
        matches = results[node_id]["matches"]
        assert [(m["section"], m["line"], m["snippet"]) for m in matches] == want
        assert len(matches) <= 5
        assert len({m["line"] for m in matches}) == len(matches)
        assert "rarity" in fold(matches[0]["snippet"])
    assert late in [m["line"] for m in results["m/big"]["matches"]]
    assert len(results["m/big2"]["matches"]) == 5


def test_index_nodes_keep_the_global_matches(scarce: Path) -> None:
    terms = ["common", "rarity"]
    with reader(scarce) as vine:
        # (with index nodes in their rank, not after every leaf, so this one has a seat)
        with features.without("tiers"):
            out = assert_ok(vine.harvest("rarity hub", terms=terms, k=5))
        global_hits = {r["id"]: r["matches"] for r in assert_ok(vine.sniff(terms, k=10))["results"]}
        own = refined(vine, "m/_index", terms)
    index = by_id(out)["m/_index"]
    assert index["matches"] == global_hits["m/_index"]
    assert [(m["section"], m["line"], m["snippet"]) for m in index["matches"]] != own


bodies = forest_fixture(
    {
        "b/short": leaf(
            "# Short\n\n## One\n\nokapi in a short note\n", title="Okapi short", summary="Okapi."
        ),
        "b/long": leaf(
            long_body(
                "Long",
                {
                    f"Part {i}": (f"okapi in part {i}" if i in (2, 4, 5) else "")
                    for i in range(1, 8)
                },
                preamble="The long preamble.\n",
            ),
            title="Okapi long",
            summary="Okapi at length.",
        ),
        "b/map": leaf(
            long_body(
                "Map",
                {f"Chapter {i}": "" for i in range(1, 8)},
                preamble="An okapi before any section.\n",
            ),
            title="Okapi map",
            summary="Okapi, no body match.",
        ),
    }
)


def test_content_whole_sections_or_outline(bodies: Path) -> None:
    with reader(bodies) as vine:
        out = assert_ok(vine.harvest("okapi", terms=["okapi"], k=3))
        results = by_id(out)
        assert set(results) == {"b/short", "b/long", "b/map"}
        short, long, map_ = results["b/short"], results["b/long"], results["b/map"]
        whole = assert_ok(vine.pick("b/short"))["body"]
        assert budget.tokens(whole) <= 1200
        assert short["content"] == [
            {"section": None, "body": whole, "body_tokens": budget.tokens(whole)}
        ]
        # a long body: up to two of its matched sections, in the order of the matches
        assert budget.tokens(assert_ok(vine.pick("b/long"))["body"]) > 1200
        matched = list(dict.fromkeys(m["section"] for m in long["matches"] if m["section"]))
        assert len(matched) == 3
        assert [c["section"] for c in long["content"]] == matched[:2]
        assert_whole(vine, long)
        # a long body whose only match is outside every section: the outline, a map
        assert map_["matches"] and all(m["section"] is None for m in map_["matches"])
        map_body = assert_ok(vine.pick("b/map"))["body"]
        (part,) = map_["content"]
        assert part["section"] is None and "body" not in part
        assert part["outline"] == assert_ok(vine.look("b/map"))["outline"]
        assert part["body_tokens"] == budget.tokens(map_body) > 1200
        assert "section" in part["hint"]


def test_a_long_body_found_only_by_locate_comes_as_an_outline(bodies: Path) -> None:
    with reader(bodies) as vine:
        out = assert_ok(vine.harvest("Okapi map", terms=["no-such-text"], k=1))
    (result,) = out["results"]
    assert result["id"] == "b/map" and result["matches"] == []
    assert "outline" in result["content"][0] and "body" not in result["content"][0]


@pytest.mark.parametrize(
    "dataset", ["sales/orders-2026", "sales/pipeline/prospects-q2", "operations/stock-levels"]
)
def test_datasets_always_carry_their_notes(hv: Vine, dataset: str) -> None:
    digest = assert_ok(hv.look(dataset))
    text = (hv.root / f"{dataset}.md").read_text(encoding="utf-8")
    notes = text.split("\n## Notes\n", 1)[1].split("\n## ", 1)[0].strip()
    assert digest["notes"] == budget.truncate_text(notes, budget.NOTES)
    # found by its title alone, with terms that share nothing with the notes
    out = assert_ok(hv.harvest(digest["title"], terms=["zzqxv-no-such-string"], k=5))
    item = by_id(out)[dataset]
    assert item["type"] == "dataset" and item["notes"] == digest["notes"]


def test_only_datasets_carry_notes(hv: Vine) -> None:
    out = assert_ok(hv.harvest(QUESTION, k=5))
    for r in out["results"]:
        assert ("notes" in r) == (r["type"] == "dataset" and bool(hv.look(r["id"]).get("notes")))


@pytest.fixture
def heavy(tmp_path: Path) -> Path:
    nodes = {}
    for i in range(6):
        body = f"# Pangolin {i}\n\n## Facts\n\nThe pangolin number {i}.\n\n" + (LOREM * 38) + "\n"
        nodes[f"h/p{i}"] = leaf(body, title=f"Pangolin {i}", summary="Pangolin.")
    return make_forest(tmp_path / "heavy", nodes)


def test_tail_results_give_up_their_bodies_before_any_is_dropped(heavy: Path) -> None:
    with reader(heavy) as vine:
        sizes = [budget.tokens(assert_ok(vine.pick(f"h/p{i}"))["body"]) for i in range(6)]
        assert all(1000 < s <= 1200 for s in sizes), sizes
        out = assert_ok(vine.harvest("pangolin", k=5))
        expected = [i for i, _, _ in fused(vine, "pangolin", None, 5)]
        assert budget.cost(out) <= budget.HARVEST
        assert out["truncated"] is True
        assert ids(out) == expected[:5]
        whole = [r for r in out["results"] if "body" in r["content"][0]]
        mapped = [r for r in out["results"] if "outline" in r["content"][0]]
        # the best results keep their bodies, whole; the tail comes as maps, matches kept
        assert 1 <= len(whole) < 5 and out["results"][: len(whole)] == whole
        assert out["results"][len(whole) :] == mapped
        for r in whole:
            assert_whole(vine, r)
        for r in mapped:
            (content,) = r["content"]
            assert content["section"] is None and content["outline"] == ["Facts"]
            assert content["body_tokens"] == sizes[int(r["id"][-1])]
            assert r["matches"]
        # the first of the maps could not have kept its body
        assert budget.cost(out) + min(sizes) > budget.HARVEST
        smaller = assert_ok(vine.harvest("pangolin", k=len(whole)))
    assert ids(smaller) == ids(out)[: len(whole)] and smaller["truncated"] is False


def test_a_lone_result_too_big_for_the_bundle_is_never_sliced(tmp_path: Path) -> None:
    giant = "## Giant\n\nthe tapir section\n\n" + "\n\n".join([LOREM * 10] * 16)
    root = make_forest(
        tmp_path / "giant",
        {
            "g/doc": leaf(
                "# Doc\n\n## Small\n\nshort\n\n" + giant + "\n", title="Tapir", summary="Tapir."
            )
        },
    )
    with reader(root) as vine:
        section = assert_ok(vine.pick("g/doc", section="Giant"))["body"]
        assert budget.tokens(section) > budget.HARVEST
        out = assert_ok(vine.harvest("tapir", terms=["tapir"], k=1))
    assert budget.cost(out) <= budget.HARVEST and out["truncated"] is True
    for r in out["results"]:
        assert all("body" not in part for part in r["content"])


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "exchange",
                "policy",
                "deadline",
                "orders",
                "2026",
                "ICMS",
                "NF-4412",
                "stock",
                "erp",
                "outage",
                "master",
                "agreement",
                "the",
                "what",
                "é",
                "prazo",
                "região",
                "price",
                "list",
                "Horizonte",
                "carriers",
                "freight",
                "?",
                "zzqxv",
            ]
        ),
        min_size=1,
        max_size=7,
    ),
    terms=st.none()
    | st.lists(
        st.sampled_from(["exchange", "orders", "stock", "REC", "30 days", "ICMS", "qq", "on_hand"]),
        min_size=1,
        max_size=4,
    ),
    k=st.integers(1, 5),
)
def test_every_bundle_fits_and_never_slices(
    hv: Vine, words: list[str], terms: list[str] | None, k: int
) -> None:
    out = assert_ok(hv.harvest(" ".join(words), terms=terms, k=k))
    assert budget.cost(out) <= budget.HARVEST
    assert len(out["results"]) <= min(max(k, 1), MAX_K)
    assert len(set(ids(out))) == len(out["results"])
    for r in out["results"]:
        assert len(r["matches"]) <= 5
        assert_whole(hv, r)


def test_the_locate_leg_ranks_its_whole_pool_past_locates_own_budget(tmp_path: Path) -> None:
    """locate's 800 tokens hold two of these long summaries; harvest's leg still ranks
    all ten, so a node both legs find is credited by both."""
    long = " ".join(f"word{i}" for i in range(120))
    nodes = {
        f"a/n{i}": leaf("# N\n\nNothing here.\n", title=f"Walrus survey {i}", summary=long)
        for i in range(9)
    }
    nodes["a/x"] = leaf("# X\n\nOne walrus seen.\n", title="Walrus survey extra", summary=long)
    for i in range(4):
        nodes[f"b/s{i}"] = leaf("# S\n\n" + "walrus walrus.\n" * (4 - i), title=f"Log {i}")
    with reader(make_forest(tmp_path / "f", nodes)) as vine:
        shown = assert_ok(vine.locate("walrus", k=10))
        out = assert_ok(vine.harvest("walrus", k=3))
    assert shown["truncated"] and "a/x" not in ids(shown)
    assert ids(out)[0] == "a/x"
    assert out["results"][0]["found_by"] == ["locate", "sniff"]
