"""What the 100k-node work changed, held to what it replaced: the rebuild writes the
catalog the incremental path writes, a term's common tokens read apart find the same
lines, sniff's shortcuts rank as the full tiers do, and the git index kept in chunks
stays what git would write."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monkeyllm import Vine, bodyindex, bodyshard, bulkbuild, catalogschema, gitindex
from monkeyllm.reads import locate as locate_module
from monkeyllm.reads import sniff as sniff_module
from monkeyllm.reads import topk

from .forestkit import (
    assert_ok,
    copy_sample,
    fuzzed,
    git,
    git_init,
    leaf,
    make_forest,
    node,
    node_meta,
    status,
    write_node,
)

SAMPLE = Path(__file__).resolve().parent.parent / "sample-brain"
FIELD_OFFICE = Path(__file__).resolve().parent.parent / "bench" / "forests" / "field-office"


def catalog_contents(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    """Everything a catalog says about its nodes, keyed so that two builds compare:
    body index rows by node id and line (body versions are numbered differently)."""
    shift, mask = bodyindex.LINE_BITS, bodyindex.LINE_MASK
    lines = []
    for name in bodyindex.SHARDS:
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lines "
            f"USING fts5vocab(main, {name}, 'instance')"
        )
        lines += conn.execute(
            f"SELECT n.id, i.doc & {mask}, i.term FROM temp.lines i "
            f"JOIN nodes n ON n.body_gen = i.doc >> {shift}"
        ).fetchall()
        conn.execute("DROP TABLE temp.lines")
    out = {
        "lines": sorted(lines),
        "nodes": conn.execute(
            "SELECT id, kind, type, title, summary, tags, aliases, created, updated, "
            "confidence, source, entity_kind, payload, payload_type, payload_hash, parent, "
            "trail, coverage, body_tokens, outline, body_hash, origin, body_lines "
            "FROM nodes ORDER BY id"
        ).fetchall(),
        "fts": conn.execute(
            "SELECT f.id, f.title, f.aliases, f.tags, f.summary, f.headers, f.title_stems, "
            "f.label_stems, f.summary_stems, f.header_stems FROM nodes_fts f "
            "ORDER BY f.id"
        ).fetchall(),
        "edges": conn.execute("SELECT * FROM edges ORDER BY 1, 2, 3").fetchall(),
        "moves": conn.execute("SELECT * FROM moves ORDER BY 1").fetchall(),
        "listings": conn.execute("SELECT * FROM listings ORDER BY 1, 2").fetchall(),
        "files": conn.execute("SELECT path, size, error FROM files ORDER BY 1").fetchall(),
        "vocabulary": conn.execute("SELECT term FROM body_vocab ORDER BY term").fetchall(),
        "common": [
            sorted(json.loads(r[0] or "{}").items())
            for r in conn.execute("SELECT common FROM body_vocab_blob")
        ],
        "indexes": sorted(
            conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        ),
    }
    return out


@pytest.mark.parametrize("source", [SAMPLE, FIELD_OFFICE], ids=["sample-brain", "field-office"])
def test_a_rebuild_writes_the_catalog_the_incremental_path_writes(
    tmp_path: Path, source: Path
) -> None:
    root = tmp_path / "f"
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("_derived", ".git"))
    with Vine(root, writable=False) as vine:
        cat = vine._forest.catalog
        bulk = catalog_contents(cat.conn)
        assert bulk["lines"] and bulk["nodes"] and bulk["edges"]
        # The same files indexed one by one, as edits noticed one at a time are.
        paths = [r[0] for r in cat.conn.execute("SELECT path FROM files ORDER BY path")]
        with cat.transaction() as tx:
            for path in paths:
                tx.drop(path, path[:-3])
        assert cat.count() == 0
        with cat.transaction() as tx:
            for path in reversed(paths):
                st = (root / path).stat()
                tx.upsert_path(path, (st.st_mtime_ns, st.st_size))
        assert catalog_contents(cat.conn) == bulk


def test_the_rebuild_drops_and_makes_again_every_secondary_index(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f")
    with Vine(root, writable=False) as vine:
        conn = vine._forest.catalog.conn
        names = {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
        assert names == set(catalogschema.INDEX_NAMES)
        vine._forest.catalog.build()
        again = {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
        assert again == names
        # A type filter reads its ids from the index alone.
        plan = " ".join(
            r[3]
            for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM nodes WHERE id != '_index' AND type = 'note'"
            )
        )
        assert "COVERING INDEX nodes_type" in plan


BODIES = [
    "exchange rate of the day",
    "the exchanges and the changes",
    "exchange",
    "changed hands",
    "a change of plans",
    "nf 4412 exchange",
    "x-change",
    "changing",
]


def test_the_vocabulary_keeps_the_line_counts_of_common_tokens(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bodyindex, "COMMON_LINES", 3)
    nodes = {f"n/{i}": leaf("# T\n\n" + "\n".join(BODIES[: i + 1])) for i in range(8)}
    nodes["n/rare"] = leaf("# T\n\nan exchanger, once")
    root = make_forest(tmp_path / "f", nodes)
    with Vine(root, writable=False) as vine:
        vocab = vine._forest.vocabulary()
        conn = vine._forest.catalog.conn
        for token in ("exchange", "change", "the", "changed", "nf", "exchanger"):
            lines = len(bodyindex.match_rowids(conn, f'"{token}"'))
            assert vocab.lines(token) == (lines if lines >= 3 else 0), token
        plan = bodyindex.plan("change", vocab)
        assert plan is not None and len(plan.groups[0]) > 2
        parts = bodyindex.expressions(plan, vocab)
        # Each common token alone, the rare ones together.
        assert '"change"' in parts and '"exchange"' in parts and '"exchanger"' in parts
        assert len(parts) == len(vocab.containing("change")) and vocab.lines("exchanger") == 0
        assert bodyindex.expressions(plan) == [" OR ".join(f'"{t}"' for t in plan.groups[0])]


WORDS = [
    "exchange",
    "Exchange",
    "change",
    "changes",
    "the",
    "them",
    "other",
    "NF-4412",
    "4412",
    "ação",
    "acao",
    "x",
    "de",
    "des",
    "a.b",
    "-",
    "  ",
]


@fuzzed(50)
@given(
    bodies=st.lists(
        st.lists(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=7).map(" ".join), max_size=6
        ).map("\n".join),
        min_size=3,
        max_size=9,
    ),
    terms=st.lists(
        st.sampled_from(
            ["change", "exchange", "the", "he", "4412", "nf-4412", "ação", "de", "ex", "ch"]
        ),
        min_size=1,
        max_size=4,
    ),
    k=st.integers(min_value=1, max_value=4),
    heated=st.integers(min_value=0, max_value=3),
    seed=st.integers(min_value=0, max_value=10**6),
)
def test_sniff_shortcuts_rank_as_the_full_tiers_do(
    scratch_vine, monkeypatch, bodies, terms, k, heated, seed
) -> None:
    """Common tokens read apart (every token counts as common here), the top tier settled
    before the others are counted, and a partial sort: the first k are those of the
    ranking of every node a direct scan of the bodies finds."""
    root, vine = scratch_vine
    monkeypatch.setattr(bodyindex, "COMMON_LINES", 1)
    shutil.rmtree(root / "cv", ignore_errors=True)
    for i, body in enumerate(bodies):
        write_node(root, f"cv/n{i}", node_meta(f"cv/n{i}"), "# T\n\n" + body)
    forest = vine._forest
    forest.catalog.build()
    rng = random.Random(seed)
    forest.heat.deposit(rng.sample([f"cv/n{i}" for i in range(len(bodies))], heated), 0.5)
    folded = sniff_module._terms(terms)
    found = sniff_module.indexed_hits(forest, folded, sniff_module.Scope(), k)
    if found is None:
        return
    direct, _ = sniff_module.direct_hits(forest, folded, "", ())
    expected = sniff_module._rank(forest, direct, len(folded))[:k]
    got = sniff_module._rank(forest, found[0], len(folded), k)
    assert [(r[0], r[1], r[3].count, r[3].lines) for r in got] == [
        (r[0], r[1], r[3].count, r[3].lines) for r in expected
    ]
    assert all(found[0][node_id].lines == direct[node_id].lines for node_id in found[0])


def test_the_git_index_kept_in_chunks_stays_what_git_writes(tmp_path: Path, monkeypatch) -> None:
    """Chunks of two entries: writes land before the first entry, after the last, across
    chunk boundaries, grow chunks past twice their size and empty them."""
    monkeypatch.setattr(gitindex, "CHUNK", 2)
    gitindex._CACHE.clear()
    root = copy_sample(tmp_path / "brain", git=True)
    with Vine(root) as vine:
        for node_id, parent in (
            ("0first", "_index"),
            ("zzz-last", "_index"),
            ("clients/aa", "clients/_index"),
            ("clients/ab", "clients/_index"),
            ("clients/ac", "clients/_index"),
            ("clients/ad", "clients/_index"),
            ("clients/ae", "clients/_index"),
        ):
            assert_ok(
                vine.plant(
                    node(
                        node_id,
                        parent,
                        node_id,
                        "A note for the chunks.",
                        body="# N\n\n## Body\n\nText.",
                    )
                )
            )
            assert status(root) == "", node_id
        assert len(gitindex._CACHE[Path(vine._repository().repo.git_dir)].chunks) > 4
        for node_id in ("clients/ab", "clients/ac", "0first"):
            assert_ok(vine.prune(node_id))
            assert status(root) == "", node_id
        assert_ok(vine.graft("zzz-last", {"set_frontmatter": {"summary": "Changed."}}))
    assert status(root) == ""
    assert git(root, "diff-index", "--cached", "--name-status", "HEAD") == ""
    assert git(root, "write-tree").strip() == git(root, "rev-parse", "HEAD^{tree}").strip()
    listed = git(root, "ls-files").split()
    assert listed == sorted(listed)
    assert {"zzz-last.md", "clients/aa.md", "clients/ae.md"} <= set(listed)
    assert not {"0first.md", "clients/ab.md", "clients/ac.md"} & set(listed)
    gitindex._CACHE.clear()


def parsed_here(monkeypatch) -> list[int]:  # noqa: ANN001
    """The sizes of the batches this process parses itself during a build."""
    sizes: list[int] = []
    parse = bulkbuild.parse_batch

    def counting(root: str, first_gen: int, items: list) -> list:
        sizes.append(len(items))
        return parse(root, first_gen, items)

    monkeypatch.setattr(bulkbuild, "parse_batch", counting)
    return sizes


@pytest.mark.parametrize("workers", ["2", "1"])
def test_a_build_parsed_by_worker_processes_writes_what_one_process_writes(
    tmp_path: Path, monkeypatch, workers: str
) -> None:
    root = tmp_path / "f"
    shutil.copytree(FIELD_OFFICE, root, ignore=shutil.ignore_patterns("_derived", ".git"))
    monkeypatch.setenv("VINE_BUILD_WORKERS", "0")
    with Vine(root, writable=False) as vine:
        alone = catalog_contents(vine._forest.catalog.conn)
    shutil.rmtree(root / "_derived")
    monkeypatch.setenv("VINE_BUILD_WORKERS", workers)
    here = parsed_here(monkeypatch)
    with Vine(root, writable=False) as vine:
        assert catalog_contents(vine._forest.catalog.conn) == alone
        assert vine._forest.catalog.problems() == []
    assert here == []  # every batch came from a worker


def test_a_rebuild_leaves_the_body_index_in_one_segment(tmp_path: Path, monkeypatch) -> None:
    """Written without merging (segments flushed every 4 kB here), then merged once: no
    level of segments is left for the first edit to merge all at once."""
    monkeypatch.setattr(bulkbuild.BulkBuilder, "HASHSIZE", 4096)
    root = tmp_path / "f"
    shutil.copytree(FIELD_OFFICE, root, ignore=shutil.ignore_patterns("_derived", ".git"))
    with Vine(root, writable=False) as vine:
        conn = vine._forest.catalog.conn
        # FTS5 numbers its data rows segment << 37 | height << 31 | page.
        segments = {
            r[0] for r in conn.execute("SELECT id >> 37 FROM body_fts_data WHERE id >= 1 << 37")
        }
        assert len(segments) == 1
        assert (
            conn.execute("SELECT count(*) FROM body_fts WHERE body_fts MATCH '\"the\"'").fetchone()[
                0
            ]
            > 100
        )
        config = dict(conn.execute("SELECT k, v FROM body_fts_config"))
        assert config.get("automerge", bodyindex.AUTOMERGE) == bodyindex.AUTOMERGE


def test_a_rebuild_writes_the_body_index_without_merging_until_its_end(
    tmp_path: Path, monkeypatch
) -> None:
    """Every segment the build flushes (every 4 kB here, over sixteen of them) is still
    there when the files are in: no level of them was merged on the way (which wrote the
    rows again per level and left free pages behind), and edits merge as FTS5 does by
    default afterwards."""
    monkeypatch.setattr(bulkbuild.BulkBuilder, "HASHSIZE", 4096)
    seen: list[int] = []
    statements = bulkbuild.index_statements

    def counting() -> list[str]:
        conn = built[0]
        seen.append(
            conn.execute(
                "SELECT count(DISTINCT id >> 37) FROM body_fts_data WHERE id >= 1 << 37"
            ).fetchone()[0]
        )
        return statements()

    built: list[sqlite3.Connection] = []
    init = bulkbuild.BulkBuilder.__init__

    def keep(self, catalog) -> None:  # type: ignore[no-untyped-def]
        init(self, catalog)
        built.append(self.conn)

    monkeypatch.setattr(bulkbuild.BulkBuilder, "__init__", keep)
    monkeypatch.setattr(bulkbuild, "index_statements", counting)
    root = tmp_path / "f"
    shutil.copytree(FIELD_OFFICE, root, ignore=shutil.ignore_patterns("_derived", ".git"))
    with Vine(root, writable=False) as vine:
        assert seen and seen[0] > bodyshard.CRISISMERGE
        conn = vine._forest.catalog.conn
        config = dict(conn.execute("SELECT k, v FROM body_fts_config"))
        assert int(config.get("crisismerge", 16)) == bodyshard.CRISISMERGE == 16
        the = "SELECT count(*) FROM body_fts WHERE body_fts MATCH '\"the\"'"
        assert conn.execute(the).fetchone()[0] > 100


def test_a_rebuild_leaves_the_metadata_index_in_one_segment(tmp_path: Path) -> None:
    """locate reads each word from one segment after a rebuild, however many the
    rebuild flushed (every 4 kB here), and edits merge as FTS5 does by default."""
    root = tmp_path / "f"
    shutil.copytree(FIELD_OFFICE, root, ignore=shutil.ignore_patterns("_derived", ".git"))
    with Vine(root) as vine:
        catalog = vine._forest.catalog
        catalog.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('hashsize', 4096)")
        catalog.conn.commit()
        catalog.build()
        conn = catalog.conn
        segments = {r[0] for r in conn.execute("SELECT segid FROM nodes_fts_idx")}
        assert len(segments) == 1
        config = dict(conn.execute("SELECT k, v FROM nodes_fts_config"))
        assert config.get("automerge", 4) == bulkbuild.FTS5_AUTOMERGE == 4
        assert assert_ok(vine.locate("water"))["results"]


def test_a_build_whose_workers_fail_parses_their_files_itself(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "f"
    shutil.copytree(FIELD_OFFICE, root, ignore=shutil.ignore_patterns("_derived", ".git"))
    with Vine(root, writable=False) as vine:
        expected = catalog_contents(vine._forest.catalog.conn)
    shutil.rmtree(root / "_derived")
    monkeypatch.setenv("VINE_BUILD_WORKERS", "2")
    # Interpreters that exit at once, and one that is not there at all; workers that cut
    # their first answer short, and that answer bytes which are no pickle.
    short = tmp_path / "short-answer"
    short.write_text("#!/bin/sh\nprintf '\\020\\000\\000\\000\\000\\000\\000\\000eight...'\n")
    garbled = tmp_path / "garbled-answer"
    garbled.write_text("#!/bin/sh\nprintf '\\010\\000\\000\\000\\000\\000\\000\\000garbage!'\n")
    for script in (short, garbled):
        script.chmod(0o755)
    missing = tmp_path / "no-python"
    for executable in (shutil.which("false"), str(missing), str(short), str(garbled)):
        monkeypatch.setattr(sys, "executable", executable)
        shutil.rmtree(root / "_derived", ignore_errors=True)
        here = parsed_here(monkeypatch)
        with Vine(root, writable=False) as vine:
            assert catalog_contents(vine._forest.catalog.conn) == expected
        assert sum(here) == len(expected["files"])


COMMON = ["notes", "working", "plan", "review"]
MEDIUM = [
    "harbor",
    "ledger",
    "canyon",
    "signal",
    "orchard",
    "beacon",
    "meadow",
    "copper",
    "falcon",
    "garnet",
    "summit",
    "willow",
]
RARE = ["zephyr", "quill", "marlow", "tundra", "vesper", "nimbus", "opal", "cobalt"]


def tiered_forest(root: Path, n: int = 420) -> Path:
    """Titles of words in three tiers: on about two rows in five, on one in twelve, on a
    few (a word on more than half the rows would weigh next to nothing)."""
    rng = random.Random(11)
    nodes = {}
    for i in range(n):
        words = rng.sample(COMMON, rng.randint(1, 2)) + rng.sample(MEDIUM, rng.randint(0, 2))
        if rng.random() < 0.15:
            words.append(rng.choice(RARE))
        rng.shuffle(words)
        title = " ".join(words).capitalize()
        nodes[f"t{i % 7}/n{i}"] = leaf("# T\n\nBody.", title=title, summary=f"Item {i}.")
    return make_forest(root, nodes)


def test_locate_bounded_by_its_common_words_ranks_as_the_full_query(
    tmp_path: Path, monkeypatch
) -> None:
    """The bounded top gives what scoring every row gives, before and after edits (which
    loosen the bounds). Two copies of one forest take the same calls (so the same heat),
    one of them scoring every row."""
    monkeypatch.setattr(topk, "COMMON_DOCS", 60)
    monkeypatch.setattr(topk, "SKIPPED_MIN", 60)
    bounded = topk.ranked
    used: list[bool] = []

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        got = bounded(*args, **kwargs)
        used.append(got is not None)
        return got

    source = tiered_forest(tmp_path / "source")
    git_init(source)
    vines = []
    for name in ("bounded", "full"):
        shutil.copytree(source, tmp_path / name)
        vines.append(Vine(tmp_path / name))
    fast, full = vines
    try:
        rng = random.Random(5)
        queries = [
            " ".join(
                rng.sample(COMMON, rng.randint(1, 2))
                + rng.sample(MEDIUM, 1)
                + rng.sample(RARE, rng.randint(0, 1))
            )
            for _ in range(40)
        ]
        # Every common word beside a weaker one: rows of common words alone can win.
        queries += [" ".join([*COMMON, word]) for word in MEDIUM[:6]]

        def compare() -> None:
            for query in queries:
                for k in (1, 5):
                    monkeypatch.setattr(topk, "ranked", spy)
                    got = assert_ok(fast.locate(query, k=k))
                    monkeypatch.setattr(topk, "ranked", lambda *a, **kw: None)
                    assert assert_ok(full.locate(query, k=k)) == got, query

        def bounds_hold() -> None:
            # No row holding common phrases alone scores the bound, and a bound that
            # the rarer phrases' rows do not pass sends locate to the full query.
            conn = fast._forest.catalog.conn
            for query in queries:
                expr = locate_module.expression(locate_module.query_words(query))
                common, rarer, bound = topk.split(expr.split(" OR "), fast._forest.locate_stats())
                if common:
                    best = conn.execute(
                        "SELECT min(rank) FROM nodes_fts WHERE nodes_fts MATCH ?",
                        (" OR ".join(common),),
                    ).fetchone()[0]
                    assert best is None or -best < bound, query
                    assert bounded(conn, common, rarer, 1e9, 25) is None

        compare()
        bounds_hold()
        assert sum(used) >= 20, used
        ids = [f"t{i % 7}/n{i}" for i in rng.sample(range(420), 30)]
        for i, node_id in enumerate(ids):
            for vine in vines:
                assert_ok(
                    vine.graft(
                        node_id,
                        {
                            "set_frontmatter": {
                                "title": f"Harbor ledger {i}",
                                "summary": "Notes on the harbor ledger.",
                            }
                        },
                    )
                )
        assert fast._forest.locate_stats()[2] >= 30
        used.clear()
        compare()
        bounds_hold()
        assert sum(used) >= 20, used
    finally:
        for vine in vines:
            vine.close()


def test_the_bounded_top_waits_for_common_words_on_many_rows() -> None:
    """Common words on fewer than SKIPPED_MIN rows together are scored with the rest
    (the full query costs less than the bounded top's extra queries there)."""
    phrases = ['"notes"', '"plan"', '"zephyr"']
    few = ({"notes": 1200, "plan": 1000}, 10_000, 0)
    assert topk.split(phrases, few) == ([], phrases, 0.0)
    many = ({"notes": 2000, "plan": 1000}, 10_000, 0)
    common, rarer, bound = topk.split(phrases, many)
    assert (common, rarer) == (['"notes"', '"plan"'], ['"zephyr"'])
    assert bound > 0
    # Edits since the rebuild lower the counts: the bound only errs on the high side.
    assert topk.split(phrases, (many[0], 10_000, 600)) == ([], phrases, 0.0)


def test_the_build_leaves_a_core_to_the_process_that_inserts(monkeypatch) -> None:
    """Workers parse while the opening process inserts: together they are no more
    processes than cores (a worker more only competes with the inserts)."""
    import os

    from monkeyllm.bulkbuild import build_workers
    from monkeyllm.indexing import PARALLEL_FILES

    monkeypatch.delenv("VINE_BUILD_WORKERS", raising=False)
    cores = len(os.sched_getaffinity(0))
    workers = build_workers(PARALLEL_FILES)
    if cores == 1:
        assert workers == 0
    else:
        assert 1 <= workers and workers + 1 <= cores
    assert build_workers(PARALLEL_FILES - 1) == 0
    monkeypatch.setenv("VINE_BUILD_WORKERS", "3")
    assert build_workers(10) == 3
