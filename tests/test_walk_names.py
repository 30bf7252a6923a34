"""A file or folder whose name is not valid UTF-8 on disk (a Latin-1 name from an old
system or archive) is no node: the OS hands it back with surrogate escapes, which no
id, catalog row or reply can hold. Before, one such file made every call that synced
the catalog answer E_INTERNAL; now the walk and the watcher leave it out, and every
call answers as if it were not there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from monkeyllm import Vine

from .forestkit import copy_sample

NOTE = b"""---
id: cafe
type: note
title: Cafe
summary: A note saved under a Latin-1 file name.
created: 2026-01-01
updated: 2026-01-01
---
# Cafe

NF-7777 lives here.
"""


def _latin1(root: Path, rel: bytes) -> None:
    path = os.fsencode(root) + b"/" + rel
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(NOTE)


def _calls_answer(vine: Vine) -> None:
    scanned = vine.scan("_index", recursive=True, limit=50)
    assert "error" not in scanned, scanned
    assert all(n["id"].isprintable() for n in scanned["nodes"])
    for out in (
        vine.locate("exchange policy", k=2),
        vine.look("sales/exchange-policy"),
        vine.coverage(),
        vine.calendar(),
        vine.sniff(["NF-4412"]),
    ):
        assert "error" not in out, out
    assert vine.sniff(["NF-7777"])["results"] == []


@pytest.mark.parametrize("rel", [b"caf\xe9.md", b"caf\xe9s/notes.md"])
def test_a_name_that_is_not_utf8_is_no_node(tmp_path: Path, rel: bytes) -> None:
    forest = copy_sample(tmp_path / "brain")
    _latin1(forest, rel)  # there before the forest is first opened: the walk
    with Vine(forest, writable=False) as vine:
        _calls_answer(vine)
        # Another such file appears while the forest is open: the watcher's path.
        _latin1(forest, b"sales/pre\xe7o.md")
        _calls_answer(vine)
