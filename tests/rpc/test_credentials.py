"""A credential per role (services/common/auth.py), checked by every service: real store, planner,
importer and scorer servers and a gateway front door on 127.0.0.1, each holding only the tokens
a deployment gives it (auth.HOLDS, from HEMRA_TOKEN, HEMRA_WORKER_TOKEN, HEMRA_ADMIN_TOKEN), each
calling the others as its own role (auth.SENDS). A user's token claims no work, a worker's
imports and records nothing, an admin's RPCs refuse both; two tokens of a role are accepted at
once while one is rotated; a wrong token is UNAUTHENTICATED. A service that holds a caller's
token refuses an RPC of another role PERMISSION_DENIED; one that does not hold it (the importer
and the planner hold no worker's token, the front door only users') knows no such token:
UNAUTHENTICATED. Each refusal is one line, and the store still reads afterwards."""

import argparse
import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from hemra.gateway.frontdoor import build_front_door
from hemra.services.common import auth, entry, errors, transport
from hemra.services.domain import folders
from hemra.services.importer.server import build_server as build_importer
from hemra.services.planner.server import build_server as build_planner
from hemra.services.scorer.server import build_server as build_scorer
from hemra.services.store.server import build_server as build_store
from hemra.services.store.service import Store
from hemra.v1 import common_pb2 as pb
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import scorer_service_pb2 as scpb
from hemra.v1 import store_service_pb2 as spb
from tests.importer.test_imports import unpack
from tests.rpc.frontdoor import one_line

LOOPBACK = "127.0.0.1:0"
#: The deployment's variables, mid-rotation for the user's and the worker's: new first (sent), old second.
ENV = {
    "HEMRA_TOKEN": "user-new-0123456789,user-old-0123456789",
    "HEMRA_WORKER_TOKEN": "worker-new-0123456789,worker-old-0123456789",
    "HEMRA_ADMIN_TOKEN": "admin-0123456789",
}
USER_NEW, USER_OLD = ENV["HEMRA_TOKEN"].split(",")
WORKER_NEW, WORKER_OLD = ENV["HEMRA_WORKER_TOKEN"].split(",")
ADMIN = ENV["HEMRA_ADMIN_TOKEN"]
TOKEN_VARIABLES = [f"{name}{tail}" for name in auth.ROLE_ENV.values() for tail in ("", "_FILE")]


@pytest.fixture
def clean_tokens(monkeypatch):
    for name in TOKEN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@dataclass
class Split:
    addresses: dict[str, str]
    held: dict[str, auth.Credentials]
    channels: list[grpc.aio.Channel]

    def client(self, service: str, token: str) -> transport.Client:
        """`service` (store, planner, importer, scorer) called directly with `token`."""
        channel = transport.channel(self.addresses[service])
        self.channels.append(channel)
        return getattr(transport, service)(channel, token)

    def door(self, service: str, token: str) -> transport.Client:
        """`service`'s RPCs through the front door with `token`."""
        channel = transport.channel(self.addresses["door"])
        self.channels.append(channel)
        return getattr(transport, service)(channel, token)


@contextlib.asynccontextmanager
async def split_deployment(home: Path):
    """Every service with the credentials its variables give it, as compose and the chart do."""
    held = {service: auth.credentials_from_env(holds) for service, holds in auth.HOLDS.items()}
    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", home / "blobs")
    servers, channels, addresses = [], {}, {}

    async def serve(name, server, port):
        await transport.start(server)
        servers.append(server)
        addresses[name] = f"127.0.0.1:{port}"
        channels[name] = transport.channel(addresses[name])

    def store_as(service: str) -> transport.Client:
        return transport.store(channels["store"], held[service].token(auth.SENDS[service]))

    scorer_servicer = None
    split = Split(addresses, held, [])
    try:
        await serve("store", *build_store(store, LOOPBACK, held["store"]))
        await serve("planner", *build_planner(store_as("planner"), home, LOOPBACK, held["planner"], False))
        planner = transport.planner(channels["planner"], held["importer"].token(auth.SENDS["importer"]))
        await serve("importer", *build_importer(store_as("importer"), planner, LOOPBACK, held["importer"]))
        server, port, scorer_servicer = build_scorer(store_as("scorer"), LOOPBACK, held["scorer"])
        await serve("scorer", server, port)
        door, port = build_front_door(dict(channels), held["gateway"], LOOPBACK)
        await serve("door", door, port)
        yield split
    finally:
        for channel in [*split.channels, *channels.values()]:
            await channel.close()
        for server in reversed(servers):
            await server.stop(grace=None)
        if scorer_servicer is not None:
            await scorer_servicer.close()
        await store.close()


