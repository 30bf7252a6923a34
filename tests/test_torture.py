"""The fast part of ``python -m bench.torture``: hostile SQL through ``query`` and ids
that try to leave the forest, on a scratch copy of sample-brain."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import torture


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("torture")
    torture.scratch(base)
    return base


def test_the_corpus_covers_every_family() -> None:
    corpus = torture.sql_corpus()
    assert len(corpus) >= 500
    text = "\n".join(corpus).upper()
    for needle in ("WITH W AS", "ATTACH", "PRAGMA_", "PRAGMA ", "LOAD_EXTENSION", "; SELECT",
                   "/*", "--", "CREATE TRIGGER", "CREATE VIEW", "WITH RECURSIVE", "VACUUM"):
        assert needle in text, needle
    assert max(len(s) for s in corpus) > 1_000_000          # a huge statement


def test_no_hostile_statement_runs_or_changes_a_byte(workdir: Path) -> None:
    """Every statement but the ones only the clock stops, plus one of those."""
    statements = torture.sql_corpus(slow=False) + torture.SLOW[:1]
    figures = torture.probe_sql(workdir, statements)
    assert figures.tried == len(statements)
    assert figures.failures == []
    assert figures.escaped == 0 and figures.slow == 0
    assert set(figures.codes) <= torture.ALLOWED
    assert figures.codes.get("E_TIMEOUT") == 1


def test_the_probe_notices_a_statement_that_runs(workdir: Path) -> None:
    """The probe itself can fail: a plain read is counted as escaped."""
    figures = torture.probe_sql(workdir, ["SELECT count(*) FROM orders"])
    assert figures.escaped == 1 and figures.codes == {"ran": 1}


def test_no_id_section_or_scope_leaves_the_forest(workdir: Path) -> None:
    figures = torture.probe_scopes(workdir)
    assert figures.tried >= 400
    assert figures.failures == []
    assert (figures.leaked, figures.internal, figures.written) == (0, 0, 0)


def test_the_probe_notices_a_leak(workdir: Path) -> None:
    """A node inside the forest holding the secret is found, so a leak would be too."""
    torture.prepare_outside(workdir)
    inside = workdir / "forest" / "sales" / "leaky.md"
    inside.write_text((workdir / "outside" / "secret.md").read_text()
                      .replace("id: secret", "id: sales/leaky"))
    try:
        figures = torture.probe_scopes(workdir)
    finally:
        inside.unlink()
    assert figures.leaked > 0
