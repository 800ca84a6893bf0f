"""`hemra import` of a HEMRA export, on SQLite and PostgreSQL: it comes in as an import (never
as a run HEMRA executed, whatever its manifest claims), labelled as asked, with its provenance
(the manifest's digest, who imported it, when, what the export called it) in the CLI, the API
and the report header; and a crafted manifest (a time of 1e300, a state or verdict HEMRA does
not know) sent through a deployment's front door is refused in one line, the store unchanged."""

import json
from pathlib import Path

import grpc
import httpx
import pytest
from typer.testing import CliRunner

from hemra.clients.cli.main import app
from hemra.gateway.app import create_app
from hemra.gateway.frontdoor import build_front_door
from hemra.services import digests
from hemra.services.common import transport
from hemra.services.common.errors import InvalidArgument
from hemra.services.compose import embedded
from hemra.services.domain import folders
from hemra.services.domain.exportformat import MANIFEST, blob_path
from hemra.services.domain.tasks import load_task, task_to_proto
from hemra.services.store import convert
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import store_service_pb2 as spb
from tests.store.test_hostile_restore import TASK_DIR, _manifest, _nop


def _export(root: Path, craft=None) -> tuple[Path, dict]:
    """An export folder of a one-trial nop run on a bundled task, as `hemra export` writes it;
    `craft(rows)` changes its manifest first."""
    loaded = load_task(TASK_DIR)
    task = dict(digest=loaded.digest, task_name=loaded.task_name, record=convert.to_dict(task_to_proto(loaded)))
    rows = _manifest(task, _nop())
    rows["attempts"][0].update(score={"state": "SCORE_STATE_SCORED", "rewards": {"reward": 0.0}}, verdict="failed")
    if craft is not None:
        craft(rows)
    for file in loaded.files:
        path = blob_path(root, file.digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file.data)
    (root / MANIFEST).write_text(json.dumps(rows, indent=1))
    return root, rows


@pytest.fixture
def home(database_url, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HEMRA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HEMRA_DATABASE_URL", database_url)
    return tmp_path / "home"


def _hemra(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_import_of_an_export__an_import_with_its_label_and_provenance_everywhere(home, tmp_path):
    folder, rows = _export(tmp_path / "export")
    original = rows["runs"][0]["id"]
    said = _hemra("import", str(folder), "--label", "mine").stdout
    import_id = "i-" + original[2:]
    assert said.startswith(f"import {import_id} (mine): 1 trials, hemra-export 1")
    [listed] = json.loads(_hemra("runs", "--json").stdout)
    assert (listed["id"], listed["kind"], listed["label"], listed["import_format"]) == (
        import_id,
        "import",
        "mine",
        "hemra-export 1",
    )
    provenance = listed["provenance"]
    assert provenance["export_digest"] == digests.sha256((folder / MANIFEST).read_bytes())
    assert provenance["imported_by"].startswith("local user ")
    assert (provenance["original_id"], provenance["original_kind"], provenance["original_label"]) == (
        original,
        "run",
        "theirs",
    )
    assert "import_time" in provenance and listed["source"] == str(folder.resolve())
    table = _hemra("runs").stdout
    assert import_id in table and "import" in table.replace(import_id, "")
    report = _hemra("show", "mine", "--report").stdout.splitlines()
    assert report[0] == f"import {import_id} (mine), baseline nop"
    assert report[1] == f"  results made elsewhere (hemra-export 1), read from {folder.resolve()}"
    assert report[2].startswith("  imported ") and f"export manifest {provenance['export_digest']}" in report[2]
    assert report[3] == f"  the export called it run {original} (theirs)"
    # The verdict is the store's, from the rewards: 0 fails (the manifest said so too).
    [attempt] = json.loads(_hemra("show", "mine").stdout)["attempts"]
    assert attempt["verdict"] == "failed"


def test_import_of_an_export__without_a_label_keeps_the_exports(home, tmp_path):
    folder, _ = _export(tmp_path / "export")
    assert "(theirs)" in _hemra("import", str(folder)).stdout


async def test_api__an_imported_export_is_an_import_with_its_provenance(home, tmp_path, database_url):
    folder, rows = _export(tmp_path / "export")
    async with embedded.services(home, database_url, only=("store", "planner", "importer")) as services:
        response = await services.importer.ImportResults(ipb.ImportResultsRequest(path=str(folder)))
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(services.store)), base_url="http://127.0.0.1"
        )
        async with client:
            run = (await client.get(f"/api/runs/{response.import_id}")).json()
            report = (await client.get(f"/api/runs/{response.import_id}/report")).json()
            imports = (await client.get("/api/runs?kind=import")).json()["runs"]
            executed = (await client.get("/api/runs?kind=run")).json()["runs"]
    assert (run["kind"], run["provenance"]["original_id"], run["provenance"]["original_kind"]) == (
        "import",
        rows["runs"][0]["id"],
        "run",
    )
    assert (report["kind"], report["import_format"], report["provenance"]["original_label"]) == (
        "import",
        "hemra-export 1",
        "theirs",
    )
    assert [r["id"] for r in imports] == [response.import_id] and executed == []


