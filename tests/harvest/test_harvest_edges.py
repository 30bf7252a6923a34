"""harvest at the edges: supersession (a replaced node gives way to its successor), empty
forests and questions, date windows, and the error envelopes of bad arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from monkeyllm import Vine
from monkeyllm.commands.app import app
from monkeyllm.reads import features

from ..forestkit import (
    assert_error,
    assert_ok,
    copy_sample,
    forest_fixture,
    leaf,
    make_forest,
    reader,
)
from .kit import QUESTION, by_id, fused, ids

# The node that supersedes p/old (a walrus policy) in the forests below.
POLICY_2027 = leaf(
    "# New\n\nrules for 2027\n",
    title="Policy 2027",
    summary="The new rules.",
    links=[("supersedes", "p/old")],
)

superseded = forest_fixture(
    {
        "p/old": leaf(
            "# Old\n\nwalrus walrus walrus\n", title="Walrus policy", summary="Walrus walrus rules."
        ),
        "p/other": leaf("# Other\n\nwalrus\n", title="Walrus notes", summary="Notes on a walrus."),
        "p/new": POLICY_2027,
        # a chain: v3 supersedes v2, which supersedes v1
        "r/v1": leaf("# V1\n\nmanatee\n", title="Manatee guide", summary="Manatee."),
        "r/v2": leaf(
            "# V2\n", title="Guide two", summary="Second guide.", links=[("supersedes", "r/v1")]
        ),
        "r/v3": leaf(
            "# V3\n", title="Guide three", summary="Third guide.", links=[("supersedes", "r/v2")]
        ),
    }
)


def test_a_superseded_node_gives_its_seat_to_its_successor(superseded: Path) -> None:
    with reader(superseded) as vine:
        expected = fused(vine, "walrus", "walrus", 2)
        assert [i for i, _, _ in expected] == ["p/old", "p/other"]  # p/new is not found
        out = assert_ok(vine.harvest("walrus", terms=["walrus"], k=2))
        kept = assert_ok(vine.harvest("walrus", terms=["walrus"], k=2, include_superseded=True))
        assert_ok(vine.look(ids(out)[0]))
    assert ids(out) == ["p/new", "p/other"]
    assert out["superseded_excluded"] == [{"id": "p/old", "by": "p/new"}]
    new = out["results"][0]
    assert (new["score"], new["found_by"]) == (round(expected[0][1], 4), expected[0][2])
    assert new["title"] == "Policy 2027"
    assert ids(kept) == ["p/old", "p/other"] and "superseded_excluded" not in kept
    assert "superseded_by" not in kept["results"][0]  # its successor is not among them


def test_a_chain_of_successors_is_followed(superseded: Path) -> None:
    with reader(superseded) as vine:
        out = assert_ok(vine.harvest("manatee", terms=["manatee"], k=1))
    assert ids(out) == ["r/v3"]
    assert out["superseded_excluded"] == [
        {"id": "r/v1", "by": "r/v2"},
        {"id": "r/v2", "by": "r/v3"},
    ]


def test_a_found_successor_still_takes_the_seat(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "dugong",
        {
            "q/old": leaf(
                "# Old\n\ndugong dugong dugong\n",
                title="Dugong policy",
                summary="Dugong dugong rules.",
            ),
            "q/x": leaf("# X\n\ndugong dugong\n", title="Dugong notes", summary="Dugong notes."),
            "q/y": leaf("# Y\n\ndugong\n", title="Dugong facts", summary="Dugong facts."),
            # Its metadata does not say dugong (locate cannot find it, so locate cannot
            # move it up either); its body does, once: sniff ranks it last.
            "q/new": leaf(
                "# New\n\nrules, the dugong included\n",
                title="Policy 2028",
                summary="The rules that replace the old sea cow text.",
                links=[("supersedes", "q/old")],
            ),
        },
    )
    with reader(root) as vine:
        order = [i for i, _, _ in fused(vine, "dugong", "dugong", 2)]
        assert order[0] == "q/old" and order.index("q/new") >= 2
        out = assert_ok(vine.harvest("dugong", terms=["dugong"], k=2))
    assert out["superseded_excluded"] == [{"id": "q/old", "by": "q/new"}]
    assert ids(out)[0] == "q/new"


def test_a_node_whose_exact_code_is_asked_keeps_its_seat(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "named",
        {
            "p/old": leaf(
                "# Old\n\nwalrus rules under form POL-7\n",
                title="Walrus policy",
                summary="Walrus rules.",
            ),
            "p/new": POLICY_2027,
        },
    )
    with reader(root) as vine:
        asked = assert_ok(vine.harvest("walrus form POL-7", k=1))
        vague = assert_ok(vine.harvest("walrus form", k=1))
    assert ids(asked) == ["p/old"] and "superseded_excluded" not in asked
    assert ids(vague) == ["p/new"]
    assert vague["superseded_excluded"] == [{"id": "p/old", "by": "p/new"}]


def test_a_year_in_the_question_does_not_revive_a_superseded_node(hv: Vine) -> None:
    old, new = "contracts/master-agreement-2024", "contracts/master-agreement"
    out = assert_ok(hv.harvest("master agreement 2026 payment terms", k=3))
    assert new in ids(out)
    assert old not in ids(out)


def test_a_question_that_asks_for_the_old_version_gets_it(hv: Vine) -> None:
    """ "The old rules", "o contrato antigo": the superseded node is not skipped, and
    ranks where its words put it; the same question without those words skips it."""
    old = "contracts/master-agreement-2024"
    for question in (
        "What did the old master agreement say about payment terms?",
        "No master agreement antigo, quais eram os payment terms?",
    ):
        out = assert_ok(hv.harvest(question, k=3))
        assert old in ids(out), question
        assert "superseded_excluded" not in out
        with features.without("older"):
            assert old not in ids(assert_ok(hv.harvest(question, k=3)))
    assert old not in ids(assert_ok(hv.harvest("master agreement payment terms", k=3)))


def test_sample_brain_master_agreement_supersedes_2024(hv: Vine) -> None:
    q = "master agreement payment terms"
    old, new = "contracts/master-agreement-2024", "contracts/master-agreement"
    assert {"rel": "supersedes", "target": old} in [
        {k: e[k] for k in ("rel", "target")} for e in hv.look(new)["edges_out"]
    ]
    out = assert_ok(hv.harvest(q, k=3))
    assert old not in ids(out) and new in ids(out)
    assert {"id": old, "by": new} in out["superseded_excluded"]
    kept = assert_ok(hv.harvest(q, k=3, include_superseded=True))
    assert {old, new} <= set(ids(kept)) and "superseded_excluded" not in kept
    assert by_id(kept)[new]["supersedes"] == [old]
    assert by_id(kept)[old]["superseded_by"] == [new]


def test_succeeds_annotates_but_never_excludes(hv: Vine) -> None:
    new, old = "sales/exchange-policy", "sales/exchange-policy-2025"
    assert {"rel": "succeeds", "target": old} in [
        {k: e[k] for k in ("rel", "target")} for e in hv.look(new)["edges_out"]
    ]
    out = assert_ok(hv.harvest(QUESTION, k=3))
    assert {new, old} <= set(ids(out)) and "superseded_excluded" not in out
    assert by_id(out)[new]["supersedes"] == [old]
    assert by_id(out)[old]["superseded_by"] == [new]
    for r in out["results"]:
        if r["id"] not in (new, old):
            assert "supersedes" not in r and "superseded_by" not in r


def test_nothing_matched(hv: Vine) -> None:
    out = assert_ok(hv.harvest("xylophonic quagmirical zzqxv"))
    assert out["results"] == [] and out["truncated"] is False
    assert "searched" in out and out["hint"]
    assert "terms" in out["hint"]


dated = forest_fixture(
    {
        "w/a": leaf(
            "# A\n\notter\n",
            title="Otter a",
            summary="Otter.",
            created="2025-06-01",
            updated="2026-07-01",
        ),
        "w/b": leaf(
            "# B\n\notter\n",
            title="Otter b",
            summary="Otter.",
            created="2026-02-10",
            updated="2026-02-10",
        ),
        "w/c": leaf(
            "# C\n\notter\n",
            title="Otter c",
            summary="Otter.",
            created="2026-08-01",
            updated="2026-08-01",
        ),
    }
)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ({}, {"w/a", "w/b", "w/c"}),
        ({"since": "2026-01", "until": "2026-06"}, {"w/b"}),
        ({"since": "2026"}, {"w/b", "w/c"}),
        ({"until": "2025"}, {"w/a"}),
        ({"since": "2026-02-10", "until": "2026-02-10"}, {"w/b"}),
        ({"since": "2026-06", "date_field": "updated"}, {"w/a", "w/c"}),
    ],
)
def test_windows_restrict_results_like_locate(
    dated: Path, window: dict[str, str], expected: set[str]
) -> None:
    with reader(dated) as vine:
        out = assert_ok(vine.harvest("otter", k=5, **window))
        located = {r["id"] for r in assert_ok(vine.locate("otter", k=10, **window))["results"]}
        sniffed = {r["id"] for r in assert_ok(vine.sniff("otter", k=10, **window))["results"]}
    assert set(ids(out)) == expected == located == sniffed
    if window:
        assert out["window"] == {
            "since": window.get("since"),
            "until": window.get("until"),
            "date_field": window.get("date_field", "created"),
        }
    else:
        assert "window" not in out


def test_a_successor_outside_the_window_is_not_returned(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "wsup",
        {
            "p/old": leaf(
                "# Old\n\nwalrus\n",
                title="Walrus policy 2025",
                summary="Walrus rules.",
                created="2025-01-10",
                updated="2025-01-10",
            ),
            "p/new": leaf(
                "# New\n\nrules\n",
                title="Policy 2027",
                summary="The new rules.",
                created="2027-01-10",
                updated="2027-01-10",
                links=[("supersedes", "p/old")],
            ),
        },
    )
    with reader(root) as vine:
        assert ids(assert_ok(vine.locate("walrus", until="2025"))) == ["p/old"]
        out = assert_ok(vine.harvest("walrus", until="2025"))
    assert all(r["created"] <= "2025-12-31" for r in out["results"]), out["results"]
    # Inside the window the old policy has no live successor: it is the answer.
    assert ids(out) == ["p/old"] and "superseded_excluded" not in out


def test_nodes_that_supersede_each_other_are_both_kept(tmp_path: Path) -> None:
    """A cycle of supersession is a mistake in the data; it must not empty the result."""
    root = make_forest(
        tmp_path / "cycle",
        {
            "c/a": leaf(
                "# A\n\nnarwhal\n",
                title="Narwhal rules A",
                summary="Narwhal rules.",
                links=[("supersedes", "c/b")],
            ),
            "c/b": leaf(
                "# B\n\nnarwhal\n",
                title="Narwhal rules B",
                summary="Narwhal rules.",
                links=[("supersedes", "c/a")],
            ),
        },
    )
    with reader(root) as vine:
        out = assert_ok(vine.harvest("narwhal rules"))
    assert sorted(ids(out)) == ["c/a", "c/b"]
    assert "superseded_excluded" not in out


def test_an_empty_window(dated: Path) -> None:
    with reader(dated) as vine:
        out = assert_ok(vine.harvest("otter", since="2030"))
    assert out["results"] == [] and out["hint"] and "searched" in out
    assert out["window"]["since"] == "2030"


BAD_ARGS: list[dict[str, Any]] = [
    {"query": ""},
    {"query": "   "},
    {"query": "x", "k": "3"},
    {"query": "x", "k": True},
    {"query": "x", "k": 1.5},
    {"query": "x", "k": 2**70},
    {"query": ["exchange"]},
    {"query": "x", "terms": 5},
    {"query": "x", "terms": [1]},
    {"query": "x", "terms": ["a"]},
    {"query": "x", "terms": [f"term{i}" for i in range(9)]},
    {"query": "x", "include_superseded": "yes"},
    {"query": "x", "since": "2026-13"},
    {"query": "x", "date_field": "birthday"},
]


@pytest.mark.parametrize("args", BAD_ARGS)
def test_bad_arguments_are_envelopes(hv: Vine, args: dict[str, Any]) -> None:
    assert_error(hv.harvest(**args), "E_SCHEMA")
    assert_error(hv.call("harvest", args), "E_SCHEMA")


@pytest.mark.parametrize("args", [{}, {"k": 3}, {"query": "x", "scope": "sales"}, None])
def test_call_checks_the_argument_object(hv: Vine, args: dict[str, Any] | None) -> None:
    if args is None:
        assert_error(hv.call("harvest", ["x"]), "E_SCHEMA")  # type: ignore[arg-type]
    else:
        assert_error(hv.call("harvest", args), "E_SCHEMA")


def test_call_answers_like_the_method(hv: Vine) -> None:
    args = {"query": QUESTION, "terms": ["exchange", "deadline"], "k": 2}
    assert hv.call("harvest", args) == hv.harvest(**args)


def test_harvest_deposits_heat_on_what_it_returns(tmp_path: Path) -> None:
    nodes = {
        f"c/n{i}": leaf(f"# N{i}\n\ncapybara\n", title=f"Capybara {i}", summary="Capybara.")
        for i in range(4)
    }
    nodes["d/heron"] = leaf("# H\n\nheron\n", title="Heron", summary="Heron.")
    root = make_forest(tmp_path / "heat", nodes)
    with Vine(root, writable=False) as vine:
        out = assert_ok(vine.harvest("capybara", k=2))  # the sweep lists all 4, keeps 2
        kept = set(ids(out))
        # look reports the heat before its own deposit
        heat = {i: assert_ok(vine.look(i))["stats"]["heat"] for i in [*nodes, "c/_index"]}
    listed = {f"c/n{i}" for i in range(4)} - kept
    assert len(kept) == 2
    assert min(heat[i] for i in kept) > max(heat[i] for i in listed) > 0
    assert heat["d/heron"] == heat["c/_index"] == 0.0


runner = CliRunner()


def cool(root: Path) -> None:
    """Forget all heat, so the CLI and the engine rank from the same empty trails."""
    for suffix in ("", "-wal", "-shm"):
        (root / "_derived" / f"trails.db{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("argv", "args"),
    [
        (
            ["-k", "2", "--terms", "exchange", "--terms", "deadline"],
            {"k": 2, "terms": ["exchange", "deadline"]},
        ),
        ([], {}),
        (["-k", "3", "--include-superseded"], {"k": 3, "include_superseded": True}),
        (
            ["--since", "2026", "--date-field", "updated"],
            {"since": "2026", "date_field": "updated"},
        ),
    ],
)
def test_cli_prints_the_engine_answer(
    tmp_path: Path, argv: list[str], args: dict[str, Any]
) -> None:
    root = copy_sample(tmp_path / "brain")
    query = "master agreement exchange deadline"
    cool(root)
    with Vine(root, writable=False) as vine:
        expected = assert_ok(vine.harvest(query, **args))
    cool(root)
    result = runner.invoke(
        app,
        ["harvest", query, "-f", str(root), *argv],
        env={"VINE_FOREST": None},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert json.loads(result.stdout) == expected


def test_cli_error_is_the_envelope(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    result = runner.invoke(
        app, ["harvest", " ", "-f", str(root)], env={"VINE_FOREST": None}, catch_exceptions=False
    )
    assert result.exit_code != 0
    assert json.loads(result.stdout)["error"]["code"] == "E_SCHEMA"
    assert "E_SCHEMA" in result.stderr
