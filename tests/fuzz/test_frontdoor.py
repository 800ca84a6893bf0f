"""Every RPC the gateway's front door forwards, sent Hypothesis-built requests over real gRPC
(a valid request with one field changed, or one built from nothing) through a real front door
in front of real services. Each answer is OK or a refusal with a code that names the caller's
fault and a one-line message, never UNKNOWN or INTERNAL (a traceback) or a call that hangs; a
refused write leaves the runs and datasets as they were; afterwards the store still reads."""

import dataclasses
from pathlib import Path

import grpc
import pytest
from google.protobuf import text_format
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hemra.gateway.frontdoor import ROLE, UPSTREAM
from hemra.services.common import access, judges
from hemra.v1 import common_pb2 as pb
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import scorer_service_pb2 as scpb
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import REPO
from tests.fuzz.conftest import LABEL
from tests.fuzz.deployment import call, still_reads, stub_call
from tests.fuzz.messages import any_request
from tests.fuzz.mutate import examples

#: A refusal's codes: the caller's fault, or a state that does not allow it.
REFUSALS = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
#: What a method may also answer here, where no Docker engine and no network are reachable.
UNREACHABLE = {"AuditDataset", "PinDataset"}
#: Methods that write: a refusal must leave the runs and datasets as they were.
WRITES = {
    "PlanRun",
    "ImportResults",
    "CancelRun",
    "ResumeRun",
    "RepairRun",
    "PutBlobs",
    "PinDataset",
    "AuditDataset",
    "JudgeRun",
}
#: Examples per method in CI (the cheap reads more, the ones that plan, import or judge fewer).
BUDGET = {"PlanRun": 10, "ResolveRun": 10, "ImportResults": 8, "JudgeRun": 6, "AuditDataset": 6, "PinDataset": 8}
DEFAULT_BUDGET = 12
JUDGE = """
[model]
api = "openai-chat"
id = "judge-model"
base_url_env = "FUZZ_JUDGE_URL"
api_key_env = "FUZZ_JUDGE_KEY"

[[criterion]]
id = "ok"
description = "The answer is right"
"""
#: Requests the fuzz found failing, tried first on every run (so a finding is found every time).
FOUND = {
    "PinTasks": lambda k: ppb.PinTasksRequest(paths=["\x00"]),
    "AuditDataset": lambda k: ppb.AuditDatasetRequest(ref="hemra-offline", tasks=["x\ny"]),
    "PutBlobs": lambda k: spb.PutBlobsRequest(blobs=[spb.Blob(digest="\nx")]),
}
#: Findings not yet fixed: method -> why its test is expected to fail (a strict xfail).
KNOWN: dict[str, str] = {}


def _methods() -> list[str]:
    """Every RPC the front door forwards: what access.RULES lets a user call."""
    return sorted(
        method
        for method, rule in access.RULES.items()
        if ROLE in rule.roles and method.lstrip("/").partition("/")[0] in UPSTREAM
    )


METHODS = _methods()


@dataclasses.dataclass
class Known:
    """Real values from the deployment's store: what a valid request names."""

    run: str
    attempt: pb.Attempt
    dataset: str
    task_digest: str
    blob: str
    export: str
    judge: pb.JudgeSpec
    strings: list[str]
    json: list[str]


