#!/usr/bin/env python3
"""Build the dataset payloads of ``sample-brain/`` and keep their passports in step.

Every ``.db`` in the sample forest is gitignored, so this script is how a
checkout (or a test session) gets them back. For each dataset it

1. recreates the SQLite payload from rows held in this file, or generated
   with a fixed-seed ``random.Random`` (no clock, no environment),
2. rewrites the generated ``## Query manual`` and ``## Sample rows`` sections
   of the passport exactly as the forest format describes them ("Dataset body
   sections" in shared/reference/forest-format.md), leaving every
   other section (``## Notes`` above all) untouched,
3. writes ``payload_hash`` (sha256 hex of the ``.db`` bytes) into the
   frontmatter by plain text replacement.

Running it twice gives byte-identical ``.md`` files and, with the same SQLite
version, byte-identical ``.db`` files.

    python tests/sample_data/build_datasets.py            # build
    python tests/sample_data/build_datasets.py --check    # build, then verify the forest
    python tests/sample_data/build_datasets.py --check-only
    python tests/sample_data/build_datasets.py --forest /tmp/copy-of-sample-brain

The build needs only the standard library. ``--check`` also needs PyYAML,
imported inside the check so that building never does.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import re
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

DEFAULT_FOREST = Path(__file__).resolve().parents[2] / "sample-brain"

# Limits of the generated sample map.
SAMPLE_ROWS = 3
SAMPLE_MAX_TABLES = 20
SAMPLE_MAX_COLUMNS = 12
SAMPLE_CELL_CHARS = 120


# ---------------------------------------------------------------------------
# Dataset declarations
# ---------------------------------------------------------------------------

@dataclass
class Table:
    name: str
    columns: list[tuple[str, str]]  # (column, TYPE) in schema order
    primary_key: list[str] = field(default_factory=list)
    rows: Callable[[], list[tuple]] = lambda: []

    def ddl(self) -> str:
        cols = [f"{c} {t}" for c, t in self.columns]
        if self.primary_key:
            cols.append("PRIMARY KEY (" + ", ".join(self.primary_key) + ")")
        return f"CREATE TABLE {self.name} ({', '.join(cols)})"


@dataclass
class Dataset:
    node_id: str  # the passport's id; the .md lives at <forest>/<node_id>.md
    payload: str  # file name beside the passport
    tables: list[Table]  # creation order = sqlite_master order = manual order


# -- sales/orders-2026 -------------------------------------------------------

# (customer, weight, median order in USD) per IBGE macro-region.
CUSTOMERS: dict[str, list[tuple[str, float, int]]] = {
    "Southeast": [
        ("Supermercados Horizonte", 9.0, 8000),
        ("Supermercados Mantiqueira", 5.0, 5000),
        ("Armazém Paulistano", 6.0, 2500),
        ("Casa & Cozinha Campinas", 5.0, 1900),
        ("Rede Capixaba de Supermercados", 4.0, 4200),
        ("Loja Fluminense Utilidades", 4.0, 2300),
        ("Distribuidora Alvorada", 5.0, 5900),
        ("Empório Santa Tereza", 3.0, 1500),
        ("Magazine Três Rios", 4.0, 2900),
        ("Utilar Ribeirão", 3.0, 2100),
        ("Mercantil Itaquera", 4.0, 1800),
        ("Supermercados Vale do Paraíba", 4.0, 3800),
    ],
    "South": [
        ("Casa Bela Utilidades", 9.0, 2600),
        ("Rede Araucária", 5.0, 4500),
        ("Cooperativa Vale do Itajaí", 4.0, 3300),
        ("Utilidades Gaúchas", 4.0, 1800),
        ("Supermercados Costa Verde", 3.0, 3100),
        ("Empório Curitibano", 3.0, 1400),
        ("Distribuidora Serra Gaúcha", 3.0, 4900),
        ("Lojas Pinhão", 2.0, 1700),
    ],
    "Northeast": [
        ("Rede Mandacaru", 8.0, 6300),
        ("Supermercados Maré Alta", 4.0, 3400),
        ("Casa Potiguar", 3.0, 1800),
        ("Distribuidora Recôncavo", 4.0, 4200),
        ("Empório Jangada", 2.0, 1400),
        ("Lojas Sertão Vivo", 3.0, 2000),
    ],
    "North": [
        ("Distribuidora Tapajós", 6.0, 5400),
        ("Supermercados Rio Negro", 4.0, 3600),
        ("Casa Marajó", 3.0, 1700),
        ("Mercantil Tocantins", 2.0, 2300),
    ],
    "Midwest": [
        ("Empório Cerrado", 6.0, 4100),
        ("Supermercados Pantanal", 4.0, 3400),
        ("Rede Planalto Central", 5.0, 4600),
        ("Utilidades Goianas", 3.0, 1800),
        ("Casa Araguaia", 2.0, 1500),
    ],
}

# Orders per region and quarter. Q1 matches the Q1 pipeline review note; the
# H1 totals are Southeast 812, South 344, Northeast 190, Midwest 128, North 71.
QUARTER_COUNTS = {
    1: {"Southeast": 402, "South": 171, "Northeast": 93, "Midwest": 64, "North": 35},
    2: {"Southeast": 410, "South": 173, "Northeast": 97, "Midwest": 64, "North": 36},
}
HOLIDAYS_2026 = {
    date(2026, 1, 1), date(2026, 2, 16), date(2026, 2, 17), date(2026, 4, 3),
    date(2026, 4, 21), date(2026, 5, 1), date(2026, 6, 4),
}
# Rede Mandacaru paused purchases while it changed ERP (Q1 review note).
MANDACARU_PAUSE = (date(2026, 2, 9), date(2026, 3, 22))


def business_days(start: date, end: date) -> list[date]:
    days, d = [], start
    while d <= end:
        if d.weekday() < 5 and d not in HOLIDAYS_2026:
            days.append(d)
        d += timedelta(days=1)
    return days


def usd_ptbr(cents: int) -> str:
    """54607.56 dollars as the ERP prints it: 'USD 54.607,56'."""
    whole, frac = divmod(cents, 100)
    return f"USD {whole:,}".replace(",", ".") + f",{frac:02d}"


def order_rows() -> list[tuple]:
    rng = random.Random(20260630)
    quarters = {
        1: business_days(date(2026, 1, 2), date(2026, 3, 31)),
        2: business_days(date(2026, 4, 1), date(2026, 6, 30)),
    }
    drafts = []
    for q, counts in QUARTER_COUNTS.items():
        for region, n in counts.items():
            names = [c[0] for c in CUSTOMERS[region]]
            weights = [c[1] for c in CUSTOMERS[region]]
            medians = {c[0]: c[2] for c in CUSTOMERS[region]}
            for _ in range(n):
                while True:
                    customer = rng.choices(names, weights)[0]
                    day = rng.choice(quarters[q])
                    paused = MANDACARU_PAUSE[0] <= day <= MANDACARU_PAUSE[1]
                    if not (customer == "Rede Mandacaru" and paused):
                        break
                usd = medians[customer] * math.exp(rng.gauss(0.0, 0.55))
                cents = max(45000, int(round(usd * 100)))
                drafts.append((day, rng.random(), customer, region, cents))
    drafts.sort(key=lambda d: (d[0], d[1]))
    rows = []
    for n, (day, _tie, customer, region, cents) in enumerate(drafts, start=1001):
        rows.append((str(n), customer, region, usd_ptbr(cents), day.isoformat(), cents))
    return rows


# -- sales/pipeline/prospects-q2 ---------------------------------------------

PROSPECT_HEAD = [
    ("P-26-0401", "Supermercados Serra Azul", "Patrícia Gomes", "negotiation", 118_000_000,
     "Southeast", "2026-04-01",
     "Send the revised proposal with 60-day terms and the Serra coffee maker for the "
     "anniversary leaflet; buyer wants CIF to Juiz de Fora and Barbacena."),
    ("P-26-0402", "Rede Boa Safra", "Rafael Kuhn", "proposal", 46_500_000,
     "Midwest", "2026-04-02", "Call the buyer after the proposal review on 12 June"),
    ("P-26-0403", "Casa Litoral Utilidades", "Luana Tavares", "qualified", 18_000_000,
     "Northeast", "2026-04-02", None),
]
PROSPECT_NAMES = {
    "Southeast": ["Mercado Jardim Europa", "Rede Sol Nascente", "Empório Vila Rica",
                  "Supermercados Guarani", "Casa Ouro Preto", "Distribuidora Tietê",
                  "Lojas Paraíba do Sul", "Atacarejo Bandeirantes", "Mercadão Uberaba",
                  "Supermercados Cantareira", "Utilidades Niterói", "Rede Mogiana",
                  "Empório Vitória", "Casa Sorocabana", "Mercantil Ipê Amarelo"],
    "South": ["Rede Erva-Mate", "Supermercados Campos Gerais", "Casa Blumenau",
              "Lojas Lagoa dos Patos", "Empório Joinville", "Cooperativa Oeste Catarinense",
              "Utilidades Pelotas", "Mercado Vale dos Vinhedos"],
    "Northeast": ["Supermercados Cajueiro", "Rede Chapada", "Casa Maracatu",
                  "Distribuidora Borborema", "Empório São Luís", "Lojas Velho Chico",
                  "Mercantil Cariri"],
    "North": ["Supermercados Amapá", "Casa Belém Utilidades", "Rede Madeira-Mamoré",
              "Empório Boa Vista"],
    "Midwest": ["Supermercados Chapadão", "Casa Cuiabana", "Rede Campo Grande",
                "Empório Brasília Sul", "Mercantil Rio Verde"],
}
PROSPECT_OWNERS = {
    "Southeast": ["Ana Ribeiro", "Bruno Sato", "Patrícia Gomes"],
    "South": ["Rafael Kuhn"],
    "Northeast": ["Luana Tavares"],
    "North": ["Luana Tavares"],
    "Midwest": ["Rafael Kuhn"],
}
STAGES = [("lead", 5), ("qualified", 6), ("proposal", 6), ("negotiation", 4),
          ("won", 4), ("lost", 4)]
NEXT_STEPS = {
    "lead": ["Find the purchasing contact", "Confirm CNPJ and store count",
             "Visit during the regional trade fair"],
    "qualified": ["Book a meeting with the category buyer", "Send the catalogue and price table",
                  "Check credit limit with finance"],
    "proposal": ["Follow up on the proposal", "Adjust the mix to three SKUs or more",
                 "Wait for the buyer's board approval"],
    "negotiation": ["Agree freight terms", "Get discount approval in the CRM",
                    "Send the contract draft"],
    "won": ["Schedule the first delivery", "Plan the first quarterly review"],
    "lost": [None],
}


def prospect_rows() -> list[tuple]:
    rng = random.Random(202602)
    rows = list(PROSPECT_HEAD)
    q2 = business_days(date(2026, 4, 3), date(2026, 6, 26))
    n = 4
    for region, names in PROSPECT_NAMES.items():
        for company in names:
            stage = rng.choices([s for s, _ in STAGES], [w for _, w in STAGES])[0]
            thousands_brl = max(20, int(round(rng.lognormvariate(math.log(300), 0.7))))
            value = thousands_brl * 1000 * 100
            rows.append((
                f"P-26-{400 + n:04d}", company, rng.choice(PROSPECT_OWNERS[region]), stage,
                value, region, rng.choice(q2).isoformat(), rng.choice(NEXT_STEPS[stage]),
            ))
            n += 1
    return rows


# -- operations/stock-levels ---------------------------------------------------

# (sku, description, product line, supplier, lead time days, unit cost BRL cents)
CATALOGUE = [
    ("AK-200-BR-127V", "Aurora kettle 1.7 L | brushed steel, 127 V", "kettles",
     "Ningbo Hexin Appliances", 75, 6420),
    ("AK-200-BR-220V", "Aurora kettle 1.7 L | brushed steel, 220 V", "kettles",
     "Ningbo Hexin Appliances", 75, 6420),
    ("AK-200-MB-127V", "Aurora kettle 1.7 L | matte black, 127 V", "kettles",
     "Ningbo Hexin Appliances", 75, 6890),
    ("AK-200-GR-220V", "Aurora kettle 1.7 L | matte green, 220 V", "kettles",
     "Ningbo Hexin Appliances", 75, 6890),
    ("AK-120-BR-127V", "Aurora mini kettle 1.2 L, 127 V (discontinuing)", "kettles",
     "Ningbo Hexin Appliances", 75, 5110),
    ("CK-50-BR-127V", "Serra coffee maker 30 cups, 127 V", "coffee makers",
     "Amazônia Montagens Eletrônicas", 21, 13150),
    ("CK-50-BR-220V", "Serra coffee maker 30 cups, 220 V", "coffee makers",
     "Amazônia Montagens Eletrônicas", 21, 13150),
    ("MG-2-BR-127V", "Moenda M2 burr grinder, 127 V", "grinders",
     "Foshan Brightmill", 80, 5480),
    ("MG-2-BR-220V", "Moenda M2 burr grinder, 220 V", "grinders",
     "Foshan Brightmill", 80, 5480),
    ("FP-08-BR", "Lume French press 800 ml", "kitchen tools",
     "Vidraria Atlântica (Marinha Grande)", 60, 2010),
    ("FP-03-BR", "Lume French press 350 ml", "kitchen tools",
     "Vidraria Atlântica (Marinha Grande)", 60, 1460),
    ("SC-12-BR", "Precisa kitchen scale 5 kg", "kitchen tools",
     "Shenzhen Accuweigh", 70, 1730),
    ("SP-200-LID", "Spare lid for Aurora kettle", "spare parts",
     "Ningbo Hexin Appliances", 75, 890),
    ("SP-50-JAR", "Spare glass jar for Serra coffee maker", "spare parts",
     "Amazônia Montagens Eletrônicas", 21, 2470),
]
WAREHOUSES = [
    ("BRU", "Barueri distribution centre", "Barueri", "SP", "2022-03-14"),
    ("CWB", "Curitiba satellite", "São José dos Pinhais", "PR", "2025-02-03"),
    ("REC", "Recife satellite", "Cabo de Santo Agostinho", "PE", "2025-06-02"),
    ("MIA", "Doral third-party warehouse", "Doral", "FL", "2019-08-01"),
]
COUNTERS = {"BRU": ["Sandra Lima", "Edson Prado"], "CWB": ["Marcelo Becker"],
            "REC": ["Joana Freitas"], "MIA": ["Luis Ortega"]}


def stock_rows() -> list[tuple]:
    rng = random.Random(5678)
    snapshot = {"BRU": "2026-06-29", "CWB": "2026-06-29", "REC": "2026-06-22",
                "MIA": "2026-06-26"}
    rows = []
    for sku, desc, line, supplier, lead, cost in CATALOGUE:
        for code, *_ in WAREHOUSES:
            if code == "MIA" and line not in ("kitchen tools", "grinders"):
                continue  # the US store sells coffee tools only
            if code == "REC" and line == "spare parts":
                continue
            scale = {"BRU": 1.0, "CWB": 0.3, "REC": 0.2, "MIA": 0.08}[code]
            on_hand = int(rng.lognormvariate(math.log(2400 * scale), 0.6))
            reserved = int(on_hand * rng.uniform(0.0, 0.35))
            if code == "BRU" and rng.random() < 0.55:
                in_transit = int(rng.lognormvariate(math.log(3000), 0.4))
            else:
                in_transit = None
            reorder = int(round(900 * scale * lead / 60, -1))
            if code == "MIA":
                unit_cost, currency = int(round(cost / 5.45 * 0.92)), "USD"
            else:
                unit_cost, currency = cost, "BRL"
            rows.append((
                sku, desc, line, code, on_hand, reserved, in_transit, reorder, unit_cost,
                currency, supplier, lead, snapshot[code], rng.choice(COUNTERS[code]),
            ))
    return rows


DATASETS = [
    Dataset(
        node_id="sales/orders-2026",
        payload="orders-2026.db",
        tables=[Table(
            "orders",
            [("id", "TEXT"), ("customer", "TEXT"), ("region", "TEXT"),
             ("total_invoice", "TEXT"), ("closed_at", "TEXT"), ("value_cents", "INTEGER")],
            primary_key=["id"], rows=order_rows,
        )],
    ),
    Dataset(
        node_id="sales/pipeline/prospects-q2",
        payload="prospects-q2.db",
        tables=[Table(
            "prospects",
            [("prospect_id", "TEXT"), ("company", "TEXT"), ("owner", "TEXT"),
             ("stage", "TEXT"), ("expected_value_cents", "INTEGER"), ("region", "TEXT"),
             ("first_contact", "TEXT"), ("next_step", "TEXT")],
            primary_key=["prospect_id"], rows=prospect_rows,
        )],
    ),
    Dataset(
        node_id="operations/stock-levels",
        payload="stock-levels.db",
        tables=[
            Table(
                "stock",
                [("sku", "TEXT"), ("description", "TEXT"), ("product_line", "TEXT"),
                 ("warehouse", "TEXT"), ("on_hand", "INTEGER"), ("reserved", "INTEGER"),
                 ("in_transit", "INTEGER"), ("reorder_point", "INTEGER"),
                 ("unit_cost_cents", "INTEGER"), ("currency", "TEXT"), ("supplier", "TEXT"),
                 ("lead_time_days", "INTEGER"), ("counted_at", "TEXT"),
                 ("counted_by", "TEXT")],
                primary_key=["sku", "warehouse"], rows=stock_rows,
            ),
            Table(
                "warehouses",
                [("code", "TEXT"), ("name", "TEXT"), ("city", "TEXT"), ("state", "TEXT"),
                 ("opened_at", "TEXT")],
                primary_key=["code"], rows=lambda: list(WAREHOUSES),
            ),
        ],
    ),
]


# ---------------------------------------------------------------------------
# Payload, map and passport
# ---------------------------------------------------------------------------

def build_payload(ds: Dataset, folder: Path) -> Path:
    """Create the .db in a temp file beside its passport, then move it in place."""
    target = folder / ds.payload
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".db", dir=folder)
    os.close(fd)
    os.unlink(tmp)  # sqlite creates it; an empty file would also do, but be explicit
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA page_size = 4096")
            for table in ds.tables:
                conn.execute(table.ddl())
                rows = table.rows()
                marks = ", ".join("?" * len(table.columns))
                conn.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows)
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows_label(n: int) -> str:
    return "1 row" if n == 1 else f"{n} rows"


def sample_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<blob {len(bytes(value))} bytes>"
    text = re.sub(r"\s+", " ", str(value)).strip()
    if len(text) > SAMPLE_CELL_CHARS:
        text = text[:SAMPLE_CELL_CHARS].rstrip() + "…"
    return text.replace("|", "\\|")


def render_map(db: Path) -> str:
    """The generated `## Query manual` and `## Sample rows` sections, read back
    from the payload itself: tables in sqlite_master order."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
        tables = {t: [(r[1], (r[2] or "").upper())
                      for r in conn.execute(f"PRAGMA table_info({t})")] for t in names}
        lines = ["## Query manual", "", "Tables:"]
        for t, cols in tables.items():
            spec = ", ".join(f"{c} {ty}" if ty else c for c, ty in cols)
            lines.append(f"- `{t}({spec})`")
        lines += ["", "Example queries:"]
        for t, cols in tables.items():
            if len(cols) > SAMPLE_MAX_COLUMNS:
                lines.append(f"- `SELECT COUNT(*) FROM {t}`")
                lines.append(f"- {t} is {len(cols)} columns wide: rows of every column "
                             "overflow the query budget, so select the columns you need "
                             "by name.")
            else:
                lines.append(f"- `SELECT * FROM {t} LIMIT 5`")
                lines.append(f"- `SELECT COUNT(*) FROM {t}`")
        lines += ["", "## Sample rows", ""]
        shown = list(tables)[:SAMPLE_MAX_TABLES]
        for t in shown:
            cols = [c for c, _ in tables[t]][:SAMPLE_MAX_COLUMNS]
            count = conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            lines += [f"### {t} — {rows_label(count)}", ""]
            rows = conn.execute(f"SELECT * FROM {t} LIMIT {SAMPLE_ROWS}").fetchall()
            if not rows:
                lines += ["_No rows._", ""]
                continue
            lines.append("| " + " | ".join(sample_cell(c) for c in cols) + " |")
            lines.append("|" + " --- |" * len(cols))
            for row in rows:
                lines.append("| " + " | ".join(sample_cell(row[i]) for i in range(len(cols)))
                             + " |")
            cut = len(tables[t]) - len(cols)
            if cut > 0:
                lines.append(f"_{cut} more column(s) not shown; the query manual lists "
                             "every column._")
            lines.append("")
        omitted = len(tables) - len(shown)
        if omitted > 0:
            lines.append(f"_{omitted} more table(s) not sampled; the query manual lists "
                         "every table._")
        return "\n".join(lines).rstrip()
    finally:
        conn.close()


