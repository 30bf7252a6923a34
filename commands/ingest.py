"""``vine ingest``: turn folders and files into forest nodes, in one commit.

Exit status: 0 when the run did something (files failing alongside are listed in the
report), 1 when the engine refused the run or every file it tried failed.
"""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from . import common, options

PROGRESS_FROM = 50  # files: fewer finish before a bar would be worth drawing


def ingest(
    sources: Annotated[
        list[Path],
        typer.Argument(
            help="Folders (their contents go under --into) and files to ingest.", show_default=False
        ),
    ],
    into: Annotated[
        str, typer.Option("--into", help="The destination branch; missing ones are planted.")
    ] = "_index",
    forest: options.Forest = None,
    json: options.Json = False,
    prefer_source: Annotated[
        bool,
        typer.Option(
            "--prefer-source",
            help="When a node's body was edited since its ingest and its "
            "file changed too, take the file's body (the edit is otherwise kept and the file "
            "reported as a conflict).",
        ),
    ] = False,
) -> None:
    """Turn a folder (or files) into nodes: directories become branches, notes, tables,
    JSON, SQLite files and media become nodes, all in one commit; re-running on an
    unchanged source changes nothing.

    \b
    Example: vine ingest ~/notes --into notes/_index
    """
    as_json = common.json_mode(json)
    from monkeyllm.errors import VineError
    from monkeyllm.ingest import ingest as run
    from monkeyllm.ingest import walk_count

    with common.cli_words():
        vine = common.open_vine(forest, writable=True, as_json=as_json)
        try:
            if sys.stderr.isatty() and walk_count(sources) >= PROGRESS_FROM:
                report = _with_progress(
                    lambda progress: run(
                        vine, sources, into, progress=progress, prefer_source=prefer_source
                    )
                )
            else:
                report = run(vine, sources, into, prefer_source=prefer_source)
        except VineError as exc:
            common.fail(exc.envelope(), as_json)
        finally:
            vine.close()
    counts = report["counts"]
    did_nothing = counts["failed"] and not (
        counts["created"] or counts["updated"] or counts["unchanged"]
    )
    if as_json:
        common.write_json(report)
    else:
        _show(report)
        _canopy_note(vine.root, counts)
    if did_nothing:
        if as_json:  # the report is on stdout; say on stderr why the status is 1
            first = report["failed"][0]
            sys.stderr.write(
                f"vine ingest: nothing was ingested: {counts['failed']} failed "
                f"({first['path']}: {first['reason']})\n"
            )
        raise typer.Exit(common.EXIT_ERROR)


def _with_progress(work: Any) -> dict[str, Any]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("Reading files"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("ingest", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return work(progress)


def _canopy_note(root: Path, counts: dict[str, Any]) -> None:
    """On a forest with a Canopy, say that the new and changed nodes wait for their
    vectors (hybrid reads embed a few at a time; a build embeds them all)."""
    changed = counts["created"] + counts["updated"]
    if changed and (root / "_derived" / "canopy" / "index.json").exists():
        common.console().print(
            (f"{changed} node waits" if changed == 1 else f"{changed} nodes wait")
            + " for their vectors in the Canopy: "
            "vine canopy build embeds them now.",
            markup=False,
            style="dim",
        )


def _show(report: dict[str, Any]) -> None:
    console = common.console()
    counts = report["counts"]
    commit = report.get("commit")
    console.print(
        f"Ingested into {report['into']}: {counts['created']} created, "
        f"{counts['updated']} updated, {counts['unchanged']} unchanged, "
        f"{counts['unsupported']} unsupported, {counts['failed']} failed"
        + (f", {counts['stale']} stale" if counts["stale"] else "")
        + (f", {counts['conflict']} in conflict" if counts.get("conflict") else "")
        + (f" (commit {commit[:10]})" if commit else " (nothing to commit)")
        + ".",
        markup=False,
    )
    for bucket in ("failed", "unsupported", "stale", "conflict"):
        for entry in report[bucket]:
            why = entry.get("reason") or f"source gone; node {entry['id']} kept"
            console.print(f"  {bucket}: {entry['path']}: {why}", markup=False)
    for entry in report.get("unresolved_links", []):
        console.print(
            f"  link left as written: {entry['path']}: {entry['link']}: {entry['reason']}",
            markup=False,
        )
    for bucket in ("created", "updated"):
        for entry in report[bucket]:
            for warning in entry.get("warnings", []):
                console.print(f"  warning: {entry['path']}: {warning}", markup=False)
