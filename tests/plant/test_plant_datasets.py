"""plant's datasets: a schema and rows planted with their passport, payload and hash, in
one commit."""

from __future__ import annotations

import hashlib
import sqlite3

from monkeyllm import Vine

from ..forestkit import PROSPECTING, assert_ok, git, head, node, status
from .kit import EM, changed_files, split

SEED_BODY = f"""# Client prospecting 2026

## Query manual

Tables:
- `clients(name TEXT, site TEXT, segment TEXT, collected_at TEXT)`

Example queries:
- `SELECT * FROM clients LIMIT 5`
- `SELECT COUNT(*) FROM clients`

## Sample rows

### clients {EM} 1 row

| name | site | segment | collected_at |
| --- | --- | --- | --- |
| Acme | acme.example | industry | 2026-01-14 |
"""


def test_seed_dataset_example(clients: Vine) -> None:
    root = clients.root
    out = assert_ok(clients.plant(dict(PROSPECTING)))
    assert out == {
        "id": "clients/prospecting-2026",
        "created": True,
        "commit": head(root),
        "trail": ["_index", "clients/_index"],
    }
    db = root / "clients" / "prospecting-2026.db"
    assert db.is_file()
    conn = sqlite3.connect(db)
    try:
        info = conn.execute("PRAGMA table_info(clients)").fetchall()
        rows = conn.execute("SELECT * FROM clients").fetchall()
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    finally:
        conn.close()
    assert [(c[1], c[2], c[5]) for c in info] == [
        ("name", "TEXT", 1),
        ("site", "TEXT", 0),
        ("segment", "TEXT", 0),
        ("collected_at", "TEXT", 0),
    ]
    assert tables == [("clients",)]
    assert rows == [("Acme", "acme.example", "industry", "2026-01-14")]

    meta, body = split(root / "clients" / "prospecting-2026.md")
    assert meta["payload"] == "prospecting-2026.db" and meta["payload_type"] == "sqlite"
    assert meta["payload_hash"] == hashlib.sha256(db.read_bytes()).hexdigest()
    assert "schema" not in meta and "rows" not in meta and "parent" not in meta
    assert body == SEED_BODY

    assert (
        git(root, "log", "-1", "--format=%s").strip()
        == "plant(clients/prospecting-2026): Client prospecting 2026 [source=agent]"
    )
    assert changed_files(root) == {"clients/prospecting-2026.md", "clients/_index.md"}
    assert not [
        f for f in git(root, "ls-files").split() if not f.endswith(".md") and f != ".gitignore"
    ]
    assert status(root) == ""

    query = assert_ok(
        clients.query("clients/prospecting-2026", "SELECT name, segment FROM clients")
    )
    assert query["rows"] == [["Acme", "industry"]]
    look = assert_ok(clients.look("clients/prospecting-2026"))
    assert look["query_manual"]["tables"] == {
        "clients": ["name", "site", "segment", "collected_at"]
    }


def test_dataset_without_rows_has_no_sample_rows(clients: Vine) -> None:
    spec = {k: v for k, v in PROSPECTING.items() if k != "rows"}
    assert_ok(clients.plant(spec))
    _, body = split(clients.root / "clients" / "prospecting-2026.md")
    assert "## Query manual" in body and "## Sample rows" not in body
    conn = sqlite3.connect(clients.root / "clients" / "prospecting-2026.db")
    try:
        assert conn.execute("SELECT COUNT(*) FROM clients").fetchone() == (0,)
    finally:
        conn.close()


