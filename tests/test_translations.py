"""A question in one language finds nodes written in the other (English, Portuguese):
locate searches each word's translations as it searches its stems, weighed below the
word itself, and harvest's body sweep reaches the translations in bodies.

Expectations come from the files each test writes, never from an earlier answer."""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from monkeyllm import Vine, translate
from monkeyllm.reads import features

from .forestkit import assert_ok, make_forest, reader
from .forestkit import leaf as _leaf
from .mcpkit import VINE

FOREST: dict[str, tuple[str, dict[str, Any], str]] = {
    "sales/refund-deadline": _leaf(
        "# Refunds\n\nA customer has thirty days from the invoice.\n",
        title="Refund deadline",
        summary="How long a customer has to ask for the money back.",
    ),
    "armazem/equipe": _leaf(
        "# Equipe do armazém\n\nO turno da manhã começa às seis.\n",
        title="Equipe do armazém",
        summary="Quem trabalha no armazém e em que turno.",
    ),
    "ops/dock-notes": _leaf(
        "# Dock notes\n\nThe dock was painted. Every supplier must book a slot.\n",
        title="Dock notes",
        summary="What changed at the loading dock this year.",
    ),
    "ops/fornecedores": _leaf(
        "# Fornecedores\n\nLista de contatos.\n",
        title="Prazo de entrega dos fornecedores",
        summary="Quantos dias cada fornecedor leva para entregar.",
    ),
    "ops/supplier-lead-times": _leaf(
        "# Suppliers\n\nA list of contacts.\n",
        title="Supplier delivery deadline",
        summary="How many days each supplier takes to deliver.",
    ),
}


@pytest.fixture(scope="module")
def forest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_forest(tmp_path_factory.mktemp("translations") / "forest", FOREST)


@pytest.fixture
def vine(forest: Path) -> Any:
    with reader(forest) as v:
        yield v


def located(vine: Vine, query: str, k: int = 5) -> list[str]:
    return [r["id"] for r in assert_ok(vine.locate(query, k=k))["results"]]


@pytest.mark.parametrize(
    ("query", "node"),
    [
        ("como peço um reembolso?", "sales/refund-deadline"),  # pt question, en node
        ("reembolsos", "sales/refund-deadline"),  # an inflected form of the entry
        ("who works in the warehouse?", "armazem/equipe"),  # en question, pt node
    ],
)
def test_a_question_finds_a_node_written_in_the_other_language(
    vine: Vine, query: str, node: str
) -> None:
    assert located(vine, query)[0] == node
    with features.without("translations"):
        assert node not in located(vine, query)


def test_a_word_in_its_own_language_outranks_its_translation(vine: Vine) -> None:
    # Both nodes say the same thing, one in each language: the question's own
    # language comes first, the translation right after it.
    pt = assert_ok(vine.locate("prazo de entrega dos fornecedores", k=2))["results"]
    assert [r["id"] for r in pt] == ["ops/fornecedores", "ops/supplier-lead-times"]
    assert pt[0]["score"] > pt[1]["score"]
    en = located(vine, "supplier delivery deadline", k=2)
    assert en == ["ops/supplier-lead-times", "ops/fornecedores"]


def test_codes_numbers_and_short_words_are_never_translated() -> None:
    assert translate.translations("nf-4412", ("en", "pt")) == ()
    assert translate.translations("2025", ("en", "pt")) == ()
    assert translate.translations("ab", ("en", "pt")) == ()
    assert translate.translated_stems("prazo", ("pt",))  # the lexicon knows prazo
    assert all(s.startswith("0") for s in translate.translated_stems("prazo", ("pt",)))
    assert all(s.startswith("1") for s in translate.translated_stems("deadline", ("en",)))


def test_harvests_body_sweep_reaches_a_translation_in_a_body(vine: Vine) -> None:
    # "fornecedor" is in no English title or summary here but the dock notes' body
    # says "supplier": the sweep finds it through the translation.
    got = assert_ok(vine.harvest("o fornecedor precisa reservar horário na doca?", k=5))
    ids = [r["id"] for r in got["results"]]
    assert "ops/dock-notes" in ids
    with features.without("translations", "edges"):
        off = assert_ok(vine.harvest("o fornecedor precisa reservar horário na doca?", k=5))
        assert "ops/dock-notes" not in [r["id"] for r in off["results"]]


def test_a_translation_common_in_the_bodies_is_no_form_of_the_term(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A translation on thousands of body lines (a common token of the body index, here
    on 4) is left out of the sweep's forms; a rarer one stays."""
    from monkeyllm import bodyindex
    from monkeyllm.reads.sweep import word_forms

    monkeypatch.setattr(bodyindex, "COMMON_LINES", 4)
    nodes = dict(FOREST)
    nodes["ops/log"] = _leaf(
        "# Log\n\n" + "".join(f"Supplier {i} called.\n" for i in range(6)),
        title="Call log",
        summary="Calls.",
    )
    root = make_forest(tmp_path / "common", nodes)
    with reader(root) as vine:
        forest = vine._forest
        assert forest.vocabulary().lines("supplier") >= 4
        forms = word_forms(forest, ["fornecedor", "doca"], ("pt",), translate=True)
    assert "supplier" not in forms.get("fornecedor", ())
    assert "dock" in forms["doca"]


def test_a_missing_lexicon_means_no_translations_and_no_error(tmp_path: Path) -> None:
    assert translate._load(tmp_path / "absent.tsv") == {"en": ({}, []), "pt": ({}, [])}


def test_the_cli_finds_across_languages(forest: Path) -> None:
    got = subprocess.run(
        [VINE, "locate", "reembolso", "-f", str(forest), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={"VINE_WATCH": "0", "PATH": ""},
    )
    assert json.loads(got.stdout)["results"][0]["id"] == "sales/refund-deadline"


def test_the_lexicon_file_is_well_formed() -> None:
    lines = translate.LEXICON.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    pairs = [line for line in lines if line and not line.startswith("#")]
    assert any("MIT" in line for line in header)
    assert len(pairs) >= 2000
    assert len(set(pairs)) == len(pairs)
    per_word: dict[tuple[int, str], int] = {}
    for line in pairs:
        en, pt = line.split("\t")
        for side, word in enumerate((en, pt)):
            assert word == word.strip().lower() and word and " " not in word, line
            assert unicodedata.is_normalized("NFC", word), line
            per_word[side, word] = per_word.get((side, word), 0) + 1
    assert max(per_word.values()) <= translate.TARGETS_MAX
