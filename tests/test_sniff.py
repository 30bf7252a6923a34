"""sniff: literal, folded substring search over bodies only."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from monkeyllm import Vine, budget
from monkeyllm.reads import sniff as sniff_module
from monkeyllm.reads.sniff import snippet

from .forestkit import (
    assert_error,
    assert_ok,
    body_offset,
    file_lines,
    forest_fixture,
    fuzzed,
    leaf,
    make_forest,
    node_meta,
    reader,
    write_node,
)

POLICY = """# Exchange policy

## Channels

Retail exchange is handled at the counter.

## Deadlines

Return with invoice NF-4412 within 30 days of receipt.
Nota fiscal NF 4412 is not the same spelling.

## Invoice rules

An exchange reissues the invoice under the same series.
"""


forest = forest_fixture(
    {
        "sales/policy": leaf(POLICY, title="Secret title word", summary="metaonly"),
        "sales/other": leaf("# Other\n\nexchange once.\n"),
        "ops/ação": leaf("# Ação\n\n## Estoque\n\nA correção do ESTOQUE foi feita.\n"),
    }
)


def test_result_shape(forest: Path) -> None:
    with reader(forest) as vine:
        out = assert_ok(vine.sniff(["NF-4412", "exchange"], scope="sales", k=5))
    top = out["results"][0]
    assert top["id"] == "sales/policy"
    assert top["match_count"] == 4 and top["truncated_matches"] is True
    # Lines are the file's (the frontmatter counts), as validate and an editor count.
    off = body_offset(forest, "sales/policy")
    assert off > 5
    assert top["matches"][0] == {"section": None, "line": off + 1, "snippet": "# Exchange policy"}
    assert top["matches"][1] == {
        "section": "Channels",
        "line": off + 5,
        "snippet": "Retail exchange is handled at the counter.",
    }
    text = file_lines(forest, "sales/policy")
    for m in top["matches"]:
        assert text[m["line"] - 1].strip().startswith(m["snippet"].strip("…"))
    assert top["matches"][2]["section"] == "Deadlines"
    assert "NF-4412" in top["matches"][2]["snippet"]
    assert out["scanned_nodes"] == 3  # sales/_index, sales/policy, sales/other
    assert top["score"] > out["results"][1]["score"]


def test_never_reads_metadata(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert vine.sniff("metaonly")["results"] == []
        assert vine.sniff("Secret title")["results"] == []


def test_literal_not_tokens(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        off = body_offset(forest, "sales/policy")
        lines = vine.sniff("NF-4412", scope="sales/policy")["results"][0]["matches"]
        assert [m["line"] for m in lines] == [off + 9]
        both = vine.sniff("NF 4412", scope="sales/policy")["results"][0]["matches"]
        assert [m["line"] for m in both] == [off + 10]
        assert vine.sniff("change is ha")["results"][0]["id"] == "sales/policy"
        assert vine.sniff("xchang")["results"]


def test_folding_is_case_and_accent_blind(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        for term in ("correcao", "CORREÇÃO", "estoque foi", "Ação"):
            out = assert_ok(vine.sniff(term))
            assert [r["id"] for r in out["results"]] == ["ops/ação"], term


def test_and_preferred_ranking(tmp_path: Path) -> None:
    many = "\n".join("alpha again" for _ in range(40))
    root = make_forest(
        tmp_path / "f",
        {"a/one": leaf(f"# One\n\n{many}\n"), "a/three": leaf("# Three\n\nalpha beta gamma\n")},
    )
    with reader(root) as vine:
        out = vine.sniff(["alpha", "beta", "gamma", "delta"])
    assert [r["id"] for r in out["results"]] == ["a/three", "a/one"]


def test_index_hits_are_demoted(tmp_path: Path) -> None:
    root = make_forest(tmp_path / "f", {"a/leaf": leaf("# Leaf\n\nwombat\n")})
    write_node(
        root, "a/_index", node_meta("a/_index", "branch"), "# A\n\n- wombat\n- wombat\n- wombat\n"
    )
    with Vine(root, writable=False) as vine:
        out = vine.sniff("wombat")["results"]
    assert [r["id"] for r in out] == ["a/leaf", "a/_index"]
    assert out[1]["demoted"] is True and out[1]["score"] == out[0]["score"]
    assert out[1]["match_count"] > out[0]["match_count"]


def test_scope_forms(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert {r["id"] for r in vine.sniff("exchange", scope="sales")["results"]} == {
            "sales/policy",
            "sales/other",
        }
        assert {r["id"] for r in vine.sniff("exchange", scope="sales/_index")["results"]} == {
            "sales/policy",
            "sales/other",
        }
        assert [r["id"] for r in vine.sniff("exchange", scope="sales/other")["results"]] == [
            "sales/other"
        ]
        assert vine.sniff("exchange", scope="ops")["results"] == []
        assert_error(vine.sniff("exchange", scope="nowhere"), "E_NOT_FOUND")


def test_term_rules(forest: Path) -> None:
    with Vine(forest, writable=False) as vine:
        assert_error(vine.sniff("a"), "E_SCHEMA")
        assert_error(vine.sniff("  é "), "E_SCHEMA")
        assert_error(vine.sniff([]), "E_SCHEMA")
        assert_error(vine.sniff([f"t{i}x" for i in range(9)]), "E_SCHEMA")
        assert_ok(vine.sniff("->"))
        assert_ok(vine.sniff('"quoted" (paren) OR *'))


def test_k_and_budget(tmp_path: Path) -> None:
    nodes = {
        f"n/x{i:02d}": leaf(
            "# X\n\n" + "\n".join(f"narwhal line {j} " + "filler " * 30 for j in range(5))
        )
        for i in range(30)
    }
    with Vine(make_forest(tmp_path / "f", nodes), writable=False) as vine:
        out = assert_ok(vine.sniff("narwhal", k=20))
        assert budget.cost(out) <= budget.SNIFF
        assert out["truncated"] is True
        assert all(len(m["snippet"]) <= 102 for r in out["results"] for m in r["matches"])
        assert len(vine.sniff("narwhal", k=2)["results"]) == 2


def test_snippet_window() -> None:
    line = "x" * 200 + "HIT" + "y" * 200
    out = snippet(line, 200)
    assert out.startswith("…") and out.endswith("…") and "HIT" in out
    assert len(out) == 102
    assert snippet("  short line  ", 2) == "short line"
    assert snippet("HIT" + "z" * 150, 0).startswith("HIT")


# -- the body index answers exactly what a direct scan answers ------------------------

WORDS = [
    "exchange",
    "Exchange",
    "invoice",
    "NF-4412",
    "nf 4412",
    "ação",
    "acao",
    "correção",
    "x",
    "ex",
    "change",
    "30",
    "days",
    "çã",
    "--",
    "a.b",
    "_id",
    "über",
    "straße",
    "ﬁn",
]


@fuzzed(60)
@given(
    bodies=st.lists(
        st.lists(
            st.lists(st.sampled_from(WORDS + [" ", ", ", "-", "\u00a0"]), max_size=8).map("".join),
            max_size=6,
        ).map("\n".join),
        min_size=1,
        max_size=4,
    ),
    terms=st.lists(
        st.sampled_from(
            [w for w in WORDS if len(w.strip()) >= 2] + ["nge inv", "ge-", "4412", "ção", "ss"]
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_index_equals_direct_scan(scratch_vine, bodies: list[str], terms: list[str]) -> None:
    root, vine = scratch_vine
    for i, body in enumerate(bodies):
        write_node(root, f"fz/n{i}", node_meta(f"fz/n{i}"), "# T\n\n" + body)
    assert_ok(vine.sniff("zz"))  # syncs the catalog with the new files
    forest = vine._forest
    folded = sniff_module._terms(terms)
    found = sniff_module.indexed_hits(forest, folded, sniff_module.Scope(), 10**6)
    direct, _ = sniff_module.direct_hits(forest, folded, "", ())
    if found is None:
        return
    indexed, matched = found
    assert matched == len(direct)
    assert {k: (v.count, v.terms, v.lines) for k, v in indexed.items()} == {
        k: (v.count, v.terms, v.lines) for k, v in direct.items()
    }


def test_confirmed_lines_come_from_the_body_in_the_file(tmp_path: Path) -> None:
    """A term with punctuation is confirmed by reading candidate lines from the file's
    body (without parsing its frontmatter); line numbers are the file's (the
    frontmatter counts, as in validate), and a file turned into a symlink is not read."""
    root = make_forest(
        tmp_path / "f",
        {
            "a": leaf(
                "# A\n\nfirst\n\nthe code ab-12 here\n",
                title="A",
                summary="Holds the code in its body.",
                tags=["ab-12"],
            ),
            "b": leaf(
                "# B\n\nab here\n\nand 12 there, ab 12 too\n",
                title="B",
                summary="Mentions ab and 12 apart only.",
            ),
        },
    )
    with Vine(root, writable=False) as vine:
        out = vine.sniff("ab-12")
        assert [r["id"] for r in out["results"]] == ["a"]
        assert [m["line"] for m in out["results"][0]["matches"]] == [body_offset(root, "a") + 5]
        assert vine._forest.body_lines("a") == vine._forest.read("a").lines
        target = tmp_path / "outside.md"
        target.write_text((root / "b.md").read_text())
        (root / "b.md").unlink()
        (root / "b.md").symlink_to(target)
        assert vine._forest.body_lines("b") == []


def test_sniff_harvest_and_validate_give_the_same_file_line(tmp_path: Path) -> None:
    """One line, three calls: sniff, harvest's matches and validate all name the file
    line an editor's +N opens (frontmatter included), for a long frontmatter too."""
    from monkeyllm.validate import validate

    body = "# Dangle\n\nIntro.\n\n## Links\n\nSee [[nowhere/zz-unique-target]] for it.\n"
    root = make_forest(
        tmp_path / "f",
        {
            "kb/dangle": leaf(
                body,
                summary="A note with a broken link.",
                tags=["a", "b", "c"],
                aliases=["d1", "d2"],
            )
        },
    )
    want = file_lines(root, "kb/dangle").index("See [[nowhere/zz-unique-target]] for it.") + 1
    assert want == body_offset(root, "kb/dangle") + 7 > 7
    [finding] = [f for f in validate(root) if f.code == "body.broken-wikilink"]
    assert finding.line == want
    with Vine(root, writable=False) as vine:
        hit = assert_ok(vine.sniff("zz-unique-target"))["results"][0]["matches"]
        assert [m["line"] for m in hit] == [want]
        got = assert_ok(vine.harvest("broken link", terms=["zz-unique-target"]))
        assert [m["line"] for m in got["results"][0]["matches"]] == [want]
