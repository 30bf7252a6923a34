"""What a newcomer trips on before any call runs: which forest (a clone of this
repository holds one right inside it), a --forest that is missing or a file, a binary
file given as JSON, and ``-`` waiting on a terminal for JSON it does not ask for."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from ..forestkit import SAMPLE, copy_sample, git
from .kit import vine


def test_a_forest_right_inside_the_folder_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a clone of this repository, `vine look ID` without --forest says that
    sample-brain/ is a forest, as --forest takes it."""
    copy_sample(tmp_path / "sample-brain")
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    result = vine("look", "sales/exchange-policy")
    assert result.exit_code == 2 and result.stdout == ""
    assert "no forest at or above" in result.stderr
    assert "--forest sample-brain" in result.stderr
    result = vine("look", "sales/exchange-policy", "-f", str(tmp_path))
    assert result.exit_code == 2
    assert "is not a forest" in result.stderr and "--forest sample-brain" in result.stderr


def test_a_missing_forest_and_a_file_say_so(tmp_path: Path) -> None:
    missing = vine("look", "x", "-f", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "nowhere does not exist" in missing.stderr
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    a_file = vine("look", "x", "-f", str(tmp_path / "notes.txt"))
    assert a_file.exit_code == 2 and "notes.txt is a file" in a_file.stderr


def test_a_binary_file_as_json_is_named_as_such(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    blob = tmp_path / "node.json"
    blob.write_bytes(b"\x7fELF\x02\x01\x01\x00\xd0\xff\xfe")
    result = vine("plant", f"@{blob}", "-f", str(root))
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{blob} is not UTF-8 text" in result.stderr
    assert "codec" not in result.stderr


def test_json_from_a_terminal_says_it_is_waiting(tmp_path: Path) -> None:
    """`vine plant -` typed at a terminal says it reads the node from standard input
    (and how to end it), then plants what was typed."""
    root = copy_sample(tmp_path / "brain", git=True)
    node = {
        "id": "sales/typed",
        "type": "note",
        "parent": "sales/_index",
        "title": "Typed",
        "summary": "Typed at a terminal.",
    }
    leader, follower = pty.openpty()
    env = {**os.environ, "VINE_WATCH": "0"}
    env.pop("VINE_FOREST", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "monkeyllm.commands", "plant", "-", "-f", str(root)],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    os.write(leader, json.dumps(node).encode() + b"\n\x04")
    out, err = proc.communicate(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, err
    assert b"reading NODE as JSON from standard input (Ctrl-D ends it)" in err
    assert json.loads(out)["id"] == "sales/typed"
    assert git(root, "log", "-1", "--format=%s").startswith("plant(sales/typed)")


def test_json_from_a_pipe_says_nothing(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    result = vine("call", "look", "-", "-f", str(root), input='{"id": "sales/price-list"}')
    assert result.exit_code == 0 and result.stderr == ""


def run_on_a_terminal(*args: str) -> tuple[int, str]:
    """``vine ARGS`` with its standard output on a pseudo-terminal (as a person runs
    it): the exit status and what it wrote on stderr."""
    leader, follower = pty.openpty()
    env = {**os.environ, "VINE_WATCH": "0", "COLUMNS": "100"}
    env.pop("VINE_FOREST", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "monkeyllm.commands", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    _, err = proc.communicate(timeout=60)
    os.close(leader)
    return proc.returncode, err.decode()


def test_an_error_on_a_terminal_shows_what_its_envelope_holds(tmp_path: Path) -> None:
    """On a terminal only stderr speaks: a refused prune names the links that anchor
    the node (JSON mode has them on stdout), under the one-line error."""
    root = copy_sample(tmp_path / "brain", git=True)
    code, err = run_on_a_terminal("prune", "sales/discount-ladder", "-f", str(root))
    assert code == 1
    first, *details = err.splitlines()
    assert first.startswith("vine: E_ANCHORED: sales/discount-ladder is linked from 1 link")
    assert details == ["  anchors: sales/price-list (related-to)", "  anchor_count: 1"]
    piped = vine("prune", "sales/discount-ladder", "-f", str(root))
    assert piped.exit_code == 1 and len(piped.stderr.splitlines()) == 1
    assert json.loads(piped.stdout)["error"]["anchors"] == [
        {"source": "sales/price-list", "rel": "related-to"}
    ]


def test_a_json_file_an_editor_saved_with_a_bom_is_read(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    patch = tmp_path / "filter.json"
    patch.write_text('\ufeff{"type": "dataset"}', encoding="utf-8")
    result = vine("scan", "_index", "--recursive", "--filter", f"@{patch}", "-f", str(root))
    assert result.exit_code == 0, result.stderr
    assert {n["type"] for n in json.loads(result.stdout)["nodes"]} == {"dataset"}


def test_an_ingest_that_ingested_nothing_says_why_on_stderr(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    result = vine("ingest", str(tmp_path / "nowhere"), "-f", str(root))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["counts"]["failed"] == 1
    assert result.stderr == (
        f"vine ingest: nothing was ingested: 1 failed ({tmp_path / 'nowhere'}: "
        "no such file or folder)\n"
    )


@pytest.mark.parametrize(
    ("args", "said", "python", "kwargs"),
    [
        (
            ["scan", "_index", "--limit", "0"],
            "--limit must be from 1 to 50",
            "limit",
            {"parent_id": "_index", "limit": 0},
        ),
        (
            ["harvest", "price", "-k", "0"],
            "-k must be from 1 to 5",
            "k",
            {"query": "price", "k": 0},
        ),
        (["sniff", ""], "TERMS must be at least 2 characters", "terms", {"terms": ""}),
        (
            ["transplant", "products/aurora-kettle", ""],
            "NEW_ID must not be empty",
            "new_id",
            {"id": "products/aurora-kettle", "new_id": ""},
        ),
        (
            ["transplant", "products/aurora-kettle", "   "],
            "NEW_ID must not be blank",
            "new_id",
            {"id": "products/aurora-kettle", "new_id": "   "},
        ),
        (
            ["pick", "sales/_index", "--after", "", "--section", "Sub-branches"],
            "--after and --section cannot be combined: use --section to read",
            "after and section",
            {"id": "sales/_index", "after": "", "section": "Sub-branches"},
        ),
    ],
)
def test_a_schema_error_names_what_was_typed(
    forest: Path, args: list[str], said: str, python: str, kwargs: dict[str, Any]
) -> None:
    """The command line's schema errors named the Python parameters (`limit`,
    `new_id`); they name the option or argument as typed, and so does the hint, while
    the Python call keeps its own names."""
    call = args[0]
    result = vine(*args, "-f", str(forest))
    assert result.exit_code == 1, result.stdout
    err = json.loads(result.stdout)["error"]
    assert err["code"] == "E_SCHEMA" and err["message"].startswith(f"{call}: {said}"), err
    name = said.split(" ", 1)[0]
    assert err.get("hint", name).startswith(f"{name} accepts" if "hint" in err else name), err
    with Vine(forest, writable=call == "transplant") as v:
        out = v.call(call, kwargs)
    assert out["error"]["message"].startswith(f"{call}: {python} "), out


def test_canopy_and_search_counts_say_one_node_not_one_nodes() -> None:
    from monkeyllm.commands.canopy import lines
    from monkeyllm.tui.screens.search import ranking_note

    def status(n: int) -> dict[str, object]:
        return {
            "built": {"embedded": n, "elapsed_ms": 1200},
            "index": True,
            "embedded": n,
            "nodes": n,
            "stale": 0,
            "embedder": {"name": "local", "model": "m", "dim": 4},
            "folder": "_derived/canopy",
        }

    one, two = lines(status(1)), lines(status(2))
    assert one[0] == "Embedded 1 node in 1.2 s." and "1 of 1 node embedded" in one[1]
    assert two[0] == "Embedded 2 nodes in 1.2 s." and "2 of 2 nodes embedded" in two[1]
    assert ", 1 node waiting" in ranking_note({"ran": True, "model": "m", "stale": 1})
    assert ", 3 nodes waiting" in ranking_note({"ran": True, "model": "m", "stale": 3})


def test_forest_wide_commands_take_the_forest_as_their_argument(tmp_path: Path) -> None:
    """`vine validate ./brain` and `vine reindex ./brain` work as `vine browse ./brain`
    does (the folder as the one positional argument), the same as with --forest."""
    root = copy_sample(tmp_path / "brain")
    given = vine("validate", str(root), "--format", "json", "--no-payloads")
    option = vine("validate", "-f", str(root), "--format", "json", "--no-payloads")
    assert given.exit_code == option.exit_code == 0, given.stderr
    assert json.loads(given.stdout) == json.loads(option.stdout)
    assert json.loads(given.stdout)["errors"] == 0
    rebuilt = vine("reindex", str(root))
    again = vine("reindex", "-f", str(root))
    assert rebuilt.exit_code == again.exit_code == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["nodes"] == json.loads(again.stdout)["nodes"] > 50


def test_a_forest_argument_that_is_wrong_is_named_as_the_argument(tmp_path: Path) -> None:
    missing = vine("validate", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2
    assert "Invalid value for FOREST" in missing.stderr
    assert "nowhere does not exist" in missing.stderr
    root = copy_sample(tmp_path / "brain")
    other = copy_sample(tmp_path / "other")
    both = vine("validate", str(root), "-f", str(other))
    assert both.exit_code == 2 and "two forests given" in both.stderr
    same = vine("validate", str(root), "-f", str(root), "--no-payloads")
    assert same.exit_code == 0, same.stderr


def test_browse_without_a_terminal_says_so_instead_of_waiting(tmp_path: Path) -> None:
    """An agent's shell or a script has no terminal: the app would draw into the pipe
    and wait for keys forever."""
    command = [sys.executable, "-m", "monkeyllm.commands", "browse", str(SAMPLE)]
    done = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "not a terminal" in done.stderr and "vine look _index" in done.stderr
    copied = subprocess.run(
        [*command, "--copy", str(tmp_path / "mine")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert copied.returncode == 0 and "copied" in copied.stderr
    assert (tmp_path / "mine" / "_index.md").is_file()


def test_serve_typed_in_a_terminal_says_it_waits_for_an_mcp_client() -> None:
    """Over stdio the server is silent until a client speaks: typed at a terminal, it
    says so on stderr instead of looking hung (and a client's pipe never sees it)."""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "monkeyllm.commands", "serve", "-f", str(SAMPLE)],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "VINE_WATCH": "0"},
    ) as proc:
        os.close(follower)
        try:
            assert proc.stderr is not None and proc.stdout is not None
            first = proc.stderr.readline().decode()
            assert "speaking MCP on standard input and output" in first
            assert "--transport http" in first
        finally:
            proc.kill()
            proc.wait(timeout=30)
            os.close(leader)
        assert proc.stdout.read() == b""  # only protocol goes there


def test_the_station_says_how_many_forests_it_serves_in_words(tmp_path: Path) -> None:
    import socket

    root = tmp_path / "forests"
    copy_sample(root / "brain", git=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "monkeyllm.commands", "station", "serve"]
    with subprocess.Popen(
        [*command, "--root", str(root), "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "VINE_WATCH": "0"},
    ) as proc:
        try:
            assert proc.stderr is not None
            first = proc.stderr.readline().decode()
        finally:
            proc.kill()
            proc.wait(timeout=30)
            if proc.stderr is not None:
                proc.stderr.close()
    assert f"127.0.0.1:{port}/v1" in first and "(1 forest under" in first, first
