"""The ``vine`` command line, in process: every subcommand and every option, each
answer compared with the engine's own answer for the same arguments."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine
from monkeyllm.registry import CALLS

from ..forestkit import files_of
from .kit import DATASET, cool, engine, error_line, json_arg, run_json, steady, vine

# -- every read option, against the engine -------------------------------------------


def _all(key: str, value: Any, where: str = "results") -> Callable[[dict[str, Any]], bool]:
    return lambda out: bool(out[where]) and all(item[key] == value for item in out[where])


READS: list[Any] = [
    # locate
    (
        ["locate", "exchange policy deadlines"],
        {"query": "exchange policy deadlines"},
        lambda out: len(out["results"]) > 1,
    ),
    (
        ["locate", "exchange policy deadlines", "-k", "1"],
        {"query": "exchange policy deadlines", "k": 1},
        lambda out: len(out["results"]) == 1,
    ),
    (
        ["locate", "exchange policy deadlines", "--k", "2"],
        {"query": "exchange policy deadlines", "k": 2},
        lambda out: len(out["results"]) == 2,
    ),
    (
        ["locate", "exchange policy", "--scope", "branches"],
        {"query": "exchange policy", "scope": "branches"},
        _all("kind", "branch"),
    ),
    (
        ["locate", "policy", "--type-filter", "note"],
        {"query": "policy", "type_filter": "note"},
        _all("type", "note"),
    ),
    (
        ["locate", "exchange policy", "--type_filter", "entity"],
        {"query": "exchange policy", "type_filter": "entity"},
        _all("type", "entity"),
    ),
    (
        ["locate", "policy", "--include", "outline", "-k", "2"],
        {"query": "policy", "include": ["outline"], "k": 2},
        lambda out: all("outline" in r for r in out["results"]),
    ),
    (
        ["locate", "policy", "--since", "2026-01", "--until", "2026-02"],
        {"query": "policy", "since": "2026-01", "until": "2026-02"},
        lambda out: (
            out["window"] == {"since": "2026-01", "until": "2026-02", "date_field": "created"}
        ),
    ),
    (
        ["locate", "policy", "--since", "2026-05", "--date-field", "updated"],
        {"query": "policy", "since": "2026-05", "date_field": "updated"},
        lambda out: out["window"]["date_field"] == "updated",
    ),
    # look
    (
        ["look", "sales/exchange-policy"],
        {"id": "sales/exchange-policy"},
        lambda out: out["id"] == "sales/exchange-policy" and "edges_out" in out,
    ),
    (
        ["look", "sales/exchange-policy", "--fields", "id,summary"],
        {"id": "sales/exchange-policy", "fields": ["id", "summary"]},
        lambda out: set(out) == {"id", "summary"},
    ),
    (
        ["look", "sales/exchange-policy", "--fields", "id", "--fields", "summary"],
        {"id": "sales/exchange-policy", "fields": ["id", "summary"]},
        lambda out: set(out) == {"id", "summary"},
    ),
    # the form the help's own example gives: a JSON array
    (
        ["look", "sales/exchange-policy", "--fields", '["summary"]'],
        {"id": "sales/exchange-policy", "fields": ["summary"]},
        lambda out: set(out) == {"id", "summary"},
    ),
    (
        ["look", "sales/exchange-policy", "sales/price-list"],
        {"id": ["sales/exchange-policy", "sales/price-list"]},
        lambda out: (
            [n["id"] for n in out["nodes"]] == ["sales/exchange-policy", "sales/price-list"]
        ),
    ),
    (
        ["look", "sales/exchange-policy", "nope/ghost", "--fields", "id,title"],
        {"id": ["sales/exchange-policy", "nope/ghost"], "fields": ["id", "title"]},
        lambda out: out["missing"] == ["nope/ghost"] and set(out["nodes"][0]) == {"id", "title"},
    ),
    # move
    (
        ["move", "sales/exchange-policy"],
        {"id": "sales/exchange-policy"},
        _all("direction", "out", "neighbors"),
    ),
    (
        ["move", "sales/_index", "--rel", "children"],
        {"id": "sales/_index", "rel": "children"},
        _all("rel", "children", "neighbors"),
    ),
    (
        ["move", "sales/orders-2026", "--direction", "in"],
        {"id": "sales/orders-2026", "direction": "in"},
        _all("direction", "in", "neighbors"),
    ),
    (
        ["move", "sales/exchange-policy", "--direction", "both", "--rel", "related-to"],
        {"id": "sales/exchange-policy", "direction": "both", "rel": "related-to"},
        _all("rel", "related-to", "neighbors"),
    ),
    # pick
    (
        ["pick", "engineering/nfe-runbook"],
        {"id": "engineering/nfe-runbook"},
        lambda out: out["body"].startswith("# "),
    ),
    (
        ["pick", "engineering/nfe-runbook", "--section", "Resending a batch"],
        {"id": "engineering/nfe-runbook", "section": "Resending a batch"},
        lambda out: out["section"] == "Resending a batch",
    ),
    (
        [
            "pick",
            "engineering/nfe-runbook",
            "--section",
            "Resending a batch",
            "--section",
            "First five minutes",
        ],
        {"id": "engineering/nfe-runbook", "section": ["Resending a batch", "First five minutes"]},
        lambda out: (
            [s["section"] for s in out["sections"]] == ["Resending a batch", "First five minutes"]
        ),
    ),
    (
        ["pick", "sales/exchange-policy", "sales/price-list"],
        {"id": ["sales/exchange-policy", "sales/price-list"]},
        lambda out: (
            [n["id"] for n in out["nodes"]] == ["sales/exchange-policy", "sales/price-list"]
        ),
    ),
    (
        ["pick", "contracts/master-agreement", "--after", ""],
        {"id": "contracts/master-agreement", "after": ""},
        lambda out: out["truncated"] and out["next"] and "body" in out,
    ),
    # scan
    (["scan", "sales"], {"parent_id": "sales"}, lambda out: out["returned"] > 1),
    (
        ["scan", "sales", "--recursive"],
        {"parent_id": "sales", "recursive": True},
        lambda out: "sales/pipeline/prospects-q2" in [n["id"] for n in out["nodes"]],
    ),
    (
        ["scan", "_index", "--recursive", "--limit", "3"],
        {"parent_id": "_index", "recursive": True, "limit": 3},
        lambda out: out["returned"] == len(out["nodes"]) == 3,
    ),
    (
        ["scan", "sales", "--fields", "id,type"],
        {"parent_id": "sales", "fields": ["id", "type"]},
        lambda out: all(set(n) == {"id", "type"} for n in out["nodes"]),
    ),
    (
        ["scan", "sales", "--fields", '["id", "title"]'],
        {"parent_id": "sales", "fields": ["id", "title"]},
        lambda out: all(set(n) == {"id", "title"} for n in out["nodes"]),
    ),
    (
        ["scan", "_index", "--recursive", "--filter", '{"type": "dataset"}'],
        {"parent_id": "_index", "recursive": True, "filter": {"type": "dataset"}},
        _all("type", "dataset", "nodes"),
    ),
    (
        ["scan", "_index", "--recursive", "--limit", "3", "--fields", "id", "--after", ""],
        {"parent_id": "_index", "recursive": True, "limit": 3, "fields": ["id"], "after": ""},
        lambda out: out["next"] == out["nodes"][-1]["id"],
    ),
    (
        [
            "scan",
            "_index",
            "--recursive",
            "--since",
            "2026-06",
            "--date-field",
            "updated",
            "--fields",
            "id,updated",
        ],
        {
            "parent_id": "_index",
            "recursive": True,
            "since": "2026-06",
            "date_field": "updated",
            "fields": ["id", "updated"],
        },
        lambda out: out["nodes"] and all(n["updated"] >= "2026-06" for n in out["nodes"]),
    ),
    (
        [
            "scan",
            "_index",
            "--recursive",
            "--until",
            "2025-06",
            "--date_field",
            "created",
            "--fields",
            "id,created",
        ],
        {
            "parent_id": "_index",
            "recursive": True,
            "until": "2025-06",
            "date_field": "created",
            "fields": ["id", "created"],
        },
        lambda out: out["nodes"] and all(n["created"][:7] <= "2025-06" for n in out["nodes"]),
    ),
    # sniff
    (
        ["sniff", "NF-4412"],
        {"terms": "NF-4412"},
        lambda out: (
            out["results"]
            and all(any("NF-4412" in m["snippet"] for m in r["matches"]) for r in out["results"])
        ),
    ),
    (
        ["sniff", "NF-4412", "exchange"],
        {"terms": ["NF-4412", "exchange"]},
        lambda out: len(out["results"]) > 1,
    ),
    (
        ["sniff", "exchange", "--scope", "sales"],
        {"terms": "exchange", "scope": "sales"},
        lambda out: out["results"] and all(r["id"].startswith("sales/") for r in out["results"]),
    ),
    (
        ["sniff", "exchange", "-k", "1"],
        {"terms": "exchange", "k": 1},
        lambda out: len(out["results"]) == 1,
    ),
    (
        ["sniff", "exchange", "--type-filter", "entity"],
        {"terms": "exchange", "type_filter": "entity"},
        _all("type", "entity"),
    ),
    (
        [
            "sniff",
            "exchange",
            "--type_filter",
            "note",
            "--since",
            "2026-04",
            "--until",
            "2026-06",
            "--date-field",
            "updated",
        ],
        {
            "terms": "exchange",
            "type_filter": "note",
            "since": "2026-04",
            "until": "2026-06",
            "date_field": "updated",
        },
        lambda out: (
            out["window"] == {"since": "2026-04", "until": "2026-06", "date_field": "updated"}
        ),
    ),
    # query
    (
        [
            "query",
            DATASET,
            "--sql",
            "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region",
        ],
        {
            "id": DATASET,
            "sql": "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region",
        },
        lambda out: out["columns"] == ["region", "n"] and out["rows"],
    ),
]


@pytest.mark.parametrize(
    ("argv", "args", "check"), READS, ids=[" ".join(case[0])[:60] for case in READS]
)
def test_read_equals_the_engine(
    forest: Path, argv: list[str], args: dict[str, Any], check: Callable[[dict[str, Any]], bool]
) -> None:
    name = argv[0]
    out = run_json(forest, *argv)
    assert steady(out) == steady(engine(forest, name, **args))
    assert check(out), out
    first = CALLS[name].params[0].name
    if set(args) != {first}:
        # The options made a difference: without them the engine answers otherwise.
        assert steady(out) != steady(engine(forest, name, **{first: args[first]}))


def test_pick_after_pages_on(forest: Path) -> None:
    first = run_json(forest, "pick", "contracts/master-agreement", "--after", "")
    second = run_json(forest, "pick", "contracts/master-agreement", "--after", first["next"])
    assert second == engine(forest, "pick", id="contracts/master-agreement", after=first["next"])
    assert second["body"] != first["body"]


def test_scan_after_pages_on(forest: Path) -> None:
    base = ["scan", "_index", "--recursive", "--limit", "3", "--fields", "id"]
    first = run_json(forest, *base, "--after", "")
    second = run_json(forest, *base, "--after", first["next"])
    assert second == engine(
        forest,
        "scan",
        parent_id="_index",
        recursive=True,
        limit=3,
        fields=["id"],
        after=first["next"],
    )
    ids = [n["id"] for n in first["nodes"] + second["nodes"]]
    assert ids == sorted(ids) and len(set(ids)) == 6


@pytest.mark.parametrize("source", ["inline", "file", "stdin"])
def test_scan_filter_json_sources(forest: Path, tmp_path: Path, source: str) -> None:
    filter_ = {"type": "dataset"}
    arg, stdin = json_arg(filter_, source, tmp_path)
    out = run_json(forest, "scan", "_index", "--recursive", "--filter", arg, input=stdin)
    assert out == engine(forest, "scan", parent_id="_index", recursive=True, filter=filter_)
    assert out["nodes"] and all(n["type"] == "dataset" for n in out["nodes"])


def test_json_flag_before_and_after_the_subcommand(forest: Path) -> None:
    expected = engine(forest, "look", id="sales/price-list")
    assert run_json(forest, "look", "sales/price-list", "--json") == expected
    cool(forest)
    result = vine("--json", "-f", str(forest), "look", "sales/price-list")
    assert result.exit_code == 0 and json.loads(result.stdout) == expected


# -- errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "name", "args"),
    [
        (["look", "nope/ghost"], "look", {"id": "nope/ghost"}),
        (
            ["locate", "policy", "--include", "body"],
            "locate",
            {"query": "policy", "include": ["body"]},
        ),
        (["scan", "sales", "--filter", "[1]"], "scan", {"parent_id": "sales", "filter": [1]}),
        (
            ["query", DATASET, "--sql", "DELETE FROM orders"],
            "query",
            {"id": DATASET, "sql": "DELETE FROM orders"},
        ),
    ],
    ids=["not-found", "bad-include", "filter-not-object", "query-refuses-writes"],
)
def test_error_envelope_exits_1(
    forest: Path, argv: list[str], name: str, args: dict[str, Any]
) -> None:
    expected = engine(forest, name, **args)
    assert set(expected) == {"error"}
    result = vine(*argv, "-f", str(forest))
    assert result.exit_code == 1
    assert json.loads(result.stdout) == expected
    assert result.stdout.count("\n") == 1
    assert result.stderr == error_line(expected)


def test_hints_speak_the_command_lines_words(forest: Path) -> None:
    """One source of truth: the engine words the hint; the CLI spells its calls and
    parameters as a person types them, Python and MCP as the signature."""
    with Vine(forest, writable=False) as v:
        python = v.look("nope/ghost")["error"]["hint"]
        pick = v.pick("contracts/master-agreement")["hint"]
        empty = v.locate("zzzqqqxxx")["hint"]
    assert "locate(query)" in python and "scan('_index')" in python
    assert "section=<header>" in pick and "after=''" in pick
    assert "sniff(terms)" in empty
    cli = json.loads(vine("look", "nope/ghost", "-f", str(forest)).stdout)["error"]["hint"]
    assert "vine locate QUERY" in cli and "vine scan _index" in cli
    assert "locate(query)" not in cli
    page = json.loads(vine("pick", "contracts/master-agreement", "-f", str(forest)).stdout)
    assert "--section HEADER" in page["hint"] and "--after ''" in page["hint"]
    empty_cli = json.loads(vine("locate", "zzzqqqxxx", "-f", str(forest)).stdout)["hint"]
    assert "vine sniff TERMS" in empty_cli


USAGE = [
    (["locate", "x", "-k", "abc"], "-k"),
    (["scan", "sales", "--limit", "many"], "--limit"),
    (["locate", "x", "--scope", "nope"], "--scope"),
    (["move", "sales/_index", "--direction", "up"], "--direction"),
    (["locate", "x", "--date-field", "born"], "--date-field"),
    (["look"], "Missing argument"),
    (["query", DATASET], "--sql"),
    (["graft", "sales/price-list"], "--patch"),
    (["scan", "sales", "--filter", "{bad"], "not valid JSON"),
    (["scan", "sales", "--filter", "@/nonexistent/filter.json"], "cannot read"),
    (["plant", "{bad"], "not valid JSON"),
    (["graft", "sales/price-list", "--patch", "nope"], "not valid JSON"),
    (["call", "nope"], "unknown call"),
    (["call", "locate", "[1]"], "JSON object"),
    (["call", "locate", '"a string"'], "JSON object"),
    (["call", "locate", "{"], "not valid JSON"),
    (["nope"], "No such command"),
    (["look", "x", "--nope"], "No such option"),
]


@pytest.mark.parametrize(("argv", "needle"), USAGE, ids=[" ".join(a) for a, _ in USAGE])
def test_usage_error_exits_2_with_nothing_on_stdout(
    forest: Path, argv: list[str], needle: str
) -> None:
    before = files_of(forest)
    result = vine(*argv, "-f", str(forest))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
    assert files_of(forest) == before


def test_bad_positional_json_names_the_argument(forest: Path) -> None:
    result = vine("plant", "{bad", "-f", str(forest))
    assert result.exit_code == 2
    assert "--node" not in result.stderr
    assert "NODE" in result.stderr