@pytest.fixture
async def split(tmp_path, clean_tokens):
    clean_tokens.setenv("HEMRA_HOME", str(tmp_path / "home"))
    for name, value in ENV.items():
        clean_tokens.setenv(name, value)
    async with split_deployment(tmp_path / "home") as deployment:
        yield deployment


async def _refused(call, code: str = "PERMISSION_DENIED") -> str:
    with pytest.raises(errors.HemraError) as caught:
        await call
    return one_line(caught.value, code)


async def _nothing_recorded(split: Split) -> None:
    """The store still reads, and holds no run, import or dataset."""
    store = split.client("store", ADMIN)
    assert list((await store.ListRuns(spb.ListRunsRequest())).runs) == []
    assert list((await store.ListDatasets(spb.ListDatasetsRequest())).datasets) == []


async def test_a_user_token_cannot_claim_work(split):
    for token in (USER_NEW, USER_OLD, split.held["gateway"].token(auth.USER)):  # the gateway's, too
        store = split.client("store", token)
        for call, rpc in (
            (store.ClaimJob(spb.ClaimJobRequest(worker="intruder")), "ClaimJob"),
            (store.HeartbeatJob(spb.HeartbeatJobRequest(job="j-1")), "HeartbeatJob"),
            (store.CompleteJob(spb.CompleteJobRequest(job="j-1")), "CompleteJob"),
            (store.RecordJudgeScores(spb.RecordJudgeScoresRequest()), "RecordJudgeScores"),
        ):
            assert await _refused(call) == f"hemra.v1.StoreService/{rpc} is for admin, worker, not for a user"
        scorer = split.client("scorer", token)
        message = await _refused(scorer.ScoreAttempt(scpb.ScoreAttemptRequest()))
        assert message == "hemra.v1.ScorerService/ScoreAttempt is for admin, worker, not for a user"
    # Through the front door, too.
    message = await _refused(split.door("store", USER_NEW).ClaimJob(spb.ClaimJobRequest(worker="intruder")))
    assert message == "hemra.v1.StoreService/ClaimJob is for admin, worker, not for a user"
    # A worker's token claims (there is nothing queued).
    claimed = await split.client("store", WORKER_NEW).ClaimJob(spb.ClaimJobRequest(worker="w"))
    assert not claimed.HasField("job")
    await _nothing_recorded(split)


async def test_a_worker_token_cannot_import_or_record_a_run(split, tmp_path):
    job = unpack("harbor-0.25-oracle.tar", tmp_path / "jobs")
    for token in (WORKER_NEW, WORKER_OLD):
        sent = await folders.send(split.client("store", token), job, ref="./job")  # blobs: anyone's
        for importer in (split.client("importer", token), split.door("importer", token)):
            call = importer.ImportResults(ipb.ImportResultsRequest(folder=sent, label="w"))
            assert await _refused(call, "UNAUTHENTICATED") == "missing or wrong HEMRA token"
        store = split.client("store", token)
        for call, rpc in (
            (store.RecordRun(spb.RecordRunRequest()), "RecordRun"),
            (store.RestoreRun(spb.RestoreRunRequest()), "RestoreRun"),
            (store.RecordDataset(spb.RecordDatasetRequest()), "RecordDataset"),
        ):
            assert await _refused(call) == f"hemra.v1.StoreService/{rpc} is for admin, not for a worker"
        planner = split.client("planner", token)
        call = planner.PlanRun(ppb.PlanRunRequest(spec=pb.RunSpec(datasets=["hemra-offline"])))
        assert await _refused(call, "UNAUTHENTICATED") == "missing or wrong HEMRA token"
    await _nothing_recorded(split)
    # A user's import goes through: the importer restores it and pins its tasks as the admin.
    sent = await folders.send(split.door("store", USER_NEW), job, ref="./job")
    imported = await split.door("importer", USER_NEW).ImportResults(ipb.ImportResultsRequest(folder=sent, label="u"))
    assert imported.import_id.startswith("i-")