def test_generated_manual_shapes(clients: Vine) -> None:
    """§2.4: schema order, the wide-table rule, 12 sample columns, cell rendering."""
    wide = {f"c{i:02d}": "TEXT" for i in range(14)}
    long_text = "word " * 40
    assert_ok(
        clients.plant(
            node(
                "clients/shapes",
                "clients/_index",
                "Shapes",
                "Rows that exercise the generated manual.",
                type="dataset",
                body="Intro line.\n\n## Notes\n\nRead me first.",
                schema={
                    "zeta": {
                        "columns": {"id": "integer", "note": "TEXT", "blob": "BLOB", "val": "real"}
                    },
                    "alpha": {"columns": wide},
                    "empty": {"columns": {"x": "TEXT"}},
                },
                rows={
                    "zeta": [
                        [1, "a | b\n  c", b"\x00\x01\x02", None],
                        [2, long_text, None, 1.5],
                        [3, "x", None, 2.0],
                        [4, "y", None, 3.0],
                    ],
                    "alpha": [[f"v{i}" for i in range(14)]],
                },
            )
        )
    )
    _, body = split(clients.root / "clients" / "shapes.md")
    assert body.startswith("# Shapes\n\nIntro line.\n\n## Notes\n\nRead me first.\n\n")
    manual = body[body.index("## Query manual") : body.index("## Sample rows")]
    cols = ", ".join(f"c{i:02d} TEXT" for i in range(14))
    assert manual.split("\n")[:6] == [
        "## Query manual",
        "",
        "Tables:",
        "- `zeta(id INTEGER, note TEXT, blob BLOB, val REAL)`",
        f"- `alpha({cols})`",
        "- `empty(x TEXT)`",
    ]
    examples = section_after(manual, "Example queries:")
    assert examples[0:2] == ["- `SELECT * FROM zeta LIMIT 5`", "- `SELECT COUNT(*) FROM zeta`"]
    assert examples[2] == "- `SELECT COUNT(*) FROM alpha`"
    assert "SELECT * FROM alpha" not in manual
    assert "alpha" in examples[3] and "`" not in examples[3]  # the "name columns" line
    assert examples[4:6] == ["- `SELECT * FROM empty LIMIT 5`", "- `SELECT COUNT(*) FROM empty`"]

    samples = body[body.index("## Sample rows") :].split("\n")
    zeta = samples.index(f"### zeta {EM} 4 rows")
    assert samples[zeta + 2 : zeta + 7] == [
        "| id | note | blob | val |",
        "| --- | --- | --- | --- |",
        "| 1 | a \\| b c | <blob 3 bytes> |  |",
        f"| 2 | {long_text.strip()[:120]}\u2026 |  | 1.5 |",
        "| 3 | x |  | 2.0 |",
    ]
    alpha = samples.index(f"### alpha {EM} 1 row")
    assert samples[alpha + 2] == "| " + " | ".join(f"c{i:02d}" for i in range(12)) + " |"
    assert samples[alpha + 3] == "|" + " --- |" * 12
    assert samples[alpha + 4] == "| " + " | ".join(f"v{i}" for i in range(12)) + " |"
    assert "2" in samples[alpha + 5] and samples[alpha + 5].startswith("_")
    empty = samples.index(f"### empty {EM} 0 rows")
    assert samples[empty + 2] == "_No rows._"


def section_after(text: str, marker: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index(marker)
    out = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        out.append(line)
    return out


def test_caller_query_manual_is_kept_verbatim(clients: Vine) -> None:
    body = (
        "# Prospects\n\n## Query manual\n\nAsk `SELECT name FROM clients`; site is a "
        "bare domain.\n\n## Notes\n\nCollected by hand.\n"
    )
    assert_ok(clients.plant({**PROSPECTING, "body": body}))
    assert split(clients.root / "clients" / "prospecting-2026.md")[1] == body


def test_payload_name_can_be_given(clients: Vine) -> None:
    assert_ok(clients.plant({**PROSPECTING, "payload": "prospects.db"}))
    assert (clients.root / "clients" / "prospects.db").is_file()
    assert not (clients.root / "clients" / "prospecting-2026.db").exists()
    query = assert_ok(clients.query("clients/prospecting-2026", "SELECT COUNT(*) FROM clients"))
    assert query["rows"] == [[1]]
