"""Helpers the validate tests share: forests written with one defect each."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import typer
from typer.testing import CliRunner

from monkeyllm.commands.validate import validate
from monkeyllm.validate import Finding

from ..forestkit import copy_sample, git

app = typer.Typer()
# `vine validate` as the CLI declares it, on an app of its own: every test module that
# drives it through run() gets it, run alone or with the others.
app.command("validate")(validate)


runner = CliRunner()


def edit(root: Path, rel: str, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in one file."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def change_rows(db: Path) -> None:
    """A sound change to a dataset's payload, made outside the engine."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute("UPDATE orders SET region = 'North' WHERE rowid = 1")
    finally:
        conn.close()


def seen(findings: list[Finding]) -> set[tuple[str, str, str | None, str, int | None]]:
    return {(f.code, f.severity, f.id, f.path, f.line) for f in findings}


PRICE_LINE = (
    "- [[sales/price-list]] — How the 2026 price list is built, who may change it "
    "and where the current tables live, for stores, online and wholesale.\n"
)


ICMS = "finance/icms.md"


E, W, N = "error", "warning", "note"


def broken_git_copy(tmp_path: Path) -> Path:
    """A git copy with fixable problems in two files and one that is not fixable."""
    root = copy_sample(tmp_path / "brain", git=True)
    edit(root, "sales/_index.md", PRICE_LINE, "")  # missing
    edit(root, "sales/_index.md", "— Every closed order", "— Some closed order")  # stale
    edit(root, "_index.md", "- [[finance/_index]]", "- [[finance/gone]] — x\n- [[finance/_index]]")
    change_rows(root / "sales/orders-2026.db")
    edit(root, "finance/dso.md", "[[sales/", "[[nope/")  # not fixable
    git(root, "commit", "-qam", "broken by hand")
    return root


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout
