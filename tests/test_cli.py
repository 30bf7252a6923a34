"""The ``vine`` command line, in process: every subcommand and every option, each
answer compared with the engine's own answer for the same arguments."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from monkeyllm import Vine
from monkeyllm.commands.app import app
from monkeyllm.commands.spelling import CLI
from monkeyllm.hints import spelled
from monkeyllm.registry import CALLS

from .forestkit import REPO, copy_sample, files_of, git, head, status

runner = CliRunner()

NOTE: dict[str, Any] = {"id": "sales/cli-note", "type": "note", "parent": "sales/_index",
                        "title": "CLI note", "summary": "Planted from the command line."}
DATASET = "sales/orders-2026"
INSERT = ("INSERT INTO orders (id, customer, region, total_invoice, closed_at, value_cents) "
          "VALUES ('CLI-1', 'Loja CLI', 'South', 'USD 1,00', '2026-07-01', 100)")
FOREST_COMMANDS = ["call", "init", "reindex", "validate", "ingest", "serve", "browse",
                   "station", "watch", "canopy"]


# -- helpers -------------------------------------------------------------------------


def cool(root: Path) -> None:
    """Forget the heat earlier reads deposited, so the CLI and the engine rank from the
    same (empty) trails."""
    for suffix in ("", "-wal", "-shm"):
        (root / "_derived" / f"trails.db{suffix}").unlink(missing_ok=True)


def engine(root: Path, name: str, **args: Any) -> dict[str, Any]:
    """The engine's answer to one call, opened the way reads are: read-only, with its
    hints in the command line's words (as the CLI has them worded)."""
    cool(root)
    with spelled(CLI), Vine(root, writable=False) as vine:
        return getattr(vine, name)(**args)


def vine(*args: str, input: str | None = None, env: dict[str, str | None] | None = None
         ) -> Result:
    """Run ``vine ARGS`` in process (stdout is not a terminal, so it prints JSON).

    ``$VINE_FOREST`` is unset unless ``env`` sets it, so a developer's shell cannot
    change which forest a test reads.
    """
    return runner.invoke(app, list(args), input=input,
                         env={"VINE_FOREST": None, **(env or {})}, catch_exceptions=False)


