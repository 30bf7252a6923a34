"""A mistyped id: E_NOT_FOUND names the nearest existing ids, from every read and
write that resolves an id, through the one place ids are resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from .forestkit import assert_error, copy_sample

TYPO_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("look", {"id": "sales/exchange-polcy"}),
    ("pick", {"id": "sales/exchange-polcy"}),
    ("move", {"id": "sales/exchange-polcy"}),
    ("graft", {"id": "sales/exchange-polcy", "patch": {"set_frontmatter": {"tags": ["x"]}}}),
    ("look", {"id": "sale/exchange-policy"}),  # the folder mistyped
    ("look", {"id": "exchange-policy"}),  # the folder left out
    ("sniff", {"terms": "exchange", "scope": "sales/exchange-polcy"}),
]


@pytest.fixture(scope="module")
def vine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = copy_sample(tmp_path_factory.mktemp("near") / "brain", git=True)
    with Vine(root) as v:
        yield v


@pytest.mark.parametrize(
    "call, args", TYPO_CALLS, ids=[f"{c}-{a.get('id') or a['scope']}" for c, a in TYPO_CALLS]
)
def test_a_mistyped_id_suggests_the_near_ones(vine: Vine, call: str, args: dict[str, Any]) -> None:
    err = assert_error(vine.call(call, args), "E_NOT_FOUND")
    assert err["hint"].startswith("Did you mean 'sales/exchange-policy'"), err
    assert "locate" in err["hint"]  # the way on stays


def test_datasets_and_branches_too(vine: Vine) -> None:
    err = assert_error(vine.query("sales/orders2026", "SELECT 1"), "E_NOT_FOUND")
    assert "'sales/orders-2026'" in err["hint"]
    err = assert_error(vine.tend("sales/orders2026", "DELETE FROM orders WHERE 0"), "E_NOT_FOUND")
    assert "'sales/orders-2026'" in err["hint"]
    err = assert_error(vine.scan("sales/pipline"), "E_NOT_FOUND")
    assert err["hint"].startswith("Did you mean 'sales/pipeline/_index'"), err


def test_nothing_near_suggests_nothing(vine: Vine) -> None:
    err = assert_error(vine.look("zzz/qqq-www"), "E_NOT_FOUND")
    assert "Did you mean" not in err["hint"] and "locate" in err["hint"]


def test_near_ids_respect_what_a_caller_may_see(vine: Vine) -> None:
    assert vine.near("sales/exchange-polcy")[0] == "sales/exchange-policy"
    hidden = vine.near("sales/exchange-polcy", lambda i: not i.startswith("sales/"))
    assert not [i for i in hidden if i.startswith("sales/")]
    # a hidden branch does not steer the search: as if it did not exist
    assert vine.near("sales/orders2026", lambda i: i != "sales/_index") == vine.near(
        "sales/orders2026"
    )


def test_the_cli_prints_the_suggestion(vine: Vine, tmp_path: Path) -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "monkeyllm.commands",
            "look",
            "sales/exchange-polcy",
            "-f",
            str(vine.root),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert "Did you mean 'sales/exchange-policy'" in out.stderr
