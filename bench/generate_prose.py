"""The prose of synthetic bodies: paragraphs of Zipf-drawn words in English or Portuguese,
with codes, names and numbers inserted for sniff to find."""

from __future__ import annotations

import json
import random

from bench.generate_format import cap, day
from bench.generate_plan import Leaf
from bench.generate_vocab import Vocab
from bench.generate_words import DATE_SPAN, DATE_START, HEADINGS_EN, HEADINGS_PT, TABLE_BITS

_LEN_WEIGHTS = [1, 2, 3, 5, 6, 8, 9, 10, 10, 10, 9, 8, 7, 6, 5, 4, 3, 3, 2, 2, 1, 1, 1]
_LEN_TABLE = [n for n, w in enumerate(_LEN_WEIGHTS, start=4) for _ in range(w)]
_CODE_FORMATS = [
    "INV-{y}-{n4}",
    "SKU-{n5}",
    "PO-{n6}",
    "TCK-{n5}",
    "CTR-{y}-{n3}",
    "NF-{n4}",
    "REQ-{n4}",
]


def make_code(rng: random.Random) -> str:
    return rng.choice(_CODE_FORMATS).format(
        y=rng.randint(2019, 2026),
        n3=f"{rng.randint(1, 999):03d}",
        n4=f"{rng.randint(1, 9999):04d}",
        n5=rng.randint(10000, 99999),
        n6=rng.randint(100000, 999999),
    )


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
        ws[0] = cap(ws[0])
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
            text = cap(" ".join(ws))
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
            code = (
                f"def {a}_{b}({c}, {d}=None):\n    total = 0\n    for row in {c}:\n"
                f'        total += row.get("{d}", {r.randint(0, 9)})\n    return total'
            )
        elif lang == "sql":
            code = (
                f"SELECT {a}, SUM({b}) AS total\nFROM {c}_{d}\n"
                f"WHERE {d} >= '{day(DATE_START + r.randrange(DATE_SPAN))}'\n"
                f"GROUP BY {a}\nORDER BY total DESC;"
            )
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
        return (
            f"{cap(r.choice(topics))} {r.choice(self.v.en_nouns)}"
            if lang == "en"
            else f"{cap(r.choice(topics))} e {r.choice(topics)}"
        )

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


def inserts_for(rng: random.Random, leaf: Leaf, all_ids: list[str]) -> list[str]:
    """What a leaf's body carries for sniff to find: codes, and the ids it names."""
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