def _known(channel, export: Path, tmp: Path) -> Known:
    store = "/hemra.v1.StoreService/"
    runs = stub_call(channel, store + "ListRuns", spb.ListRunsRequest(page_size=1), spb.ListRunsResponse)
    run = runs.runs[0]
    attempts = stub_call(
        channel, store + "ListAttempts", spb.ListAttemptsRequest(parent=run.id, page_size=1), spb.ListAttemptsResponse
    )
    attempt = attempts.attempts[0]
    events = stub_call(
        channel, store + "ListEvents", spb.ListEventsRequest(parent=attempt.id, page_size=1), spb.ListEventsResponse
    )
    datasets = stub_call(channel, store + "ListDatasets", spb.ListDatasetsRequest(), spb.ListDatasetsResponse)
    dataset = datasets.datasets[0]
    tasks = stub_call(
        channel, store + "ListTasks", spb.ListTasksRequest(parent=dataset.name, page_size=1), spb.ListTasksResponse
    )
    blob = "sha256:" + next(p.parent.name + p.name for p in (export / "blobs").glob("*/*"))
    (tmp / "judges").mkdir(exist_ok=True)
    (tmp / "judges" / "fuzz.toml").write_text(JUDGE)
    judge = judges.load(tmp / "judges" / "fuzz.toml").spec()
    strings = [
        run.id,
        LABEL,
        attempt.id,
        attempt.cell_id,
        attempt.task_digest,
        attempt.task_name,
        dataset.name,
        dataset.digest,
        tasks.tasks[0].digest,
        blob,
        "oracle",
        "nop",
        "hemra-offline",
        "host",
        "docker",
        "run",
        "import",
        "passed",
        "failed",
        str(export),
        str(REPO / "examples" / "hemra-offline" / "text-stats"),
        runs.next_page_token,
        attempts.next_page_token,
        events.next_page_token,
        tasks.next_page_token,
    ]
    return Known(
        run=run.id,
        attempt=attempt,
        dataset=dataset.name,
        task_digest=tasks.tasks[0].digest,
        blob=blob,
        export=str(export),
        judge=judge,
        strings=[s for s in strings if s],
        json=[judge.definition_json],
    )


def _seed(method: str, k: Known):
    """A valid request of `method` (the fuzz changes one thing in it)."""
    spec = pb.RunSpec(
        label="fuzzed", harnesses=["nop"], datasets=["hemra-offline"], tasks=["text-stats"], sandbox="host"
    )
    name = method.rsplit("/", 1)[1]
    seeds = {
        "PlanRun": lambda: ppb.PlanRunRequest(spec=spec),
        "ResolveRun": lambda: ppb.ResolveRunRequest(spec=spec),
        "PinTasks": lambda: ppb.PinTasksRequest(paths=[str(REPO / "examples" / "hemra-offline" / "text-stats")]),
        "PinDataset": lambda: ppb.PinDatasetRequest(ref="hemra-offline"),
        "AuditDataset": lambda: ppb.AuditDatasetRequest(ref="hemra-offline", tasks=["text-stats"]),
        "ImportResults": lambda: ipb.ImportResultsRequest(path=k.export, label="fuzzed-import"),
        "JudgeRun": lambda: scpb.JudgeRunRequest(run=k.run, judge=k.judge, only_missing=True),
        "GetRun": lambda: spb.GetRunRequest(run=k.run),
        "ListRuns": lambda: spb.ListRunsRequest(page_size=2, kind="run"),
        "GetRunReport": lambda: spb.GetRunReportRequest(run=k.run),
        "CompareSides": lambda: spb.CompareSidesRequest(a=f"{LABEL}/oracle", b=f"{LABEL}/nop"),
        "ListAttempts": lambda: spb.ListAttemptsRequest(
            parent=k.run,
            page_size=2,
            cell_id=k.attempt.cell_id,
            task_digest=k.attempt.task_digest,
            harness_name="nop",
            verdict="failed",
        ),
        "GetAttempt": lambda: spb.GetAttemptRequest(attempt=k.attempt.id),
        "GetTask": lambda: spb.GetTaskRequest(name=k.task_digest),
        "ListEvents": lambda: spb.ListEventsRequest(parent=k.attempt.id, page_size=2, max_payload_bytes=100),
        "ListDatasets": lambda: spb.ListDatasetsRequest(),
        "ListTasks": lambda: spb.ListTasksRequest(parent=k.dataset, page_size=2),
        "ListHarnesses": lambda: spb.ListHarnessesRequest(),
        "ListScorers": lambda: spb.ListScorersRequest(),
        "ListJudges": lambda: spb.ListJudgesRequest(),
        "GetCriterionTable": lambda: spb.GetCriterionTableRequest(dataset=k.dataset),
        "ListAttemptUsage": lambda: spb.ListAttemptUsageRequest(parent=k.run),
        "ListHistoryMining": lambda: spb.ListHistoryMiningRequest(parent=k.run),
        "ExportRun": lambda: spb.ExportRunRequest(run=k.run),
        "GetBlobs": lambda: spb.GetBlobsRequest(digests=[k.blob]),
        "CancelRun": lambda: spb.CancelRunRequest(run=k.run),
        "ResumeRun": lambda: spb.ResumeRunRequest(run=k.run, dry_run=True),
        "RepairRun": lambda: spb.RepairRunRequest(run=k.run, reasons=["infra"], dry_run=True),
        "FindMissingBlobs": lambda: spb.FindMissingBlobsRequest(digests=[k.blob]),
        "PutBlobs": lambda: spb.PutBlobsRequest(blobs=[spb.Blob(data=b"fuzz")]),
    }
    return seeds[name]()