async def test_admin_only_calls_refuse_worker_and_user_tokens(split):
    message = await _refused(split.client("planner", USER_NEW).PinTasks(ppb.PinTasksRequest(paths=["/etc"])))
    assert message == "hemra.v1.PlannerService/PinTasks is for admin, not for a user"
    call = split.client("planner", WORKER_NEW).PinTasks(ppb.PinTasksRequest(paths=["/etc"]))
    assert await _refused(call, "UNAUTHENTICATED") == "missing or wrong HEMRA token"  # a token it does not hold
    for token, role in ((USER_NEW, "user"), (WORKER_NEW, "worker")):
        store = split.client("store", token)
        for call, rpc in (
            (store.RecordRun(spb.RecordRunRequest()), "StoreService/RecordRun"),
            (store.RecordDatasetAudit(spb.RecordDatasetAuditRequest()), "StoreService/RecordDatasetAudit"),
            (store.RestoreRun(spb.RestoreRunRequest()), "StoreService/RestoreRun"),
        ):
            assert await _refused(call) == f"hemra.v1.{rpc} is for admin, not for a {role}"
    # The admin's token is let in (pinning no folder pins nothing).
    assert list((await split.client("planner", ADMIN).PinTasks(ppb.PinTasksRequest())).tasks) == []
    await _nothing_recorded(split)


async def test_two_tokens_of_a_role_are_accepted_during_a_rotation(split):
    for token in (USER_NEW, USER_OLD):  # at the front door and, forwarded with the new one, upstream
        assert list((await split.door("store", token).ListRuns(spb.ListRunsRequest())).runs) == []
        assert list((await split.client("store", token).ListRuns(spb.ListRunsRequest())).runs) == []
    for token in (WORKER_NEW, WORKER_OLD):
        assert not (await split.client("store", token).ClaimJob(spb.ClaimJobRequest(worker="w"))).HasField("job")
    # Each service sends the first of its role's tokens.
    assert split.held["gateway"].token(auth.USER) == USER_NEW
    assert split.held["scorer"].token(auth.WORKER) == WORKER_NEW
    # A user plans through the front door; the planner records the run as the admin; a worker claims it.
    spec = pb.RunSpec(datasets=["hemra-offline"], harnesses=["oracle"], tasks=["hemra/reverse-lines"], sandbox="host")
    run = (await split.door("planner", USER_OLD).PlanRun(ppb.PlanRunRequest(spec=spec))).run
    claimed = await split.client("store", WORKER_OLD).ClaimJob(spb.ClaimJobRequest(worker="w"))
    assert claimed.job.attempt.run_id == run.id


#: An RPC of each server that its every holder's role may call.
ANY_HOLDER = {
    "store": "/hemra.v1.StoreService/GetRun",
    "planner": "/hemra.v1.PlannerService/ResolveRun",
    "importer": "/hemra.v1.ImporterService/ImportResults",
    "scorer": "/hemra.v1.ScorerService/JudgeRun",
    "door": "/hemra.v1.StoreService/ListRuns",
}


async def test_a_wrong_token_is_unauthenticated(split):
    for service, method in ANY_HOLDER.items():
        async with grpc.aio.insecure_channel(split.addresses[service]) as channel:
            for token in ("not-a-token", "", USER_NEW + "x", USER_NEW[:-1], f"{USER_NEW},{USER_OLD}"):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await channel.unary_unary(method)(b"", metadata=auth.metadata(token), timeout=10)
                assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED, (service, token)
                assert caught.value.details() == "missing or wrong HEMRA token"
    # The front door holds users' tokens only: a worker's or the admin's is no token there.
    for token in (WORKER_NEW, ADMIN):
        message = await _refused(split.door("store", token).ListRuns(spb.ListRunsRequest()), "UNAUTHENTICATED")
        assert message == "missing or wrong HEMRA token"
    # A service holds the tokens of its own roles only: the executors' token is no token at the planner.
    message = await _refused(split.client("planner", WORKER_NEW).ResolveRun(ppb.ResolveRunRequest()), "UNAUTHENTICATED")
    assert message == "missing or wrong HEMRA token"
    await _nothing_recorded(split)


# --- the variables -----------------------------------------------------------------------------


