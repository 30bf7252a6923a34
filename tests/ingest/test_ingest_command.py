"""``vine ingest``'s pieces (tables, passports, links) and the command itself."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from monkeyllm import Vine
from monkeyllm.commands.ingest import ingest as ingest_command
from monkeyllm.ingest import (
    add_entries,
    column_names,
    infer_columns,
    make_aliases,
    slug_segment,
    summarize,
)
from monkeyllm.writes import render


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Relatório Q1", "relatorio-q1"),
        ("_drafts", "drafts"),
        (".x", "x"),
        ("???", "untitled"),
        ("a  b__c", "a-b__c"),
        ("NF-4412", "nf-4412"),
    ],
)
def test_slug_segment(name: str, slug: str) -> None:
    assert slug_segment(name) == slug


def test_column_names_and_types() -> None:
    assert column_names(["Total ($)", "", "total", "1st"]) == ["total", "col_2", "total_2", "c_1st"]
    types, rows = infer_columns(
        [["1", "2.5", "007", "2026-01-01", ""], ["-3", "4", "010", "2026-02-01", ""]], 5
    )
    assert types == ["INTEGER", "REAL", "TEXT", "TEXT", "TEXT"]
    assert rows[1] == [-3, 4.0, "010", "2026-02-01", None]


def test_summaries_are_first_sentences_within_the_rules() -> None:
    assert summarize("# T\n\nOne. Two! Three? Four.\n", "T") == "One. Two! Three?"
    long = "word " * 100
    out = summarize(long, "T")
    assert out.endswith("…") and len(out) <= 201
    assert summarize("", "Empty") == "Empty: adopted, pending curation."
    assert summarize("This document describes x.", "Doc") == "Doc: This document describes x."
    assert summarize("```\ncode only\n```\n", "C") == "C: adopted, pending curation."


def test_aliases_for_code_like_names() -> None:
    assert make_aliases("4412", "nota-fiscal/4412.md", "4412", "4412") == [
        "NF-4412",
        "nota-fiscal/4412",
        "4412",
    ]
    assert make_aliases("Report", "Report.md", "Report on INV-77", "report") == ["INV-77"]
    assert make_aliases("Relatório Q1", "Relatório Q1.md", "Q1", "relatorio-q1") == ["Relatório Q1"]


def test_add_entries_matches_repeated_add_entry() -> None:
    body = render.index_body("B", "A branch.", master=False)
    body = render.add_entry(body, render.DIRECT_BANANAS, "- [[b/x]] — X.", "b/x")
    lines = [("b/y", "- [[b/y]] — Y."), ("b/x", "- [[b/x]] — X2."), ("b/z", "- [[b/z]] — Z.")]
    slow = body
    for node_id, line in lines:
        slow = render.add_entry(slow, render.DIRECT_BANANAS, line, node_id)
    assert add_entries(body, render.DIRECT_BANANAS, lines) == slow
    fresh = render.index_body("B", "A branch.", master=False)
    slow = fresh
    for node_id, line in lines:
        slow = render.add_entry(slow, render.SUB_BRANCHES, line, node_id)
    assert add_entries(fresh, render.SUB_BRANCHES, lines) == slow


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.command("ingest")(ingest_command)
    return app


def test_cli_prints_the_report(vine: Vine, source: Path) -> None:
    root = vine.root
    vine.close()
    result = CliRunner().invoke(
        _cli(),
        [str(source), "--into", "mine", "-f", str(root)],
        env={"VINE_FOREST": None},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["counts"]["created"] == 11 and report["into"] == "mine/_index"
    again = CliRunner().invoke(
        _cli(), [str(source), "-f", str(root), "--into", "mine"], env={"VINE_FOREST": None}
    )
    assert json.loads(again.stdout)["commit"] is None


def test_cli_exits_1_when_nothing_could_be_done(vine: Vine, source: Path) -> None:
    root = vine.root
    vine.close()
    result = CliRunner().invoke(
        _cli(), [str(source / "latin.txt"), "-f", str(root)], env={"VINE_FOREST": None}
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["counts"]["failed"] == 1
    assert os.path.exists(root / "_index.md")
