"""``vine validate``: the checks a forest repository runs in CI, and the safe repairs.

:func:`validate` reads every file of a forest (never the catalog, which could be
stale, and never writing anything) and returns :class:`Finding` objects. Each has a
severity, a stable ``code``, the node id and file path, the line where it is known, a
message and how to fix it. :func:`fix` makes the repairs that need no judgement in
one commit.

Errors are what breaks reading or writing the forest, or what a writer would refuse;
warnings are drift that readers survive and that a mechanical pass or a person can
settle later; notes are what ``--fix`` would record although nothing is wrong (a
dataset written without ``payload_hash``, as forests of the existing engine may be).
Run ``--strict`` in CI to fail on errors and warnings; notes never fail a run.

==========================  ========  ===========================================
code                        severity  what it means
==========================  ========  ===========================================
file.unparseable            error     no or unterminated frontmatter, bad YAML, not a
                                      mapping, binary or not UTF-8
frontmatter.missing-key     error     a required key is absent (a branch may take
                                      title, summary and created from its H1, its
                                      blockquote and ``updated``)
frontmatter.invalid         error     a key of the wrong shape: dates, confidence,
                                      tags, aliases, origin, enums, links
frontmatter.id-mismatch     error     ``id`` is not the file's path id
schema.unknown-type         error     ``type`` is not declared in _meta/schema.md
schema.unknown-rel          error     a link's ``rel`` is not declared there
links.too-many              error     more than 50 links
links.dangling              error     a link target that is not a node
tree.missing-parent         error     a folder holds nodes but has no _index.md
tree.parent-not-branch      error     an _index.md whose type is not ``branch``
waymark.live                error     a ``moved_from`` id that is still a live node
waymark.loop                error     a ``moved_from`` naming the node itself, or
                                      waymarks that lead back where they started
waymark.ambiguous           error     one old id in the ``moved_from`` of two nodes
payload.undeclared          error     a dataset without a ``payload`` key
payload.invalid             error     a payload path leaving the forest or inside
                                      _derived/ or .git/
payload.missing             error     a local payload file that is not there
payload.damaged             error     a dataset payload whose hash is not recorded
                                      and that is not sound: bytes added or cut off,
                                      an unsettled write, a failing quick_check, a
                                      table the Query manual names missing
summary.empty               warning   the summary is empty
summary.too-long            warning   the summary is over 60 estimated tokens
summary.boilerplate         warning   "This document describes...", "File containing..."
body.broken-wikilink        warning   a ``[[id]]`` in a body that is not a node
index.missing-entry         warning   a child the parent index does not list
index.extra-entry           warning   an entry for something that is not a child
index.duplicate-entry       warning   a child listed twice
index.misplaced-entry       warning   a branch under Direct bananas, or a leaf under
                                      Sub-branches
index.stale-summary         warning   an entry whose text is not the child's summary
index.coverage              warning   ``coverage`` differs from the entry lines
payload.hash-drift          warning   the payload's sha256 is not ``payload_hash``
payload.hash-missing        note      a dataset payload with no ``payload_hash``
payload.orphan              warning   a ``.db``/``.sqlite`` file or an ``_assets/`` file
                                      that no node names
==========================  ========  ===========================================

The reference's upstream validator makes the first group errors and summary rules,
broken wikilinks and hash drift warnings; the index, coverage and orphan checks are
ours and are warnings because the files still read correctly and :func:`fix` (or
``vine validate --fix``) repairs all of them but orphans. ``_meta/*`` is only
parse-checked. Remote payloads (``s3://...``) are not checked; ``payloads=False``
skips every check that needs payload files, for checkouts without them (``*.db`` and
``_assets/`` never enter git)."""

from __future__ import annotations

from .model import ERROR, NOTE, WARNING, Finding
from .repair import fix
from .run import validate

__all__ = ["ERROR", "NOTE", "WARNING", "Finding", "fix", "validate"]
