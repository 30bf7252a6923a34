"""The hot path of `vine CALL ...` parses exactly what the Typer command parses.

For any command line the hot path accepts, Click's own parse of the Typer command
must accept it too and hand the engine the same arguments, forest and output mode;
anything the hot path declines is left to Typer (help, usage errors, odd forms).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monkeyllm.commands import calls, common
from monkeyllm.commands.main import parse
from monkeyllm.commands.params import (
    choices_of,
    collect,
    option_names,
    positionals,
    second_spelling,
    shape_of,
)
from monkeyllm.registry import CALLS

from .forestkit import copy_sample


def typer_kwargs(name: str, argv: list[str]) -> dict[str, Any]:
    """What Typer hands the command of ``name`` for ``argv``: the command's real
    signature (as :func:`calls.build` makes it), with a body that records its kwargs."""
    seen: dict[str, Any] = {}

    def record(**kwargs: Any) -> None:
        seen.update(kwargs)

    record.__signature__ = calls.build(CALLS[name]).__signature__  # type: ignore[attr-defined]
    app = typer.Typer()
    app.command(name)(record)
    app.callback()(lambda: None)
    command = typer.main.get_command(app)
    command.main([name, *argv], prog_name="vine", standalone_mode=False)
    return seen


def hot(argv: list[str]) -> tuple[dict[str, Any], Path | None, bool] | None:
    plan = parse(argv)
    if plan is None:
        return None
    return collect(plan.spec, plan.values), plan.forest, plan.json


def typer_side(name: str, argv: list[str]) -> tuple[dict[str, Any], Path | None, bool]:
    params = typer_kwargs(name, argv)
    forest, as_json = params.pop("forest_"), params.pop("json_")
    second = second_spelling(CALLS[name])
    if second is not None:  # what the command does first: the option or the argument
        calls._second_argument(CALLS[name], second, params)
    return collect(CALLS[name], params), forest, as_json


PLAIN = [
    ["look", "sales/exchange-policy"],
    ["look", "a", "b", "--fields", "id,summary", "--fields", "title"],
    ["locate", "exchange policy deadlines", "-k", "3"],
    ["locate", "q", "--k=2", "--type-filter", "note", "--json"],
    ["sniff", "NF-4412", "--scope", "finance", "-f", "/tmp/x"],
    ["sniff", "NF-4412", "NF-9", "-k", "5"],
    ["scan", "sales", "--recursive", "--filter", '{"type": "dataset"}', "--limit", "5"],
    ["move", "sales/_index", "--rel", "children"],
    ["pick", "engineering/nfe-runbook", "--section", "Rejections", "--section", "Steps"],
    ["query", "sales/orders-2026", "--sql", "SELECT COUNT(*) FROM orders"],
    ["harvest", "what is the deadline?", "--terms", "NF-4412", "--date_field", "updated"],
    ["graft", "sales/price-list", "--patch", '{"set_frontmatter": {"tags": ["x"]}}'],
    ["graft", "sales/price-list", '{"set_frontmatter": {"tags": ["x"]}}'],
    ["query", "sales/orders-2026", "SELECT COUNT(*) FROM orders", "--json"],
    ["tend", "sales/orders-2026", "DELETE FROM orders WHERE id = '1'"],
    ["transplant", "sales/price-list", "sales/pipeline/price-list", "--dry-run"],
    ["prune", "sales/price-list", "--force"],
    ["history", "sales/price-list", "--limit", "3"],
    ["calendar", "--granularity", "week", "--since", "2026", "--scope", "meetings"],
    ["coverage"],
    ["coverage", "--scope", "sales", "--date-field", "updated"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=[" ".join(a[:2]) for a in PLAIN])
def test_plain_command_lines_take_the_hot_path_and_agree_with_typer(argv: list[str]) -> None:
    got = hot(argv)
    assert got is not None, f"the hot path declined {argv}"
    assert got == typer_side(argv[0], argv[1:])


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["look", "--help"],
        ["look", "-h"],
        ["look"],
        ["look", "x", "--", "y"],
        ["scan", "s", "--no-recursive"],
        ["locate", "q", "-k", "three"],
        ["locate", "q", "-k3"],
        ["harvest", "q", "--date-field", "born"],
        ["query", "x"],
        ["query", "x", "SELECT 1", "--sql", "SELECT 2"],
        ["query", "x", "SELECT 1", "SELECT 2"],
        ["graft", "x", "-"],
        ["plant", "-"],
        ["look", "x", "--nope"],
        ["--version"],
        ["nope", "x"],
        ["look", "x", "-f"],
        ["look", "x", "--json=1"],
        ["-f", "--json", "look", "x"],
        ["locate", "a", "b"],
        ["scan", "s", "--recursive=yes"],
        ["prune", "x", "--yes"],
        ["prune", "x", "-y"],
        ["transplant", "x"],
        ["transplant", "x", "y", "z"],
        ["coverage", "sales"],
        ["calendar", "--granularity", "q"],
    ],
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert parse(argv) is None


@pytest.mark.parametrize(
    "argv, forest, as_json",
    [
        (["-f", "/a", "look", "x"], None, False),
        (["--forest=/a", "--json", "look", "x", "-f", "/b"], Path("/b"), True),
        (["--json", "look", "x"], None, True),
    ],
)
def test_options_before_the_call_name(argv: list[str], forest: Path | None, as_json: bool) -> None:
    plan = parse(argv)
    assert plan is not None and plan.forest == forest and plan.json == as_json
    first = argv.index("look")
    assert plan.global_forest == (Path("/a") if first > 1 else None)


def _tokens(name: str) -> st.SearchStrategy[list[str]]:
    spec = CALLS[name]
    words: list[str] = [
        "--json",
        "-f",
        "--forest",
        "--forest=/tmp/f",
        "-h",
        "--",
        "-",
        "--no-recursive",
    ]
    for param in spec.params:
        words += option_names(param)
        words += [f"{n}=" for n in option_names(param) if n.startswith("--")]
        words += list(param.choices or ())
    values = st.one_of(
        st.sampled_from(words),
        st.sampled_from(
            [
                "3",
                "-1",
                "0",
                " 7",
                "1.5",
                "x",
                "a,b",
                ",",
                "",
                "@nofile",
                '{"type": "note"}',
                "[1]",
                "null",
                "sales/",
                "_index",
                "NF-4412",
                "1e3",
                "nan",
                "+4",
                "3_000",
                "=",
                "--k=4",
                "--k=x",
            ]
        ),
        st.text(max_size=6),
    )
    return st.one_of(st.lists(values, max_size=7), _plausible(name, values))


def _plausible(name: str, noise: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    """A command line shaped like a real one: the positional, then options (each
    with a value of its kind) in any order, now and then a stray token."""
    spec = CALLS[name]
    by_position = positionals(spec)
    text = st.text(min_size=1, max_size=8).filter(lambda t: not t.startswith("-"))
    by_shape = {
        "int": st.integers(0, 99).map(str),
        "float": st.floats(0, 2).map(repr),
        "json": st.sampled_from(['{"type": "note"}', "{}", '{"set_body": "x"}', "[]", "{bad"]),
        "flag": st.just(""),
        "str": text,
        "list": text,
        "many": text,
    }
    pieces = []
    for param in spec.params:
        if param in by_position:
            continue
        kind = shape_of(param)
        value = (
            st.sampled_from(choices_of(param) or ("?",))
            if kind in ("choice", "tristate")
            else by_shape[kind]
        )
        names = st.sampled_from(option_names(param))
        pair = st.tuples(names, value).map(lambda nv, k=kind: [nv[0]] if k == "flag" else list(nv))
        pieces.append(st.lists(pair, max_size=2) if not param.required else pair.map(lambda p: [p]))
    options = st.tuples(*pieces).map(lambda groups: [p for g in groups for p in g])
    # The positionals and no stray token three times in four.
    count = len(by_position)
    head = st.tuples(st.integers(0, 3), st.lists(text, min_size=count + 1, max_size=count + 1)).map(
        lambda c: c[1][:count] if c[0] else c[1]
    )
    stray = st.tuples(st.integers(0, 3), noise).map(lambda c: [] if c[0] else [c[1]])
    return st.tuples(head, options, stray).flatmap(
        lambda parts: st.permutations(parts[1]).map(
            lambda pairs: [*parts[0], *(t for p in pairs for t in p), *parts[2]]
        )
    )


@pytest.mark.parametrize("name", sorted(n for n in CALLS if n != "plant"))
@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data())
def test_every_command_line_the_hot_path_accepts_typer_reads_the_same(
    name: str, data: st.DataObject
) -> None:
    argv = [name, *data.draw(_tokens(name))]
    try:
        got = hot(argv)
    except Exception as exc:  # a JSON value that does not parse: a usage error
        assert common.is_usage_error(exc), exc
        got = "usage"
    if got is None:
        return
    try:
        expected: Any = typer_side(name, argv[1:])
    except Exception as exc:
        assert common.is_usage_error(exc), (argv, exc)
        expected = "usage"
    assert got == expected, argv


def test_the_console_script_runs_the_hot_path_and_falls_back(tmp_path: Path) -> None:
    forest = copy_sample(tmp_path / "brain")
    vine = [sys.executable, "-m", "monkeyllm.commands"]
    look = subprocess.run(
        [*vine, "look", "sales/exchange-policy", "-f", str(forest), "--fields", "id,title"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert look.returncode == 0, look.stderr
    assert json.loads(look.stdout) == {
        "id": "sales/exchange-policy",
        "title": json.loads(look.stdout)["title"],
    }
    bad = subprocess.run(
        [*vine, "locate", "q", "-k", "three", "-f", str(forest)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "Usage: " in bad.stderr and bad.stdout == ""
    missing = subprocess.run(
        [*vine, "look", "nowhere/at-all", "-f", str(forest)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["code"] == "E_NOT_FOUND"
    assert missing.stderr.startswith("vine: E_NOT_FOUND")
    no_forest = subprocess.run(
        [*vine, "look", "x", "-f", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert no_forest.returncode == 2 and "is not a forest" in no_forest.stderr
