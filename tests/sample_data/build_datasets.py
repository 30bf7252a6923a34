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
import os
import re
import sqlite3
import sys
import tempfile
from pathlib import Path

from sample_datasets import DATASETS, Dataset
from sample_passport import FM_RE, H2_RE, render_map, sha256_file

DEFAULT_FOREST = Path(__file__).resolve().parents[2] / "sample-brain"


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
        head = re.sub(
            r"^(payload_type:.*)$", rf"\1\npayload_hash: {value}", head, count=1, flags=re.M
        )
    else:
        head += f"\npayload_hash: {value}"
    return f"---\n{head}\n---\n" + text[m.end() :]


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
        from sample_check import check  # PyYAML: only a check needs it

        return check(forest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
