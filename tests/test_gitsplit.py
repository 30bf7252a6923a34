"""A split index (``core.splitIndex``) is updated in this process as a split index: git
must agree with every entry, the shared index is left as it is, and git itself takes
over when it would start a new shared index."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from monkeyllm import Vine, gitindex, gitsplit

from .forestkit import assert_ok, copy_sample, git
from .test_gitindex import assert_in_sync, note


def shared_files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / ".git").glob("sharedindex.*")}


def is_split(root: Path) -> bool:
    data = (root / ".git" / "index").read_bytes()
    return gitindex._Index.parse(data, (0, 0, 0)) is None and b"link" in data


@pytest.fixture
def forest(tmp_path: Path) -> Path:
    root = copy_sample(tmp_path / "brain", git=True)
    git(root, "config", "core.splitIndex", "true")
    git(root, "config", "splitIndex.maxPercentChange", "100")  # git never re-bases here
    git(root, "update-index", "--split-index")
    assert is_split(root)
    gitindex._CACHE.clear()
    return root


@pytest.mark.parametrize("seed", range(6))
def test_ewah_bitmaps_round_trip(seed: int) -> None:
    rng = random.Random(seed)
    positions = sorted(rng.sample(range(5000), rng.randint(0, 300)))
    data = gitsplit.ewah_encode(positions)
    decoded, end = gitsplit.ewah_decode(b"xx" + data, 2)
    assert decoded == positions and end == len(data) + 2


def test_ewah_runs_of_ones_are_read() -> None:
    """git writes a clean run of set words as one marker (bit 0 set, its length next)."""
    marker = 1 | (2 << 1) | (1 << 33)  # two words of ones, then one literal word
    data = struct.pack(">LLQQL", 3 * 64, 2, marker, 0b101, 0)
    assert gitsplit.ewah_decode(data, 0)[0] == [*range(128), 128, 130]


def test_writes_keep_the_index_split_and_the_shared_index_untouched(forest: Path) -> None:
    shared = shared_files(forest)
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        assert isinstance(gitindex._CACHE[forest / ".git"], gitsplit.Split)  # spliced here
        assert_in_sync(forest)
        assert_ok(vine.graft("clients/alpha", {"set_frontmatter": {"summary": "Changed."}}))
        assert_ok(vine.graft("acme-trading", {"set_frontmatter": {"summary": "Shared one."}}))
        assert_in_sync(forest)
        assert_ok(vine.transplant("clients/alpha", "sales/alpha"))  # a removal and an entry
        assert_ok(vine.prune("sales/alpha", force=True))
        assert_in_sync(forest)
    assert is_split(forest)
    assert shared_files(forest) == shared
    assert (forest / ".git" / "index").stat().st_size < min(map(len, shared.values()))
    assert "sales/alpha.md" not in git(forest, "ls-files")


def test_what_git_wrote_in_the_split_index_is_kept(forest: Path) -> None:
    """Replacements, deletions and additions git made (staged by a person) survive a
    write, byte for byte, and git reads the result."""
    (forest / "scratch.txt").write_text("staged by a person\n")
    git(forest, "add", "scratch.txt")
    (forest / "acme-trading.md").write_text((forest / "acme-trading.md").read_text() + "\nMore.\n")
    git(forest, "add", "acme-trading.md")
    listed = git(forest, "ls-files").split()
    gone = [p for p in listed if p.startswith("sales/")][:3]
    git(forest, "rm", "-q", "--cached", *gone)
    untouched = ["scratch.txt", "acme-trading.md", *gone, listed[1]]
    before = git(forest, "ls-files", "-s", "--debug", *untouched)
    with Vine(forest) as vine:
        assert_ok(vine.plant(note("clients/alpha")))
        assert isinstance(gitindex._CACHE[forest / ".git"], gitsplit.Split)
    assert git(forest, "ls-files", "-s", "--debug", *untouched) == before
    staged = git(forest, "diff", "--cached", "--name-status", "HEAD").split("\n")
    assert sorted(filter(None, staged)) == sorted(
        ["M\tacme-trading.md", "A\tscratch.txt", *(f"D\t{p}" for p in gone)]
    )
    assert is_split(forest)


def test_a_crowded_split_index_goes_through_git(forest: Path) -> None:
    """Past splitIndex.maxPercentChange of entries outside the shared index, git would
    start a new shared index: the write is left to git, which does."""
    git(forest, "config", "--unset", "splitIndex.maxPercentChange")
    shared = set(shared_files(forest))
    total = len(git(forest, "ls-files").split())
    with Vine(forest) as vine:
        for i in range(total // 3):
            assert_ok(vine.plant(note(f"clients/n{i:03d}")))
    assert_in_sync(forest)
    assert set(shared_files(forest)) - shared, "git wrote a new shared index"


def test_a_missing_shared_index_is_left_to_git(forest: Path) -> None:
    for path in (forest / ".git").glob("sharedindex.*"):
        path.rename(path.with_name("elsewhere"))
    gitindex._CACHE.clear()
    gitsplit._SHARED.clear()
    assert gitindex.update(forest / ".git", forest, {"a.md": None}) is False
