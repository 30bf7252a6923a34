"""A parallel build's last worker indexes the body lines of the last batches itself, in
a table of its own that the building process copies in (``monkeyllm.bodyshard``): the
catalog says what one process alone would have written, sniff reads both tables as
one, edits land in the second, and a worker that cannot finish its part leaves its
lines to the building process. Real worker processes throughout; the failures are
real processes that fail (a file in the way, a worker that exits)."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from monkeyllm import Vine, bodyindex, bodyshard, bulkbuild

from .forestkit import assert_ok, copy_sample
from .test_scale import catalog_contents

# Batches of 4 files: the 57 files of sample-brain make 15 batches, the last 2 the part.
BATCH = 4


def built_alone(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[tuple]]:
    """What one process alone writes for ``root`` (its catalog then thrown away)."""
    monkeypatch.setenv("VINE_BUILD_WORKERS", "0")
    with Vine(root, writable=False) as vine:
        alone = catalog_contents(vine._forest.catalog.conn)
    shutil.rmtree(root / "_derived")
    return alone


def part_rows(conn: sqlite3.Connection) -> int:
    """How many index rows the second table holds."""
    name = bodyindex.LIVE
    return conn.execute(
        f"SELECT count(*) FROM {name} WHERE {name} MATCH 'the OR and OR of'"
    ).fetchone()[0]


def sound(conn: sqlite3.Connection) -> None:
    """FTS5's own check of both tables passes."""
    for name in bodyindex.SHARDS:
        conn.execute(f"INSERT INTO {name}({name}) VALUES('integrity-check')")


@pytest.fixture
def forest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(bulkbuild.BulkBuilder, "BATCH", BATCH)
    # Tokens on 3 lines or more count as common here, so the vocabulary's line counts
    # (summed over both tables when the worker counted its own) are compared too.
    monkeypatch.setattr(bodyindex, "COMMON_LINES", 3)
    return copy_sample(tmp_path / "brain", git=True)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_workers_part_of_the_body_index_is_copied_in_and_reads_as_one(
    forest: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    alone = built_alone(forest, monkeypatch)
    with Vine(forest, writable=False) as vine:
        expected = {
            t: vine.sniff(list(t)) for t in (("the", "and"), ("exchange",), ("acme", "2024"))
        }
    shutil.rmtree(forest / "_derived")
    monkeypatch.setenv("VINE_BUILD_WORKERS", workers)
    with Vine(forest, writable=False) as vine:
        conn = vine._forest.catalog.conn
        assert catalog_contents(conn) == alone
        assert part_rows(conn) > 0  # the worker's part is there
        sound(conn)
        for terms, response in expected.items():
            assert vine.sniff(list(terms)) == response
    assert not (forest / "_derived" / bodyshard.NAME).exists()


def test_edits_after_a_build_with_a_part_go_into_it_and_are_found(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VINE_BUILD_WORKERS", "1")
    with Vine(forest) as vine:
        conn = vine._forest.catalog.conn
        before = part_rows(conn)
        ids = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY rowid")]
        first, last = ids[1], ids[-1]  # a body in the first table, one in the part
        for node_id, word in ((first, "zanzibarite"), (last, "quokkaflux")):
            patch = {"append_section": {"header": "Probe", "body": f"A {word} line."}}
            assert_ok(vine.graft(node_id, patch))
        assert_ok(
            vine.plant(
                {
                    "id": "part-probe",
                    "type": "note",
                    "parent": "_index",
                    "title": "Part probe",
                    "summary": "A node planted after a build with a part.",
                    "body": "# Part probe\n\nA marsupialite line.",
                }
            )
        )
        assert part_rows(conn) > before
        for word, node_id in (
            ("zanzibarite", first),
            ("quokkaflux", last),
            ("marsupialite", "part-probe"),
        ):
            found = assert_ok(vine.sniff(word))["results"]
            assert [r["id"] for r in found] == [node_id]
        sound(conn)


def test_a_worker_that_cannot_write_its_part_leaves_its_lines_to_the_build(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = built_alone(forest, monkeypatch)
    # A folder where the worker's database would go: neither removable nor openable.
    (forest / "_derived" / bodyshard.NAME / "in-the-way").mkdir(parents=True)
    monkeypatch.setenv("VINE_BUILD_WORKERS", "1")
    with Vine(forest, writable=False) as vine:
        conn = vine._forest.catalog.conn
        assert catalog_contents(conn) == alone
        assert part_rows(conn) == 0
        sound(conn)


def failing_worker(tmp_path: Path, where: str) -> str:
    """An interpreter that runs the real build worker, which exits at ``where``: after
    ``add`` gave its first batch's lines (mid-part), or in ``finish`` (the part parsed,
    never indexed)."""
    method = {"mid-part": "add", "finish": "finish"}[where]
    script = tmp_path / f"worker-{where}"
    code = (
        "import os, sys\n"
        "from monkeyllm import bodyshard, buildworker\n"
        f"real = bodyshard.Writer.{method}\n"
        "calls = []\n"
        "def dying(self, *args):\n"
        "    calls.append(1)\n"
        "    if len(calls) > 1 or " + repr(method) + " == 'finish':\n"
        "        sys.stdout.flush(); os._exit(3)\n"
        "    return real(self, *args)\n"
        f"bodyshard.Writer.{method} = dying\n"
        "sys.exit(buildworker.main())\n"
    )
    (tmp_path / f"worker-{where}.py").write_text(code)
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{tmp_path}/worker-{where}.py"\n')
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("where", ["mid-part", "finish"])
def test_a_worker_that_dies_in_its_part_leaves_its_lines_to_the_build(
    forest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    alone = built_alone(forest, monkeypatch)
    monkeypatch.setenv("VINE_BUILD_WORKERS", "1")
    monkeypatch.setattr(sys, "executable", failing_worker(tmp_path, where))
    here = []
    parse = bulkbuild.parse_batch

    def counting(root: str, first_gen: int, items: list) -> list:  # type: ignore[type-arg]
        here.append(len(items))
        return parse(root, first_gen, items)

    monkeypatch.setattr(bulkbuild, "parse_batch", counting)
    with Vine(forest, writable=False) as vine:
        conn = vine._forest.catalog.conn
        assert catalog_contents(conn) == alone
        assert part_rows(conn) == 0
        sound(conn)
    assert here  # this process parsed what the worker left (lines or whole batches)
    assert not (forest / "_derived" / bodyshard.NAME).exists()


def test_a_rebuild_beside_a_reader_installs_the_part_and_the_reader_reads_it(
    forest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild while another connection has the catalog open keeps the WAL; the reader
    finds the same lines after it, read from a second table that was dropped and
    declared again while the reader had it open."""
    monkeypatch.setenv("VINE_BUILD_WORKERS", "1")

    def lines(response: dict) -> list[tuple]:  # type: ignore[type-arg]
        return [
            (r["id"], r["match_count"], [m["line"] for m in r["matches"]])
            for r in assert_ok(response)["results"]
        ]

    with Vine(forest, writable=False, alpha=0) as reader:
        before = lines(reader.sniff(["the", "contract"], k=20))
        assert len(before) >= 3
        with Vine(forest, alpha=0) as writer:
            writer._forest.catalog.build()
            assert bulkbuild.BulkBuilder.last_journal == "wal"
            assert part_rows(writer._forest.catalog.conn) > 0
        assert lines(reader.sniff(["the", "contract"], k=20)) == before
        sound(reader._forest.catalog.conn)
