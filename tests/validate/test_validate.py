"""``vine validate``: every check, the repairs of ``--fix``, the output formats and
exit codes, and that validating never writes."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from monkeyllm.validate import fix as repair
from monkeyllm.validate import validate as check

from ..forestkit import copy_sample, git, head, status
from .kit import ICMS, PRICE_LINE, E, N, W, broken_git_copy, change_rows, edit, run, seen, write

ORDERS = "sales/orders-2026.md"


LEAF = (
    "---\nid: {id}\ntype: note\ntitle: T\nsummary: S.\ncreated: '2026-01-01'\n"
    "updated: '2026-01-01'\n---\n\n# T\n"
)


Mutation = Callable[[Path], None]


# (name, mutation, expected findings as (code, severity, id, path, line)): each breaks a
# clean copy of sample-brain in one way; the findings must be exactly these.
CASES: list[tuple[str, Mutation, set[tuple[str, str, str | None, str, int | None]]]] = [
    (
        "no frontmatter",
        lambda r: write(r, "sales/scratch.md", "just text\n"),
        {("file.unparseable", E, "sales/scratch", "sales/scratch.md", 1)},
    ),
    (
        "unterminated",
        lambda r: write(r, "sales/scratch.md", "---\nid: sales/scratch\n"),
        {("file.unparseable", E, "sales/scratch", "sales/scratch.md", 1)},
    ),
    (
        "bad yaml",
        lambda r: write(
            r, "sales/scratch.md", "---\nid: sales/scratch\ntitle: a\n  b: c\n---\n\nbody\n"
        ),
        {("file.unparseable", E, "sales/scratch", "sales/scratch.md", 4)},
    ),
    (
        "bad yaml after blank lines",
        lambda r: write(r, "sales/scratch.md", "\n\n---\nid: x\ntitle: a\n  b: c\n---\n"),
        {("file.unparseable", E, "sales/scratch", "sales/scratch.md", 6)},
    ),
    (
        "not a mapping",
        lambda r: write(r, "sales/scratch.md", "---\n- a\n- b\n---\n\nx\n"),
        {("file.unparseable", E, "sales/scratch", "sales/scratch.md", 1)},
    ),
    (
        "binary",
        lambda r: write(r, "sales/scratch.md", b"---\n\x00\x01\x02"),
        {("file.unparseable", E, "sales/scratch", "sales/scratch.md", 1)},
    ),
    (
        "missing key",
        lambda r: edit(r, ICMS, "title: ICMS\n", ""),
        {("frontmatter.missing-key", E, "finance/icms", ICMS, 1)},
    ),
    (
        "bad date",
        lambda r: edit(r, ICMS, "created: '2025-11-17'", "created: soon"),
        {("frontmatter.invalid", E, "finance/icms", ICMS, 7)},
    ),
    (
        "bad confidence",
        lambda r: edit(r, ICMS, "source: manual", "source: manual\nconfidence: 1.5"),
        {("frontmatter.invalid", E, "finance/icms", ICMS, 16)},
    ),
    (
        "bad source",
        lambda r: edit(r, ICMS, "source: manual", "source: robot"),
        {("frontmatter.invalid", E, "finance/icms", ICMS, 15)},
    ),
    (
        "id mismatch",
        lambda r: edit(r, ICMS, "id: finance/icms", "id: finance/other"),
        {("frontmatter.id-mismatch", E, "finance/icms", ICMS, 2)},
    ),
    (
        "unknown type",
        lambda r: edit(r, ICMS, "type: concept", "type: gadget"),
        {("schema.unknown-type", E, "finance/icms", ICMS, 3)},
    ),
    (
        "unknown rel",
        lambda r: edit(r, ORDERS, "rel: part-of", "rel: owns"),
        {("schema.unknown-rel", E, "sales/orders-2026", ORDERS, 12)},
    ),
    (
        "dangling link",
        lambda r: edit(r, ORDERS, "target: sales/_index", "target: sales/gone"),
        {("links.dangling", E, "sales/orders-2026", ORDERS, 13)},
    ),
    (
        "too many links",
        lambda r: edit(
            r,
            ORDERS,
            "- rel: part-of\n  target: sales/_index\n",
            "- rel: part-of\n  target: sales/_index\n" * 51,
        ),
        {("links.too-many", E, "sales/orders-2026", ORDERS, 11)},
    ),
    (
        "broken wikilink",
        lambda r: edit(r, ICMS, "# ICMS\n", "# ICMS\n\nSee [[finance/nope|x]].\n"),
        {("body.broken-wikilink", W, "finance/icms", ICMS, 20)},
    ),
    (
        "wikilink in code is fine",
        lambda r: edit(r, ICMS, "# ICMS\n", "# ICMS\n\n```\n[[finance/nope]]\n```\n"),
        set(),
    ),
    (
        "wikilink in inline code is fine",
        lambda r: edit(r, ICMS, "# ICMS\n", "# ICMS\n\nWrite `- [[id]] — summary` lines.\n"),
        set(),
    ),
    (
        "wikilink after inline code is checked",
        lambda r: edit(r, ICMS, "# ICMS\n", "# ICMS\n\nSee `code` and [[finance/nope]].\n"),
        {("body.broken-wikilink", W, "finance/icms", ICMS, 20)},
    ),
    (
        "empty summary",
        lambda r: edit(
            r,
            "sales/price-list.md",
            re.search(
                r"summary: [^\n]*(\n  [^\n]*)*", (r / "sales/price-list.md").read_text()
            ).group(0),
            "summary: ''",
        ),
        {
            ("summary.empty", W, "sales/price-list", "sales/price-list.md", 5),
            ("index.stale-summary", W, "sales/_index", "sales/_index.md", 26),
        },
    ),
    (
        "long summary",
        lambda r: edit(
            r,
            "sales/_index.md",
            "summary: Commercial policy,",
            "summary: " + "word " * 60 + "Commercial policy,",
        ),
        {
            ("summary.too-long", W, "sales/_index", "sales/_index.md", 5),
            ("index.stale-summary", W, "_index", "_index.md", 19),
        },
    ),
    (
        "boilerplate summary",
        lambda r: edit(
            r,
            "sales/_index.md",
            "summary: Commercial",
            "summary: This document describes commercial",
        ),
        {
            ("summary.boilerplate", W, "sales/_index", "sales/_index.md", 5),
            ("index.stale-summary", W, "_index", "_index.md", 19),
        },
    ),
    (
        "missing entry",
        lambda r: edit(r, "sales/_index.md", PRICE_LINE, ""),
        {
            ("index.missing-entry", W, "sales/_index", "sales/_index.md", 22),
            ("index.coverage", W, "sales/_index", "sales/_index.md", 11),
        },
    ),
    (
        "extra entry",
        lambda r: edit(
            r, "sales/_index.md", PRICE_LINE, PRICE_LINE + "- [[sales/ghost]] — Gone.\n"
        ),
        {
            ("index.extra-entry", W, "sales/_index", "sales/_index.md", 27),
            ("index.coverage", W, "sales/_index", "sales/_index.md", 11),
        },
    ),
    (
        "duplicate entry",
        lambda r: edit(r, "sales/_index.md", PRICE_LINE, PRICE_LINE * 2),
        {
            ("index.duplicate-entry", W, "sales/_index", "sales/_index.md", 27),
            ("index.coverage", W, "sales/_index", "sales/_index.md", 11),
        },
    ),
    (
        "misplaced entry",
        lambda r: (
            edit(r, "sales/_index.md", PRICE_LINE, ""),
            edit(r, "sales/_index.md", "## Direct bananas\n", PRICE_LINE + "\n## Direct bananas\n"),
        ),
        {
            ("index.misplaced-entry", W, "sales/_index", "sales/_index.md", 22),
            ("index.coverage", W, "sales/_index", "sales/_index.md", 11),
        },
    ),
    (
        "stale summary",
        lambda r: edit(
            r, "sales/_index.md", "— How the 2026 price list", "— Once the 2026 price list"
        ),
        {("index.stale-summary", W, "sales/_index", "sales/_index.md", 26)},
    ),
    (
        "wrong coverage",
        lambda r: edit(r, "sales/_index.md", "coverage: 5 bananas", "coverage: 7 bananas"),
        {("index.coverage", W, "sales/_index", "sales/_index.md", 11)},
    ),
    (
        "parent not a branch",
        lambda r: edit(r, "meetings/_index.md", "type: branch", "type: note"),
        {("tree.parent-not-branch", E, "meetings/_index", "meetings/_index.md", 3)},
    ),
    (
        "missing parent",
        lambda r: write(r, "newfolder/leaf.md", LEAF.format(id="newfolder/leaf")),
        {("tree.missing-parent", E, "newfolder/leaf", "newfolder/leaf.md", None)},
    ),
    (
        "payload missing",
        lambda r: (r / "sales/orders-2026.db").unlink(),
        {("payload.missing", E, "sales/orders-2026", ORDERS, 15)},
    ),
    (
        "payload drift",
        lambda r: change_rows(r / "sales/orders-2026.db"),
        {("payload.hash-drift", W, "sales/orders-2026", ORDERS, 17)},
    ),
    (
        "payload hash missing",
        lambda r: edit(r, ORDERS, "payload_hash:", "other_hash:"),
        {("payload.hash-missing", N, "sales/orders-2026", ORDERS, 15)},
    ),
    (
        "payload escapes",
        lambda r: edit(r, ORDERS, "payload: orders-2026.db", "payload: ../../outside.db"),
        {
            ("payload.invalid", E, "sales/orders-2026", ORDERS, 15),
            ("payload.orphan", W, None, "sales/orders-2026.db", None),
        },
    ),
    (
        "dataset without payload",
        lambda r: edit(r, ORDERS, "payload: orders-2026.db\n", ""),
        {
            ("payload.undeclared", E, "sales/orders-2026", ORDERS, 3),
            ("payload.orphan", W, None, "sales/orders-2026.db", None),
        },
    ),
    (
        "orphan payload",
        lambda r: write(r, "sales/old.db", b"SQLite format 3\x00"),
        {("payload.orphan", W, None, "sales/old.db", None)},
    ),
    (
        "orphan asset",
        lambda r: write(r, "products/_assets/ab12cd34-x.png", b"\x89PNG"),
        {("payload.orphan", W, None, "products/_assets/ab12cd34-x.png", None)},
    ),
    (
        "meta is only parse-checked",
        lambda r: edit(r, "_meta/schema.md", "type: note", "type: gadget"),
        set(),
    ),
]


def test_sample_brain_is_clean(clean_copy: Path) -> None:
    assert check(clean_copy) == []


def test_a_wrong_value_is_said_as_its_key_says_it(tmp_path: Path) -> None:
    """Each finding names the key first, in one style: the engine's error code is the
    finding's own business (frontmatter.invalid), not a prefix of some messages."""
    root = copy_sample(tmp_path / "brain")
    edit(root, ICMS, "source: manual", "source: manual\nconfidence: [0.5]\ntags: {a: b}")
    edit(root, ICMS, "type: concept", "type: entity\nentity_kind: [x]")
    messages = {f.message for f in check(root) if f.code == "frontmatter.invalid"}
    assert {m.split(":", 1)[0] for m in messages} == {"confidence", "tags", "entity_kind"}


