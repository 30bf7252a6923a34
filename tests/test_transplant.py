"""``transplant``: a leaf moves in one commit that git follows, every backlink is
rewritten, the old address stays a waymark (E_MOVED, an alias locate finds), chains
of moves hold; every refusal changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from monkeyllm import Vine
from monkeyllm.validate import validate

from .forestkit import assert_error, assert_ok, files_of, git, head, meta_of, status
from .grove import body_of, grow, node


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return grow(tmp_path_factory.mktemp("grove") / "f")


def errors(root: Path) -> list[str]:
    return [f"{f.code} {f.id}: {f.message}" for f in validate(root) if f.severity == "error"]


def test_a_leaf_moves_in_one_commit_git_follows(vine: Vine, root: Path) -> None:
    old_meta = meta_of(root / "kb/alpha.md")
    old_body = body_of(root / "kb/alpha.md")
    before = head(root)
    out = assert_ok(vine.transplant("kb/alpha", "other/alpha"))
    assert out == {
        "id": "kb/alpha",
        "new_id": "other/alpha",
        "commit": head(root),
        "backlinks_rewritten": 7,
        "trail": ["_index", "other/_index"],
    }
    assert git(root, "log", "-1", "--format=%s").strip() == "transplant(kb/alpha -> other/alpha)"
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert not (root / "kb/alpha.md").exists() and status(root) == ""
    meta = meta_of(root / "other/alpha.md")
    # Everything kept (created, updated, tags, links), the waymark added.
    assert meta["id"] == "other/alpha" and meta["moved_from"] == ["kb/alpha"]
    assert "kb/alpha" in meta["aliases"]
    for key in ("created", "updated", "title", "summary", "tags", "links", "type"):
        assert meta[key] == old_meta[key], key
    assert body_of(root / "other/alpha.md") == old_body
    # git's rename detection keeps the node's history whole.
    follow = git(root, "log", "--follow", "--format=%s", "--", "other/alpha.md").splitlines()
    assert follow[0] == "transplant(kb/alpha -> other/alpha)"
    assert any(s.startswith("plant(kb/alpha)") for s in follow)
    renames = git(root, "show", "-M", "--name-status", "--format=", "HEAD")
    assert "R" in renames and "kb/alpha.md\tother/alpha.md" in renames
    # Both parent indexes, with their coverage.
    assert "[[kb/alpha]]" not in body_of(root / "kb/_index.md")
    assert meta_of(root / "kb/_index.md")["coverage"] == "2 bananas, 0 sub-branches"
    assert f"- [[other/alpha]] \u2014 {old_meta['summary']}" in body_of(root / "other/_index.md")
    assert meta_of(root / "other/_index.md")["coverage"] == "2 bananas, 0 sub-branches"
    assert errors(root) == []


def test_every_backlink_is_rewritten_both_ways(vine: Vine, root: Path) -> None:
    assert_ok(vine.transplant("kb/alpha", "other/alpha"))
    beta = root / "kb/beta.md"
    assert meta_of(beta)["links"] == [{"rel": "related-to", "target": "other/alpha"}]
    text = body_of(beta)
    assert "Beta follows [[other/alpha]], and [[other/alpha|the first letter]]" in text
    assert "[[other/alpha#Usage]]" in text
    assert "An example, not a link: [[kb/alpha]]" in text  # fenced code is left alone
    gamma = root / "other/gamma.md"
    assert [link["target"] for link in meta_of(gamma)["links"]] == ["other/alpha"] * 2
    assert "cites [[other/alpha]] once" in body_of(gamma)
    # The Landmarks entry of the master index follows too.
    assert "- [[other/alpha]]" in body_of(root / "_index.md")
    # Edges, as the catalog serves them, in both directions.
    moved = assert_ok(vine.look("other/alpha"))
    assert {(e["rel"], e["source"]) for e in moved["edges_in"]} == {
        ("related-to", "kb/beta"),
        ("related-to", "other/gamma"),
        ("mentions", "other/gamma"),
    }
    assert [e["target"] for e in moved["edges_out"]] == ["kb/beta"]
    assert assert_ok(vine.look("kb/beta"))["edges_in"] == [
        {"rel": "related-to", "source": "other/alpha"}
    ]
    assert status(root) == ""


def test_the_old_id_answers_moved_everywhere(vine: Vine) -> None:
    assert_ok(vine.transplant("kb/alpha", "other/alpha"))
    for call, args in (
        ("look", {}),
        ("pick", {}),
        ("move", {}),
        ("history", {}),
        ("graft", {"patch": {"set_frontmatter": {"title": "X"}}}),
        ("prune", {}),
        ("transplant", {"new_id": "kb/alpha-2"}),
        ("query", {"sql": "SELECT 1"}),
    ):
        err = assert_error(vine.call(call, {"id": "kb/alpha", **args}), "E_MOVED")
        assert err["moved_to"] == "other/alpha", call
    # locate still finds the old name, through the alias.
    assert_ok(vine.transplant("kb/beta", "other/second-letter"))
    found = assert_ok(vine.locate("beta", k=5))["results"]
    assert found[0]["id"] == "other/second-letter"
    hits = assert_ok(vine.locate("kb alpha", k=10))["results"]
    assert "other/alpha" in [r["id"] for r in hits]


def test_chained_moves_keep_every_waymark(vine: Vine, root: Path) -> None:
    assert_ok(vine.transplant("kb/alpha", "kb/first"))
    assert_ok(vine.transplant("kb/first", "other/first"))
    meta = meta_of(root / "other/first.md")
    assert meta["moved_from"] == ["kb/alpha", "kb/first"]
    assert meta["aliases"] == ["kb/alpha", "kb/first"]
    for old in ("kb/alpha", "kb/first"):
        assert assert_error(vine.look(old), "E_MOVED")["moved_to"] == "other/first"
    assert meta_of(root / "kb/beta.md")["links"][0]["target"] == "other/first"
    assert errors(root) == []
    # Moving back to an old address takes it off the waymarks.
    assert_ok(vine.transplant("other/first", "kb/alpha"))
    meta = meta_of(root / "kb/alpha.md")
    assert meta["moved_from"] == ["kb/first", "other/first"]
    assert "kb/alpha" not in meta["aliases"]
    assert assert_ok(vine.look("kb/alpha"))["id"] == "kb/alpha"
    assert assert_error(vine.look("kb/first"), "E_MOVED")["moved_to"] == "kb/alpha"
    assert errors(root) == [] and status(root) == ""
    with Vine(root, writable=False) as fresh:  # the redirect map is derived from files
        assert assert_error(fresh.look("other/first"), "E_MOVED")["moved_to"] == "kb/alpha"


def test_a_rename_in_the_same_branch_keeps_the_entry_in_place(vine: Vine, root: Path) -> None:
    before = [
        line for line in body_of(root / "kb/_index.md").splitlines() if line.startswith("- [[")
    ]
    assert_ok(vine.transplant("kb/beta", "kb/bravo"))
    after = [
        line for line in body_of(root / "kb/_index.md").splitlines() if line.startswith("- [[")
    ]
    assert after == [line.replace("[[kb/beta]]", "[[kb/bravo]]") for line in before]
    assert meta_of(root / "kb/_index.md")["coverage"] == "3 bananas, 0 sub-branches"


def test_a_payload_moves_beside_the_node(vine: Vine, root: Path) -> None:
    data = (root / "kb/data.db").read_bytes()
    out = assert_ok(vine.transplant("kb/data", "other/counter"))
    assert out["payload_moved"] == "other/counter.db"
    assert not (root / "kb/data.db").exists()
    assert (root / "other/counter.db").read_bytes() == data
    meta = meta_of(root / "other/counter.md")
    assert meta["payload"] == "counter.db"
    assert assert_ok(vine.query("other/counter", "SELECT v FROM t"))["rows"] == [[0]]
    assert_ok(vine.tend("other/counter", "UPDATE t SET v = 5 WHERE id = 1"))
    assert errors(root) == [] and status(root) == ""


def test_heat_follows_the_node(vine: Vine) -> None:
    for _ in range(6):
        vine.reinforce(["kb/alpha"])
    hot = assert_ok(vine.look("kb/alpha"))["stats"]["heat"]
    assert_ok(vine.transplant("kb/alpha", "other/alpha"))
    assert assert_ok(vine.look("other/alpha"))["stats"]["heat"] >= hot


@pytest.mark.parametrize(
    "args, code",
    [
        ({"id": "kb/_index", "new_id": "other/kb"}, "E_SCHEMA"),  # a branch
        ({"id": "_index", "new_id": "other/root"}, "E_SCHEMA"),
        ({"id": "_meta/schema", "new_id": "other/schema"}, "E_SCHEMA"),
        ({"id": "kb/alpha", "new_id": "kb/beta"}, "E_SCHEMA"),  # taken
        ({"id": "kb/alpha", "new_id": "kb/alpha"}, "E_SCHEMA"),  # the same id
        ({"id": "kb/alpha", "new_id": "nowhere/alpha"}, "E_NOT_FOUND"),  # no parent branch
        ({"id": "kb/alpha", "new_id": "kb/_index"}, "E_SCHEMA"),
        ({"id": "kb/alpha", "new_id": "kb/Not Valid"}, "E_SCHEMA"),
        ({"id": "kb/alpha", "new_id": "../escape"}, "E_SCHEMA"),
        ({"id": "kb/alpha", "new_id": "_meta/alpha"}, "E_SCHEMA"),
        ({"id": "kb/alpha", "new_id": ""}, "E_SCHEMA"),  # the signature: a non-empty id
        ({"id": "kb/alpha"}, "E_SCHEMA"),  # new_id missing
        ({"id": "kb/nowhere", "new_id": "kb/elsewhere"}, "E_NOT_FOUND"),
        ({"id": "kb/alpha", "new_id": 3}, "E_SCHEMA"),
    ],
)
def test_refusals_change_nothing(vine: Vine, root: Path, args: dict, code: str) -> None:
    before, files = head(root), files_of(root)
    assert_error(vine.call("transplant", args), code)
    assert head(root) == before and files_of(root) == files and status(root) == ""


def test_a_waymark_is_not_a_free_id(vine: Vine, root: Path) -> None:
    assert_ok(vine.transplant("kb/alpha", "other/alpha"))
    before, files = head(root), files_of(root)
    err = assert_error(
        vine.plant(node("kb/alpha", "kb", "A", "Planted over a waymark.")), "E_SCHEMA"
    )
    assert "other/alpha" in err["message"]
    assert_error(vine.transplant("kb/beta", "kb/alpha"), "E_SCHEMA")
    assert_error(vine.plant([node("kb/alpha", "kb", "A", "Planted over a waymark.")]), "E_SCHEMA")
    assert head(root) == before and files_of(root) == files
    # graft still never changes an id: a move is this call.
    assert_error(vine.graft("other/alpha", {"set_frontmatter": {"id": "kb/x"}}), "E_READONLY")
    assert_error(vine.graft("other/alpha", {"set_frontmatter": {"moved_from": []}}), "E_READONLY")


def test_a_dry_run_says_what_would_be_rewritten(vine: Vine, root: Path) -> None:
    before, files = head(root), files_of(root)
    out = assert_ok(vine.transplant("kb/alpha", "other/alpha", dry_run=True))
    assert out == {
        "id": "kb/alpha",
        "new_id": "other/alpha",
        "dry_run": True,
        "backlinks_rewritten": 7,
        "sources": ["kb/beta", "other/gamma"],
        "source_count": 2,
        "trail": ["_index", "other/_index"],
    }
    assert head(root) == before and files_of(root) == files


def test_a_read_only_vine_refuses(root: Path) -> None:
    before, files = head(root), files_of(root)
    with Vine(root, writable=False) as reader:
        assert_error(reader.transplant("kb/alpha", "other/alpha"), "E_READONLY")
    assert head(root) == before and files_of(root) == files


def test_a_sample_brain_move_leaves_a_valid_forest(brain_copy: Path) -> None:
    with Vine(brain_copy) as vine:
        out = assert_ok(vine.transplant("sales/exchange-policy", "sales/pipeline/exchange-policy"))
        assert out["backlinks_rewritten"] >= 5
        assert_error(vine.look("sales/exchange-policy"), "E_MOVED")
        digest = assert_ok(vine.look("people/ana-ribeiro"))
        assert "sales/pipeline/exchange-policy" in {e["target"] for e in digest["edges_out"]}
    assert status(brain_copy) == ""
    assert errors(brain_copy) == []
    log = git(
        brain_copy, "log", "--follow", "--format=%s", "--", "sales/pipeline/exchange-policy.md"
    ).splitlines()
    assert len(log) == 2 and log[0].startswith("transplant(")


def test_ingest_follows_a_moved_node_and_never_plants_over_its_waymark(
    vine: Vine, root: Path, tmp_path: Path
) -> None:
    from monkeyllm.ingest import ingest

    source = tmp_path / "drop"
    source.mkdir()
    (source / "ledger.md").write_text("# Ledger\n\nThe first ledger.\n", encoding="utf-8")
    first = ingest(vine, [source], into="kb")
    assert [c["id"] for c in first["created"]] == ["kb/ledger"]
    assert_ok(vine.transplant("kb/ledger", "other/ledger"))
    # The same file again updates the node where it went (matched by its origin)...
    (source / "ledger.md").write_text("# Ledger\n\nThe first ledger, edited.\n", encoding="utf-8")
    again = ingest(vine, [source], into="kb")
    assert [u["id"] for u in again["updated"]] == ["other/ledger"]
    # ...and a new file with the old name does not take the old address.
    other = tmp_path / "drop2"
    other.mkdir()
    (other / "ledger.md").write_text("# Another ledger\n\nA second one.\n", encoding="utf-8")
    third = ingest(vine, [other], into="kb")
    created = [c["id"] for c in third["created"]]
    assert created and "kb/ledger" not in created
    assert assert_error(vine.look("kb/ledger"), "E_MOVED")["moved_to"] == "other/ledger"
    assert errors(root) == [] and status(root) == ""


def test_a_moved_body_keeps_its_index_rows(vine: Vine, root: Path) -> None:
    conn = vine._forest.catalog.conn

    def garbage() -> int:
        row = conn.execute("SELECT value FROM meta WHERE key='body_garbage'").fetchone()
        return int(row[0]) if row else 0

    before = {i: (g, n) for i, g, n in conn.execute("SELECT id, body_gen, body_lines FROM nodes")}
    was = garbage()
    word = next(w for w in body_of(root / "kb/alpha.md").split() if w.isalpha() and len(w) > 4)
    assert_ok(vine.transplant("kb/alpha", "kb/alpha-moved"))
    after = {i: (g, n) for i, g, n in conn.execute("SELECT id, body_gen, body_lines FROM nodes")}
    # the same body version, not indexed again, and not counted as garbage: only the
    # bodies the move rewrote (indexes, backlinks) left old versions behind
    assert after["kb/alpha-moved"][0] == before["kb/alpha"][0]
    rewritten = sum(before[i][1] for i in after if i in before and after[i][0] != before[i][0])
    assert garbage() - was == rewritten
    found = [r["id"] for r in assert_ok(vine.sniff(word, k=20))["results"]]
    assert "kb/alpha-moved" in found and "kb/alpha" not in found
    vine.reindex()  # a rebuild from the files agrees
    assert "kb/alpha-moved" in [r["id"] for r in assert_ok(vine.sniff(word, k=20))["results"]]


@pytest.mark.parametrize("new_id", ["other/", " other/ ", "other//"])
def test_a_folder_as_new_id_is_refused_naming_the_whole_id(
    vine: Vine, root: Path, new_id: str
) -> None:
    """``other/`` (as a shell completes a folder) is not taken for the id ``other``, a
    leaf at the root: the move is refused and the hint names the id it would have in
    that folder."""
    before, files = head(root), files_of(root)
    err = assert_error(vine.transplant("kb/alpha", new_id), "E_SCHEMA")
    assert "folder" in err["message"]
    assert "transplant('kb/alpha', new_id='other/alpha')" in err["hint"]
    assert head(root) == before and files_of(root) == files and status(root) == ""
