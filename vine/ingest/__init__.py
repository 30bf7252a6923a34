"""``ingest``: turn folders and files a person already has into forest nodes, with no
model, in one commit.

Directories become branches (planted before their children); files become nodes by
extension: notes, datasets (CSV, TSV, flat JSON arrays, adopted SQLite files, and
``.xlsx`` with the optional extra), documents (other JSON, ``.docx`` with the extra) and
media (images and audio, the original kept under ``_assets/``, outside git). Anything
else is listed as unsupported. Every file is first planned (read, classified, its
passport built, a dataset's payload born in ``_derived/tmp``), then everything lands in
one transaction and one commit.

Re-running is idempotent: a node remembers its source by ``origin`` (a ``file://`` URI)
and ``source_hash``; an unchanged source writes nothing, a changed one refreshes the
node and keeps what a person curated, a vanished one is reported ``stale`` and kept.
A malformed file is reported as failed and never stops the run."""

from __future__ import annotations

from .files import add_entries, walk_count
from .passport import column_names, make_aliases, slug_segment, summarize
from .run import ingest
from .tables import infer_columns

__all__ = [
    "add_entries",
    "column_names",
    "infer_columns",
    "ingest",
    "make_aliases",
    "slug_segment",
    "summarize",
    "walk_count",
]