FM_RE = re.compile(r"\A---\n(.*?)\n---\n", re.S)
H2_RE = re.compile(r"^## (.+?)\s*$", re.M)
GENERATED = {"Query manual", "Sample rows"}


def set_payload_hash(text: str, digest: str) -> str:
    m = FM_RE.match(text)
    if not m:
        raise SystemExit("passport without frontmatter")
    head = m.group(1)
    value = f"'{digest}'" if digest.isdigit() else digest
    if re.search(r"^payload_hash:.*$", head, re.M):
        head = re.sub(r"^payload_hash:.*$", f"payload_hash: {value}", head, count=1, flags=re.M)
    elif re.search(r"^payload_type:.*$", head, re.M):
        head = re.sub(r"^(payload_type:.*)$", rf"\1\npayload_hash: {value}", head, count=1,
                      flags=re.M)
    else:
        head += f"\npayload_hash: {value}"
    return f"---\n{head}\n---\n" + text[m.end():]


def set_generated_sections(text: str, manual: str) -> str:
    """Replace everything from `## Query manual` up to the next H2 that is not
    one of the two generated sections (normally `## Notes`). Without a manual
    yet, insert it before `## Notes`, or append it."""
    heads = [(m.start(), m.group(1)) for m in H2_RE.finditer(text)]
    start = next((pos for pos, title in heads if title == "Query manual"), None)
    if start is None:
        start = next((pos for pos, title in heads if title == "Notes"), None)
        if start is None:
            return text.rstrip() + "\n\n" + manual + "\n"
        return text[:start] + manual + "\n\n" + text[start:]
    end = next((pos for pos, title in heads if pos > start and title not in GENERATED), None)
    if end is None:
        return text[:start] + manual + "\n"
    return text[:start] + manual + "\n\n" + text[end:]


