"""Deterministic synthetic forest generator for benchmarks.

Run from the repository root::

    python -m bench.generate --nodes 10000 --out /tmp/f10k [--seed 7] [--git] [--max-rows R]

or import :func:`generate`. The output is a complete forest in the on-disk format:
one ``.md`` per node (block-YAML frontmatter, markdown body), ``_index.md`` branches
three levels deep whose entry lines and ``coverage`` match their children,
``_meta/schema.md`` with the default dialect, ``.gitignore``, and a sibling SQLite
``.db`` payload for every dataset leaf.

Everything is drawn from one ``random.Random(seed)`` (dataset rows from a per-node
generator derived from the seed), so the same arguments give byte-identical files.
``nodes`` counts every ``.md`` written, master index and ``_meta/schema`` included.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

# --------------------------------------------------------------------------------------
# Word material
# --------------------------------------------------------------------------------------

EN_FUNCTION = """the of and to a in is for that on with as by it be are this from at or an was
we which not have will can has but all their more its one they been were also when than
other into these each after before between over under should would could there our may
only about most some any such new two first used then out up no so if what how who where
while both through during per without within across three many those must since because
same under via whose them us still very well even just upon against towards among however
often already several further above below here four five next last less least""".split()

PT_FUNCTION = """de que e o a do da em um para é com não uma os no se na por mais as dos como
mas foi ao das tem à seu sua ou ser quando muito há nos já está também só pelo pela até
isso ela entre era depois sem mesmo aos ter seus quem nas esse eles estão você tinha foram
essa num nem suas meu às minha têm numa pelos elas havia seja qual será nós lhe deles essas
esses pelas este fosse dele sobre ainda após porém então cada onde durante partir segundo
conforme enquanto todos todas outro outra outros primeiro""".split()

EN_NOUNS = """account action activity address agent agreement amount analysis answer
application approach area argument article asset audit balance bank base batch benefit bill
block board body bond boundary brand bridge budget buffer bug building bundle business buyer
cable cache calendar campaign capacity capital card carrier case cash catalog category center
certificate chain channel chapter charge chart check circuit claim class client cluster code
column comment committee company component condition conference connection contract control
copy core cost council count country coverage credit crew customer cycle dashboard data
database deadline deal debt decision default delivery demand department deposit design detail
device diagram digest director discount disk document domain draft driver edge effect effort
element email employee engine entry environment error estimate event evidence exception
exchange expense experiment export facility factor failure feature fee field figure file
filter finance flag fleet floor flow folder force forecast form format forum frame framework
freight function fund gap gate goal grant graph grid group growth guide handler hardware
header health history holder host hour hub idea image impact incident income index industry
input insight instance insurance interest interface inventory invoice issue item job journal
key kernel label labor language layer lead ledger lesson letter level license limit line link
list loan location log loop machine manager manual map margin market matrix measure meeting
member memory message method metric milestone mode model module month motor network node
notice number object office offer operator option order outcome output owner package page
panel paper parameter partner patch path pattern payment payroll period permit phase pipeline
plan plant platform player point policy pool port portal portfolio position price priority
problem procedure process product profile profit program project property proposal protocol
provider purchase quality quarter query queue quota rate ratio reason receipt record region
register release report request requirement reserve resource response result revenue review
reward risk road role route rule sale sample scale schedule schema scope score screen script
season sector segment sensor sequence server service session setting share shift shipment
signal site size slot source space spec stack stage standard statement station status step
stock storage store strategy stream structure study subject supplier supply support survey
switch symbol system table target task tax team template term test thread threshold ticket
timeline token tool topic total track trade traffic training transaction transfer trend trial
trigger unit update upgrade usage user value vendor version view volume warehouse warning week
window work workflow workshop year zone harbor cargo tariff subsidy crop harvest soil turbine
reactor valve pump boiler furnace kiln mill forge loom lathe drill crane truck wagon vessel
tanker barge pallet crate container parcel courier depot terminal dock berth pier canal
tunnel viaduct highway junction corridor plaza campus clinic pharmacy lab studio gallery
theater archive library museum garden orchard vineyard ranch farm dairy bakery brewery
kitchen canteen dormitory hangar runway beacon antenna satellite orbit probe telescope
microscope spectrum enzyme protein molecule compound alloy polymer fiber resin ceramic glass
cement asphalt timber quarry mine shaft tunnel well aquifer basin delta estuary reef lagoon
glacier summit ridge valley canyon plateau prairie savanna forest jungle marsh swamp dune""".split()

EN_VERBS = """accept access adapt add adjust allocate analyze announce apply approve archive
arrange assemble assess assign assist attach authorize balance book borrow calculate cancel
capture change charge check claim classify close collect combine commit compare compile
complete compute configure confirm connect consider consolidate construct consult contain
convert copy correct count create debug decide define delay delete deliver deploy describe
design detect develop document download draft edit enable encode end enforce enhance ensure
enter escalate establish estimate evaluate examine execute expand expect explain export extend
extract filter finalize fix follow forecast format forward generate handle help identify
implement import improve include increase index inform install integrate introduce invest
invoice involve join label launch limit list load locate lock log maintain manage map mark
match measure merge migrate model modify monitor move negotiate normalize notify observe
obtain open operate optimize order organize pack parse perform plan post predict prepare
present prevent price print process produce program promote protect provide publish purchase
qualify query rank reach receive record reduce refresh register reject release remove render
repair repeat replace report request require reserve resolve restore retain return review
revise route sample save scan schedule score search secure select serve settle ship sign
simulate sort start store streamline submit summarize supply support survey switch sync tag
target test track train transfer transform translate update upgrade upload validate verify
view visit wait warn watch weigh work wrap audit benchmark calibrate certify cluster
coordinate curate decommission digitize escalate harvest irrigate mentor onboard outsource
prototype reconcile recruit refactor reimburse rehearse relocate renovate sponsor stabilize
standardize subscribe tender throttle underwrite vaccinate ventilate weld""".split()

EN_ADJECTIVES = """active actual annual available average basic brief broad careful central
cheap clean clear close common complete complex correct critical current daily dark deep dense
direct dynamic early easy effective efficient empty entire equal exact external fair fast final
firm fixed flat formal free fresh full general global good great green gross hard heavy high
huge ideal initial inner internal joint large late lean legal light likely linear live local
long loose low main major marginal minor mobile modern monthly narrow native natural near neat
net normal old open optimal optional original outer partial past poor positive possible
precise primary prior private proper public quick quiet rapid rare raw ready real recent
regular relevant remote rich robust rough safe secure senior serious sharp short significant
simple single slow small smart smooth soft solid special specific stable steady strict strong
subtle sudden sufficient tight total tough typical unique urgent useful valid vast visible
vital weak weekly wide young coastal rural urban thermal seasonal fiscal tactical modular
portable hybrid vertical lateral acoustic optical organic synthetic fragile durable""".split()

PT_WORDS = """informação relatório período negócio política código número médio questão
função mês último próximo público econômico técnico gestão série região serviço país água
nível início histórico saúde índice opção seção ciência decisão avaliação experiência
operação produção distribuição manutenção reunião orçamento vendedor previsão licitação
conteúdo usuário funcionário salário benefício crédito débito prêmio estratégia logística
fábrica máquina energia elétrica módulo versão revisão padrão critério método prática
cenário estágio equipe responsável diretoria escritório depósito armazém veículo frota rota
entrega pedido cliente fornecedor contrato proposta projeto produto preço custo lucro receita
despesa imposto nota fiscal cobrança pagamento transferência conta saldo balanço auditoria
conformidade segurança acesso senha permissão tecnologia sistema rede servidor banco dados
tabela consulta pesquisa estudo gráfico indicador meta resultado desempenho qualidade
melhoria problema solução risco prazo cronograma etapa fase tarefa atividade processo fluxo
documento arquivo pasta cópia assinatura aprovação autorização vigência renovação
cancelamento reajuste câmbio moeda juros parcela vencimento carência garantia seguro sinistro
perícia laudo vistoria obra construção reforma engenharia arquitetura hidráulica mecânica
química física matemática estatística jurídico trabalhista tributário contábil financeiro
comercial administrativo operacional estratégico tático lógico prático rápido fácil difícil
possível disponível necessário obrigatório opcional válido inválido útil ótimo sólido
líquido bruto anual mensal diário semanal trimestral além porquê pôr coração mão irmão
cidadão órgão ônibus trânsito avião caminhão navio porão sertão agreste litoral município
estado capital família criança jovem idoso saúde educação cultura esporte lazer turismo
comércio indústria agricultura pecuária mineração pesca floresta clima chuva seca colheita
safra plantio irrigação adubação semente fertilizante máquinas trator galpão silo""".split()

PT_STEMS = """inform organiz realiz document contrat fatur negoci planej cadastr consult
entreg valid verific configur aprov analis compar calcul control registr monitor export
import migr integr atualiz otimiz prioriz autoriz padroniz simul test avali acompanh solicit
program execut comunic apresent aument alter cancel confirm deposit mud lev apur arrecad
audit cobr compens concili declar desenvolv embal estoc financ homolog implant indic
invent licenci liquid lanç mapp medi notific orç parcel port public reclam reembols
renov rescind revis sinaliz suport transport tribut vend""".split()

PT_SUFFIXES = [("ar", 1.0), ("ação", 1.2), ("ações", 2.0), ("ado", 1.5), ("ada", 2.0),
               ("ados", 3.0), ("ando", 2.5), ("ador", 4.0), ("adores", 6.0), ("ou", 2.0),
               ("aram", 4.0), ("ará", 5.0), ("ável", 6.0), ("amento", 3.0),
               ("amentos", 5.0), ("aríamos", 20.0)]

EN_NOUN_PREFIXES = ["sub", "co", "micro", "multi", "non", "inter"]
EN_VERB_PREFIXES = ["re", "pre", "un", "over", "mis", "co"]
EN_ADJ_PREFIXES = ["un", "non", "semi"]
DOUBLING = {"plan", "ship", "commit", "log", "tag", "map", "wrap", "scan", "submit",
            "label", "program", "model", "travel", "cancel", "signal"}

FIRST_NAMES = """Ana João Maria José Antônio Francisca Luís Márcia Inês Sebastião Ângela
Débora Fábio Letícia Mônica Otávio Patrícia Rogério Sérgio Tânia Vinícius Conceição Lúcia
Cláudio Mário Júlia Caio Renata Thiago Beatriz Rafael Camila Bruno Larissa Diego Priscila
Alice Brian Carla Daniel Emma Frank Grace Henry Irene Jack Karen Liam Mia Noah Olivia Peter
Quinn Ruth Sam Tara Victor Wendy Yusuf Zoe Amara Chen Dmitri Elif Farah Goran Hana Ibrahim
Jonas Kenji Lena Marek Nadia Omar Priya Ravi Sofia Tomás Uma Wei""".split()

LAST_NAMES = """Souza Araújo Gonçalves Magalhães Simões Brandão Falcão Guimarães Assunção
Monteiro Ribeiro Carvalho Almeida Lima Costa Pereira Rocha Nogueira Teixeira Conceição
Barbosa Cardoso Correia Dias Fernandes Freitas Gomes Lopes Machado Martins Melo Mendes Moreira
Nascimento Oliveira Pinto Ramos Santos Silva Vieira Azevedo Bezerra Cavalcanti Damasceno
Smith Johnson Miller Clarke Walker Nguyen Patel Kim Müller Dubois Rossi Novak Kowalski Larsen
Okafor Haddad Tanaka Ivanova Schneider Fischer Moreau Romano Jensen Andersson""".split()

CITIES = """Recife Olinda Fortaleza Salvador Natal Maceió João-Pessoa Teresina São-Luís Belém
Manaus Curitiba Florianópolis Porto-Alegre Goiânia Brasília Campinas Santos Lisbon Porto
Coimbra Braga Madrid Lyon Hamburg Rotterdam Antwerp Dublin Toronto Denver Austin Osaka
Nairobi Lagos Accra Santiago Lima Bogotá Montevideo Quito""".split()
CITIES = [c.replace("-", " ") for c in CITIES]

TOP_BRANCHES = ["finance", "sales", "engineering", "research", "operations", "legal",
                "marketing", "people", "clients", "products", "support", "security", "data",
                "infrastructure", "design", "partners", "compliance", "logistics",
                "procurement", "strategy"]

TAG_VOCAB = """finance sales engineering research operations legal marketing hr clients
products support security data infra design partners compliance logistics procurement
strategy budget forecast invoice contract audit policy roadmap release incident postmortem
meeting decision onboarding hiring training pricing billing payments tax payroll inventory
warehouse shipping supplier vendor quality testing deployment migration api database
analytics reporting dashboard metrics kpi okr planning quarterly annual draft approved
archived urgent review risk privacy gdpr lgpd brasil portugal europe latam export import
sustainability energy field lab prototype hardware firmware cloud mobile web customer
partner internal external reference howto faq glossary""".split()

HEADINGS_EN = """Background|Context|Scope|Goals|Findings|Decisions|Open questions|Next steps
|Risks|Timeline|Approach|Results|Lessons learned|Dependencies|Budget|Stakeholders|Methodology
|Summary of changes|Appendix|References|Assumptions|Constraints|Action items|Discussion
|Recommendations|Implementation|Rollout plan|Metrics|Costs|Alternatives considered""".replace(
    "\n", "").split("|")

HEADINGS_PT = """Contexto|Objetivos|Decisões|Próximos passos|Riscos|Cronograma|Resultados
|Pendências|Histórico|Referências|Análise|Conclusões|Premissas|Escopo|Custos|Discussão
|Recomendações|Implantação|Indicadores|Alternativas avaliadas""".replace("\n", "").split("|")

TYPE_WEIGHTS = [("note", 34), ("document", 22), ("concept", 12), ("event", 15),
                ("entity", 17)]
ENTITY_KINDS = [("person", 40), ("organization", 25), ("product", 18), ("place", 10),
                ("other", 7)]
LINK_COUNT_WEIGHTS = [15, 25, 25, 15, 9, 5, 3, 2, 1]  # 0..8 links, mean ~2.2
REL_WEIGHTS = [("related-to", 30), ("part-of", 12), ("mentioned-in", 9), ("author", 8),
               ("compared-with", 6), ("derived-from", 10), ("same-as", 2),
               ("discovered-shortcut", 5), ("succeeds", 11), ("supersedes", 7)]
SOURCES = [("manual", 40), ("ingest", 30), ("agent", 30)]

TYPE_TABLE = [
    ("branch", "a folder's `_index.md`", "—", "look"),
    ("note", "free text (default leaf)", "—", "pick"),
    ("document", "converted PDF/DOCX/etc.", "original in `_assets/` (optional)", "pick"),
    ("dataset", "tabular data", "sibling SQLite `.db`", "query"),
    ("entity", "person/org/product/place; requires `entity_kind` (person, organization, "
               "product, place, other)", "—", "pick"),
    ("concept", "definition or term", "—", "pick"),
    ("event", "something that happened on a date (a meeting, a decision, a release)", "—",
     "pick"),
    ("media", "image or audio with a textual description/transcript body",
     "original in `_assets/`", "pick"),
]
REL_TABLE = [
    ("part-of", "contains", "logical hierarchy (not folders)"),
    ("related-to", "related-to", "generic, symmetric"),
    ("mentioned-in", "mentions", "the entity is named by a document"),
    ("author", "author-of", "authorship"),
    ("compared-with", "compared-with", "contrast, symmetric"),
    ("derived-from", "origin-of", "provenance between nodes"),
    ("same-as", "same-as", "soft merge; never deletes"),
    ("discovered-shortcut", None, "created by graft; link confidence 0.5, discovered_by agent"),
    ("succeeds", "precedes", "temporal order, no judgement"),
    ("supersedes", "superseded-by", "replacement; harvest suppresses the target by default"),
]
GITIGNORE = "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n"

DATE_START = dt.date(2022, 1, 3).toordinal()
DATE_SPAN = 1640  # up to mid-2026
ZIPF_S, ZIPF_Q, TABLE_BITS = 1.2, 2.7, 20

# --------------------------------------------------------------------------------------
# Vocabulary: a few tens of thousands of tokens ranked for a Zipf-Mandelbrot draw
# --------------------------------------------------------------------------------------


def _plural(w: str) -> str:
    if w.endswith(("s", "x", "ch", "sh", "z")):
        return w + "es"
    if len(w) > 1 and w[-1] == "y" and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    return w + "s"


def _verb_forms(v: str) -> list[tuple[str, float]]:
    stem = v + v[-1] if v in DOUBLING else v
    if v.endswith("e"):
        ed, ing, er, able = v + "d", v[:-1] + "ing", v + "r", v[:-1] + "able"
    elif v[-1] == "y" and v[-2] not in "aeiou":
        ed, ing, er, able = v[:-1] + "ied", v + "ing", v[:-1] + "ier", v[:-1] + "iable"
    else:
        ed, ing, er, able = stem + "ed", stem + "ing", stem + "er", v + "able"
    return [(v, 1.0), (_plural(v), 1.8), (ed, 2.0), (ing, 2.4), (er, 5.0),
            (_plural(er), 7.0), (able, 9.0), (v + "ment", 12.0)]


def _adj_forms(a: str) -> list[tuple[str, float]]:
    if a.endswith("le"):
        ly = a[:-1] + "y"
    elif a.endswith("y"):
        ly = a[:-1] + "ily"
    elif a.endswith("ic"):
        ly = a + "ally"
    else:
        ly = a + "ly"
    forms = [(a, 1.0), (ly, 2.5), (a + "ness", 8.0)]
    if len(a) <= 5 and not a.endswith("e"):
        forms += [(a + "er", 6.0), (a + "est", 9.0)]
    return forms


def _syllable_names(rng: random.Random, n: int) -> list[str]:
    """Pronounceable invented names (places, brands, codenames)."""
    onsets = "b c d f g j k l m n p r s t v z br tr dr pl st ch".split()
    inner = onsets + ["lh", "nh", "rr", "ss", "qu"]
    vowels = ["a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou", "ia"]
    endings = ["", "", "", "", "n", "r", "s", "l", "x", "ão", "é", "á", "ó", "ia", "ana"]
    seen: dict[str, None] = {}
    while len(seen) < n:
        k = rng.randint(2, 3)
        parts = [rng.choice(onsets if i == 0 else inner) + rng.choice(vowels) for i in range(k)]
        name = "".join(parts)
        end = rng.choice(endings)
        if end and end[0] in "aeiouáéóã":
            name = name[:-1] if name[-1] in "aeiou" else name
        name = (name + end).capitalize()
        if 4 <= len(name) <= 11:
            seen[name] = None
    return list(seen)


@dataclass
class Vocab:
    """Ranked token lists and Zipf sampling tables for English and Portuguese prose."""

    en_table: list[str]
    pt_table: list[str]
    en_topics: list[str]
    pt_topics: list[str]
    en_nouns: list[str]
    idents: list[str]
    proper: list[str]


def _rank_scored(scored: list[tuple[float, str]], head: list[str]) -> list[str]:
    """Order tokens by score; function words lead but interleave with common roots."""
    scored = [((i + 1) * 0.2, w) for i, w in enumerate(head)] + scored
    ranked: list[str] = []
    seen: set[str] = set()
    for _, w in sorted(scored):
        if w not in seen:
            seen.add(w)
            ranked.append(w)
    return ranked


def _zipf_table(ranked: list[str]) -> list[str]:
    """Exactly 2**TABLE_BITS slots, each token at least once: a uniform slot is a Zipf draw."""
    size = 1 << TABLE_BITS
    weights = [(r + ZIPF_Q) ** -ZIPF_S for r in range(1, len(ranked) + 1)]
    total = sum(weights)
    counts = [max(1, int(size * p / total)) for p in weights]
    spare = size - sum(counts)
    for i in range(abs(spare)):  # settle rounding on the head, where it is invisible
        counts[i % 50] += 1 if spare > 0 else -1
    table: list[str] = []
    for w, c in zip(ranked, counts, strict=True):
        table.extend([w] * c)
    return table


def _english_scored(r: random.Random, proper: list[str]) -> list[tuple[float, str]]:
    scored: list[tuple[float, str]] = []
    roots = [("n", w) for w in EN_NOUNS] + [("v", w) for w in EN_VERBS] + \
            [("a", w) for w in EN_ADJECTIVES]
    r.shuffle(roots)
    for rank, (kind, root) in enumerate(roots, start=1):
        if kind == "n":
            forms = [(root, 1.0), (_plural(root), 1.6)]
            prefixes = EN_NOUN_PREFIXES
        elif kind == "v":
            forms = _verb_forms(root)
            prefixes = EN_VERB_PREFIXES
        else:
            forms = _adj_forms(root)
            prefixes = EN_ADJ_PREFIXES
        for form, pen in forms:
            scored.append(((rank + 15) * pen * r.uniform(0.7, 1.3), form))
            for i, pre in enumerate(prefixes):
                scored.append((rank * pen * (120 + 40 * i) * r.uniform(0.5, 2.0), pre + form))
    for i, name in enumerate(proper):
        scored.append(((i + 1) * 8.0 * r.uniform(0.5, 1.5) + 400, name))
    years = [str(y) for y in range(1998, 2031)]
    numbers = [str(n) for n in range(2, 400)] + [f"{n}%" for n in range(1, 100)]
    for i, tok in enumerate(years + numbers):
        scored.append((100 + i * 12.0 * r.uniform(0.5, 1.5), tok))
    return scored


def _portuguese_scored(r: random.Random, proper: list[str]) -> list[tuple[float, str]]:
    scored: list[tuple[float, str]] = []
    words = list(dict.fromkeys(PT_WORDS))
    r.shuffle(words)
    for rank, w in enumerate(words, start=1):
        scored.append((rank * r.uniform(0.7, 1.3), w))
        if not w.endswith(("s", "ão")):
            scored.append((rank * 3.0 * r.uniform(0.7, 1.3), w + "s"))
    stems = list(PT_STEMS)
    r.shuffle(stems)
    for rank, stem in enumerate(stems, start=1):
        for suf, pen in PT_SUFFIXES:
            scored.append((rank * pen * 2.5 * r.uniform(0.6, 1.4), stem + suf))
    for i, name in enumerate(proper[:1500]):
        scored.append(((i + 1) * 6.0 * r.uniform(0.5, 1.5) + 300, name))
    en = [w for w in EN_NOUNS[:200]]
    for i, w in enumerate(en):  # loanwords: the tech vocabulary crosses languages
        scored.append((300 + i * 6.0 * r.uniform(0.5, 1.5), w))
    for i, tok in enumerate([str(y) for y in range(2010, 2031)] + [str(n) for n in range(2, 200)]):
        scored.append((60 + i * 10.0 * r.uniform(0.5, 1.5), tok))
    return scored


@lru_cache(maxsize=1)
def vocab() -> Vocab:
    """Build the (seed-independent) vocabulary once per process."""
    r = random.Random(20260413)
    proper = _syllable_names(r, 3000)
    en_ranked = _rank_scored(_english_scored(r, proper), EN_FUNCTION)
    pt_ranked = _rank_scored(_portuguese_scored(r, proper), PT_FUNCTION)
    en_topics = [w for n in EN_NOUNS for w in (n, _plural(n))] + list(EN_ADJECTIVES) + \
        [f for v in EN_VERBS for f, pen in _verb_forms(v) if 1.5 < pen < 3]
    pt_topics = list(PT_WORDS) + [st + suf for st in PT_STEMS for suf in ("ação", "amento")]
    idents = sorted({w for w in EN_NOUNS + EN_VERBS if w.isascii()})
    return Vocab(
        en_table=_zipf_table(en_ranked), pt_table=_zipf_table(pt_ranked),
        en_topics=list(dict.fromkeys(en_topics)), pt_topics=list(dict.fromkeys(pt_topics)),
        en_nouns=list(EN_NOUNS), idents=idents, proper=proper,
    )


# --------------------------------------------------------------------------------------
# Small helpers: slugs, dates, YAML
# --------------------------------------------------------------------------------------

_SLUG_RUN = re.compile(r"[^a-z0-9]+")
_PLAIN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ_][\w .,/()'&+\-—]*")
_YAML_RESERVED = {"yes", "no", "true", "false", "on", "off", "null", "y", "n"}


def slugify(text: str, limit: int = 48) -> str:
    """Lowercase ASCII slug of ``[a-z0-9-]``, clipped at a hyphen near ``limit``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _SLUG_RUN.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > limit:
        cut = slug.rfind("-", 0, limit)
        slug = slug[: cut if cut > 8 else limit].strip("-")
    return slug or "node"


