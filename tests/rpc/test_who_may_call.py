"""Who may call what (services/common/access.py), enforced by a real gateway front door in front of
real store, planner and importer servers: a caller through the front door is a user, sends
contents and never names a path on the server, and calls no RPC of workers or of the
deployment's own services. Each refusal is PERMISSION_DENIED in one line; the embedded client
(the services called directly, on their own machine) still reads its paths, and
HEMRA_ALLOW_SERVER_PATHS=1 on the gateway lets users name them."""

import re
import shutil

import pytest

from hemra.gateway import frontdoor
from hemra.services.common import access, errors
from hemra.services.domain import folders
from hemra.v1 import common_pb2 as pb
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import REPO
from tests.importer.test_imports import unpack
from tests.rpc.frontdoor import deployment, one_line

ALLOW = "(HEMRA_ALLOW_SERVER_PATHS=1 on the gateway allows them)"


@pytest.fixture
def server_tasks(tmp_path):
    """A folder of task folders on the deployment's machine, that no user sent."""
    folder = tmp_path / "server-tasks"
    shutil.copytree(REPO / "examples" / "hemra-offline" / "reverse-lines", folder / "reverse-lines")
    return folder


@pytest.fixture
async def door(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_HOME", str(tmp_path / "home"))
    async with deployment(tmp_path / "home") as door:
        yield door


async def _denied(call) -> str:
    with pytest.raises(errors.HemraError) as caught:
        await call
    return one_line(caught.value, "PERMISSION_DENIED")


def _spec(**fields) -> pb.RunSpec:
    return pb.RunSpec(**{"datasets": ["hemra-offline"], "harnesses": ["oracle"], "sandbox": "host", **fields})


async def test_a_dataset_folder_on_the_server_is_refused_to_a_user_and_read_for_the_embedded_client(door, server_tasks):
    for call in (
        door.planner.PinDataset(ppb.PinDatasetRequest(ref=str(server_tasks))),
        door.planner.AuditDataset(ppb.AuditDatasetRequest(ref=str(server_tasks))),
    ):
        message = await _denied(call)
        assert message.endswith(
            f": dataset {str(server_tasks)!r} names a path on the server; through the front door a caller "
            f"sends contents, not server paths {ALLOW}"
        ), message
    assert (await door.store.ListDatasets(spb.ListDatasetsRequest())).datasets == []  # nothing pinned
    # The embedded client reaches the planner itself, on the machine whose folder it is.
    pinned = await door.embedded.planner.PinDataset(ppb.PinDatasetRequest(ref=str(server_tasks)))
    assert [t.task_name for t in pinned.dataset.tasks] == ["hemra/reverse-lines"]
    # A dataset's name is no path: the deployment's own datasets stay reachable by name.
    named = await door.planner.PinDataset(ppb.PinDatasetRequest(ref="hemra-offline"))
    assert named.dataset.dataset_name == "hemra-offline"


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"datasets": ["{server}"]}, "dataset '{server}'"),
        ({"datasets": ["../server-tasks"]}, "dataset '../server-tasks'"),
        ({"datasets": ["~"]}, "dataset '~'"),
        ({"datasets": ["hemra-offline", "swebench:instances.jsonl"]}, "dataset 'swebench:instances.jsonl'"),
        ({"harnesses": ["/etc/hemra/mine.toml"]}, "harness '/etc/hemra/mine.toml'"),
        ({"harnesses": ["mine.toml"]}, "harness 'mine.toml'"),
        ({"run_file": "/srv/eval/run.toml"}, "run_file '/srv/eval/run.toml'"),
        ({"judges": ["/srv/judges/quality.toml"]}, "judge '/srv/judges/quality.toml'"),
    ],
)
async def test_a_run_naming_a_path_on_the_server_is_refused_to_a_user(door, server_tasks, fields, named):
    fields = {
        k: [v.format(server=server_tasks) for v in vs] if isinstance(vs, list) else vs for k, vs in fields.items()
    }
    named = named.format(server=server_tasks)
    for call in (
        door.planner.PlanRun(ppb.PlanRunRequest(spec=_spec(**fields))),
        door.planner.ResolveRun(ppb.ResolveRunRequest(spec=_spec(**fields))),
    ):
        message = await _denied(call)
        assert re.fullmatch(rf"(PlanRun|ResolveRun): {re.escape(named)} names a path on the server; .*", message)
    assert (await door.store.ListRuns(spb.ListRunsRequest())).runs == []