def build(forest: Path) -> list[tuple[str, str]]:
    done = []
    for ds in DATASETS:
        md = forest / f"{ds.node_id}.md"
        db = build_payload(ds, md.parent)
        digest = sha256_file(db)
        text = md.read_text(encoding="utf-8")
        new = set_generated_sections(set_payload_hash(text, digest), render_map(db))
        if new != text:
            md.write_text(new, encoding="utf-8", newline="\n")
        done.append((ds.node_id, digest))
    return done


# ---------------------------------------------------------------------------
# --check: the forest is well formed (needs PyYAML)
# ---------------------------------------------------------------------------

REQUIRED = ("id", "type", "title", "summary", "created", "updated")
ENTITY_KINDS = {"person", "organization", "product", "place", "other"}
SOURCES = {"manual", "ingest", "agent"}
PAYLOAD_TYPES = {"sqlite", "pdf", "docx", "image", "audio"}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
ENTRY = re.compile(r"^- \[\[([^\]|]+)\]\] — (.*)$")
CROSS_TRAIL = re.compile(r"^- .+ → \[\[([^\]|#]+)\]\]$")
GITIGNORE = "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n"
INDEX_SECTIONS = ["Sub-branches", "Direct bananas", "Cross trails"]
# Exact codes that live in bodies only: a metadata search must not find them.
BODY_ONLY_CODES = ["NF-4412", "MSA-2026-ACM-007", "AK-200-BR-127V", "E-SYNC-1107",
                   "ERR-SKU-404", "SIN-2026-03117", "DESC-NAO-APROVADO", "ADT-01/2026"]


