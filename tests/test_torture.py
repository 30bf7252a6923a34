"""The fast part of ``python -m bench.torture``: hostile SQL through ``query``, ids that
try to leave the forest (through the engine and over the Station's REST), exceptions and
SIGKILLs inside writes, damaged derived state, writers and readers racing through the
engine, the CLI and the Station, a file system that refuses writes, and malformed
forests, each on a scratch copy of sample-brain."""

from __future__ import annotations

import os
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
    for needle in (
        "WITH W AS",
        "ATTACH",
        "PRAGMA_",
        "PRAGMA ",
        "LOAD_EXTENSION",
        "; SELECT",
        "/*",
        "--",
        "CREATE TRIGGER",
        "CREATE VIEW",
        "WITH RECURSIVE",
        "VACUUM",
    ):
        assert needle in text, needle
    assert max(len(s) for s in corpus) > 1_000_000  # a huge statement


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
    inside.write_text(
        (workdir / "outside" / "secret.md").read_text().replace("id: secret", "id: sales/leaky")
    )
    try:
        figures = torture.probe_scopes(workdir)
    finally:
        inside.unlink()
    assert figures.leaked > 0


def _fresh(tmp_path: Path) -> Path:
    return torture.scratch(tmp_path)


def test_an_exception_at_every_write_step_leaves_the_forest_sound(tmp_path: Path) -> None:
    figures = torture.fault_matrix(_fresh(tmp_path))
    assert figures.failures == []
    assert figures.faults >= 40 and figures.lost == 0
    assert set(figures.kinds) == set(torture.WRITE_KINDS)  # prune and transplant too


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_of_a_writer_at_random_moments(tmp_path: Path) -> None:
    forest = _fresh(tmp_path)
    figures = torture.kill_loop(forest, kills=10, seed=11)
    assert figures.failures == []
    assert figures.kills == 10 and figures.lost == 0
    assert figures.committed > 10 and figures.attempted > figures.committed
    kinds = {c.split("/")[1][0] for c in torture.node_ids_of(forest) if c.startswith("torture/")}
    assert {"n", "b", "d"} <= kinds  # notes, branches and datasets were planted


def test_the_kill_checks_notice_a_dirty_forest(tmp_path: Path) -> None:
    """The checks can fail: an untracked node file and a catalog that lacks it."""
    forest = _fresh(tmp_path)
    with torture.Vine(forest) as vine:
        vine.look("_index")
        (forest / "sales" / "stray.md").write_text(
            torture.note("sales/stray", "A stray.", "# Stray")
        )
        found = torture.forest_faults(vine, forest)
    assert any("not clean" in m for m in found)


def test_damaged_derived_state_is_repaired_on_open(tmp_path: Path) -> None:
    figures = torture.repair_probes(_fresh(tmp_path))
    assert figures.tried == len(torture.DAMAGE)
    assert figures.failures == [] and figures.failed == 0


def test_writers_and_readers_race_without_a_failure(tmp_path: Path) -> None:
    """A Station, CLI writers and engine writers at once: each surface's writes commit
    (a write waits for the one in progress); then a script holding the forest open
    makes every write on every surface answer E_LOCKED at once, naming it."""
    figures = torture.concurrency(_fresh(tmp_path), seconds=8, writers=4, readers=4)
    assert figures.failures == []
    assert figures.failed == 0 and figures.lost == 0
    assert figures.writes > 0 and figures.reads > 0
    assert figures.writes == figures.committed + figures.locked
    assert set(figures.surfaces) == {"engine", "cli", "station"}
    assert all(row["reads"] > 0 and row["committed"] > 0 for row in figures.surfaces.values())
    assert figures.locked_share < 5, figures.surfaces
    assert figures.held_writes > 0 and figures.held_refused == figures.held_writes


def test_the_scope_probes_over_the_station_rest(workdir: Path) -> None:
    figures = torture.probe_scopes_station(workdir)
    assert figures.tried >= 800
    assert (figures.leaked, figures.written) == (0, 0)
    assert figures.failures == []
    assert figures.internal == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs RLIMIT_FSIZE")
def test_a_write_the_file_system_refuses_answers_e_readonly_and_changes_nothing(
    tmp_path: Path,
) -> None:
    figures = torture.disk_full(_fresh(tmp_path))
    assert figures.attempted == 8
    assert figures.changed == 0, figures.failures
    assert figures.readonly == figures.attempted, figures.codes


def test_a_malformed_forest_serves_its_healthy_nodes(tmp_path: Path) -> None:
    figures = torture.probe_malformed(_fresh(tmp_path))
    assert figures.failures == []
    assert figures.named == figures.defects == len(torture.DEFECTS)
    assert figures.served == figures.healthy > 50
