"""A catalog damaged where opening does not look (garbage in a table's text) is thrown
away and built again by the next call, which answers as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from monkeyllm import Vine

from .forestkit import assert_ok, copy_sample


def test_garbage_in_the_files_table_is_rebuilt(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    with Vine(root, writable=False) as vine:
        before = assert_ok(vine.look("sales/exchange-policy", fields=["summary"]))
    db = sqlite3.connect(root / "_derived" / "catalog.db")
    db.execute(
        "UPDATE files SET path = CAST(X'70656ff26c65' AS TEXT) WHERE path = 'people/ana-ribeiro.md'"
    )
    # Forget the stored walk, so the next open compares the walk with the table.
    db.execute("DELETE FROM meta WHERE key IN ('walk', 'walk_gen')")
    db.commit()
    db.close()
    with Vine(root, writable=False, watch=False) as vine:
        assert vine.look("sales/exchange-policy", fields=["summary"]) == before
        assert assert_ok(vine.look("people/ana-ribeiro"))["id"] == "people/ana-ribeiro"
        assert vine.problems() == []
