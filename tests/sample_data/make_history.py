"""Rebuild ``sample-brain.bundle``: sample-brain/'s own git history, as a git bundle.

A forest owns its git repository, but a repository cannot be committed inside
another one, so sample-brain/'s history travels as a bundle beside it. The
history replays how the forest grew: the empty skeleton, then one planted batch
per region in the order they were created, then the master index. Its last
commit holds exactly the markdown files in sample-brain/ (a test checks that).

    python tests/sample_data/make_history.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent.parent / "sample-brain"
BUNDLE = HERE / "sample-brain.bundle"
IDENTITY = ["-c", "user.name=vine", "-c", "user.email=vine@monkeyllm.local"]
_CREATED = re.compile(r"^created: '?(\d{4}-\d{2}-\d{2})'?$", re.MULTILINE)


def created(path: Path) -> str:
    m = _CREATED.search(path.read_text(encoding="utf-8"))
    return m.group(1) if m else "2026-01-01"


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = dict(os.environ)
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{date}T09:00:00+00:00"
    out = subprocess.run(
        ["git", *IDENTITY, *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout


def main() -> None:
    files = sorted(
        p.relative_to(SAMPLE)
        for p in SAMPLE.rglob("*")
        if p.is_file()
        and (p.suffix == ".md" or p.name == ".gitignore")
        and "_derived" not in p.parts
    )
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "brain"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")

        def add(paths: list[Path], message: str, date: str) -> None:
            for rel in paths:
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(SAMPLE / rel, repo / rel)
            git(repo, "add", "--", *map(str, paths))
            git(repo, "commit", "-q", "-m", message, date=date)

        skeleton = [Path(".gitignore"), Path("_meta/schema.md")]
        add(
            skeleton,
            "init: forest 'Acme Trading' (empty A.5 skeleton)",
            created(SAMPLE / "_meta/schema.md"),
        )
        regions: dict[str, list[Path]] = {}
        for rel in files:
            if rel in skeleton or rel == Path("_index.md"):
                continue
            region = rel.parts[0] if len(rel.parts) > 1 else "(root)"
            regions.setdefault(region, []).append(rel)
        order = sorted(regions, key=lambda r: min(created(SAMPLE / p) for p in regions[r]))
        when = created(SAMPLE / "_meta/schema.md")
        for region in order:
            paths = regions[region]
            when = max(when, *(created(SAMPLE / p) for p in paths))
            add(paths, f"plant(batch): {len(paths)} nodes", when)
        add(
            [Path("_index.md")],
            "graft(_index): landmarks and cross trails",
            max(created(SAMPLE / p) for p in files),
        )
        BUNDLE.unlink(missing_ok=True)
        git(repo, "bundle", "create", str(BUNDLE), "HEAD", "main")
    print(f"wrote {BUNDLE.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