@pytest.mark.parametrize("name, mutate, expected", CASES, ids=[c[0] for c in CASES])
def test_each_check(
    tmp_path: Path,
    name: str,
    mutate: Mutation,
    expected: set[tuple[str, str, str | None, str, int | None]],
) -> None:
    root = copy_sample(tmp_path / "brain")
    mutate(root)
    findings = check(root)
    assert seen(findings) == expected
    for f in findings:
        assert f.message and f.fix


def test_payload_checks_can_be_skipped(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    (root / "sales/orders-2026.db").unlink()
    write(root, "sales/old.db", b"x")
    assert check(root, payloads=False) == []


def test_moved_target_says_where_it_went(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    edit(root, ICMS, "source: manual", "source: manual\nmoved_from:\n- finance/old-icms")
    edit(root, ORDERS, "target: sales/_index", "target: finance/old-icms")
    [finding] = check(root)
    assert finding.code == "links.dangling"
    assert "moved to 'finance/icms'" in finding.message
    assert "'finance/icms'" in finding.fix


def test_branch_fallbacks_fill_title_summary_created(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    for key in ("title: Sales\n", "created: '2025-11-03'\n"):
        edit(root, "sales/_index.md", key, "")
    assert check(root) == []
    edit(root, "sales/_index.md", "# Sales\n", "")
    assert seen(check(root)) == {
        ("frontmatter.missing-key", E, "sales/_index", "sales/_index.md", 1)
    }


def test_an_index_entry_may_carry_the_branch_coverage(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain")
    line = "- [[sales/_index]] — Commercial policy, price lists and the 2026 order ledger."
    edit(root, "_index.md", line, line[:-1] + ". 3 bananas, 1 sub-branch.")
    assert check(root) == []


def test_fix_repairs_in_one_commit_and_leaves_the_rest(tmp_path: Path) -> None:
    root = broken_git_copy(tmp_path)
    before = head(root)
    codes = {f.code for f in check(root)}
    assert {
        "index.missing-entry",
        "index.stale-summary",
        "index.extra-entry",
        "index.coverage",
        "payload.hash-drift",
        "body.broken-wikilink",
    } <= codes
    done = repair(root)
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert (
        git(root, "log", "-1", "--format=%s").strip()
        == f"validate(fix): {len(done['repairs'])} repairs"
    )
    assert done["commit"] == head(root)
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD").split()) == [
        "_index.md",
        "sales/_index.md",
        ORDERS,
    ]
    assert status(root) == ""
    assert {r["code"] for r in done["repairs"]} == codes - {"body.broken-wikilink"}
    left = check(root)
    assert {f.code for f in left} == {"body.broken-wikilink"}
    assert PRICE_LINE in (root / "sales/_index.md").read_text()
    assert "coverage: 5 bananas, 1 sub-branches" in (root / "sales/_index.md").read_text()
    assert "finance/gone" not in (root / "_index.md").read_text()


def _append(db: Path) -> None:
    db.write_bytes(db.read_bytes() + b"appended by a bad copy")


def _cut(db: Path) -> None:
    db.write_bytes(db.read_bytes()[:-4096])


def _garbage(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[4096 * 3 : 4096 * 5] = b"\xff" * 8192
    db.write_bytes(bytes(data))


def _no_table(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE orders RENAME TO orders_old")
    conn.commit()
    conn.close()


def _hot_journal(db: Path) -> None:
    change_rows(db)
    Path(str(db) + "-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\0" * 504)


@pytest.mark.parametrize(
    "damage, why",
    [
        (_append, "bytes were added or cut off"),
        (_cut, "bytes were added or cut off"),
        (_garbage, "SQLite"),
        (_no_table, "names a table it does not hold: orders"),
        (_hot_journal, "an unfinished write is beside it"),
    ],
    ids=["appended", "truncated", "overwritten", "table-gone", "hot-journal"],
)
def test_fix_never_blesses_a_damaged_payload(tmp_path: Path, damage: Mutation, why: str) -> None:
    """A payload whose hash drifted is checked before its new hash is recorded: a
    damaged one is an error that --fix leaves alone (with nothing committed)."""
    root = copy_sample(tmp_path / "brain", git=True)
    db = root / "sales/orders-2026.db"
    damage(db)
    data, before = db.read_bytes(), head(root)
    [finding] = [f for f in check(root) if f.path == ORDERS]
    assert (finding.code, finding.severity, finding.fixable) == ("payload.damaged", E, False)
    assert why in finding.message
    assert repair(root) == {"commit": None, "repairs": [], "files": [], "skipped": []}
    assert head(root) == before and db.read_bytes() == data
    assert "payload_hash" in (root / ORDERS).read_text()
    assert [f.code for f in check(root) if f.path == ORDERS] == ["payload.damaged"]


def test_fix_records_the_hash_of_a_sound_change(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    db = root / "sales/orders-2026.db"
    change_rows(db)
    assert [f.code for f in check(root)] == ["payload.hash-drift"]
    done = repair(root)
    assert [r["code"] for r in done["repairs"]] == ["payload.hash-drift"]
    assert check(root) == []


def test_fix_repairs_from_committed_content_so_a_clone_validates(tmp_path: Path) -> None:
    """An untracked (and invalid) new node and an uncommitted summary edit must not
    reach the repair commit: their repairs are skipped and said; the committed
    breakage is repaired; a fresh clone of the result validates."""
    root = copy_sample(tmp_path / "brain", git=True)
    edit(root, "_index.md", "- [[finance/_index]]", "- [[finance/gone]] — x\n- [[finance/_index]]")
    git(root, "commit", "-qam", "an extra entry, committed")
    write(
        root,
        "sales/draft.md",
        "---\nid: sales/draft\ntype: note\ntitle: Draft\nsummary: A draft.\n---\n\n# Draft\n",
    )  # untracked, invalid
    edit(
        root,
        "sales/price-list.md",
        "summary: How the 2026 price list",
        "summary: Why the 2026 price list",
    )  # uncommitted
    codes = {f.code for f in check(root)}
    assert {"index.missing-entry", "index.stale-summary", "index.extra-entry"} <= codes
    draft, price = (
        (root / "sales/draft.md").read_bytes(),
        (root / "sales/price-list.md").read_bytes(),
    )
    done = repair(root)
    assert [(r["code"], r["path"]) for r in done["repairs"]] == [
        ("index.extra-entry", "_index.md"),
        ("index.coverage", "_index.md"),
    ]
    assert sorted((r["code"], r["reason"]) for r in done["skipped"]) == [
        ("index.missing-entry", "sales/draft.md is not committed; commit it, then run --fix again"),
        (
            "index.stale-summary",
            "sales/price-list.md has uncommitted changes; commit it, then run --fix again",
        ),
    ]
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["_index.md"]
    assert (root / "sales/draft.md").read_bytes() == draft
    assert (root / "sales/price-list.md").read_bytes() == price
    assert "sales/draft" not in (root / "sales/_index.md").read_text()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(root), str(clone))
    assert check(clone, payloads=False) == []


def test_fix_skips_every_repair_of_a_file_with_uncommitted_changes(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    edit(root, "sales/_index.md", PRICE_LINE, "")
    before = head(root)
    done = repair(root)
    assert done["commit"] is None and head(root) == before
    assert {r["code"] for r in done["skipped"]} == {"index.missing-entry", "index.coverage"}
    assert all(
        r["reason"].startswith("sales/_index.md has uncommitted changes") for r in done["skipped"]
    )
    code, out = run("-f", str(root), "--fix", "--format", "json")
    assert json.loads(out)["skipped"] == done["skipped"]


def test_fix_with_nothing_to_repair_makes_no_commit(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    before = head(root)
    assert repair(root) == {"commit": None, "repairs": [], "files": [], "skipped": []}
    assert head(root) == before
    assert status(root) == ""


def test_fix_moves_a_misplaced_entry_and_drops_duplicates(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "brain", git=True)
    original = (root / "sales/_index.md").read_text()
    edit(root, "sales/_index.md", PRICE_LINE, "")
    edit(root, "sales/_index.md", "## Direct bananas\n", PRICE_LINE * 2 + "\n## Direct bananas\n")
    git(root, "commit", "-qam", "broken by hand")
    repair(root)
    assert check(root) == []
    fixed = (root / "sales/_index.md").read_text()
    assert fixed.count("[[sales/price-list]]") == 1
    strip = re.compile(r"^updated: .*$", re.MULTILINE)
    direct = fixed.split("## Direct bananas")[1]
    assert "[[sales/price-list]]" in direct
    assert strip.sub("", original).count("- [[") == strip.sub("", fixed).count("- [[")