@lru_cache(maxsize=4096)
def day(ordinal: int) -> str:
    return dt.date.fromordinal(ordinal).isoformat()


def _yaml_scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    s = str(value)
    if _PLAIN.fullmatch(s) and not s.endswith(" ") and s.lower() not in _YAML_RESERVED:
        return s
    return json.dumps(s, ensure_ascii=False)


def render_frontmatter(fm: dict) -> str:
    """Block YAML in insertion order; keys ``created``/``updated`` are quoted dates."""
    out: list[str] = []
    for key, value in fm.items():
        if key in ("created", "updated"):
            out.append(f"{key}: '{value}'")
        elif isinstance(value, list):
            out.append(f"{key}:")
            for item in value:
                if isinstance(item, dict):
                    pairs = list(item.items())
                    out.append(f"- {pairs[0][0]}: {_yaml_scalar(pairs[0][1])}")
                    out.extend(f"  {k}: {_yaml_scalar(v)}" for k, v in pairs[1:])
                else:
                    out.append(f"- {_yaml_scalar(item)}")
        else:
            out.append(f"{key}: {_yaml_scalar(value)}")
    return "\n".join(out)


def render_node(fm: dict, body: str) -> bytes:
    return f"---\n{render_frontmatter(fm)}\n---\n\n{body.rstrip()}\n".encode()


