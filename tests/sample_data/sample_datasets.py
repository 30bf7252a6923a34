"""The datasets of ``sample-brain/``, declared: each one's tables, columns, keys and rows
(held here, or generated with a fixed-seed ``random.Random``)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta


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
    date(2026, 1, 1),
    date(2026, 2, 16),
    date(2026, 2, 17),
    date(2026, 4, 3),
    date(2026, 4, 21),
    date(2026, 5, 1),
    date(2026, 6, 4),
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


PROSPECT_HEAD = [
    (
        "P-26-0401",
        "Supermercados Serra Azul",
        "Patrícia Gomes",
        "negotiation",
        118_000_000,
        "Southeast",
        "2026-04-01",
        "Send the revised proposal with 60-day terms and the Serra coffee maker for the "
        "anniversary leaflet; buyer wants CIF to Juiz de Fora and Barbacena.",
    ),
    (
        "P-26-0402",
        "Rede Boa Safra",
        "Rafael Kuhn",
        "proposal",
        46_500_000,
        "Midwest",
        "2026-04-02",
        "Call the buyer after the proposal review on 12 June",
    ),
    (
        "P-26-0403",
        "Casa Litoral Utilidades",
        "Luana Tavares",
        "qualified",
        18_000_000,
        "Northeast",
        "2026-04-02",
        None,
    ),
]
PROSPECT_NAMES = {
    "Southeast": [
        "Mercado Jardim Europa",
        "Rede Sol Nascente",
        "Empório Vila Rica",
        "Supermercados Guarani",
        "Casa Ouro Preto",
        "Distribuidora Tietê",
        "Lojas Paraíba do Sul",
        "Atacarejo Bandeirantes",
        "Mercadão Uberaba",
        "Supermercados Cantareira",
        "Utilidades Niterói",
        "Rede Mogiana",
        "Empório Vitória",
        "Casa Sorocabana",
        "Mercantil Ipê Amarelo",
    ],
    "South": [
        "Rede Erva-Mate",
        "Supermercados Campos Gerais",
        "Casa Blumenau",
        "Lojas Lagoa dos Patos",
        "Empório Joinville",
        "Cooperativa Oeste Catarinense",
        "Utilidades Pelotas",
        "Mercado Vale dos Vinhedos",
    ],
    "Northeast": [
        "Supermercados Cajueiro",
        "Rede Chapada",
        "Casa Maracatu",
        "Distribuidora Borborema",
        "Empório São Luís",
        "Lojas Velho Chico",
        "Mercantil Cariri",
    ],
    "North": [
        "Supermercados Amapá",
        "Casa Belém Utilidades",
        "Rede Madeira-Mamoré",
        "Empório Boa Vista",
    ],
    "Midwest": [
        "Supermercados Chapadão",
        "Casa Cuiabana",
        "Rede Campo Grande",
        "Empório Brasília Sul",
        "Mercantil Rio Verde",
    ],
}
PROSPECT_OWNERS = {
    "Southeast": ["Ana Ribeiro", "Bruno Sato", "Patrícia Gomes"],
    "South": ["Rafael Kuhn"],
    "Northeast": ["Luana Tavares"],
    "North": ["Luana Tavares"],
    "Midwest": ["Rafael Kuhn"],
}
STAGES = [
    ("lead", 5),
    ("qualified", 6),
    ("proposal", 6),
    ("negotiation", 4),
    ("won", 4),
    ("lost", 4),
]
NEXT_STEPS = {
    "lead": [
        "Find the purchasing contact",
        "Confirm CNPJ and store count",
        "Visit during the regional trade fair",
    ],
    "qualified": [
        "Book a meeting with the category buyer",
        "Send the catalogue and price table",
        "Check credit limit with finance",
    ],
    "proposal": [
        "Follow up on the proposal",
        "Adjust the mix to three SKUs or more",
        "Wait for the buyer's board approval",
    ],
    "negotiation": [
        "Agree freight terms",
        "Get discount approval in the CRM",
        "Send the contract draft",
    ],
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
            rows.append(
                (
                    f"P-26-{400 + n:04d}",
                    company,
                    rng.choice(PROSPECT_OWNERS[region]),
                    stage,
                    value,
                    region,
                    rng.choice(q2).isoformat(),
                    rng.choice(NEXT_STEPS[stage]),
                )
            )
            n += 1
    return rows


# (sku, description, product line, supplier, lead time days, unit cost BRL cents)
CATALOGUE = [
    (
        "AK-200-BR-127V",
        "Aurora kettle 1.7 L | brushed steel, 127 V",
        "kettles",
        "Ningbo Hexin Appliances",
        75,
        6420,
    ),
    (
        "AK-200-BR-220V",
        "Aurora kettle 1.7 L | brushed steel, 220 V",
        "kettles",
        "Ningbo Hexin Appliances",
        75,
        6420,
    ),
    (
        "AK-200-MB-127V",
        "Aurora kettle 1.7 L | matte black, 127 V",
        "kettles",
        "Ningbo Hexin Appliances",
        75,
        6890,
    ),
    (
        "AK-200-GR-220V",
        "Aurora kettle 1.7 L | matte green, 220 V",
        "kettles",
        "Ningbo Hexin Appliances",
        75,
        6890,
    ),
    (
        "AK-120-BR-127V",
        "Aurora mini kettle 1.2 L, 127 V (discontinuing)",
        "kettles",
        "Ningbo Hexin Appliances",
        75,
        5110,
    ),
    (
        "CK-50-BR-127V",
        "Serra coffee maker 30 cups, 127 V",
        "coffee makers",
        "Amazônia Montagens Eletrônicas",
        21,
        13150,
    ),
    (
        "CK-50-BR-220V",
        "Serra coffee maker 30 cups, 220 V",
        "coffee makers",
        "Amazônia Montagens Eletrônicas",
        21,
        13150,
    ),
    ("MG-2-BR-127V", "Moenda M2 burr grinder, 127 V", "grinders", "Foshan Brightmill", 80, 5480),
    ("MG-2-BR-220V", "Moenda M2 burr grinder, 220 V", "grinders", "Foshan Brightmill", 80, 5480),
    (
        "FP-08-BR",
        "Lume French press 800 ml",
        "kitchen tools",
        "Vidraria Atlântica (Marinha Grande)",
        60,
        2010,
    ),
    (
        "FP-03-BR",
        "Lume French press 350 ml",
        "kitchen tools",
        "Vidraria Atlântica (Marinha Grande)",
        60,
        1460,
    ),
    ("SC-12-BR", "Precisa kitchen scale 5 kg", "kitchen tools", "Shenzhen Accuweigh", 70, 1730),
    (
        "SP-200-LID",
        "Spare lid for Aurora kettle",
        "spare parts",
        "Ningbo Hexin Appliances",
        75,
        890,
    ),
    (
        "SP-50-JAR",
        "Spare glass jar for Serra coffee maker",
        "spare parts",
        "Amazônia Montagens Eletrônicas",
        21,
        2470,
    ),
]
WAREHOUSES = [
    ("BRU", "Barueri distribution centre", "Barueri", "SP", "2022-03-14"),
    ("CWB", "Curitiba satellite", "São José dos Pinhais", "PR", "2025-02-03"),
    ("REC", "Recife satellite", "Cabo de Santo Agostinho", "PE", "2025-06-02"),
    ("MIA", "Doral third-party warehouse", "Doral", "FL", "2019-08-01"),
]
COUNTERS = {
    "BRU": ["Sandra Lima", "Edson Prado"],
    "CWB": ["Marcelo Becker"],
    "REC": ["Joana Freitas"],
    "MIA": ["Luis Ortega"],
}


def stock_rows() -> list[tuple]:
    rng = random.Random(5678)
    snapshot = {"BRU": "2026-06-29", "CWB": "2026-06-29", "REC": "2026-06-22", "MIA": "2026-06-26"}
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
            rows.append(
                (
                    sku,
                    desc,
                    line,
                    code,
                    on_hand,
                    reserved,
                    in_transit,
                    reorder,
                    unit_cost,
                    currency,
                    supplier,
                    lead,
                    snapshot[code],
                    rng.choice(COUNTERS[code]),
                )
            )
    return rows


DATASETS = [
    Dataset(
        node_id="sales/orders-2026",
        payload="orders-2026.db",
        tables=[
            Table(
                "orders",
                [
                    ("id", "TEXT"),
                    ("customer", "TEXT"),
                    ("region", "TEXT"),
                    ("total_invoice", "TEXT"),
                    ("closed_at", "TEXT"),
                    ("value_cents", "INTEGER"),
                ],
                primary_key=["id"],
                rows=order_rows,
            )
        ],
    ),
    Dataset(
        node_id="sales/pipeline/prospects-q2",
        payload="prospects-q2.db",
        tables=[
            Table(
                "prospects",
                [
                    ("prospect_id", "TEXT"),
                    ("company", "TEXT"),
                    ("owner", "TEXT"),
                    ("stage", "TEXT"),
                    ("expected_value_cents", "INTEGER"),
                    ("region", "TEXT"),
                    ("first_contact", "TEXT"),
                    ("next_step", "TEXT"),
                ],
                primary_key=["prospect_id"],
                rows=prospect_rows,
            )
        ],
    ),
    Dataset(
        node_id="operations/stock-levels",
        payload="stock-levels.db",
        tables=[
            Table(
                "stock",
                [
                    ("sku", "TEXT"),
                    ("description", "TEXT"),
                    ("product_line", "TEXT"),
                    ("warehouse", "TEXT"),
                    ("on_hand", "INTEGER"),
                    ("reserved", "INTEGER"),
                    ("in_transit", "INTEGER"),
                    ("reorder_point", "INTEGER"),
                    ("unit_cost_cents", "INTEGER"),
                    ("currency", "TEXT"),
                    ("supplier", "TEXT"),
                    ("lead_time_days", "INTEGER"),
                    ("counted_at", "TEXT"),
                    ("counted_by", "TEXT"),
                ],
                primary_key=["sku", "warehouse"],
                rows=stock_rows,
            ),
            Table(
                "warehouses",
                [
                    ("code", "TEXT"),
                    ("name", "TEXT"),
                    ("city", "TEXT"),
                    ("state", "TEXT"),
                    ("opened_at", "TEXT"),
                ],
                primary_key=["code"],
                rows=lambda: list(WAREHOUSES),
            ),
        ],
    ),
]
