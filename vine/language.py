"""Which of the two languages a forest writes in (English, Portuguese) a text is in,
told by its function words: the words that carry no subject (what, the, qual, de, ...),
which a search drops and whose mix names the language."""

from __future__ import annotations

from collections.abc import Callable

from .text import fold, index_text

# Question words and connectives of English and Portuguese, folded (accents removed);
# the English list has the stems a contraction leaves ("didn't" reads as didn, t).
ENGLISH = frozenset(
    fold(w)
    for w in """
a an the and or but nor of to in on at for with by from into onto over under about
after before between during since until than then there here this that these those
it its is are was were be been being am do does did doing done have has had having
what which who whom whose when where why how whether if else so such too very just
also only own same other others another each every both few more most much many
some any all no not yes can could should would will shall may might must need want
our ours we us you your yours they them their theirs he him his she her hers i me my
mine tell show give find know get got make please like via per upon within without
don didn doesn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn cannot
mustn needn shan ain anything something someone anyone everything nothing whats
""".split()
)
PORTUGUESE = frozenset(
    fold(w)
    for w in """
qual quais quem quando onde como porque porquê por que para pelo pela pelos pelas com
sem sobre entre depois antes desde até ate um uma uns umas o os as do da dos das no
na nos nas ao aos à às num numa se não nao sim mais menos muito muita muitos muitas
este esta estes estas esse essa esses essas aquele aquela aqueles aquelas isso isto
aquilo ele ela eles elas nós nos você voce vocês voces seu sua seus suas nosso nossa
nossos nossas meu minha ser estar está esta estão estao são sao foi foram era eram
tem têm tinha ter há haver pode podem deve devem fazer faz cada todo toda todos todas
também tambem ainda já ja então entao mesmo mesma outro outra outros outras qualquer
quanto quanta quantos quantas existe existem preciso precisa de e é em lá aqui algum
alguma alguns algumas nenhum nenhuma sido sendo seria
""".split()
)
# Function words only one of the languages has: what tells a question's language.
_ONLY = {"en": ENGLISH - PORTUGUESE, "pt": PORTUGUESE - ENGLISH}
# Letters only Portuguese writes (of the two).
_PT_LETTERS = frozenset("ãõçáâêíóôúà")
LANGUAGES = ("en", "pt")


def votes(text: str) -> dict[str, int]:
    """How many distinct function words only one language has ``text`` holds, per
    language; with none at all, its distinct Portuguese letters count for Portuguese
    (names such as São Paulo put them in English text too)."""
    words = set(index_text(text).split())
    en, pt = len(words & _ONLY["en"]), len(words & _ONLY["pt"])
    if en + pt == 0:
        pt = len(_PT_LETTERS & set(text.lower()))
    return {"en": en, "pt": pt}


def languages(text: str) -> tuple[str, ...]:
    """The language of a question: one when its function words lean that way, else both
    (a list of keywords says nothing)."""
    count = votes(text)
    if count["en"] > count["pt"]:
        return ("en",)
    if count["pt"] > count["en"]:
        return ("pt",)
    return LANGUAGES


def writes_portuguese(text: str, more: Callable[[], str] | None = None, *, enough: int = 0) -> bool:
    """Whether a text has Portuguese in it: at least a fifth of its telling function
    words (or, with none, its letters) are Portuguese. When ``text`` holds fewer than
    ``enough`` telling words and ``more`` is given, ``more()`` is read too."""
    count = votes(text)
    if more is not None and count["en"] + count["pt"] < enough:
        extra = votes(more())
        count = {lang: count[lang] + extra[lang] for lang in count}
    total = count["en"] + count["pt"]
    return count["pt"] > 0 and 5 * count["pt"] >= total
