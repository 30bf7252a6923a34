"""A lone surrogate (half of a UTF-16 pair: what a JSON escape such as ``\\ud800``
carries when a client cut a string in the middle of an emoji) is not text: every call
refuses it as ``E_SCHEMA`` naming the parameter, through the Python method and
``Vine.call``, wherever it sits in the argument (a list item, a nested object's key or
value). Before, most calls failed on it with ``E_INTERNAL`` (SQLite and the files
cannot encode it) and harvest echoed it into a reply no surface could encode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine

from ..forestkit import copy_sample

LONE = "\ud800"
LOW = "\udc00"

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("locate", {"query": f"exchange {LONE}"}, "query"),
    ("look", {"id": LONE}, "id"),
    ("look", {"id": ["sales/exchange-policy", f"x{LOW}"]}, "id"),
    ("move", {"id": LONE}, "id"),
    ("pick", {"id": "sales/exchange-policy", "section": f"Dead{LONE}"}, "section"),
    ("scan", {"parent_id": "_index", "filter": {"tags_any": [LONE]}}, "filter"),
    ("sniff", {"terms": [f"NF{LONE}4412"]}, "terms"),
    ("query", {"id": "sales/orders-2026", "sql": f"SELECT '{LONE}'"}, "sql"),
    ("harvest", {"query": f"{LONE} exchange deadline"}, "query"),
    ("history", {"id": LONE}, "id"),
    ("calendar", {"scope": LONE}, "scope"),
    ("coverage", {"scope": LONE}, "scope"),
    ("plant", {"node": {"id": "notes/x", "title": f"T{LONE}", "summary": "s"}}, "node"),
    ("plant", {"node": {"id": "notes/x", f"k{LOW}": "v"}}, "node"),
    ("graft", {"id": "sales/price-list", "patch": {"replace_body": LONE}}, "patch"),
    ("tend", {"id": "sales/orders-2026", "sql": f"DELETE FROM orders WHERE id = '{LONE}'"}, "sql"),
    ("prune", {"id": LONE, "dry_run": True}, "id"),
    ("transplant", {"id": "sales/price-list", "new_id": f"sales/p{LONE}"}, "new_id"),
]


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_sample(tmp_path_factory.mktemp("surrogates") / "brain", git=True)


@pytest.mark.parametrize("call,args,param", CASES, ids=[f"{c}-{p}" for c, _, p in CASES])
def test_a_lone_surrogate_is_e_schema_on_every_call(
    forest: Path, call: str, args: dict[str, Any], param: str
) -> None:
    with Vine(forest, lock="per-write") as vine:
        head = vine.call("history", {"id": "sales/price-list", "limit": 1})
        for out in (vine.call(call, args), getattr(vine, call)(**args)):
            error = out.get("error")
            assert error is not None, out
            assert error["code"] == "E_SCHEMA", error
            assert error["message"].startswith(f"{call}: {param} is not valid Unicode text")
            assert "lone surrogate" in error["message"] and "UTF-8" in error["hint"]
            error["message"].encode("utf-8")  # the envelope itself is text
        # Nothing was written.
        assert vine.call("history", {"id": "sales/price-list", "limit": 1}) == head


def test_a_surrogate_pair_is_one_character_and_welcome(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        found = vine.locate("exchange policy \U0001f600", k=1)
        assert "error" not in found and found["results"]
        missing = vine.look("sales/\U0001f600")
        assert missing["error"]["code"] == "E_NOT_FOUND"