def run_json(root: Path, *args: str, input: str | None = None) -> Any:
    """``vine ARGS -f ROOT``: it succeeds, says nothing on stderr, prints one JSON value."""
    cool(root)
    result = vine(*args, "-f", str(root), input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.stderr == ""
    return json.loads(result.stdout)


def steady(out: dict[str, Any]) -> dict[str, Any]:
    """A response without its timing and commit, which differ between two runs."""
    return {k: v for k, v in out.items() if k not in ("elapsed_ms", "commit")}


def json_arg(value: Any, source: str, folder: Path) -> tuple[str, str | None]:
    """A JSON argument as the command line takes it: inline, ``@file`` or ``-`` with
    the text on standard input. Returns (argument, stdin)."""
    text = json.dumps(value)
    if source == "inline":
        return text, None
    if source == "file":
        path = folder / "arg.json"
        path.write_text(text, encoding="utf-8")
        return f"@{path}", None
    return "-", text


def commits_since(root: Path, rev: str) -> list[str]:
    """Subjects of the commits made after ``rev``, newest first."""
    return git(root, "log", "--format=%s", f"{rev}..HEAD").splitlines()


def error_line(envelope: dict[str, Any]) -> str:
    """The one stderr line the CLI prints for an error envelope."""
    err = envelope["error"]
    line = f"vine: {err['code']}: {err['message']}"
    return line + (f" (hint: {err['hint']})" if err.get("hint") else "") + "\n"


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-brain/ for reads (reads leave heat behind, so not the shared
    session copy)."""
    return copy_sample(tmp_path_factory.mktemp("cli") / "brain")


# -- every read option, against the engine -------------------------------------------


def _all(key: str, value: Any, where: str = "results") -> Callable[[dict[str, Any]], bool]:
    return lambda out: bool(out[where]) and all(item[key] == value for item in out[where])


READS: list[Any] = [
    # locate
    (["locate", "exchange policy deadlines"], {"query": "exchange policy deadlines"},
     lambda out: len(out["results"]) > 1),
    (["locate", "exchange policy deadlines", "-k", "1"],
     {"query": "exchange policy deadlines", "k": 1}, lambda out: len(out["results"]) == 1),
    (["locate", "exchange policy deadlines", "--k", "2"],
     {"query": "exchange policy deadlines", "k": 2}, lambda out: len(out["results"]) == 2),
    (["locate", "exchange policy", "--scope", "branches"],
     {"query": "exchange policy", "scope": "branches"}, _all("kind", "branch")),
    (["locate", "policy", "--type-filter", "note"], {"query": "policy", "type_filter": "note"},
     _all("type", "note")),
    (["locate", "exchange policy", "--type_filter", "entity"],
     {"query": "exchange policy", "type_filter": "entity"}, _all("type", "entity")),
    (["locate", "policy", "--include", "outline", "-k", "2"],
     {"query": "policy", "include": ["outline"], "k": 2},
     lambda out: all("outline" in r for r in out["results"])),
    (["locate", "policy", "--since", "2026-01", "--until", "2026-02"],
     {"query": "policy", "since": "2026-01", "until": "2026-02"},
     lambda out: out["window"] == {"since": "2026-01", "until": "2026-02",
                                   "date_field": "created"}),
    (["locate", "policy", "--since", "2026-05", "--date-field", "updated"],
     {"query": "policy", "since": "2026-05", "date_field": "updated"},
     lambda out: out["window"]["date_field"] == "updated"),
    # look
    (["look", "sales/exchange-policy"], {"id": "sales/exchange-policy"},
     lambda out: out["id"] == "sales/exchange-policy" and "edges_out" in out),
    (["look", "sales/exchange-policy", "--fields", "id,summary"],
     {"id": "sales/exchange-policy", "fields": ["id", "summary"]},
     lambda out: set(out) == {"id", "summary"}),
    (["look", "sales/exchange-policy", "--fields", "id", "--fields", "summary"],
     {"id": "sales/exchange-policy", "fields": ["id", "summary"]},
     lambda out: set(out) == {"id", "summary"}),
    # the form the help's own example gives: a JSON array
    (["look", "sales/exchange-policy", "--fields", '["summary"]'],
     {"id": "sales/exchange-policy", "fields": ["summary"]},
     lambda out: set(out) == {"id", "summary"}),
    (["look", "sales/exchange-policy", "sales/price-list"],
     {"id": ["sales/exchange-policy", "sales/price-list"]},
     lambda out: [n["id"] for n in out["nodes"]] == ["sales/exchange-policy",
                                                      "sales/price-list"]),
    (["look", "sales/exchange-policy", "nope/ghost", "--fields", "id,title"],
     {"id": ["sales/exchange-policy", "nope/ghost"], "fields": ["id", "title"]},
     lambda out: out["missing"] == ["nope/ghost"] and set(out["nodes"][0]) == {"id", "title"}),
    # move
    (["move", "sales/exchange-policy"], {"id": "sales/exchange-policy"},
     _all("direction", "out", "neighbors")),
    (["move", "sales/_index", "--rel", "children"], {"id": "sales/_index", "rel": "children"},
     _all("rel", "children", "neighbors")),
    (["move", "sales/orders-2026", "--direction", "in"],
     {"id": "sales/orders-2026", "direction": "in"}, _all("direction", "in", "neighbors")),
    (["move", "sales/exchange-policy", "--direction", "both", "--rel", "related-to"],
     {"id": "sales/exchange-policy", "direction": "both", "rel": "related-to"},
     _all("rel", "related-to", "neighbors")),
    # pick
    (["pick", "engineering/nfe-runbook"], {"id": "engineering/nfe-runbook"},
     lambda out: out["body"].startswith("# ")),
    (["pick", "engineering/nfe-runbook", "--section", "Resending a batch"],
     {"id": "engineering/nfe-runbook", "section": "Resending a batch"},
     lambda out: out["section"] == "Resending a batch"),
    (["pick", "engineering/nfe-runbook", "--section", "Resending a batch",
      "--section", "First five minutes"],
     {"id": "engineering/nfe-runbook", "section": ["Resending a batch", "First five minutes"]},
     lambda out: [s["section"] for s in out["sections"]] == ["Resending a batch",
                                                             "First five minutes"]),
    (["pick", "sales/exchange-policy", "sales/price-list"],
     {"id": ["sales/exchange-policy", "sales/price-list"]},
     lambda out: [n["id"] for n in out["nodes"]] == ["sales/exchange-policy",
                                                      "sales/price-list"]),
    (["pick", "contracts/master-agreement", "--after", ""],
     {"id": "contracts/master-agreement", "after": ""},
     lambda out: out["truncated"] and out["next"] and "body" in out),
    # scan
    (["scan", "sales"], {"parent_id": "sales"}, lambda out: out["returned"] > 1),
    (["scan", "sales", "--recursive"], {"parent_id": "sales", "recursive": True},
     lambda out: "sales/pipeline/prospects-q2" in [n["id"] for n in out["nodes"]]),
    (["scan", "_index", "--recursive", "--limit", "3"],
     {"parent_id": "_index", "recursive": True, "limit": 3},
     lambda out: out["returned"] == len(out["nodes"]) == 3),
    (["scan", "sales", "--fields", "id,type"], {"parent_id": "sales", "fields": ["id", "type"]},
     lambda out: all(set(n) == {"id", "type"} for n in out["nodes"])),
    (["scan", "sales", "--fields", '["id", "title"]'],
     {"parent_id": "sales", "fields": ["id", "title"]},
     lambda out: all(set(n) == {"id", "title"} for n in out["nodes"])),
    (["scan", "_index", "--recursive", "--filter", '{"type": "dataset"}'],
     {"parent_id": "_index", "recursive": True, "filter": {"type": "dataset"}},
     _all("type", "dataset", "nodes")),
    (["scan", "_index", "--recursive", "--limit", "3", "--fields", "id", "--after", ""],
     {"parent_id": "_index", "recursive": True, "limit": 3, "fields": ["id"], "after": ""},
     lambda out: out["next"] == out["nodes"][-1]["id"]),
    (["scan", "_index", "--recursive", "--since", "2026-06", "--date-field", "updated",
      "--fields", "id,updated"],
     {"parent_id": "_index", "recursive": True, "since": "2026-06", "date_field": "updated",
      "fields": ["id", "updated"]},
     lambda out: out["nodes"] and all(n["updated"] >= "2026-06" for n in out["nodes"])),
    (["scan", "_index", "--recursive", "--until", "2025-06", "--date_field", "created",
      "--fields", "id,created"],
     {"parent_id": "_index", "recursive": True, "until": "2025-06", "date_field": "created",
      "fields": ["id", "created"]},
     lambda out: out["nodes"] and all(n["created"][:7] <= "2025-06" for n in out["nodes"])),
    # sniff
    (["sniff", "NF-4412"], {"terms": "NF-4412"},
     lambda out: out["results"] and all(any("NF-4412" in m["snippet"] for m in r["matches"])
                                        for r in out["results"])),
    (["sniff", "NF-4412", "exchange"], {"terms": ["NF-4412", "exchange"]},
     lambda out: len(out["results"]) > 1),
    (["sniff", "exchange", "--scope", "sales"], {"terms": "exchange", "scope": "sales"},
     lambda out: out["results"] and all(r["id"].startswith("sales/") for r in out["results"])),
    (["sniff", "exchange", "-k", "1"], {"terms": "exchange", "k": 1},
     lambda out: len(out["results"]) == 1),
    (["sniff", "exchange", "--type-filter", "entity"],
     {"terms": "exchange", "type_filter": "entity"}, _all("type", "entity")),
    (["sniff", "exchange", "--type_filter", "note", "--since", "2026-04", "--until", "2026-06",
      "--date-field", "updated"],
     {"terms": "exchange", "type_filter": "note", "since": "2026-04", "until": "2026-06",
      "date_field": "updated"},
     lambda out: out["window"] == {"since": "2026-04", "until": "2026-06",
                                   "date_field": "updated"}),
    # query
    (["query", DATASET, "--sql",
      "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region"],
     {"id": DATASET, "sql": "SELECT region, COUNT(*) AS n FROM orders GROUP BY region "
                            "ORDER BY region"},
     lambda out: out["columns"] == ["region", "n"] and out["rows"]),
]


@pytest.mark.parametrize(("argv", "args", "check"), READS,
                         ids=[" ".join(case[0])[:60] for case in READS])
def test_read_equals_the_engine(forest: Path, argv: list[str], args: dict[str, Any],
                                check: Callable[[dict[str, Any]], bool]) -> None:
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
    assert second == engine(forest, "pick", id="contracts/master-agreement",
                            after=first["next"])
    assert second["body"] != first["body"]


def test_scan_after_pages_on(forest: Path) -> None:
    base = ["scan", "_index", "--recursive", "--limit", "3", "--fields", "id"]
    first = run_json(forest, *base, "--after", "")
    second = run_json(forest, *base, "--after", first["next"])
    assert second == engine(forest, "scan", parent_id="_index", recursive=True, limit=3,
                            fields=["id"], after=first["next"])
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


@pytest.mark.parametrize(("argv", "name", "args"), [
    (["look", "nope/ghost"], "look", {"id": "nope/ghost"}),
    (["locate", "policy", "--include", "body"], "locate",
     {"query": "policy", "include": ["body"]}),
    (["scan", "sales", "--filter", "[1]"], "scan", {"parent_id": "sales", "filter": [1]}),
    (["query", DATASET, "--sql", "DELETE FROM orders"], "query",
     {"id": DATASET, "sql": "DELETE FROM orders"}),
], ids=["not-found", "bad-include", "filter-not-object", "query-refuses-writes"])
def test_error_envelope_exits_1(forest: Path, argv: list[str], name: str,
                                args: dict[str, Any]) -> None:
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
def test_usage_error_exits_2_with_nothing_on_stdout(forest: Path, argv: list[str],
                                                    needle: str) -> None:
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


# -- help, version and the README ----------------------------------------------------


@pytest.mark.parametrize("command", [*CALLS, *FOREST_COMMANDS])
def test_help_has_an_example(command: str) -> None:
    result = vine(command, "--help")
    assert result.exit_code == 0
    assert re.search(rf"Example:\s+vine {command}(\s|$)", result.stdout), result.stdout


def test_top_level_help_lists_every_command() -> None:
    result = vine("--help")
    assert result.exit_code == 0
    listed = re.findall(r"^  (\w+)(?:\s|$)", result.stdout.split("Commands:")[1], re.M)
    assert sorted(listed) == sorted([*CALLS, *FOREST_COMMANDS])


@pytest.mark.parametrize("command", [*CALLS, *FOREST_COMMANDS])
def test_readme_command_table_has_a_row(command: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"^\| `vine {command}[ `]", readme, re.M), command


def test_version() -> None:
    result = vine("--version")
    assert result.exit_code == 0
    assert result.stdout == f"vine (monkeyllm) {version('monkeyllm')}\n"


# -- vine call -----------------------------------------------------------------------


def test_call_inline_json(forest: Path) -> None:
    out = run_json(forest, "call", "locate", '{"query": "exchange policy", "k": 2}')
    assert out == engine(forest, "locate", query="exchange policy", k=2)
    assert len(out["results"]) == 2


def test_call_stdin(forest: Path) -> None:
    args = {"id": ["sales/exchange-policy", "sales/price-list"], "fields": ["id", "tags"]}
    out = run_json(forest, "call", "look", "-", input=json.dumps(args))
    assert out == engine(forest, "look", **args)


def test_call_file(forest: Path, tmp_path: Path) -> None:
    args = {"terms": "NF-4412", "scope": "sales"}
    arg, _ = json_arg(args, "file", tmp_path)
    assert run_json(forest, "call", "sniff", arg) == engine(forest, "sniff", **args)


def test_call_without_args_is_the_engines_refusal(forest: Path) -> None:
    result = vine("call", "look", "-f", str(forest))
    assert result.exit_code == 1
    cool(forest)
    with Vine(forest, writable=False) as v:
        expected = v.call("look", {})
    assert json.loads(result.stdout) == expected
    assert expected["error"]["code"] == "E_SCHEMA"


# -- writes --------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["inline", "file", "stdin"])
def test_plant_makes_one_commit(brain_copy: Path, tmp_path: Path, source: str) -> None:
    before = head(brain_copy)
    arg, stdin = json_arg(NOTE, source, tmp_path)
    out = run_json(brain_copy, "plant", arg, input=stdin)
    assert out["id"] == NOTE["id"] and out["created"] is True
    assert out["commit"] == head(brain_copy)
    log = commits_since(brain_copy, before)
    assert len(log) == 1 and log[0].startswith(f"plant({NOTE['id']})")
    assert status(brain_copy) == ""
    assert engine(brain_copy, "look", id=NOTE["id"], fields=["id", "title", "summary"]) == {
        "id": NOTE["id"], "title": NOTE["title"], "summary": NOTE["summary"]}


def test_plant_batch_makes_one_commit(brain_copy: Path) -> None:
    second = {**NOTE, "id": "sales/cli-note-2", "title": "CLI note 2"}
    before = head(brain_copy)
    out = run_json(brain_copy, "plant", json.dumps([NOTE, second]))
    assert out["created"] == [NOTE["id"], second["id"]]
    assert len(commits_since(brain_copy, before)) == 1
    assert out["commit"] == head(brain_copy)


def test_call_plant_makes_one_commit(brain_copy: Path) -> None:
    before = head(brain_copy)
    out = run_json(brain_copy, "call", "plant", json.dumps({"node": NOTE}))
    assert out["created"] is True and out["commit"] == head(brain_copy)
    assert len(commits_since(brain_copy, before)) == 1


def test_plant_dry_run_writes_nothing(brain_copy: Path) -> None:
    before, files = head(brain_copy), files_of(brain_copy)
    out = run_json(brain_copy, "plant", json.dumps(NOTE), "--dry-run")
    assert out["dry_run"] is True and out["id"] == NOTE["id"]
    assert head(brain_copy) == before and status(brain_copy) == ""
    assert files_of(brain_copy) == files
    with Vine(brain_copy) as writer:
        assert writer.plant(dict(NOTE), dry_run=True) == out


@pytest.mark.parametrize("flag", ["--if-absent", "--if_absent"])
def test_plant_if_absent(brain_copy: Path, flag: str) -> None:
    existing = {**NOTE, "id": "sales/price-list", "title": "Another price list"}
    before, files = head(brain_copy), files_of(brain_copy)
    refused = vine("plant", json.dumps(existing), "-f", str(brain_copy))
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["error"]["code"] == "E_SCHEMA"
    out = run_json(brain_copy, "plant", json.dumps(existing), flag)
    assert out["created"] is False and out["id"] == "sales/price-list"
    assert head(brain_copy) == before and files_of(brain_copy) == files


@pytest.mark.parametrize("source", ["inline", "file", "stdin"])
def test_graft_patch_makes_one_commit(brain_copy: Path, tmp_path: Path, source: str) -> None:
    patch = {"set_frontmatter": {"tags": ["pricing", "cli"]}}
    before = head(brain_copy)
    arg, stdin = json_arg(patch, source, tmp_path)
    out = run_json(brain_copy, "graft", "sales/price-list", "--patch", arg, input=stdin)
    assert out["id"] == "sales/price-list" and out["commit"] == head(brain_copy)
    log = commits_since(brain_copy, before)
    assert len(log) == 1 and log[0].startswith("graft(sales/price-list)")
    assert status(brain_copy) == ""
    assert engine(brain_copy, "look", id="sales/price-list")["tags"] == ["pricing", "cli"]


def test_tend_sql_makes_one_commit(brain_copy: Path) -> None:
    count_sql = "SELECT COUNT(*) FROM orders"
    rows = engine(brain_copy, "query", id=DATASET, sql=count_sql)["rows"][0][0]
    before = head(brain_copy)
    out = run_json(brain_copy, "tend", DATASET, "--sql", INSERT)
    assert out["rows_affected"] == 1 and out["commit"] == head(brain_copy)
    log = commits_since(brain_copy, before)
    assert len(log) == 1 and log[0].startswith(f"tend({DATASET})")
    assert status(brain_copy) == ""
    assert engine(brain_copy, "query", id=DATASET, sql=count_sql)["rows"][0][0] == rows + 1


def test_writes_equal_the_engine(brain_copy: Path, tmp_path: Path) -> None:
    """The same plant, graft and tend through the CLI and through the engine leave the
    same answers and the same files."""
    twin = copy_sample(tmp_path / "twin", git=True)
    patch = {"set_frontmatter": {"tags": ["pricing"]}}
    cli = [run_json(brain_copy, "plant", json.dumps(NOTE)),
           run_json(brain_copy, "graft", "sales/price-list", "--patch", json.dumps(patch)),
           run_json(brain_copy, "tend", DATASET, "--sql", INSERT)]
    with Vine(twin) as writer:
        # A person at the command line writes as a person does: source manual.
        direct = [writer.plant(dict(NOTE, source="manual")),
                  writer.graft("sales/price-list", patch), writer.tend(DATASET, INSERT)]
    assert [steady(o) for o in cli] == [steady(o) for o in direct]
    assert git(brain_copy, "log", "--format=%s") == git(twin, "log", "--format=%s")

    def markdown(root: Path) -> dict[str, bytes]:
        return {k: v for k, v in files_of(root).items() if k.endswith(".md")}

    assert markdown(brain_copy) == markdown(twin)


def test_a_person_plants_source_manual_unless_told(brain_copy: Path) -> None:
    """plant defaults to source agent; through the command line a person is writing."""
    import yaml

    def source_of(node_id: str) -> str:
        text = (brain_copy / (node_id + ".md")).read_text(encoding="utf-8")
        return yaml.safe_load(text.split("---")[1])["source"]

    run_json(brain_copy, "plant", json.dumps(NOTE))
    assert source_of(NOTE["id"]) == "manual"
    assert git(brain_copy, "log", "-1", "--format=%s").strip().endswith("[source=manual]")
    other = dict(NOTE, id="sales/by-call", title="By call")
    run_json(brain_copy, "call", "plant", json.dumps({"node": other}))
    assert source_of(other["id"]) == "manual"
    told = dict(NOTE, id="sales/told", title="Told", source="agent")
    run_json(brain_copy, "plant", json.dumps(told))
    assert source_of(told["id"]) == "agent"
    with Vine(brain_copy) as writer:        # the engine itself (and MCP, REST) says agent
        writer.plant(dict(NOTE, id="sales/direct", title="Direct"))
    assert source_of("sales/direct") == "agent"


def test_a_held_lock_refuses_writes_but_not_reads(brain_copy: Path) -> None:
    before, files = head(brain_copy), files_of(brain_copy)
    with Vine(brain_copy) as holder:
        assert holder.writable
        for argv in (["plant", json.dumps(NOTE)],
                     ["graft", "sales/price-list", "--patch", '{"set_frontmatter": {}}'],
                     ["tend", DATASET, "--sql", INSERT],
                     ["call", "plant", json.dumps({"node": NOTE})]):
            result = vine(*argv, "-f", str(brain_copy))
            assert result.exit_code == 1, argv
            envelope = json.loads(result.stdout)
            assert envelope["error"]["code"] == "E_LOCKED"
            assert result.stderr == error_line(envelope)
        assert run_json(brain_copy, "look", "sales/price-list")["id"] == "sales/price-list"
    assert head(brain_copy) == before and files_of(brain_copy) == files
    assert run_json(brain_copy, "plant", json.dumps(NOTE))["created"] is True


# -- init and reindex ----------------------------------------------------------------


def test_init_creates_a_forest_look_can_read(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "notes"
    result = vine("init", str(folder), "--title", "Field notes",
                  "--summary", "What we learn in the field.")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["forest"] == str(folder.resolve()) and out["title"] == "Field notes"
    assert out["commit"] == head(folder) and status(folder) == ""
    # the subject names the forest, with no section number of an internal spec
    assert git(folder, "log", "--format=%s").strip() == "init: forest 'Field notes'"
    with Vine(folder, writable=False) as v:
        assert out["nodes"] == v.scan("_index", fields=["id"], recursive=True)["total"]
    digest = run_json(folder, "look", "_index")
    assert digest == engine(folder, "look", id="_index")
    assert (digest["title"], digest["summary"]) == ("Field notes", "What we learn in the field.")


def test_init_defaults_to_here_named_after_the_folder(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "field-notes"
    folder.mkdir()
    monkeypatch.chdir(folder)
    result = vine("init", "-t", "Notes", "-s", "Short.")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["forest"] == str(folder.resolve())
    assert run_json(folder, "look", "_index", "--fields", "id,title,summary") == {
        "id": "_index", "title": "Notes", "summary": "Short."}
    other = tmp_path / "field-notes-2"
    result = vine("init", str(other))
    assert json.loads(result.stdout)["title"] == "field notes 2"


def test_init_refuses_an_existing_forest(brain_copy: Path) -> None:
    before, files = head(brain_copy), files_of(brain_copy)
    result = vine("init", str(brain_copy), "--title", "Again")
    assert result.exit_code == 1
    envelope = json.loads(result.stdout)
    assert envelope["error"]["code"] == "E_SCHEMA"
    assert result.stderr == error_line(envelope)
    assert head(brain_copy) == before and files_of(brain_copy) == files


def test_init_on_a_file_is_an_envelope(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("not a folder\n")
    result = vine("init", str(target))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["code"].startswith("E_")


def test_init_takes_the_forest_option_as_its_folder(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for argv, folder in ((["-f", "a", "init"], tmp_path / "a"),
                         (["init", "--forest", "b"], tmp_path / "b")):
        result = vine(*argv, "--title", "T")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["forest"] == str(folder)
    assert not (tmp_path / "_index.md").exists()
    result = vine("init", "c", "--forest", "d")
    assert result.exit_code == 2 and result.stdout == ""


def test_reindex_counts_the_nodes(forest: Path) -> None:
    out = run_json(forest, "reindex")
    with Vine(forest, writable=False) as v:
        expected = v.reindex()
        total = v.scan("_index", fields=["id"], recursive=True)["total"]
    assert steady(out) == steady(expected)
    assert out["nodes"] == total + 1  # the scan of _index counts everything but _index


# -- finding the forest --------------------------------------------------------------


def test_forest_option_before_and_after_the_subcommand(forest: Path, tmp_path: Path) -> None:
    expected = engine(forest, "look", id="sales/price-list")
    for argv in (["-f", str(forest), "look", "sales/price-list"],
                 ["--forest", str(forest), "look", "sales/price-list"],
                 ["look", "sales/price-list", "-f", str(forest)],
                 ["look", "sales/price-list", "--forest", str(forest)],
                 # the subcommand's own option wins over the app's
                 ["-f", str(tmp_path), "look", "sales/price-list", "-f", str(forest)]):
        cool(forest)
        result = vine(*argv)
        assert result.exit_code == 0, (argv, result.stderr)
        assert json.loads(result.stdout) == expected


def test_vine_forest_environment(forest: Path, tmp_path: Path) -> None:
    expected = engine(forest, "look", id="sales/price-list")
    cool(forest)
    result = vine("look", "sales/price-list", env={"VINE_FOREST": str(forest)})
    assert result.exit_code == 0 and json.loads(result.stdout) == expected
    cool(forest)
    result = vine("look", "sales/price-list", "-f", str(forest),
                  env={"VINE_FOREST": str(tmp_path)})
    assert result.exit_code == 0 and json.loads(result.stdout) == expected
    result = vine("look", "sales/price-list", env={"VINE_FOREST": str(tmp_path)})
    assert result.exit_code == 2 and result.stdout == ""
    assert "VINE_FOREST" in result.stderr and "not a forest" in result.stderr


@pytest.mark.parametrize("subfolder", ["", "sales", "sales/pipeline"])
def test_nearest_forest_above_the_current_folder(forest: Path, subfolder: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(forest / subfolder)
    expected = engine(forest, "look", id="sales/price-list")
    cool(forest)
    result = vine("look", "sales/price-list")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == expected


def test_no_forest_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in (["look", "x"], ["plant", json.dumps(NOTE)], ["call", "look", '{"id": "x"}'],
                 ["reindex"]):
        result = vine(*argv)
        assert result.exit_code == 2, argv
        assert result.stdout == ""
        assert "no forest at or above" in result.stderr
    result = vine("look", "x", "-f", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    assert "is not a forest" in result.stderr
    assert list(tmp_path.iterdir()) == []