@pytest.fixture(scope="module")
def door(deployment):
    with grpc.insecure_channel(deployment.door) as channel:
        yield channel


@pytest.fixture(scope="module")
def known(door, fuzz_export, tmp_path_factory) -> Known:
    return _known(door, fuzz_export, tmp_path_factory.mktemp("known"))


def _snapshot(channel) -> bytes:
    """The runs (each with its state) and the datasets: what a refused write must not change."""
    runs = stub_call(
        channel, "/hemra.v1.StoreService/ListRuns", spb.ListRunsRequest(page_size=1000), spb.ListRunsResponse
    )
    datasets = stub_call(
        channel, "/hemra.v1.StoreService/ListDatasets", spb.ListDatasetsRequest(), spb.ListDatasetsResponse
    )
    return runs.SerializeToString(deterministic=True) + datasets.SerializeToString(deterministic=True)


def _params():
    for method in METHODS:
        name = method.rsplit("/", 1)[1]
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[name])] if name in KNOWN else []
        yield pytest.param(method, id=name, marks=marks)


@pytest.mark.parametrize("method", list(_params()))
def test_forwarded_request__fuzzed(door, deployment, known, method):
    name = method.rsplit("/", 1)[1]
    allowed = REFUSALS | ({grpc.StatusCode.UNAVAILABLE} if name in UNREACHABLE else set())
    seed = _seed(method, known)

    @given(request=any_request(seed, known.strings, known.json))
    @settings(max_examples=examples(BUDGET.get(name, DEFAULT_BUDGET)))
    def check(request):
        before = _snapshot(door) if name in WRITES else b""
        code, details, _ = call(door, method, request.SerializeToString())
        if code == grpc.StatusCode.OK:
            return
        sent = text_format.MessageToString(request, as_one_line=True)[:1000]
        assert code in allowed, f"{name}: {code.name}: {details[:500]} (request: {sent})"
        assert details and "\n" not in details.strip(), f"{name}: not one line: {details[:500]!r} (request: {sent})"
        if name in WRITES:
            assert _snapshot(door) == before, f"{name}: refused ({details[:200]}) but the store changed ({sent})"

    if name in FOUND:
        check = example(request=FOUND[name](known))(check)
    check()
    if name in WRITES:
        still_reads(door, deployment.http)


def test_every_forwarded_method_is_fuzzed():
    """A method added to the front door gets a seed here, or this fails."""
    names = {method.rsplit("/", 1)[1] for method in METHODS}
    assert len(names) == len(METHODS) >= 27
    for method in METHODS:
        assert _seed(method, Known("r", pb.Attempt(), "d", "t", "b", "e", pb.JudgeSpec(), [], []))


def test_bytes_that_are_no_request__refused(door, deployment):
    """What a caller sends is bytes: ones no request type reads are INVALID_ARGUMENT, one line."""
    garbage = st.binary(min_size=1, max_size=64) | st.sampled_from([b"\xff" * 8, b"\x0a\x05ab", b"\x08" + b"\xff" * 11])

    @given(method=st.sampled_from(METHODS), data=garbage)
    @settings(max_examples=examples(40))
    def check(method, data):
        code, details, _ = call(door, method, data)
        if code != grpc.StatusCode.OK:  # some bytes are a valid request (unknown fields are kept)
            assert code == grpc.StatusCode.INVALID_ARGUMENT, f"{method}: {code.name}: {details[:300]} ({data!r})"
            assert "\n" not in details.strip()

    check()
    still_reads(door, deployment.http)


def test_the_store_still_reads_after_the_batch(door, deployment):
    """After every method's fuzz (this module's tests run in order): every run lists, opens and
    reports, and the HTTP API is ready."""
    still_reads(door, deployment.http)