# --------------------------------------------------------------------------- through the front door


def _runs_claimed(rows):
    rows["runs"][0]["kind"] = "run"  # as every export of an executed run says


CRAFTED = {
    "a create time of 1e300": (
        lambda rows: rows["runs"][0].update(create_time=1e300),
        "create_time 1e+300 is not a time HEMRA records",
    ),
    "an unknown state": (
        lambda rows: rows["attempts"][0].update(state="pwned"),
        "state 'pwned' is not one HEMRA knows",
    ),
    "an unknown verdict": (
        lambda rows: rows["attempts"][0].update(verdict="pwned"),
        "verdict 'pwned' is not one HEMRA knows",
    ),
}


@pytest.fixture
async def front_door(home, database_url):
    """A deployment in this process (store, planner, importer) behind its front door; the
    store and importer clients a remote `hemra` uses, through the front door only."""
    async with embedded.services(home, database_url, only=("store", "planner", "importer")) as services:
        channels = {name: services.channel(name) for name in ("store", "planner", "importer")}
        server, port = build_front_door(channels, services.token, "127.0.0.1:0")
        await transport.start(server)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        try:
            yield services, transport.store(channel, services.token), transport.importer(channel, services.token)
        finally:
            await channel.close()
            await transport.stop(server, grace=None)


@pytest.mark.parametrize("case", list(CRAFTED))
async def test_front_door__a_crafted_export_is_refused_in_one_line_and_nothing_recorded(case, front_door, tmp_path):
    services, store, importer = front_door
    craft, fragment = CRAFTED[case]
    folder, _ = _export(tmp_path / "export", craft)
    sent = await folders.send(store, folder, ref="export")
    with pytest.raises(InvalidArgument) as refused:
        await importer.ImportResults(ipb.ImportResultsRequest(folder=sent))
    assert fragment in str(refused.value) and "\n" not in str(refused.value)
    assert list((await services.store.ListRuns(spb.ListRunsRequest())).runs) == []


async def test_front_door__an_export_claiming_to_be_a_run_comes_in_as_an_import(front_door, tmp_path):
    _, store, importer = front_door
    folder, rows = _export(tmp_path / "export", _runs_claimed)
    sent = await folders.send(store, folder, ref="export")
    imported = await importer.ImportResults(ipb.ImportResultsRequest(folder=sent, label="sent"))
    run = (await store.GetRun(spb.GetRunRequest(run=imported.import_id))).run
    assert (run.id, run.kind, run.label, run.source) == ("i-" + rows["runs"][0]["id"][2:], "import", "sent", "export")
    assert run.provenance.imported_by == "remote caller (folder sent to the server)"
    assert (run.provenance.original_kind, run.provenance.original_label) == ("run", "theirs")
    assert [r.id for r in (await store.ListRuns(spb.ListRunsRequest(kind="run"))).runs] == []
