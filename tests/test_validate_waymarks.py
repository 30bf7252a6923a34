"""``validate`` knows waymarks: an old id that is still a live node, a loop of moves and
an old id two nodes claim are errors; what transplant leaves is clean."""

from __future__ import annotations

from pathlib import Path

from monkeyllm import Vine
from monkeyllm.validate import validate

from .forestkit import assert_ok, make_forest
from .grove import grow


def codes(root: Path) -> list[tuple[str, str | None]]:
    return sorted(
        (f.code, f.id)
        for f in validate(root)
        if f.code.startswith("waymark.")
        or (f.code == "frontmatter.invalid" and "moved_from" in f.message)
    )


def test_what_transplant_leaves_is_clean(tmp_path: Path) -> None:
    root = grow(tmp_path / "f")
    with Vine(root) as vine:
        assert_ok(vine.transplant("kb/alpha", "kb/first"))
        assert_ok(vine.transplant("kb/first", "other/first"))
    assert [f for f in validate(root) if f.severity == "error"] == []


def test_broken_waymarks_are_errors(tmp_path: Path) -> None:
    root = make_forest(
        tmp_path / "f",
        {
            "a/live": ("note", {}, "# live\n"),
            "a/holder": ("note", {"moved_from": ["a/live", "a/gone"]}, "# holder\n"),
            "a/self": ("note", {"moved_from": ["a/self"]}, "# self\n"),
            "a/one": ("note", {"moved_from": ["a/two"]}, "# one\n"),
            "a/two": ("note", {"moved_from": ["a/one"]}, "# two\n"),
            "a/claim-1": ("note", {"moved_from": ["a/old"]}, "# c1\n"),
            "a/claim-2": ("note", {"moved_from": ["a/old"]}, "# c2\n"),
            "a/bad": ("note", {"moved_from": "a/nope"}, "# bad\n"),
        },
    )
    found = codes(root)
    assert ("waymark.live", "a/holder") in found  # a/live is a node
    assert ("waymark.loop", "a/self") in found  # names itself
    assert ("waymark.live", "a/one") in found and ("waymark.live", "a/two") in found
    assert [c for c in found if c[0] == "waymark.loop" and c[1] in ("a/one", "a/two")]
    assert ("waymark.ambiguous", "a/claim-1") in found
    assert ("waymark.ambiguous", "a/claim-2") in found
    assert ("frontmatter.invalid", "a/bad") in found
    for f in validate(root):
        if f.code.startswith("waymark."):
            assert f.severity == "error" and f.line and f.fix
    # a/gone is a free old id: only its neighbour a/live is reported.
    assert not [f for f in validate(root) if "a/gone" in f.message]
