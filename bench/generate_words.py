"""The word material of synthetic forests: English and Portuguese function words, nouns,
verbs, adjectives and stems, names and cities, top branches, tags, headings, and the
weights of node types, links and sources."""

from __future__ import annotations

import datetime as dt

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

PT_SUFFIXES = [
    ("ar", 1.0),
    ("ação", 1.2),
    ("ações", 2.0),
    ("ado", 1.5),
    ("ada", 2.0),
    ("ados", 3.0),
    ("ando", 2.5),
    ("ador", 4.0),
    ("adores", 6.0),
    ("ou", 2.0),
    ("aram", 4.0),
    ("ará", 5.0),
    ("ável", 6.0),
    ("amento", 3.0),
    ("amentos", 5.0),
    ("aríamos", 20.0),
]

EN_NOUN_PREFIXES = ["sub", "co", "micro", "multi", "non", "inter"]
EN_VERB_PREFIXES = ["re", "pre", "un", "over", "mis", "co"]
EN_ADJ_PREFIXES = ["un", "non", "semi"]
DOUBLING = {
    "plan",
    "ship",
    "commit",
    "log",
    "tag",
    "map",
    "wrap",
    "scan",
    "submit",
    "label",
    "program",
    "model",
    "travel",
    "cancel",
    "signal",
}

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

TOP_BRANCHES = [
    "finance",
    "sales",
    "engineering",
    "research",
    "operations",
    "legal",
    "marketing",
    "people",
    "clients",
    "products",
    "support",
    "security",
    "data",
    "infrastructure",
    "design",
    "partners",
    "compliance",
    "logistics",
    "procurement",
    "strategy",
]

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
    "\n", ""
).split("|")

HEADINGS_PT = """Contexto|Objetivos|Decisões|Próximos passos|Riscos|Cronograma|Resultados
|Pendências|Histórico|Referências|Análise|Conclusões|Premissas|Escopo|Custos|Discussão
|Recomendações|Implantação|Indicadores|Alternativas avaliadas""".replace("\n", "").split("|")

TYPE_WEIGHTS = [("note", 34), ("document", 22), ("concept", 12), ("event", 15), ("entity", 17)]
ENTITY_KINDS = [("person", 40), ("organization", 25), ("product", 18), ("place", 10), ("other", 7)]
LINK_COUNT_WEIGHTS = [15, 25, 25, 15, 9, 5, 3, 2, 1]  # 0..8 links, mean ~2.2
REL_WEIGHTS = [
    ("related-to", 30),
    ("part-of", 12),
    ("mentioned-in", 9),
    ("author", 8),
    ("compared-with", 6),
    ("derived-from", 10),
    ("same-as", 2),
    ("discovered-shortcut", 5),
    ("succeeds", 11),
    ("supersedes", 7),
]
SOURCES = [("manual", 40), ("ingest", 30), ("agent", 30)]

TYPE_TABLE = [
    ("branch", "a folder's `_index.md`", "—", "look"),
    ("note", "free text (default leaf)", "—", "pick"),
    ("document", "converted PDF/DOCX/etc.", "original in `_assets/` (optional)", "pick"),
    ("dataset", "tabular data", "sibling SQLite `.db`", "query"),
    (
        "entity",
        "person/org/product/place; requires `entity_kind` (person, organization, "
        "product, place, other)",
        "—",
        "pick",
    ),
    ("concept", "definition or term", "—", "pick"),
    ("event", "something that happened on a date (a meeting, a decision, a release)", "—", "pick"),
    (
        "media",
        "image or audio with a textual description/transcript body",
        "original in `_assets/`",
        "pick",
    ),
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
