"""A node both rankers found that is also a hit's neighbour, supplying what the hit
lacks: its own score and its link's credit both count (the ``support`` feature)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from monkeyllm import Vine
from monkeyllm.reads import edges, harvest
from monkeyllm.reads.sweep import doc_counts, term_weights

from ..forestkit import forest_fixture, leaf, reader

NODES: dict[str, tuple[str, dict[str, Any], str]] = {
    "projects/alvorada": leaf(
        "# Alvorada\n\nPanels arrive in May.\n",
        title="Alvorada solar farm",
        summary="A solar farm near Petrolina.",
        links=[("related-to", "people/rita")],
    ),
    "people/rita": leaf(
        "# Rita Soares\n\nCivil engineer since 2014.\n",
        "entity",
        entity_kind="person",
        title="Rita Soares",
        summary="Lives in the city of Juazeiro.",
    ),
    "notes/roster": leaf("# Roster\n\nNames.\n", title="Team roster", summary="Who is where."),
}
# What the hit carries (alvorada), what its neighbour supplies (city), and what neither
# does (payroll): the neighbour supplies part of what the hit lacks.
TERMS = ["alvorada", "city", "payroll"]

forest = forest_fixture(NODES)


def candidate(vine: Vine, node_id: str, score: float) -> harvest._Candidate:
    cand = harvest._Candidate(node_id, vine._forest.catalog.row(node_id))
    cand.score, cand.found_by = score, ["locate"]
    return cand


def seats(vine: Vine, scores: dict[str, float], *, support: bool) -> list[tuple[str, float]]:
    """harvest's two seats once the neighbours compete, from the rankers' ``scores``."""
    fused = [candidate(vine, node_id, s) for node_id, s in scores.items()]
    counts = doc_counts(vine._forest, TERMS)
    kept = harvest._with_neighbours(
        vine._forest, fused[:2], 2, TERMS, counts, {}, fused, frozenset(), support=support
    )
    return [(c.id, c.score) for c in kept]


def test_a_found_neighbour_adds_its_links_credit_to_its_own_score(forest: Path) -> None:
    with reader(forest) as vine:
        top = 0.03
        source = [("projects/alvorada", top, "Alvorada solar farm A solar farm near Petrolina.")]
        weight = term_weights(vine._forest, TERMS, doc_counts(vine._forest, TERMS))
        (near,) = edges.linked(vine._forest, source, TERMS, weight, {})
        assert near.id == "people/rita" and near.supplies == ["city"]
        assert 0 < near.credit < top * (1 - edges.LINK_PRIOR)  # a part of what is lacking
        assert near.score == top * edges.LINK_PRIOR + near.credit
        # A direct hit just above the neighbour's link alone, and the neighbour found
        # by the rankers just below that hit.
        rival = near.score + 0.1 * near.credit
        found = rival - 0.5 * near.credit
        scores = {"projects/alvorada": top, "notes/roster": rival, "people/rita": found}
        on = seats(vine, scores, support=True)
        off = seats(vine, scores, support=False)
    assert on[0] == ("projects/alvorada", top)
    assert on[1][0] == "people/rita"
    assert on[1][1] == found + near.credit > rival
    # Without it, the higher of the two: neither beats the direct hit.
    assert off == [("projects/alvorada", top), ("notes/roster", rival)]


def test_support_never_lowers_what_the_link_alone_gives(forest: Path) -> None:
    with reader(forest) as vine:
        scores = {"projects/alvorada": 0.03, "notes/roster": 0.01, "people/rita": 0.001}
        on = dict(seats(vine, scores, support=True))
        off = dict(seats(vine, scores, support=False))
    assert on["people/rita"] == off["people/rita"] > 0.01


def test_a_supported_node_ranks_right_after_its_source_at_most(forest: Path) -> None:
    """However strongly it was found, the link lifts it no higher than the hit it is
    linked to (so harvest(k=3) stays the first three of harvest(k=5))."""
    with reader(forest) as vine:
        scores = {"projects/alvorada": 0.03, "people/rita": 0.0299, "notes/roster": 0.001}
        on = seats(vine, scores, support=True)
    assert on == [("projects/alvorada", 0.03), ("people/rita", 0.03)]