def tokens(text: str) -> int:
    return 0 if not text else max(1, math.ceil(len(text) / 4))


def iter_node_files(forest: Path) -> Iterator[Path]:
    for path in sorted(forest.rglob("*.md")):
        rel = path.relative_to(forest).parts
        if rel[0] in ("_derived", ".git") or "_assets" in rel:
            continue
        yield path


def split_sections(body: str, level: int = 2) -> dict[str, str]:
    """Section text by header (same or higher level ends it), fences respected."""
    out: dict[str, str] = {}
    current, buf, fence = None, [], False
    for line in body.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if m and len(m.group(1)) <= level:
            if current is not None:
                out[current] = "\n".join(buf)
            current, buf = (m.group(2) if len(m.group(1)) == level else None), []
            continue
        buf.append(line)
    if current is not None:
        out[current] = "\n".join(buf)
    return out


def dialect(forest: Path) -> tuple[set[str], dict[str, str | None]]:
    types: set[str] = set()
    rels: dict[str, str | None] = {}
    in_rels = False
    text = (forest / "_meta" / "schema.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("#"):
            low = line.lower()
            in_rels = "edge" in low or "rel" in low
            continue
        m = re.match(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*)\|", line.strip())
        if not m:
            continue
        if in_rels:
            inv = m.group(2).strip().strip("`")
            rels[m.group(1)] = None if inv in ("", "—", "-") else inv
        else:
            types.add(m.group(1))
    return types, rels


def check(forest: Path) -> int:
    import yaml

    errors: list[str] = []

    def err(node: str, msg: str) -> None:
        errors.append(f"{node}: {msg}")

    if (forest / ".gitignore").read_text(encoding="utf-8") != GITIGNORE:
        err(".gitignore", "is not the five forest patterns, one a line")
    types, rels = dialect(forest)
    nodes: dict[str, tuple[dict, str, str]] = {}
    for path in iter_node_files(forest):
        nid = path.relative_to(forest).with_suffix("").as_posix()
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        if "\r" in text:
            err(nid, "CR line endings")
        m = FM_RE.match(text)
        if not m:
            err(nid, "no frontmatter block")
            continue
        fm = yaml.safe_load(m.group(1))
        if not isinstance(fm, dict):
            err(nid, "frontmatter is not a mapping")
            continue
        rest = text[m.end():]
        if not rest.startswith("\n") or rest.startswith("\n\n") or not rest.endswith("\n") \
                or rest.endswith("\n\n"):
            err(nid, "file shape is not ---\\n<yaml>\\n---\\n\\n<body>\\n")
        canon = yaml.safe_dump(fm, allow_unicode=True, sort_keys=False,
                               default_flow_style=False)
        if canon != m.group(1) + "\n":
            err(nid, "frontmatter is not in the engine's canonical YAML form")
        nodes[nid] = (fm, rest.lstrip("\n"), m.group(1))

    edges: dict[str, int] = {}
    for nid, (fm, body, raw_fm) in nodes.items():
        for key in REQUIRED:
            if key not in fm or fm[key] in (None, ""):
                err(nid, f"missing {key}")
        if fm.get("id") != nid:
            err(nid, f"id {fm.get('id')!r} does not match the path")
        for key in ("created", "updated"):
            if not (isinstance(fm.get(key), str) and ISO_DATE.match(fm[key])):
                err(nid, f"{key} must be a quoted ISO date string")
            elif f"{key}: '{fm[key]}'" not in raw_fm:
                err(nid, f"{key} is not single-quoted as the engine writes it")
        if body.split("\n", 1)[0] != f"# {fm.get('title')}":
            err(nid, "body does not open with '# <title>'")
        if fm.get("type") not in types:
            err(nid, f"type {fm.get('type')!r} is not declared")
        if fm.get("type") == "entity" and fm.get("entity_kind") not in ENTITY_KINDS:
            err(nid, "entity without a valid entity_kind")
        if fm.get("source") not in (None, *SOURCES):
            err(nid, "bad source")
        summary = str(fm.get("summary", ""))
        low = summary.strip().lower()
        if not summary.strip() or tokens(summary) > 60 or low.startswith(
                ("this document describes", "file containing")):
            err(nid, "summary breaks the scent rules")
        for tag in fm.get("tags", []) or []:
            if tag != tag.lower() or " " in tag:
                err(nid, f"tag {tag!r} is not a lowercase token")
        if len(fm.get("aliases", []) or []) > 16:
            err(nid, "more than 16 aliases")
        links = fm.get("links", []) or []
        if len(links) > 50:
            err(nid, "more than 50 links")
        for link in links:
            if link.get("rel") not in rels:
                err(nid, f"rel {link.get('rel')!r} is not declared")
            if link.get("target") not in nodes:
                err(nid, f"link target {link.get('target')!r} does not exist")
            edges[link.get("rel")] = edges.get(link.get("rel"), 0) + 1
        for target in WIKILINK.findall(body):
            if target.strip() not in nodes:
                err(nid, f"wikilink [[{target}]] does not resolve")
        meta = " ".join([str(fm.get("title", "")), summary,
                         " ".join(fm.get("tags", []) or []),
                         " ".join(fm.get("aliases", []) or [])])
        for code in BODY_ONLY_CODES:
            if code.lower() in meta.lower():
                err(nid, f"body-only code {code} appears in metadata")
        if fm.get("type") == "dataset":
            check_dataset(forest, nid, fm, body, err)

    for nid, (fm, body, _raw) in nodes.items():
        if fm.get("type") == "branch":
            check_branch(nid, fm, body, nodes, err)
        elif nid.endswith("/_index") or nid == "_index":
            err(nid, "an _index that is not a branch")

    found = {}
    for code in BODY_ONLY_CODES:
        found[code] = [n for n, (_fm, b, _r) in nodes.items() if code in b]
        if not found[code]:
            err("(codes)", f"{code} is not in any body")

    by_type: dict[str, int] = {}
    for fm, _b, _r in nodes.values():
        by_type[fm.get("type")] = by_type.get(fm.get("type"), 0) + 1
    branches = [n for n, (fm, _b, _r) in nodes.items() if fm.get("type") == "branch"]
    depth = max(n.count("/") for n in branches)
    longest = max(nodes, key=lambda n: tokens(nodes[n][1]))
    print(f"nodes: {len(nodes)} (branches {len(branches)}, leaves {len(nodes) - len(branches)})")
    print("types: " + ", ".join(f"{t} {c}" for t, c in sorted(by_type.items())))
    print("rels: " + ", ".join(f"{r} {c}" for r, c in sorted(edges.items()))
          + f" (total {sum(edges.values())})")
    print(f"max branch depth: {depth} (deepest: "
          f"{', '.join(n for n in branches if n.count('/') == depth)})")
    print(f"longest body: {longest}, {tokens(nodes[longest][1])} est. tokens")
    for e in errors:
        print("ERROR", e)
    print(f"{len(errors)} error(s)")
    return 1 if errors else 0


def check_dataset(forest: Path, nid: str, fm: dict, body: str, err) -> None:
    if fm.get("payload_type") != "sqlite":
        err(nid, "dataset without payload_type sqlite")
    db = forest / Path(nid).parent / str(fm.get("payload"))
    if not db.is_file():
        err(nid, f"payload {fm.get('payload')!r} is missing (run the build)")
        return
    if sha256_file(db) != fm.get("payload_hash"):
        err(nid, "payload_hash does not match the .db bytes")
    sections = split_sections(body)
    for name in ("Query manual", "Sample rows", "Notes"):
        if name not in sections:
            err(nid, f"dataset body lacks ## {name}")
    start = body.find("## Query manual")
    end = body.find("\n\n## Notes")
    if start < 0 or end < 0 or body[start:end] != render_map(db):
        err(nid, "generated sections differ from a fresh rendering of the payload")


def check_branch(nid: str, fm: dict, body: str, nodes: dict, err) -> None:
    folder = "" if nid == "_index" else nid[: -len("/_index")]
    prefix = folder + "/" if folder else ""
    children = set()
    for other in nodes:
        if other == nid or not other.startswith(prefix) or other.startswith("_meta/"):
            continue
        rest = other[len(prefix):]
        if "/" not in rest or (rest.count("/") == 1 and rest.endswith("/_index")):
            children.add(other)
    title_line = body.split("\n", 1)[0]
    if title_line != f"# {fm.get('title')}":
        err(nid, "branch body does not start with '# <title>'")
    quote = body.split("\n")[2] if body.count("\n") > 2 else ""
    if not quote.startswith("> "):
        err(nid, "branch body lacks the '> ' blurb after the title")
    order = re.findall(r"^## (.+)$", body, re.M)
    want = INDEX_SECTIONS + (["Landmarks"] if nid == "_index" else [])
    if order != want:
        err(nid, f"sections {order} should be {want}")
    sections = split_sections(body)
    listed: list[str] = []
    counts = {}
    for name in ("Sub-branches", "Direct bananas"):
        lines = [ln for ln in sections.get(name, "").split("\n") if ln.startswith("- [[")]
        counts[name] = len(lines)
        for line in lines:
            m = ENTRY.match(line)
            if not m:
                err(nid, f"malformed entry line {line!r}")
                continue
            cid, summary = m.groups()
            listed.append(cid)
            if cid not in nodes:
                err(nid, f"entry for missing node {cid}")
                continue
            is_branch = nodes[cid][0].get("type") == "branch"
            if is_branch != (name == "Sub-branches"):
                err(nid, f"{cid} listed under the wrong section")
            if summary != nodes[cid][0].get("summary"):
                err(nid, f"entry summary of {cid} differs from its frontmatter")
    if sorted(listed) != sorted(children):
        err(nid, f"entries {sorted(listed)} != children {sorted(children)}")
    coverage = f"{counts['Direct bananas']} bananas, {counts['Sub-branches']} sub-branches"
    if fm.get("coverage") != coverage:
        err(nid, f"coverage {fm.get('coverage')!r} should be {coverage!r}")
    for line in sections.get("Cross trails", "").split("\n"):
        if line.startswith("- "):
            m = CROSS_TRAIL.match(line)
            if not m or m.group(1) not in nodes:
                err(nid, f"bad cross trail {line!r}")
    for line in sections.get("Landmarks", "").split("\n"):
        if line.startswith("- "):
            m = ENTRY.match(line)
            if not m or m.group(1) not in nodes or \
                    nodes[m.group(1)][0].get("summary") != m.group(2):
                err(nid, f"bad landmark {line!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forest", type=Path, default=DEFAULT_FOREST)
    parser.add_argument("--check", action="store_true", help="build, then verify the forest")
    parser.add_argument("--check-only", action="store_true", help="verify without building")
    args = parser.parse_args(argv)
    forest = args.forest.resolve()
    if not args.check_only:
        for node_id, digest in build(forest):
            print(f"built {node_id}: {digest}")
    if args.check or args.check_only:
        return check(forest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