def test_one_token_alone_is_every_role_with_a_warning(clean_tokens, caplog):
    clean_tokens.setenv("HEMRA_TOKEN", "only-one")
    credentials = auth.credentials_from_env(auth.HOLDS["store"])
    assert credentials.roles == {"only-one": frozenset({"user", "worker", "admin"})} and credentials.shared
    with caplog.at_level(logging.WARNING):
        entry.credentials_of(argparse.Namespace(token_env="HEMRA_TOKEN"), "planner")
    assert "planner: one token (HEMRA_TOKEN) for every role" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):  # the gateway holds the user's role only: nothing shared
        assert entry.credentials_of(argparse.Namespace(token_env="HEMRA_TOKEN"), "gateway").roles == {
            "only-one": frozenset({"user"})
        }
    assert caplog.text == ""


def test_split_tokens_need_each_role_held_and_a_token_of_its_own(clean_tokens, tmp_path, capsys):
    clean_tokens.setenv("HEMRA_TOKEN", "u")
    clean_tokens.setenv("HEMRA_WORKER_TOKEN", "w")
    with pytest.raises(auth.TokenError) as caught:
        auth.credentials_from_env(auth.HOLDS["planner"])
    assert str(caught.value) == (
        "environment variable HEMRA_ADMIN_TOKEN is not set: it must hold the admin token "
        "(each role has its own once HEMRA_WORKER_TOKEN or HEMRA_ADMIN_TOKEN is set)"
    )
    with pytest.raises(SystemExit) as exited:
        entry.credentials_of(argparse.Namespace(token_env="HEMRA_TOKEN"), "importer")
    assert exited.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    assert auth.credentials_from_env(auth.HOLDS["executor"]).roles == {"w": frozenset({"worker"})}
    clean_tokens.setenv("HEMRA_ADMIN_TOKEN", "new,w")
    with pytest.raises(auth.TokenError, match="^HEMRA_ADMIN_TOKEN and HEMRA_WORKER_TOKEN hold the same token"):
        auth.credentials_from_env(auth.HOLDS["store"])
    # From files (secrets), two tokens a line each during a rotation.
    secret = tmp_path / "admin_token"
    secret.write_text("admin-new\nadmin-old\n")
    clean_tokens.delenv("HEMRA_ADMIN_TOKEN")
    clean_tokens.setenv("HEMRA_ADMIN_TOKEN_FILE", str(secret))
    credentials = auth.credentials_from_env(auth.HOLDS["store"])
    assert credentials.token("admin") == "admin-new" and credentials.roles["admin-old"] == {"admin"}
    assert not credentials.shared
    secret.write_text("\n")
    with pytest.raises(auth.TokenError, match=f"^HEMRA_ADMIN_TOKEN_FILE={secret}: the file is empty"):
        auth.credentials_from_env(auth.HOLDS["store"])


def test_a_remote_worker_takes_the_worker_token_else_the_one_token(clean_tokens):
    clean_tokens.setenv("HEMRA_TOKEN", "one")
    assert auth.worker_tokens() == (["one"], "HEMRA_TOKEN")
    clean_tokens.setenv("HEMRA_WORKER_TOKEN", "w-new, w-old")
    assert auth.worker_tokens() == (["w-new", "w-old"], "HEMRA_WORKER_TOKEN")
    assert auth.worker_tokens("HEMRA_TOKEN") == (["one"], "HEMRA_TOKEN")
    clean_tokens.delenv("HEMRA_WORKER_TOKEN")
    clean_tokens.delenv("HEMRA_TOKEN")
    with pytest.raises(auth.TokenError, match="^environment variable HEMRA_WORKER_TOKEN is not set: .*HEMRA_TOKEN"):
        auth.worker_tokens()


def test_hemra_serve_with_no_variable_makes_one_token_for_every_role(clean_tokens, tmp_path):
    made = auth.serve_credentials(tmp_path)
    assert made.source == f"token from {tmp_path / 'token'}" and made.shared
    assert (tmp_path / "token").stat().st_mode & 0o777 == 0o600
    assert auth.serve_credentials(tmp_path).roles == made.roles  # kept
    for name, value in ENV.items():
        clean_tokens.setenv(name, value)
    split = auth.serve_credentials(tmp_path)
    assert split.source == "tokens from HEMRA_TOKEN, HEMRA_WORKER_TOKEN, HEMRA_ADMIN_TOKEN" and not split.shared
