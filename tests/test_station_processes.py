"""The Station beside other processes: keys made with the CLI, the trailers of its commits,
and a forest another process writes (409 at once, never a wait past the limit)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from monkeyllm import Vine

from .forestkit import copy_sample, git, node
from .mcpkit import VINE
from .test_station import _key, _serve


def test_cli_keys(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from monkeyllm.commands.app import app

    copy_sample(tmp_path / "acme")
    runner = CliRunner()
    added = runner.invoke(
        app,
        [
            "station",
            "key",
            "add",
            "ana",
            "--root",
            str(tmp_path),
            "--forest",
            "acme",
            "--deny",
            "secret",
            "--caps",
            "read,query",
        ],
    )
    assert added.exit_code == 0, added.output
    made = json.loads(added.stdout.splitlines()[0])
    assert made["key"].startswith("mk_")
    listed = runner.invoke(app, ["station", "key", "list", "--root", str(tmp_path)])
    assert made["key"] not in listed.stdout and made["id"] in listed.stdout
    assert json.loads(listed.stdout.splitlines()[0])["deny"] == ["secret/"]
    assert (
        runner.invoke(
            app, ["station", "key", "revoke", made["id"], "--root", str(tmp_path)]
        ).exit_code
        == 0
    )
    assert (
        runner.invoke(
            app, ["station", "key", "revoke", made["id"], "--root", str(tmp_path)]
        ).exit_code
        == 1
    )
    bad = runner.invoke(
        app,
        [
            "station",
            "key",
            "add",
            "x",
            "--root",
            str(tmp_path),
            "--forest",
            "acme",
            "--caps",
            "fly",
        ],
    )
    assert bad.exit_code != 0
    assert not (tmp_path / ".station" / "acme").exists()
    shutil.rmtree(tmp_path / ".station")


def test_vine_trailers_end_the_commit_message(tmp_path: Path) -> None:
    from monkeyllm.errors import SchemaError

    root = copy_sample(tmp_path / "brain", git=True)
    note = node(
        "sales/trailer-note", "sales/_index", "Trailer note", "Planted to test commit trailers."
    )
    with Vine(root) as vine:
        with vine.trailers({"station-principal": "ana"}):
            sha = vine.plant(note)["commit"]
        plain = vine.graft(
            note["id"], {"set_frontmatter": {"summary": "Edited without any trailer at all."}}
        )["commit"]
        with pytest.raises(SchemaError), vine.trailers({"bad key": "x"}):
            pass
    assert (
        git(root, "log", "-1", "--format=%B", sha).rstrip().endswith("\n\nstation-principal: ana")
    )
    assert "station-principal" not in git(root, "log", "-1", "--format=%B", plain)


def test_a_forest_another_process_writes_answers_409_to_writes_only(tmp_path: Path) -> None:
    """Reads go on beside another process's writer; writes answer 409 until it lets go,
    then the Station takes the lock and commits with its principal."""
    import subprocess
    import sys

    root = tmp_path / "root"
    forest = copy_sample(root / "acme", git=True)
    key = _key(root, "admin", caps="read,write")[1]
    patch = {"id": "sales/exchange-policy", "patch": {"set_frontmatter": {"tags": ["held"]}}}
    with (
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from monkeyllm import Vine; "
                f"v = Vine({str(forest)!r}); print('held', flush=True); sys.stdin.read()",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as holder,
        _serve(root) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        headers = {"Authorization": f"Bearer {key}"}
        read = client.post(
            "/v1/forests/acme/look", headers=headers, json={"id": "sales/exchange-policy"}
        )
        write = client.post("/v1/forests/acme/graft", headers=headers, json=patch)
        listed = client.get("/v1/forests", headers=headers).json()["forests"]
        holder.stdin.close()
        holder.wait(timeout=30)
        after = client.post("/v1/forests/acme/graft", headers=headers, json=patch)
        again = client.post(
            "/v1/forests/acme/look",
            headers=headers,
            json={"id": "sales/exchange-policy", "fields": ["tags"]},
        )
    assert read.status_code == 200, read.text
    assert write.status_code == 409, write.text
    assert write.json()["error"]["code"] == "E_LOCKED"
    assert listed[0]["locked"] is True
    assert after.status_code == 200, after.text
    assert "held" in again.json()["tags"]
    assert "station-principal: admin" in git(forest, "log", "-1", "--format=%B")


@pytest.mark.parametrize(
    "command", [["station", "serve", "--root"], ["serve", "--transport", "http", "-f"]]
)
def test_a_port_taken_says_so_in_one_line_and_announces_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    """The server binds before it says where it serves: a port another program holds
    is one line on stderr and exit status 3, never an address it does not serve."""
    forest = copy_sample(tmp_path / "acme")
    where = str(tmp_path) if command[0] == "station" else str(forest)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [VINE, *command, where, "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"vine {command[0]}: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