def _clip(text: str, limit: int = 200) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[:cut].rstrip(",;:—- ") + "."


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def _weighted(rng: random.Random, pairs: list[tuple[str, int]]) -> str:
    return rng.choices([p[0] for p in pairs], [p[1] for p in pairs])[0]


# --------------------------------------------------------------------------------------
# The plan: branches, leaves, titles, summaries
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Branch:
    id: str
    folder: str
    title: str
    summary: str
    level: int
    top: int
    topics: list[str]
    tags: list[str]
    subs: list[Branch] = field(default_factory=list)
    leaves: list[Leaf] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    created: int = 0
    updated: int = 0


@dataclass(slots=True)
class Leaf:
    id: str
    type: str
    title: str
    summary: str
    created: int
    updated: int
    lang: str
    topics: list[str]
    tags: list[str]
    aliases: list[str]
    top: int
    source: str
    entity_kind: str | None = None
    dataset: list[dict] | None = None
    links: list[dict] = field(default_factory=list)


def _fan_out(nodes: int) -> tuple[int, float]:
    top = round(10 + 5 * (math.log10(nodes) - 3))
    top = max(1, min(min(20, max(10, top)), (nodes - 2) // 12))
    target = nodes / 42 / top  # branches per top-level subtree
    r = (-1 + math.sqrt(max(1.0, 4 * target - 3))) / 2
    return top, max(1.0, r)


def _branch_meta(rng: random.Random, v: Vocab, parent: Branch, name: str | None):
    topics = [rng.choice(v.en_topics) for _ in range(4)]
    if rng.random() < 0.3:
        topics[rng.randrange(1, 4)] = rng.choice(v.proper)
    if name:
        title = _cap(name)
    elif rng.random() < 0.6:
        title = f"{_cap(rng.choice(EN_ADJECTIVES + EN_NOUNS))} {rng.choice(EN_NOUNS)}"
    else:
        title = _cap(rng.choice(EN_NOUNS + v.proper[:300]))
    topics[0] = title.split()[-1].lower() if name is None else name
    area = f"the {parent.title} area" if parent.title else "the whole organisation"
    templates = [
        f"{title}: {topics[1]}, {topics[2]} and {topics[3]} material from {area}.",
        f"Everything about {topics[0]} and {topics[2]} in {area}; start here for {topics[3]}.",
        f"{title} work: {topics[2]} records, {topics[3]} decisions and related {topics[1]} notes.",
    ]
    summary = _clip(rng.choice(templates))
    tags = rng.sample(TAG_VOCAB, 3)
    return title, summary, topics, tags


def _new_branch(rng, v, parent: Branch, level: int, top: int, name: str | None) -> Branch:
    title, summary, topics, tags = _branch_meta(rng, v, parent, name)
    slug = slugify(name or title, 32)
    base, n = slug, 2
    while slug in parent.used:
        slug, n = f"{base}-{n}", n + 1
    parent.used.add(slug)
    folder = f"{parent.folder}{slug}/"
    b = Branch(id=f"{folder}_index", folder=folder, title=title, summary=summary,
               level=level, top=top, topics=topics, tags=tags)
    parent.subs.append(b)
    return b


def plan_branches(rng: random.Random, v: Vocab, nodes: int) -> tuple[Branch, list[Branch]]:
    """Root plus three levels of branches; returns (root, the other branches in DFS order)."""
    n_top, r = _fan_out(nodes)
    lo, hi = max(1, math.floor(r * 0.6)), max(1, math.ceil(r * 1.4))
    root = Branch(id="_index", folder="", title="", summary="", level=0, top=-1,
                  topics=[], tags=[])
    names = rng.sample(TOP_BRANCHES, n_top) if n_top <= len(TOP_BRANCHES) else None
    ordered: list[Branch] = []
    for t in range(n_top):
        b1 = _new_branch(rng, v, root, 1, t, names[t] if names else None)
        ordered.append(b1)
        for _ in range(rng.randint(lo, hi)):
            b2 = _new_branch(rng, v, b1, 2, t, None)
            ordered.append(b2)
            for _ in range(rng.randint(lo, hi)):
                ordered.append(_new_branch(rng, v, b2, 3, t, None))
    return root, ordered


def allocate_leaves(rng: random.Random, root: Branch, branches: list[Branch],
                    n_leaves: int) -> list[int]:
    """Leaf count per branch (root first): deeper branches hold more."""
    n_root = min(3, n_leaves // 50)
    rest = n_leaves - n_root
    level_w = {1: 0.3, 2: 0.65, 3: 1.0}
    weights = [level_w[b.level] * rng.uniform(0.6, 1.4) for b in branches]
    total = sum(weights)
    counts = [int(rest * w / total) for w in weights]
    for i in rng.sample(range(len(branches)), rest - sum(counts)):
        counts[i] += 1
    return [n_root] + counts


_EVENT_KINDS_EN = ["review", "kickoff", "release", "meeting", "decision", "incident",
                   "workshop", "audit", "launch", "retrospective"]
_EVENT_KINDS_PT = ["Reunião", "Lançamento", "Decisão", "Revisão", "Oficina", "Auditoria"]
_ORG_SUFFIX = ["Labs", "Ltda", "Logística", "Systems", "Group", "Cooperativa", "Holdings",
               "Partners", "Indústria", "Works"]
_ROLES = ["analyst", "engineer", "account manager", "researcher", "coordinator",
          "designer", "auditor", "lawyer", "operator", "director"]


def _entity_title(rng: random.Random, v: Vocab, kind: str, topics: list[str]):
    if kind == "person":
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        title = f"{first} {last}"
        aliases = [f"{first[0]}. {last}"] if rng.random() < 0.5 else []
        summary = (f"{_cap(rng.choice(_ROLES))} working on {topics[0]} and {topics[1]}; "
                   f"based in {rng.choice(CITIES)} and reachable for {topics[2]} questions.")
    elif kind == "organization":
        title = f"{rng.choice(v.proper)} {rng.choice(_ORG_SUFFIX)}"
        aliases = ["".join(p[0] for p in title.split()).upper()] if rng.random() < 0.5 else []
        summary = (f"Organization that supplies {topics[0]} and {topics[1]}; main "
                   f"counterpart for {topics[2]} in {rng.choice(CITIES)}.")
    elif kind == "product":
        title = f"{rng.choice(v.proper)} {rng.choice('XSRTM')}{rng.randint(10, 990)}"
        aliases = [title.split()[0].lower()] if rng.random() < 0.4 else []
        summary = (f"Product line for {topics[0]} {topics[1]}; current version "
                   f"{rng.randint(1, 9)}.{rng.randint(0, 20)} with {topics[2]} support.")
    elif kind == "place":
        site = rng.choice(["warehouse", "plant", "office", "depot", "lab"])
        title = f"{rng.choice(CITIES)} {site}"
        aliases = []
        summary = f"Site used for {topics[0]} and {topics[1]}, with {topics[2]} on site."
    else:
        title = f"{_cap(topics[0])} {topics[1]} registry"
        aliases = []
        summary = f"Reference entity grouping {topics[0]}, {topics[1]} and {topics[2]} records."
    return title, summary, aliases


def _leaf_title(rng: random.Random, ltype: str, lang: str, t: list[str], when: int):
    a, b, c, d = t[0], t[1], t[2], t[3]
    year = day(when)[:4]
    if lang == "pt":
        table = {
            "note": [f"Notas sobre {a} {b}", f"{_cap(a)} e {b}", f"Anotações de {a}"],
            "document": [f"Relatório de {a} {b}", f"Manual de {a}", f"Proposta de {a} {b}"],
            "concept": [f"{_cap(a)} {b}", _cap(a)],
            "event": [f"{rng.choice(_EVENT_KINDS_PT)} de {a} — {day(when)}"],
            "dataset": [f"{_cap(a)} {b} {year}"],
        }
        summ = [f"Registro de {a} e {b} com pontos sobre {c} e {d}.",
                f"{_cap(a)}: {b}, {c} e {d} para a equipe, com dados de {year}."]
    else:
        table = {
            "note": [f"{_cap(a)} {b} notes", f"Notes on {a} {b}", f"{_cap(a)} and {b}",
                     f"Working notes: {a} {b}", f"{_cap(a)} follow-up"],
            "document": [f"{_cap(a)} {b} report", f"{_cap(a)} {b} specification",
                         f"{_cap(a)} {b} handbook", f"Proposal for {a} {b}",
                         f"{_cap(a)} {b} review {year}", f"{_cap(a)} {b} guidelines"],
            "concept": [f"{_cap(a)} {b}", _cap(a), f"{_cap(a)} {b} model",
                        f"{_cap(a)} principle"],
            "event": [f"{_cap(a)} {b} {rng.choice(_EVENT_KINDS_EN)} — {day(when)}"],
            "dataset": [f"{_cap(a)} {b} {year}", f"{_cap(a)} {b} ledger",
                        f"{_cap(a)} metrics"],
        }
        summ = [f"Working notes on {a} and {b}, with open points about {c} and {d}.",
                f"Covers {a}, {b} and {c}; includes figures for {year} and advice on {d}.",
                f"How {a} relates to {b} and {c}, and what changes for {d}.",
                f"{_cap(a)} {b} in practice: {c} first, then {d}, with the numbers from {year}."]
    title = rng.choice(table[ltype])
    return title, rng.choice(summ)


def make_leaf(rng: random.Random, v: Vocab, br: Branch, ltype: str, created: int,
              top: int) -> Leaf:
    lang = "pt" if rng.random() < 0.15 else "en"
    pool = v.pt_topics if lang == "pt" else v.en_topics
    own = [rng.choice(pool) for _ in range(rng.randint(2, 4))]
    if rng.random() < 0.2:
        own[-1] = rng.choice(v.proper)
    topics = own + (rng.sample(br.topics, 2) if br.topics else own) + [rng.choice(pool)]
    kind = None
    aliases: list[str] = []
    if ltype == "entity":
        kind = _weighted(rng, ENTITY_KINDS)
        title, summary, aliases = _entity_title(rng, v, kind, topics)
    else:
        title, summary = _leaf_title(rng, ltype, lang, topics, created)
        if rng.random() < 0.15:
            words = title.split()
            aliases = ["".join(w[0] for w in words).upper()] if len(words) > 1 else []
            if rng.random() < 0.5:
                aliases.append(f"{topics[0]} {topics[-1]}")
    tags = list(dict.fromkeys(rng.sample(br.tags, min(len(br.tags), rng.randint(0, 2))) +
                              rng.sample(TAG_VOCAB, rng.randint(1, 2))))[:4]
    slug = slugify(title)
    base, n = slug, 2
    while slug in br.used:
        slug, n = f"{base}-{n}", n + 1
    br.used.add(slug)
    updated = created if rng.random() < 0.4 else created + rng.randint(
        0, max(0, min(400, DATE_START + DATE_SPAN - created)))
    return Leaf(id=f"{br.folder}{slug}", type=ltype, title=title, summary=_clip(summary),
                created=created, updated=updated, lang=lang, topics=topics, tags=tags,
                aliases=list(dict.fromkeys(a for a in aliases if a)), top=top,
                source=_weighted(rng, SOURCES), entity_kind=kind)


def plan_leaves(rng: random.Random, v: Vocab, root: Branch, branches: list[Branch],
                n_leaves: int) -> list[Leaf]:
    """Create every leaf's metadata; dataset leaves are chosen up front (~2%)."""
    counts = allocate_leaves(rng, root, branches, n_leaves)
    n_data = max(1, round(n_leaves * 0.02))
    data_idx = set(rng.sample(range(n_leaves), n_data))
    leaves: list[Leaf] = []
    for br, count in zip([root] + branches, counts, strict=True):
        dates = sorted(DATE_START + rng.randrange(DATE_SPAN) for _ in range(count))
        for created in dates:
            ltype = "dataset" if len(leaves) in data_idx else _weighted(rng, TYPE_WEIGHTS)
            leaf = make_leaf(rng, v, br, ltype, created, max(br.top, 0))
            br.leaves.append(leaf)
            leaves.append(leaf)
    return leaves


def date_branches(rng: random.Random, root: Branch, branches: list[Branch]) -> None:
    """Branches are planted before their children; the last plant re-renders the index."""
    for b in reversed(branches):
        child = [x.created for x in b.leaves] + [s.created for s in b.subs]
        b.created = (min(child) if child else DATE_START + rng.randrange(DATE_SPAN)) - \
            rng.randint(0, 20)
        b.created = max(DATE_START - 30, b.created)
        b.updated = max([b.created] + child)
    child = [x.created for x in root.leaves] + [s.created for s in root.subs]
    root.created = min(child) - 1
    root.updated = max(child)


# --------------------------------------------------------------------------------------
# Links
# --------------------------------------------------------------------------------------


@dataclass
class Pools:
    """Candidate link targets, by top-level branch and by kind."""

    by_top: list[list[int]]
    persons: list[int]
    docs_by_top: list[list[int]]
    branch_ids: list[str]


def build_pools(leaves: list[Leaf], branches: list[Branch], n_top: int) -> Pools:
    by_top: list[list[int]] = [[] for _ in range(n_top)]
    docs: list[list[int]] = [[] for _ in range(n_top)]
    persons: list[int] = []
    for i, leaf in enumerate(leaves):
        by_top[leaf.top].append(i)
        if leaf.type in ("document", "note"):
            docs[leaf.top].append(i)
        if leaf.entity_kind == "person":
            persons.append(i)
    return Pools(by_top, persons, docs, [b.id for b in branches])


def _pick_target(rng, rel: str, leaf: Leaf, leaves: list[Leaf], pools: Pools) -> str:
    if rel == "author" and pools.persons:
        return leaves[rng.choice(pools.persons)].id
    if rel == "mentioned-in" and pools.docs_by_top[leaf.top]:
        return leaves[rng.choice(pools.docs_by_top[leaf.top])].id
    x = rng.random()
    if x < 0.05:
        return rng.choice(pools.branch_ids)
    if x < 0.6 and len(pools.by_top[leaf.top]) > 1:
        return leaves[rng.choice(pools.by_top[leaf.top])].id
    return leaves[rng.randrange(len(leaves))].id


_REL_NAMES = [r for r, _ in REL_WEIGHTS]
_REL_CUM = [sum(w for _, w in REL_WEIGHTS[: i + 1]) for i in range(len(REL_WEIGHTS))]
_LINK_NOTES = ["same figures, different period", "context for the decision",
               "source of the numbers", "see the appendix", "older draft",
               "cited in the summary", "proposed during review"]


def make_links(rng: random.Random, leaf: Leaf, leaves: list[Leaf], pools: Pools,
               degree: dict[str, int]) -> None:
    """0-8 typed links, unique per (rel, target), never to the node itself."""
    want = rng.choices(range(9), LINK_COUNT_WEIGHTS)[0]
    seen: set[tuple[str, str]] = set()
    tries = 0
    while len(leaf.links) < want and tries < want * 4:
        tries += 1
        rel = rng.choices(_REL_NAMES, cum_weights=_REL_CUM)[0]
        if rel == "mentioned-in" and leaf.type != "entity":
            rel = "related-to"
        target = _pick_target(rng, rel, leaf, leaves, pools)
        if target == leaf.id or (rel, target) in seen:
            continue
        seen.add((rel, target))
        link: dict = {"rel": rel, "target": target}
        if rel == "discovered-shortcut":
            link.update(confidence=0.5, discovered_by="agent")
        elif rng.random() < 0.04:
            link.update(confidence=0.3, discovered_by="agent")
        if rng.random() < 0.05:
            link["note"] = rng.choice(_LINK_NOTES)
        leaf.links.append(link)
        degree[leaf.id] = degree.get(leaf.id, 0) + 1
        degree[target] = degree.get(target, 0) + 1


# --------------------------------------------------------------------------------------
# Prose
# --------------------------------------------------------------------------------------

_LEN_WEIGHTS = [1, 2, 3, 5, 6, 8, 9, 10, 10, 10, 9, 8, 7, 6, 5, 4, 3, 3, 2, 2, 1, 1, 1]
_LEN_TABLE = [n for n, w in enumerate(_LEN_WEIGHTS, start=4) for _ in range(w)]
_CODE_FORMATS = ["INV-{y}-{n4}", "SKU-{n5}", "PO-{n6}", "TCK-{n5}", "CTR-{y}-{n3}",
                 "NF-{n4}", "REQ-{n4}"]


def make_code(rng: random.Random) -> str:
    return rng.choice(_CODE_FORMATS).format(
        y=rng.randint(2019, 2026), n3=f"{rng.randint(1, 999):03d}",
        n4=f"{rng.randint(1, 9999):04d}", n5=rng.randint(10000, 99999),
        n6=rng.randint(100000, 999999))


class Prose:
    """Markdown bodies drawn from a Zipf vocabulary, with a few per-node topic words."""

    def __init__(self, rng: random.Random, v: Vocab):
        self.rng, self.v = rng, v
        self.count = 0
        self.pending: list[tuple[int, str]] = []

    def sentence(self, table: list[str], topics: list[str]) -> str:
        r, rand, bits = self.rng, self.rng.random, self.rng.getrandbits
        n = _LEN_TABLE[int(rand() * len(_LEN_TABLE))]
        ws = [table[bits(TABLE_BITS)] for _ in range(n)]
        if rand() < 0.55:
            ws[int(rand() * n)] = topics[int(rand() * len(topics))]
        if n > 9 and rand() < 0.45:
            ws[2 + int(rand() * (n - 4))] += ","
        if self.pending and self.count >= self.pending[-1][0]:
            ws.insert(r.randrange(1, n), self.pending.pop()[1])
        ws[0] = _cap(ws[0])
        self.count += n
        x = r.random()
        return " ".join(ws) + ("." if x < 0.94 else "?" if x < 0.97 else "!")

    def paragraph(self, table: list[str], topics: list[str]) -> str:
        return " ".join(self.sentence(table, topics) for _ in range(self.rng.randint(2, 6)))

    def bullets(self, table: list[str], topics: list[str]) -> str:
        r = self.rng
        items = []
        numbered = r.random() < 0.25
        for i in range(r.randint(3, 6)):
            ws = r.choices(table, k=r.randint(3, 10))
            if r.random() < 0.5:
                ws[0] = r.choice(topics)
            self.count += len(ws)
            text = _cap(" ".join(ws))
            if r.random() < 0.3:
                head, _, rest = text.partition(" ")
                text = f"**{head}**: {rest}" if rest else text
            items.append(f"{i + 1}. {text}" if numbered else f"- {text}")
        return "\n".join(items)

    def code_block(self) -> str:
        r, ids = self.rng, self.v.idents
        a, b, c, d = (r.choice(ids) for _ in range(4))
        lang = r.choice(["python", "sql", "bash", "json", "yaml"])
        if lang == "python":
            code = (f"def {a}_{b}({c}, {d}=None):\n    total = 0\n    for row in {c}:\n"
                    f"        total += row.get(\"{d}\", {r.randint(0, 9)})\n    return total")
        elif lang == "sql":
            code = (f"SELECT {a}, SUM({b}) AS total\nFROM {c}_{d}\n"
                    f"WHERE {d} >= '{day(DATE_START + r.randrange(DATE_SPAN))}'\n"
                    f"GROUP BY {a}\nORDER BY total DESC;")
        elif lang == "bash":
            code = f"./scripts/{a}-{b}.sh --{c} {r.randint(1, 500)} --{d} {r.choice(ids)}"
        elif lang == "json":
            code = json.dumps({a: b, c: r.randint(0, 9999), d: [r.randint(0, 99)] * 2})
        else:
            code = f"{a}:\n  {b}: {r.randint(1, 100)}\n  {c}: {d}"
        return f"```{lang}\n{code}\n```"

    def heading(self, lang: str, topics: list[str]) -> str:
        r = self.rng
        if r.random() < 0.6:
            return r.choice(HEADINGS_PT if lang == "pt" else HEADINGS_EN)
        return f"{_cap(r.choice(topics))} {r.choice(self.v.en_nouns)}" if lang == "en" \
            else f"{_cap(r.choice(topics))} e {r.choice(topics)}"

    def body(self, leaf: Leaf, inserts: list[str], words: int) -> str:
        """H1, an intro, 2-8 H2/H3 sections of paragraphs, lists and maybe code."""
        r = self.rng
        table = self.v.pt_table if leaf.lang == "pt" else self.v.en_table
        self.count = 0
        self.pending = sorted(((r.randrange(words), s) for s in inserts), reverse=True)
        n_sec = max(2, min(8, round(words / 260) + r.randint(-1, 1)))
        per_sec = words / (n_sec + 0.5)
        code_at = r.randrange(n_sec) if r.random() < 0.12 else -1
        parts = [f"# {leaf.title}", self.paragraph(table, leaf.topics)]
        for s in range(n_sec):
            level = "###" if s and r.random() < 0.3 else "##"
            parts.append(f"{level} {self.heading(leaf.lang, leaf.topics)}")
            goal = self.count + per_sec
            list_done = r.random() > 0.3
            while self.count < goal:
                parts.append(self.paragraph(table, leaf.topics))
                if not list_done and r.random() < 0.5:
                    parts.append(self.bullets(table, leaf.topics))
                    list_done = True
            if s == code_at:
                parts.append(self.code_block())
        if self.pending:
            parts.append(" ".join(s for _, s in self.pending) + ".")
        return "\n\n".join(parts)


def _inserts(rng: random.Random, leaf: Leaf, all_ids: list[str]) -> list[str]:
    out: list[str] = []
    if rng.random() < 0.25:
        out += [make_code(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.5:
        targets = [lk["target"] for lk in leaf.links][:2]
        targets += [rng.choice(all_ids) for _ in range(rng.randint(0, 2))]
        for t in targets:
            if t == leaf.id:
                continue
            out.append(f"[[{t}]]" if rng.random() < 0.75 else f"[[{t}|{t.rsplit('/', 1)[-1]}]]")
    return out


# --------------------------------------------------------------------------------------
# Datasets
# --------------------------------------------------------------------------------------

REGIONS = ["Norte", "Nordeste", "Sudeste", "Sul", "Centro-Oeste", "EMEA", "APAC", "LATAM"]
REGION_W = [6, 14, 30, 16, 8, 12, 8, 6]
STATUSES = ["open", "closed", "pending", "cancelled", "refunded"]
CHANNELS = ["direct", "partner", "online", "tender"]

# name -> [(column, SQL type, generator key)], first column is the key
TEMPLATES: dict[str, list[tuple[str, str, str]]] = {
    "orders": [("order_id", "INTEGER", "seq"), ("region", "TEXT", "region"),
               ("customer", "TEXT", "customer"), ("value_cents", "INTEGER", "cents"),
               ("closed_at", "TEXT", "date"), ("channel", "TEXT", "channel"),
               ("product_sku", "TEXT", "sku"), ("quantity", "INTEGER", "qty"),
               ("discount", "REAL", "ratio"), ("status", "TEXT", "status"),
               ("sales_rep", "TEXT", "person"), ("currency", "TEXT", "currency")],
    "invoices": [("invoice_no", "TEXT", "invoice"), ("customer", "TEXT", "customer"),
                 ("amount_cents", "INTEGER", "cents"), ("issued_at", "TEXT", "date"),
                 ("status", "TEXT", "status"), ("due_days", "INTEGER", "qty"),
                 ("tax_rate", "REAL", "ratio"), ("region", "TEXT", "region")],
    "inventory": [("sku", "TEXT", "sku"), ("product", "TEXT", "word"),
                  ("warehouse", "TEXT", "city"), ("qty_on_hand", "INTEGER", "qty"),
                  ("unit_price", "REAL", "price"), ("counted_at", "TEXT", "date"),
                  ("reorder_level", "INTEGER", "qty"), ("supplier", "TEXT", "customer")],
    "shipments": [("shipment_id", "INTEGER", "seq"), ("origin", "TEXT", "city"),
                  ("destination", "TEXT", "city"), ("weight_kg", "REAL", "price"),
                  ("shipped_at", "TEXT", "datetime"), ("carrier", "TEXT", "customer"),
                  ("status", "TEXT", "status"), ("cost_cents", "INTEGER", "cents")],
    "tickets": [("ticket_id", "INTEGER", "seq"), ("opened_at", "TEXT", "datetime"),
                ("severity", "INTEGER", "sev"), ("product", "TEXT", "word"),
                ("summary", "TEXT", "phrase"), ("resolved", "INTEGER", "bool"),
                ("assignee", "TEXT", "person"), ("region", "TEXT", "region")],
    "sensor_readings": [("reading_id", "INTEGER", "seq"), ("device", "TEXT", "sku"),
                        ("read_at", "TEXT", "datetime"), ("temperature", "REAL", "temp"),
                        ("humidity", "REAL", "ratio"), ("battery", "REAL", "ratio"),
                        ("site", "TEXT", "city")],
    "employees": [("employee_id", "INTEGER", "seq"), ("name", "TEXT", "person"),
                  ("department", "TEXT", "word"), ("city", "TEXT", "city"),
                  ("hired_at", "TEXT", "date"), ("salary_cents", "INTEGER", "cents"),
                  ("active", "INTEGER", "bool"), ("manager", "TEXT", "person")],
    "payments": [("payment_id", "INTEGER", "seq"), ("invoice_no", "TEXT", "invoice"),
                 ("paid_at", "TEXT", "date"), ("amount_cents", "INTEGER", "cents"),
                 ("method", "TEXT", "channel"), ("currency", "TEXT", "currency")],
    "experiments": [("run_id", "INTEGER", "seq"), ("variant", "TEXT", "word"),
                    ("started_at", "TEXT", "datetime"), ("score", "REAL", "ratio"),
                    ("samples", "INTEGER", "qty"), ("notes", "TEXT", "phrase"),
                    ("owner", "TEXT", "person")],
}


class ColumnGen:
    """Column generators producing whole lists (fast bulk rows for executemany)."""

    def __init__(self, rng: random.Random, v: Vocab):
        self.r, self.v = rng, v
        self.customers = [f"{p} {s}" for p in v.proper[:300] for s in _ORG_SUFFIX[:2]]
        self.people = [f"{f} {ln}" for f in FIRST_NAMES[:40] for ln in LAST_NAMES[:25]]
        self.dates = [day(DATE_START + i) for i in range(DATE_SPAN)]

    def column(self, key: str, n: int, start: int) -> list:
        r = self.r
        if key == "seq":
            return list(range(start + 1, start + n + 1))
        if key == "region":
            return r.choices(REGIONS, REGION_W, k=n)
        if key in ("customer", "person", "city", "word", "channel", "status", "currency"):
            pool = {"customer": self.customers, "person": self.people, "city": CITIES,
                    "word": self.v.idents, "channel": CHANNELS, "status": STATUSES,
                    "currency": ["BRL", "EUR", "USD"]}[key]
            return [pool[int(len(pool) * r.random() ** 2)] for _ in range(n)]
        if key == "cents":
            return [int(r.lognormvariate(9.5, 1.1)) for _ in range(n)]
        if key == "date":
            return r.choices(self.dates, k=n)
        if key == "datetime":
            return [f"{d}T{r.randrange(24):02d}:{r.randrange(60):02d}:00"
                    for d in r.choices(self.dates, k=n)]
        if key == "sku":
            return [f"SKU-{r.randint(10000, 99999)}" for _ in range(n)]
        if key == "invoice":
            return [f"INV-{2022 + (start + i) % 5}-{(start + i) % 10000:04d}" for i in range(n)]
        return self._numeric(key, n)

    def _numeric(self, key: str, n: int) -> list:
        r = self.r
        if key == "qty":
            return [r.randint(0, 500) for _ in range(n)]
        if key == "ratio":
            return [round(r.random(), 3) for _ in range(n)]
        if key == "price":
            return [round(r.uniform(0.5, 2500.0), 2) for _ in range(n)]
        if key == "temp":
            return [round(r.gauss(24.0, 6.0), 2) for _ in range(n)]
        if key == "sev":
            return [r.randint(1, 4) for _ in range(n)]
        if key == "bool":
            return [int(r.random() < 0.7) for _ in range(n)]
        if key == "phrase":
            return [" ".join(r.choices(self.v.en_table, k=r.randint(3, 9))) for _ in range(n)]
        raise KeyError(key)


def plan_dataset(rng: random.Random, big: bool, first: bool, max_rows: int) -> list[dict]:
    """1-3 tables of 3-12 columns; a big dataset has one table of exactly ``max_rows``."""
    names = rng.sample(sorted(TEMPLATES), rng.randint(1, 3))
    if first:
        names = ["orders"] + [n for n in names if n != "orders"][:2]
    cap = min(max_rows, 5000)
    tables = []
    for i, name in enumerate(names):
        cols = TEMPLATES[name]
        lo = 5 if name == "orders" and first else 3
        k = rng.randint(lo, len(cols))
        rows = round(math.exp(rng.uniform(math.log(10), math.log(max(10, cap)))))
        if big and i == 0:
            rows = max_rows
        tables.append({"name": name, "columns": cols[:k], "rows": max(10, min(rows, max_rows))})
    return tables


def build_sqlite(path: Path, tables: list[dict], gen: ColumnGen) -> list[list[tuple]]:
    """Create the payload in one transaction; returns the first 3 rows of each table."""
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path, isolation_level=None)
    samples = []
    try:
        con.execute("PRAGMA journal_mode=MEMORY")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("BEGIN")
        for t in tables:
            cols = ", ".join(f"{c} {ty}" for c, ty, _ in t["columns"])
            con.execute(f"CREATE TABLE {t['name']} ({cols})")
            marks = ", ".join("?" * len(t["columns"]))
            sql = f"INSERT INTO {t['name']} VALUES ({marks})"
            for start in range(0, t["rows"], 50_000):
                n = min(50_000, t["rows"] - start)
                data = [gen.column(key, n, start) for _, _, key in t["columns"]]
                con.executemany(sql, zip(*data, strict=True))
        con.execute("COMMIT")
        for t in tables:
            samples.append(con.execute(f"SELECT * FROM {t['name']} LIMIT 3").fetchall())
    finally:
        con.close()
    return samples


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return f"<blob {len(value)} bytes>"
    text = " ".join(str(value).split())
    if len(text) > 120:
        text = text[:120] + "…"
    return text.replace("|", "\\|")


def dataset_sections(tables: list[dict], samples: list[list[tuple]]) -> str:
    """The generated ``## Query manual`` and ``## Sample rows`` sections."""
    lines = ["## Query manual", "", "Tables:"]
    for t in tables:
        cols = ", ".join(f"{c} {ty}" for c, ty, _ in t["columns"])
        lines.append(f"- `{t['name']}({cols})`")
    lines += ["", "Example queries:"]
    for t in tables:
        lines.append(f"- `SELECT * FROM {t['name']} LIMIT 5`")
        lines.append(f"- `SELECT COUNT(*) FROM {t['name']}`")
    lines += ["", "## Sample rows"]
    for t, rows in zip(tables, samples, strict=True):
        n = t["rows"]
        cols = [c for c, _, _ in t["columns"]][:12]
        lines += ["", f"### {t['name']} — {n} {'row' if n == 1 else 'rows'}", ""]
        if not rows:
            lines.append("_No rows._")
            continue
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("| " + " | ".join("---" for _ in cols) + " |")
        for row in rows:
            lines.append("| " + " | ".join(_cell(x) for x in row[:12]) + " |")
    return "\n".join(lines)


def dataset_summary(title: str, tables: list[dict], topics: list[str]) -> str:
    total = sum(t["rows"] for t in tables)
    names = ", ".join(t["name"] for t in tables)
    cols = ", ".join(c for c, _, _ in tables[0]["columns"][1:4])
    return _clip(f"{title}: {total} rows in {names}, with {cols}; "
                 f"used for {topics[0]} and {topics[1]} analysis.")


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


class Writer:
    """Writes files under ``out`` on a few threads and counts markdown bytes.

    File creation dominates on some filesystems and releases the GIL, so it overlaps
    with generation. At most ``backlog`` files wait in memory.
    """

    def __init__(self, out: Path, threads: int = 6, backlog: int = 512):
        self.out = out
        self.md_bytes = 0
        self.md_files = 0
        self._pool = ThreadPoolExecutor(max_workers=threads)
        self._slots = threading.BoundedSemaphore(backlog)
        self._errors: list[BaseException] = []

    def _write(self, path: Path, data: bytes) -> None:
        try:
            path.write_bytes(data)
        except BaseException as e:  # re-raised by close()
            self._errors.append(e)
        finally:
            self._slots.release()

    def md(self, node_id: str, fm: dict, body: str) -> None:
        data = render_node(fm, body)
        self._slots.acquire()
        self._pool.submit(self._write, self.out / f"{node_id}.md", data)
        self.md_bytes += len(data)
        self.md_files += 1

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        if self._errors:
            raise self._errors[0]


def leaf_frontmatter(leaf: Leaf, payload: tuple[str, str] | None) -> dict:
    fm: dict = {"id": leaf.id, "type": leaf.type, "title": leaf.title,
                "summary": leaf.summary, "created": day(leaf.created),
                "updated": day(leaf.updated)}
    if leaf.tags:
        fm["tags"] = leaf.tags
    if leaf.aliases:
        fm["aliases"] = leaf.aliases
    if leaf.links:
        fm["links"] = leaf.links
    fm["source"] = leaf.source
    if leaf.source == "ingest":
        fm["confidence"] = 0.7
        if leaf.type == "document":
            fm["origin"] = f"file:///srv/inbox/{leaf.id.rsplit('/', 1)[-1]}.pdf"
    if leaf.entity_kind:
        fm["entity_kind"] = leaf.entity_kind
    if payload:
        fm.update(payload=payload[0], payload_type="sqlite", payload_hash=payload[1])
    return fm


def write_leaf(w: Writer, rng: random.Random, prose: Prose, leaf: Leaf, all_ids: list[str],
               gen_seed: str, max_rows: int) -> int:
    """Write one leaf (and its payload); returns the number of dataset rows written."""
    inserts = _inserts(rng, leaf, all_ids)
    if leaf.type != "dataset":
        body = prose.body(leaf, inserts, rng.randint(200, 2000))
        w.md(leaf.id, leaf_frontmatter(leaf, None), body)
        return 0
    table = prose.v.pt_table if leaf.lang == "pt" else prose.v.en_table
    prose.count, prose.pending = 0, []
    intro = prose.paragraph(table, leaf.topics)
    notes = prose.paragraph(table, leaf.topics)
    if inserts:
        notes += " " + " ".join(inserts) + "."
    name = leaf.id.rsplit("/", 1)[-1] + ".db"
    path = w.out / f"{leaf.id}.db"
    samples = build_sqlite(path, leaf.dataset or [], ColumnGen(random.Random(gen_seed), prose.v))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    body = "\n\n".join([f"# {leaf.title}", intro,
                        dataset_sections(leaf.dataset or [], samples), "## Notes", notes])
    w.md(leaf.id, leaf_frontmatter(leaf, (name, digest)), body)
    return sum(t["rows"] for t in leaf.dataset or [])


def _cross_trails(rng: random.Random, b: Branch, targets: list[Branch]) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 2)):
        t = rng.choice(targets)
        if t is b:
            continue
        word = rng.choice(t.topics)
        lines.append(f"- {_cap(word)} context lives with {t.title} → [[{t.id}]]")
    return lines


def index_body(b: Branch, title: str, summary: str, cross: list[str],
               landmarks: list[str] | None) -> str:
    sections = [f"# {title}", f"> {summary}"]
    subs = [f"- [[{s.id}]] — {s.summary}" for s in b.subs]
    leaves = [f"- [[{x.id}]] — {x.summary}" for x in b.leaves]
    for name, lines in (("Sub-branches", subs), ("Direct bananas", leaves),
                        ("Cross trails", cross)):
        sections.append("\n".join([f"## {name}"] + lines))
    if landmarks is not None:
        sections.append("\n".join(["## Landmarks"] + landmarks))
    return "\n\n".join(sections)


def branch_frontmatter(b: Branch, title: str, summary: str) -> dict:
    return {"id": b.id, "type": "branch", "title": title, "summary": summary,
            "coverage": f"{len(b.leaves)} bananas, {len(b.subs)} sub-branches",
            "created": day(b.created), "updated": day(b.updated)}


def write_indexes(w: Writer, rng: random.Random, root: Branch, branches: list[Branch],
                  leaves: list[Leaf], degree: dict[str, int], nodes: int, seed: int) -> None:
    for b in branches:
        cross = _cross_trails(rng, b, branches) if rng.random() < 0.3 else []
        w.md(b.id, branch_frontmatter(b, b.title, b.summary),
             index_body(b, b.title, b.summary, cross, None))
    by_id = {x.id: x for x in leaves}
    ranked = sorted(((d, i) for i, d in degree.items() if i in by_id),
                    key=lambda p: (-p[0], p[1]))
    landmarks = [f"- [[{i}]] — {by_id[i].summary}" for _, i in ranked[:20]]
    title = "Synthetic benchmark forest"
    summary = (f"Synthetic forest of {nodes} nodes in {len(root.subs)} top-level branches "
               f"(seed {seed}), generated for engine benchmarks.")
    cross = _cross_trails(rng, root, branches)
    root.title, root.summary = title, summary
    w.md("_index", branch_frontmatter(root, title, summary),
         index_body(root, title, summary, cross, landmarks))


def schema_body() -> str:
    lines = ["# Forest dialect", "",
             "The node types and edge rels this forest accepts. Edit the tables to extend "
             "the dialect; an unknown type or rel is refused on write.", "",
             "## Node types", "", "| type | meaning | payload | harvest verb |",
             "|---|---|---|---|"]
    lines += [f"| `{t}` | {m} | {p} | {h} |" for t, m, p, h in TYPE_TABLE]
    lines += ["", "## Edge rels", "", "| rel | inverse | meaning |", "|---|---|---|"]
    lines += [f"| `{r}` | {f'`{i}`' if i else '—'} | {m} |" for r, i, m in REL_TABLE]
    return "\n".join(lines)


def write_meta(w: Writer, created: int) -> None:
    (w.out / "_meta").mkdir(parents=True, exist_ok=True)
    fm = {"id": "_meta/schema", "type": "note", "title": "Forest dialect",
          "summary": "Node types and edge rels accepted by this forest, as markdown tables.",
          "created": day(created), "updated": day(created)}
    w.md("_meta/schema", fm, schema_body())
    (w.out / ".gitignore").write_text(GITIGNORE, encoding="utf-8")


def git_commit(out: Path, nodes: int, seed: int) -> None:
    """Initialise the forest's own repo and commit every .md plus .gitignore once."""
    env = dict(os.environ, GIT_AUTHOR_NAME="vine", GIT_AUTHOR_EMAIL="vine@monkeyllm.local",
               GIT_COMMITTER_NAME="vine", GIT_COMMITTER_EMAIL="vine@monkeyllm.local")
    ident = ["-c", "user.name=vine", "-c", "user.email=vine@monkeyllm.local",
             "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]

    def git(*args: str) -> None:
        subprocess.run(["git", *ident, *args], cwd=out, env=env, check=True,
                       stdout=subprocess.DEVNULL)

    git("init", "-q", "--initial-branch=main")
    git("add", "--", ".gitignore", "*.md")
    git("commit", "-q", "--no-verify", "-m", f"init: synthetic forest ({nodes} nodes, seed {seed})")


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def _make_dirs(out: Path, branches: list[Branch]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for b in branches:
        (out / b.folder).mkdir(parents=True, exist_ok=True)


def generate(out: Path, nodes: int, seed: int = 7, git: bool = False,
             max_rows: int = 100_000) -> dict:
    """Write a synthetic forest of exactly ``nodes`` markdown nodes under ``out``.

    Args:
        out: target directory; created if missing, refused if it already holds a forest.
        nodes: total ``.md`` nodes, master index and ``_meta/schema`` included (>= 20).
        seed: seed of the single random stream; same arguments give identical files.
        git: initialise a repository in ``out`` and commit the forest once.
        max_rows: row count of the few big dataset tables (and cap for all of them).

    Returns:
        Stats: nodes, branches (master included), leaves, datasets, typed links,
        dataset rows, markdown bytes, payload bytes and elapsed seconds.
    """
    if nodes < 20:
        raise ValueError("nodes must be at least 20")
    if max_rows < 10:
        raise ValueError("max_rows must be at least 10")
    out = Path(out)
    if (out / "_index.md").exists():
        raise FileExistsError(f"{out} already holds a forest (_index.md exists)")
    t0 = time.perf_counter()
    rng, v = random.Random(seed), vocab()
    root, branches = plan_branches(rng, v, nodes)
    n_leaves = nodes - 2 - len(branches)
    leaves = plan_leaves(rng, v, root, branches, n_leaves)
    date_branches(rng, root, branches)
    datasets = [x for x in leaves if x.type == "dataset"]
    big = set(rng.sample(range(1, len(datasets)), min(len(datasets) - 1,
                                                      max(0, min(9, len(datasets) // 50)))))
    for i, leaf in enumerate(datasets):
        leaf.dataset = plan_dataset(rng, i == 0 or i in big, i == 0, max_rows)
        leaf.summary = dataset_summary(leaf.title, leaf.dataset, leaf.topics)
    _make_dirs(out, branches)
    w = Writer(out)
    pools = build_pools(leaves, branches, len(root.subs))
    all_ids = [b.id for b in branches] + [x.id for x in leaves]
    degree: dict[str, int] = {}
    prose = Prose(rng, v)
    rows = links = 0
    try:
        write_meta(w, root.created)
        for leaf in leaves:
            make_links(rng, leaf, leaves, pools, degree)
            links += len(leaf.links)
            rows += write_leaf(w, rng, prose, leaf, all_ids, f"{seed}:{leaf.id}", max_rows)
        write_indexes(w, rng, root, branches, leaves, degree, nodes, seed)
    finally:
        w.close()
    if git:
        git_commit(out, nodes, seed)
    db_bytes = sum((out / f"{x.id}.db").stat().st_size for x in datasets)
    return {"nodes": w.md_files, "branches": len(branches) + 1, "leaves": len(leaves),
            "datasets": len(datasets), "links": links, "dataset_rows": rows,
            "markdown_bytes": w.md_bytes, "payload_bytes": db_bytes,
            "seconds": round(time.perf_counter() - t0, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.generate",
                                description="Generate a deterministic synthetic forest.")
    p.add_argument("--nodes", type=int, required=True, help="total .md nodes (>= 20)")
    p.add_argument("--out", type=Path, required=True, help="target directory")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--git", action="store_true", help="git init and commit once")
    p.add_argument("--max-rows", type=int, default=100_000,
                   help="rows of the big dataset tables (default 100000)")
    a = p.parse_args(argv)
    try:
        stats = generate(a.out, a.nodes, seed=a.seed, git=a.git, max_rows=a.max_rows)
    except (ValueError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
