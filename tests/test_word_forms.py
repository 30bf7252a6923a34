"""locate and harvest understand how people ask: word forms in English and Portuguese,
natural questions whose function words weigh nothing, a superseded node below its
successor, and evidence one typed edge away.

Expectations come from the files each test writes, never from an earlier answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from monkeyllm import Vine, budget
from monkeyllm.reads import features
from monkeyllm.stems import stem_text, stems

from .forestkit import assert_ok, forest_fixture, git_init, leaf, make_forest, person, reader
from .mcpkit import TIMEOUT, VINE, payload, stdio_session

FOREST: dict[str, tuple[str, dict[str, Any], str]] = {
    "sales/return-policy": leaf(
        "# Return policy\n\n## Deadline\n\nThirty days from the invoice date.\n",
        title="Return policy",
        summary="How a customer brings goods back, and the deadline to do it.",
    ),
    "vendas/politica-de-trocas": leaf(
        "# Política de trocas\n\nO prazo é de trinta dias para trocar o produto.\n",
        title="Política de trocas",
        summary="O prazo de troca nas lojas e a regra da nota fiscal.",
    ),
    "ops/devolucoes": leaf(
        "# Devoluções\n\nA triagem é feita no mesmo dia.\n",
        title="Devoluções no armazém",
        summary="Como o armazém recebe e confere o que volta das lojas.",
    ),
    "ops/meeting-notes": leaf(
        "# Meeting notes\n\nNothing was decided about the dock.\n",
        title="Meeting notes",
        summary="What the warehouse team agreed in March.",
    ),
    "fiscal/nota-4412": leaf(
        "# Invoice\n\nThe invoice NF-4412 was issued on a Monday.\n",
        title="Invoice record",
        summary="A retail invoice kept for the audit.",
        aliases=["NF-4412"],
    ),
    "fiscal/nota-4413": leaf(
        "# Invoice\n\nThe invoice NF-4413 followed it.\n",
        title="Invoice record, the next one",
        summary="Invoices in series.",
        aliases=["NF-4413"],
    ),
}


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_forest(tmp_path_factory.mktemp("forms") / "forest", FOREST)


@pytest.fixture
def vine(forest: Path) -> Any:
    with reader(forest) as v:
        yield v


def located(vine: Vine, query: str, k: int = 5) -> list[str]:
    return [r["id"] for r in assert_ok(vine.locate(query, k=k))["results"]]


# -- word forms --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "node"),
    [
        ("returns", "sales/return-policy"),
        ("deadlines", "sales/return-policy"),
        ("prazos", "vendas/politica-de-trocas"),
        ("políticas", "vendas/politica-de-trocas"),
        ("politicas", "vendas/politica-de-trocas"),  # typed without accents
        ("trocar", "vendas/politica-de-trocas"),  # a verb form of troca
        ("devolução", "ops/devolucoes"),  # the singular of the title's plural
        ("devolucao", "ops/devolucoes"),  # the singular without its accents
    ],
)
def test_locate_finds_other_forms_of_a_word(vine: Vine, query: str, node: str) -> None:
    assert located(vine, query)[0] == node
    with features.without("stems"):
        assert node not in located(vine, query)


def test_an_exact_word_outranks_another_form_of_it(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "exact",
        {
            "a/singular": leaf("# D\n", title="Deadline", summary="One date."),
            "a/plural": leaf("# D\n", title="Deadlines", summary="Several dates."),
        },
    )
    with reader(root) as vine:
        assert located(vine, "deadlines") == ["a/plural", "a/singular"]
        assert located(vine, "deadline") == ["a/singular", "a/plural"]
        first, second = assert_ok(vine.locate("deadline"))["results"]
        assert first["score"] > second["score"]


def test_codes_are_never_stemmed(vine: Vine) -> None:
    assert stems("NF4412", "en") == () and stems("4412", "pt") == ()
    assert stem_text("NF-4412 SKU-12 2026") == ""
    assert located(vine, "NF-4412")[0] == "fiscal/nota-4412"
    assert located(vine, "nf-4413")[0] == "fiscal/nota-4413"


def test_portuguese_stems_stay_out_of_english_nodes(vine: Vine) -> None:
    # "notas" and "notes" share the Portuguese stem "not"; English text is never given
    # it. (The lexicon's translation of notas, note, is another matter: tested apart.)
    with features.without("translations"):
        assert "ops/meeting-notes" not in located(vine, "quais notas")
    assert located(vine, "meeting notes")[0] == "ops/meeting-notes"


def test_sniff_stays_literal_while_harvest_reaches_word_forms(vine: Vine) -> None:
    question = "quais são os prazos nas lojas?"
    assert assert_ok(vine.sniff("prazos"))["results"] == []
    out = assert_ok(vine.harvest(question, k=3))
    assert out["terms"] == ["prazos", "lojas"]
    hit = next(r for r in out["results"] if r["id"] == "vendas/politica-de-trocas")
    assert "sniff" in hit["found_by"]
    assert [m["term"] for m in hit["matches"]] == ["prazos"]
    assert "prazo" in hit["matches"][0]["snippet"]
    with features.without("forms"):
        plain = assert_ok(vine.harvest(question, k=3))
    assert all(
        "sniff" not in r["found_by"]
        for r in plain["results"]
        if r["id"] == "vendas/politica-de-trocas"
    )


# -- natural questions -------------------------------------------------------------


def test_a_natural_question_ranks_its_answer_first(vine: Vine) -> None:
    assert located(vine, "what is the deadline to bring goods back?")[0] == "sales/return-policy"
    assert (
        located(vine, "qual é o prazo para trocar um produto na loja?")[0]
        == "vendas/politica-de-trocas"
    )


@pytest.mark.parametrize(
    "query", ["the", "what is the", "o que é", "qual é o de", "?!... --", "Who? What? When?"]
)
def test_a_query_of_function_words_answers_empty_with_a_hint(vine: Vine, query: str) -> None:
    out = assert_ok(vine.locate(query))
    assert out["results"] == [] and out["truncated"] is False
    assert "nothing to search for" in out["hint"]


@pytest.mark.parametrize(
    "query",
    [
        "!!!" * 50,
        "deadline " * 111,
        "prazo prazos PRAZO " * 50,
        "deadline 截止日期 срок 🚚 prazo",
        "\u200b\u200b",
        "Ω≈ç√ NF-4412 ∫˜µ",
    ],
)
def test_bad_queries_answer_a_result_or_an_envelope(vine: Vine, query: str) -> None:
    for out in (vine.locate(query), vine.harvest(query[:1000], k=3)):
        if "error" in out:
            assert out["error"]["code"] == "E_SCHEMA", out
        else:
            assert budget.cost(out) <= budget.HARVEST


# -- succession --------------------------------------------------------------------


policies = forest_fixture(
    {
        "p/exchange-2025": leaf(
            "# 2025\n",
            title="Exchange policy 2025",
            summary="Retail exchange rules and the retail deadline, kept for history.",
        ),
        "p/exchange": leaf(
            "# Now\n",
            title="Exchange policy",
            summary="Retail and online exchange windows, with the deadline per channel.",
            links=[("succeeds", "p/exchange-2025")],
        ),
        "p/q1": leaf("# Q1\n", title="Q1 review", summary="How the first quarter closed."),
        "p/q2": leaf(
            "# Q2\n",
            title="Q2 forecast",
            summary="The second quarter ahead.",
            links=[("succeeds", "p/q1")],
        ),
        "p/old-terms": leaf("# Old\n", title="Payment terms", summary="Terms of payment."),
        "p/new-terms": leaf(
            "# New\n",
            title="Terms sheet 2026",
            summary="Replaces the old one.",
            links=[("supersedes", "p/old-terms")],
        ),
    }
)


def test_a_superseded_node_ranks_below_its_successor(policies: Path) -> None:
    with reader(policies) as vine:
        out = assert_ok(vine.locate("what is the retail exchange deadline?"))
        with features.without("succession"):
            before = located(vine, "what is the retail exchange deadline?")
        replaced = assert_ok(vine.locate("payment terms"))
        top_one = assert_ok(vine.locate("what is the retail exchange deadline?", k=1))
    assert before[:2] == ["p/exchange-2025", "p/exchange"]
    ids = [r["id"] for r in out["results"]]
    assert ids[:2] == ["p/exchange", "p/exchange-2025"]
    old = out["results"][1]
    assert old["superseded_by"] == ["p/exchange"]
    assert old["score"] <= out["results"][0]["score"]
    assert "superseded_by" not in out["results"][0]
    # a top of one: the seat goes to the successor, which is asked for its own in turn
    assert [r["id"] for r in top_one["results"]] == ["p/exchange"] and top_one["truncated"]
    assert "superseded_by" not in top_one["results"][0]
    # a successor that matches far less does not take the lead
    assert [r["id"] for r in replaced["results"]][:2] == ["p/old-terms", "p/new-terms"]
    assert replaced["results"][0]["superseded_by"] == ["p/new-terms"]


def test_a_top_of_one_follows_a_chain_of_successors(tmp_path: Path) -> None:
    """The seat passes down a chain: the node a move lifts into the top is itself
    superseded, and gives way in turn."""

    def version(title: str, summary: str, replaces: str | None) -> tuple[str, dict, str]:
        meta: dict[str, Any] = {"title": title, "summary": summary}
        if replaces:
            meta["links"] = [{"rel": "supersedes", "target": replaces}]
        return ("note", meta, f"# {title}\n")

    root = make_forest(
        tmp_path / "chain",
        {
            "p/v1": version(
                "Retail exchange policy deadline", "Retail exchange policy deadline.", None
            ),
            "p/v2": version(
                "Exchange policy deadline",
                "The retail exchange policy and its deadline, revised.",
                "p/v1",
            ),
            "p/v3": version(
                "Exchange policy",
                "The retail exchange policy and its deadline, revised again for the stores.",
                "p/v2",
            ),
        },
    )
    query = "retail exchange policy deadline"
    with Vine(root, writable=False, alpha=0) as vine:
        with features.without("succession"):
            before = located(vine, query)
        top_one = assert_ok(vine.locate(query, k=1))
        three = located(vine, query, k=3)
    assert before == ["p/v1", "p/v2", "p/v3"]
    assert [r["id"] for r in top_one["results"]] == ["p/v3"]
    assert "superseded_by" not in top_one["results"][0]
    assert three == ["p/v3", "p/v2", "p/v1"]


def test_an_older_record_that_answers_much_better_stays_first(policies: Path) -> None:
    with reader(policies) as vine:
        out = assert_ok(vine.locate("how did the first quarter close, Q1 review"))
    assert out["results"][0]["id"] == "p/q1"
    assert out["results"][0]["superseded_by"] == ["p/q2"]


# -- evidence one edge away --------------------------------------------------------

PEOPLE = {
    f"people/p{i}": person(
        f"# {name}\n\nOn the payroll since 20{10 + i}.\n",
        title=name,
        summary=f"Engineer; lives in the city of {city}.",
    )
    for i, (name, city) in enumerate(
        [
            ("Ana Dias", "Recife"),
            ("Caio Reis", "Natal"),
            ("Duda Melo", "Olinda"),
            ("Edu Braga", "Caruaru"),
            ("Fabi Nunes", "Salvador"),
            ("Gil Rocha", "Maceio"),
            ("Iara Luz", "Aracaju"),
        ]
    )
}
TEAM: dict[str, tuple[str, dict[str, Any], str]] = {
    **PEOPLE,
    "projects/alvorada": leaf(
        "# Alvorada\n\nPanels arrive in May; the grid connection follows in July.\n",
        title="Alvorada solar farm",
        summary="A 12 MW solar farm under construction near Petrolina.",
        links=[("related-to", "people/rita")],
    ),
    "people/rita": person(
        "# Rita Soares\n\nCivil engineer since 2014.\n",
        title="Rita Soares",
        summary="Site engineer; lives in the city of Juazeiro.",
    ),
    "projects/aurora": leaf(
        "# Aurora\n\nTurbines.\n", title="Aurora wind farm", summary="A wind farm in the south."
    ),
}


team = forest_fixture(TEAM)


QUESTION = "Who works on the Alvorada solar farm, and in which city does that person live?"


def test_a_linked_node_that_holds_what_the_hit_lacks_joins_the_bundle(team: Path) -> None:
    with reader(team) as vine:
        out = assert_ok(vine.harvest(QUESTION, k=3))
        with features.without("edges"):
            plain = assert_ok(vine.harvest(QUESTION, k=3))
    ids = [r["id"] for r in out["results"]]
    assert ids[0] == "projects/alvorada"
    person = next(r for r in out["results"] if r["id"] == "people/rita")
    assert person["found_by"][-1] == "edge"
    assert person["via"] == {"from": "projects/alvorada", "rel": "related-to"}
    assert person["score"] < out["results"][0]["score"]
    assert "Juazeiro" in person["summary"]
    assert "people/rita" not in [r["id"] for r in plain["results"]]
    assert budget.cost(out) <= budget.HARVEST


def test_a_link_named_by_the_question_brings_its_other_end(tmp_path: Path) -> None:
    nodes = dict(TEAM)
    nodes["projects/alvorada"] = (
        "note",
        {**TEAM["projects/alvorada"][1], "links": [{"rel": "author", "target": "people/rita"}]},
        TEAM["projects/alvorada"][2],
    )
    root = make_forest(tmp_path / "author", nodes)
    with reader(root) as vine:
        out = assert_ok(vine.harvest("Who is the author of the Alvorada farm plan?", k=3))
        located_ids = [r["id"] for r in vine.locate("author Alvorada farm plan", k=6)["results"]]
    assert "people/rita" not in located_ids
    person = next(r for r in out["results"] if r["id"] == "people/rita")
    assert person["found_by"] == ["edge"]
    assert person["via"] == {"from": "projects/alvorada", "rel": "author"}


def test_the_edge_works_from_the_other_end_with_the_inverse_rel(tmp_path: Path) -> None:
    nodes = dict(TEAM)
    nodes["projects/alvorada"] = (
        "note",
        {**TEAM["projects/alvorada"][1], "links": []},
        TEAM["projects/alvorada"][2],
    )
    nodes["people/rita"] = (
        "entity",
        {
            **TEAM["people/rita"][1],
            "links": [{"rel": "mentioned-in", "target": "projects/alvorada"}],
        },
        TEAM["people/rita"][2],
    )
    root = make_forest(tmp_path / "inverse", nodes)
    with reader(root) as vine:
        out = assert_ok(vine.harvest(QUESTION, k=3))
    person = next(r for r in out["results"] if r["id"] == "people/rita")
    assert person["via"] == {"from": "projects/alvorada", "rel": "mentions"}


def test_a_neighbour_never_displaces_a_direct_hit_that_scored_higher(team: Path) -> None:
    with reader(team) as vine:
        out = assert_ok(vine.harvest(QUESTION, k=1))
        one = assert_ok(vine.harvest("Alvorada solar farm", k=3))
    assert [r["id"] for r in out["results"]] == ["projects/alvorada"]
    # nothing the question asks is missing from the hit: no neighbour comes
    assert all("edge" not in r["found_by"] for r in one["results"])


def place(body: str = "", **meta: Any) -> tuple[str, dict[str, Any], str]:
    return leaf(body, "entity", entity_kind="place", **meta)


SITES: dict[str, tuple[str, dict[str, Any], str]] = {
    "sites/ridge-cut": place(
        "# Ridge cut\n\nThree inclinometers since March.\n",
        title="Ridge cut at km 38",
        summary="A 24 m cut slope on the highway, watched since the last rains.",
        links=[("located-in", "cities/curio")],
    ),
    "cities/curio": place(
        "# Curio\n\nHotel Serra, R$ 180 a night.\n",
        title="Curio",
        summary="Town of 18,000 people by the highway.",
    ),
    "notes/night-shift": leaf(
        "# Night shift\n\nLights on.\n",
        title="Night shift on the cut",
        summary="How the team works on a highway cut at night.",
    ),
    "notes/roster": leaf(
        "# Roster\n\nNames.\n",
        title="Team roster",
        summary="Who is on the field team, and how long they stay.",
    ),
}


def test_a_where_question_brings_the_place_a_hit_is_in(tmp_path: Path) -> None:
    """*where* asks for a place, as *who* asks for a person: the place a hit links to
    supplies it, even when the hit is a place itself (a site, the town it is in)."""
    root = make_forest(tmp_path / "sites", SITES)
    question = "Where does the team stay when working at the km 38 ridge cut?"
    with reader(root) as vine:
        out = assert_ok(vine.harvest(question, k=3))
        with features.without("places"):
            plain = assert_ok(vine.harvest(question, k=3))
    ids = [r["id"] for r in out["results"]]
    assert ids[0] == "sites/ridge-cut"
    town = next(r for r in out["results"] if r["id"] == "cities/curio")
    assert town["found_by"] == ["edge"]
    assert town["via"] == {"from": "sites/ridge-cut", "rel": "located-in"}
    # Without the rule the town may still come by its link alone, never as strongly.
    unasked = [r["score"] for r in plain["results"] if r["id"] == "cities/curio"]
    assert all(score < town["score"] for score in unasked)


# -- every surface ---------------------------------------------------------------------


def test_the_cli_finds_word_forms_and_explains_an_empty_query(forest: Path) -> None:
    got = subprocess.run(
        [VINE, "locate", "deadlines", "-f", str(forest), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={"VINE_WATCH": "0", "PATH": ""},
    )
    assert json.loads(got.stdout)["results"][0]["id"] == "sales/return-policy"
    empty = subprocess.run(
        [VINE, "locate", "what is the", "-f", str(forest), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={"VINE_WATCH": "0", "PATH": ""},
    )
    assert json.loads(empty.stdout)["results"] == []


def test_mcp_finds_word_forms_and_edges(forest: Path, team: Path) -> None:
    async def body() -> None:
        with anyio.fail_after(TIMEOUT * 2):
            async with stdio_session("--forest", str(forest), "--readonly") as session:
                got = payload(await session.call_tool("locate", {"query": "prazos"}))
                assert got["results"][0]["id"] == "vendas/politica-de-trocas"
            async with stdio_session("--forest", str(team), "--readonly") as session:
                got = payload(await session.call_tool("harvest", {"query": QUESTION}))
                person = next(r for r in got["results"] if r["id"] == "people/rita")
                assert person["via"]["from"] == "projects/alvorada"

    anyio.run(body)


def test_two_nodes_that_each_claim_to_replace_the_other_cancel_out(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "loop",
        {
            "p/a": leaf(
                "# A\n", title="Tariff table", summary="Tariffs.", links=[("supersedes", "p/b")]
            ),
            "p/b": leaf(
                "# B\n", title="Tariff table", summary="Tariffs.", links=[("supersedes", "p/a")]
            ),
        },
    )
    with reader(root) as vine:
        out = assert_ok(vine.locate("tariff table"))
    assert {r["id"] for r in out["results"]} == {"p/a", "p/b"}
    assert all("superseded_by" not in r for r in out["results"])


def test_a_link_added_later_is_seen_by_the_next_locate(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "later",
        {
            "p/old": leaf("# Old\n", title="Freight rules", summary="Who pays the freight."),
            "p/new": leaf(
                "# New\n", title="Freight rules 2027", summary="Who pays the freight from 2027."
            ),
        },
    )
    git_init(root)
    with Vine(root, alpha=0) as vine:
        assert all(
            "superseded_by" not in r for r in assert_ok(vine.locate("freight rules"))["results"]
        )
        assert_ok(vine.graft("p/new", {"add_links": [{"rel": "supersedes", "target": "p/old"}]}))
        after = {r["id"]: r for r in assert_ok(vine.locate("freight rules"))["results"]}
    assert after["p/old"]["superseded_by"] == ["p/new"]
