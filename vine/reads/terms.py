"""Terms from a question: what ``harvest`` asks ``locate`` and the body sweep for.
Tokens are folded, English and Portuguese stopwords dropped, and code-shaped tokens
(a digit, all capitals, or one of ``- _ . /``) kept first."""

from __future__ import annotations

import re

from ..text import fold

TERMS_MAX = 8
_TOKEN = re.compile(r"[\w\-./]{2,}")
_CODE_MARKS = set("-_./")

# Question words and connectives of English and Portuguese, folded (accents removed);
# the English list has the stems a contraction leaves ("didn't" reads as didn, t).
STOPWORDS = frozenset(fold(w) for w in """
a an the and or but nor of to in on at for with by from into onto over under about
after before between during since until than then there here this that these those
it its is are was were be been being am do does did doing done have has had having
what which who whom whose when where why how whether if else so such too very just
also only own same other others another each every both few more most much many
some any all no not yes can could should would will shall may might must need want
our ours we us you your yours they them their theirs he him his she her hers i me my
mine tell show give find know get got make please like via per upon within without
don didn doesn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn cannot
mustn needn shan ain
qual quais quem quando onde como porque porquê por que para pelo pela pelos pelas com
sem sobre entre depois antes desde até ate um uma uns umas o os as do da dos das no
na nos nas ao aos à às num numa se não nao sim mais menos muito muita muitos muitas
este esta estes estas esse essa esses essas aquele aquela aqueles aquelas isso isto
aquilo ele ela eles elas nós nos você voce vocês voces seu sua seus suas nosso nossa
nossos nossas meu minha ser estar está esta estão estao são sao foi foram era eram
tem têm tinha ter há haver pode podem deve devem fazer faz cada todo toda todos todas
também tambem ainda já ja então entao mesmo mesma outro outra outros outras qualquer
quanto quanta quantos quantas existe existem preciso precisa
""".split())


def _tokens(query: str) -> list[tuple[str, bool]]:
    """(folded token, code-shaped) for each non-stopword token of a question."""
    out = []
    for raw in _TOKEN.findall(query):
        token = raw.strip("./-")
        if len(token) < 2:
            continue
        letters = [c for c in token if c.isalpha()]
        code = (any(c.isdigit() for c in token)
                or (len(letters) >= 2 and all(c.isupper() for c in letters))
                or any(c in _CODE_MARKS for c in token))
        folded = fold(token)
        if folded not in STOPWORDS:
            out.append((folded, code))
    return out


def is_code(term: str) -> bool:
    """A folded term that names something exactly: an identifier with ``- _ . /`` or
    with letters and digits mixed (``nf-4412``, ``l2503``); a bare number such as a
    year is not one."""
    if any(c in _CODE_MARKS for c in term.strip("-_./")):
        return any(c.isdigit() for c in term) or len(term) >= 4
    return any(c.isdigit() for c in term) and any(c.isalpha() for c in term)


def locate_query(query: str) -> str:
    """The question without its stopwords, for ``locate`` (function words of a question
    would otherwise match every summary written in the same language)."""
    words = [t for t, code in _tokens(query) if code or len(t) >= 3]
    return " ".join(dict.fromkeys(words)) or query


def derive_terms(query: str) -> list[str]:
    """Sniff terms from a question: code-shaped tokens (a digit, all capitals, or one of
    ``- _ . /``) at any length and first, other words of 4+ characters; stopwords and
    duplicates dropped; folded; at most 8."""
    codes = [t for t, code in _tokens(query) if code]
    words = [t for t, code in _tokens(query) if not code and len(t) >= 4]
    return list(dict.fromkeys(codes + words))[:TERMS_MAX]