async def test_a_results_folder_on_the_server_is_refused_to_a_user_and_sent_contents_import(door, tmp_path):
    job = unpack("harbor-0.25-oracle.tar", tmp_path / "jobs")
    message = await _denied(door.importer.ImportResults(ipb.ImportResultsRequest(path=str(job))))
    assert message.startswith(f"ImportResults: path {str(job)!r} names a path on the server; "), message
    sent = await folders.send(door.store, job, ref="./job")
    message = await _denied(door.importer.ImportResults(ipb.ImportResultsRequest(folder=sent, tasks_dir="/srv")))
    assert message.startswith("ImportResults: tasks_dir '/srv' names a path on the server; "), message
    assert (await door.store.ListRuns(spb.ListRunsRequest())).runs == []
    # What `hemra import` sends through a server: the folder's contents (the importer then pins
    # the job's tasks through the planner itself, as the deployment's own service).
    imported = await door.importer.ImportResults(ipb.ImportResultsRequest(folder=sent, label="sent"))
    assert imported.import_id.startswith("i-")


async def test_what_only_workers_and_the_deployment_may_call_is_refused_to_a_user(door):
    for call, rpc, allowed in (
        (door.store.ClaimJob(spb.ClaimJobRequest(worker="intruder")), "StoreService/ClaimJob", "admin, worker"),
        (door.store.RecordRun(spb.RecordRunRequest()), "StoreService/RecordRun", "admin"),
        (door.store.RestoreRun(spb.RestoreRunRequest()), "StoreService/RestoreRun", "admin"),
        (door.planner.PinTasks(ppb.PinTasksRequest(paths=["/etc"])), "PlannerService/PinTasks", "admin"),
    ):
        assert await _denied(call) == f"hemra.v1.{rpc} is for {allowed}, not for a user"


async def test_the_setting_lets_users_name_paths_on_the_server(tmp_path, monkeypatch, server_tasks):
    monkeypatch.setenv("HEMRA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(access.ALLOW_SERVER_PATHS_ENV, "1")
    assert frontdoor.allow_server_paths_from_env()
    async with deployment(tmp_path / "home", allow_server_paths=True) as door:
        pinned = await door.planner.PinDataset(ppb.PinDatasetRequest(ref=str(server_tasks)))
        assert [t.task_name for t in pinned.dataset.tasks] == ["hemra/reverse-lines"]
        run = await door.planner.PlanRun(ppb.PlanRunRequest(spec=_spec(datasets=[str(server_tasks)])))
        assert run.run.id.startswith("r-")
        # Paths, yes; the roles stay: a user still records no run of its own making.
        assert (await _denied(door.store.RecordRun(spb.RecordRunRequest()))).endswith("not for a user")
    for value, allowed in (("", False), ("0", False)):
        monkeypatch.setenv(access.ALLOW_SERVER_PATHS_ENV, value)
        assert frontdoor.allow_server_paths_from_env() is allowed
    monkeypatch.setenv(access.ALLOW_SERVER_PATHS_ENV, "yes please")
    with pytest.raises(ValueError, match="HEMRA_ALLOW_SERVER_PATHS='yes please': expected 1"):
        frontdoor.allow_server_paths_from_env()


@pytest.mark.parametrize(
    "ref",
    ["hemra-offline", "hemra-offline@1a2b", "harbor:terminal-bench@2.0", "hf:org/name@main", "swebench:org/name@v1"],
)
def test_dataset_names_are_not_paths(ref):
    assert not access.dataset_path(ref)


@pytest.mark.parametrize(
    "ref", ["./x", "../x", "/x", "~", "~root", "a/b", ".hidden", "swebench:x.json", "hf:../x@main", "x@../y", "a b"]
)
def test_dataset_paths_and_what_is_no_name_are_paths(ref):
    assert access.dataset_path(ref)


def test_the_table_names_every_rpc_of_every_service_once():
    served = {
        f"/{service.full_name}/{method.name}"
        for contract in access.CONTRACTS
        for service in contract.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    }
    assert set(access.RULES) == served
    assert all(
        rule.roles <= {access.USER, access.WORKER, access.ADMIN, access.HARNESS} for rule in access.RULES.values()
    )
    # What a worker or a user may call, the deployment's own services may too (one token today).
    assert all(access.ADMIN in rule.roles for rule in access.RULES.values() if access.HARNESS not in rule.roles)


def test_the_docs_table_shows_every_rpc_with_its_roles():
    text = (REPO / "docs" / "trust-and-privacy.md").read_text()
    section = text.split("## Who may call what", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 3:
            for rpc in cells[0].replace("`", "").split(", "):
                rows[rpc] = {r.strip() for r in cells[1].split(",")}
    expected = {
        method.lstrip("/").removeprefix("hemra.v1.").replace("/", "."): set(rule.roles)
        for method, rule in access.RULES.items()
    }
    assert rows == expected
