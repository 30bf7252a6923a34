"""The ``vine`` commands beyond the reads: help, version and the README, ``vine call``,
the writes, init and reindex, and how a command finds its forest."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine
from monkeyllm.registry import CALLS

from ..forestkit import REPO, copy_sample, files_of, git, head, node, status
from .kit import DATASET, cool, engine, error_line, json_arg, run_json, steady, vine

NOTE: dict[str, Any] = node(
    "sales/cli-note", "sales/_index", "CLI note", "Planted from the command line."
)


INSERT = (
    "INSERT INTO orders (id, customer, region, total_invoice, closed_at, value_cents) "
    "VALUES ('CLI-1', 'Loja CLI', 'South', 'USD 1,00', '2026-07-01', 100)"
)
FOREST_COMMANDS = [
    "call",
    "init",
    "reindex",
    "validate",
    "ingest",
    "serve",
    "browse",
    "station",
    "watch",
    "canopy",
]


def commits_since(root: Path, rev: str) -> list[str]:
    """Subjects of the commits made after ``rev``, newest first."""
    return git(root, "log", "--format=%s", f"{rev}..HEAD").splitlines()


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
        "id": NOTE["id"],
        "title": NOTE["title"],
        "summary": NOTE["summary"],
    }


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
    cli = [
        run_json(brain_copy, "plant", json.dumps(NOTE)),
        run_json(brain_copy, "graft", "sales/price-list", "--patch", json.dumps(patch)),
        run_json(brain_copy, "tend", DATASET, "--sql", INSERT),
    ]
    with Vine(twin) as writer:
        # A person at the command line writes as a person does: source manual.
        direct = [
            writer.plant(dict(NOTE, source="manual")),
            writer.graft("sales/price-list", patch),
            writer.tend(DATASET, INSERT),
        ]
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
    with Vine(brain_copy) as writer:  # the engine itself (and MCP, REST) says agent
        writer.plant(dict(NOTE, id="sales/direct", title="Direct"))
    assert source_of("sales/direct") == "agent"


def test_a_held_lock_refuses_writes_but_not_reads(brain_copy: Path) -> None:
    before, files = head(brain_copy), files_of(brain_copy)
    with Vine(brain_copy) as holder:
        assert holder.writable
        for argv in (
            ["plant", json.dumps(NOTE)],
            ["graft", "sales/price-list", "--patch", '{"set_frontmatter": {}}'],
            ["tend", DATASET, "--sql", INSERT],
            ["call", "plant", json.dumps({"node": NOTE})],
        ):
            result = vine(*argv, "-f", str(brain_copy))
            assert result.exit_code == 1, argv
            envelope = json.loads(result.stdout)
            assert envelope["error"]["code"] == "E_LOCKED"
            assert result.stderr == error_line(envelope)
        assert run_json(brain_copy, "look", "sales/price-list")["id"] == "sales/price-list"
    assert head(brain_copy) == before and files_of(brain_copy) == files
    assert run_json(brain_copy, "plant", json.dumps(NOTE))["created"] is True


def test_init_creates_a_forest_look_can_read(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "notes"
    result = vine(
        "init", str(folder), "--title", "Field notes", "--summary", "What we learn in the field."
    )
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


def test_init_defaults_to_here_named_after_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "field-notes"
    folder.mkdir()
    monkeypatch.chdir(folder)
    result = vine("init", "-t", "Notes", "-s", "Short.")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["forest"] == str(folder.resolve())
    assert run_json(folder, "look", "_index", "--fields", "id,title,summary") == {
        "id": "_index",
        "title": "Notes",
        "summary": "Short.",
    }
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
    err = json.loads(result.stdout)["error"]
    assert err["code"] == "E_SCHEMA"
    assert err["message"] == f"cannot create a forest at {target}: it is a file, not a folder"
    assert "Give the path of a folder instead" in err["hint"]
    assert "File exists" not in result.stderr
    assert target.read_text() == "not a folder\n"


def test_init_takes_the_forest_option_as_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv, folder in (
        (["-f", "a", "init"], tmp_path / "a"),
        (["init", "--forest", "b"], tmp_path / "b"),
    ):
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


def test_forest_option_before_and_after_the_subcommand(forest: Path, tmp_path: Path) -> None:
    expected = engine(forest, "look", id="sales/price-list")
    for argv in (
        ["-f", str(forest), "look", "sales/price-list"],
        ["--forest", str(forest), "look", "sales/price-list"],
        ["look", "sales/price-list", "-f", str(forest)],
        ["look", "sales/price-list", "--forest", str(forest)],
        # the subcommand's own option wins over the app's
        ["-f", str(tmp_path), "look", "sales/price-list", "-f", str(forest)],
    ):
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
    result = vine("look", "sales/price-list", "-f", str(forest), env={"VINE_FOREST": str(tmp_path)})
    assert result.exit_code == 0 and json.loads(result.stdout) == expected
    result = vine("look", "sales/price-list", env={"VINE_FOREST": str(tmp_path)})
    assert result.exit_code == 2 and result.stdout == ""
    assert "VINE_FOREST" in result.stderr and "not a forest" in result.stderr


@pytest.mark.parametrize("subfolder", ["", "sales", "sales/pipeline"])
def test_nearest_forest_above_the_current_folder(
    forest: Path, subfolder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(forest / subfolder)
    expected = engine(forest, "look", id="sales/price-list")
    cool(forest)
    result = vine("look", "sales/price-list")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == expected


def test_no_forest_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in (
        ["look", "x"],
        ["plant", json.dumps(NOTE)],
        ["call", "look", '{"id": "x"}'],
        ["reindex"],
    ):
        result = vine(*argv)
        assert result.exit_code == 2, argv
        assert result.stdout == ""
        assert "no forest at or above" in result.stderr
    result = vine("look", "x", "-f", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    assert "is not a forest" in result.stderr
    assert list(tmp_path.iterdir()) == []
