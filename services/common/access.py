"""Who may call what: every RPC of every service, the roles allowed to call it, and whether a
request may name a path on the server. The one table the gateway's front door enforces
(gateway/frontdoor.py); docs/trust-and-privacy.md ("Who may call what") shows it.

Roles, each with a credential of its own (services/common/auth.py: HOLDS says who holds which):
- user (HEMRA_TOKEN): a person's `hemra` command reaching a deployment through the front door.
  It sends contents (blobs, SentFolder), never paths on the server. The gateway holds this
  token too: it forwards users' calls with it, so each service enforces this table again.
- worker (HEMRA_WORKER_TOKEN): what works the queue: executors and scorers, `hemra worker` on
  other machines. They call the store (and a scorer) directly, not the front door.
- admin (HEMRA_ADMIN_TOKEN): the deployment's own services calling each other (the planner and
  importer record runs, restore exports, pin task folders) and the embedded default (every
  service in the `hemra` process, on the machine whose paths they are).
- harness: one attempt's harness, with that attempt's own token (services/executor/protocol.py).
Every service's interceptor checks the caller's role against this table (services/common/auth.py);
the front door takes users' tokens only, and also refuses requests naming server paths. A
deployment with one token (HEMRA_TOKEN alone) makes it every role: whoever holds it and reaches
a service's port directly can act as a worker or an admin; through the front door, as a user.
"""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

from hemra.services.common import errors
from hemra.v1 import (
    executor_service_pb2,
    harness_service_pb2,
    importer_service_pb2,
    planner_service_pb2,
    scorer_service_pb2,
    store_service_pb2,
)

USER, WORKER, ADMIN, HARNESS = "user", "worker", "admin", "harness"
#: The environment variable that lets users name paths on the server through the front door
#: ("1"): for a deployment whose users may read its machines' folders (e.g. a shared volume).
ALLOW_SERVER_PATHS_ENV = "HEMRA_ALLOW_SERVER_PATHS"


@dataclass(frozen=True)
class Rule:
    roles: frozenset[str]
    #: For an RPC whose request may name paths on the server: the first such path it names
    #: ("what 'path'"), or "" when it names none. None: its requests never name one.
    server_paths: Callable[[Message], str] | None = None


# --- what names a path on the server ------------------------------------------------------
_WORD = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
#: A dataset as a name, never as a path: NAME, or harbor:/hf:/swebench: NAME or ORG/NAME, then
#: up to two @ parts (a version, a revision, a digest prefix). Anything else the planner would
#: read as a folder or a file on its machine.
_DATASET = re.compile(
    rf"(?:{_WORD}|(?:harbor|hf|swebench):{_WORD}(?:/{_WORD})?)(?:@[A-Za-z0-9_][A-Za-z0-9_.:-]{{0,127}}){{0,2}}"
)
#: A harness by name (harnesses/NAME.toml of the deployment, or a built-in), never a file.
_HARNESS = re.compile(_WORD)
#: What the planner reads a swebench: source ending in as a file of instances (services/planner/swebench.py).
_INSTANCE_FILES = (".json", ".jsonl", ".parquet")


def dataset_path(ref: str) -> bool:
    """Whether the planner would read dataset `ref` as a folder or file on its machine."""
    name = ref.split("@")[0]
    return not _DATASET.fullmatch(ref) or (name.startswith("swebench:") and name.endswith(_INSTANCE_FILES))


def _spec_paths(spec, sent: set[str]) -> str:
    """What a run's spec names on the server: its run file (harness, judge and dataset names are
    looked up beside it), datasets and harness files that were not sent, judge files not given."""
    if spec.run_file:
        return f"run_file {spec.run_file!r}"
    for ref in spec.datasets:
        if ref not in sent and dataset_path(ref):
            return f"dataset {ref!r}"
    for ref in spec.harnesses:
        if ref not in sent and (not _HARNESS.fullmatch(ref) or ref.endswith(".toml")):
            return f"harness {ref!r}"
    given = {judge.name for judge in spec.judge_specs}
    for name in spec.judges:
        if name not in given and name.endswith(".toml"):
            return f"judge {name!r}"
    return ""


def _plan_run(request) -> str:
    return _spec_paths(request.spec, {folder.ref for folder in request.folders})


def _resolve_run(request) -> str:
    return _spec_paths(request.spec, {folder.ref for folder in request.folders})


def _dataset_ref(request) -> str:
    return f"dataset {request.ref!r}" if dataset_path(request.ref) else ""


def _task_paths(request) -> str:
    return f"task folder {request.paths[0]!r}" if request.paths else ""


def _import_paths(request) -> str:
    if request.path:
        return f"path {request.path!r}"
    return f"tasks_dir {request.tasks_dir!r}" if request.tasks_dir else ""


# --- the table ------------------------------------------------------------------------------
_ANYONE = frozenset({USER, WORKER, ADMIN})
_USERS = frozenset({USER, ADMIN})
_WORKERS = frozenset({WORKER, ADMIN})
_ADMINS = frozenset({ADMIN})


def _rpc(service: str, **rules: Rule | frozenset[str]) -> dict[str, Rule]:
    return {
        f"/hemra.v1.{service}/{name}": rule if isinstance(rule, Rule) else Rule(rule) for name, rule in rules.items()
    }


#: "/hemra.v1.Service/Method" -> who may call it and what paths its requests may name.
RULES: dict[str, Rule] = {
    **_rpc(
        "PlannerService",
        PlanRun=Rule(_USERS, _plan_run),
        ResolveRun=Rule(_USERS, _resolve_run),
        PinTasks=Rule(_ADMINS, _task_paths),  # the importer's: task folders on its machine
        PinDataset=Rule(_USERS, _dataset_ref),
        AuditDataset=Rule(_USERS, _dataset_ref),
    ),
    **_rpc("ImporterService", ImportResults=Rule(_USERS, _import_paths)),
    **_rpc("ScorerService", ScoreAttempt=_WORKERS, JudgeAttempt=_WORKERS, JudgeRun=_USERS),
    **_rpc(
        "StoreService",
        # reads: what `runs`, `show`, `compare`, `export` and `run`'s progress ask; a scorer
        # (a worker) reads a run's attempts, their tasks and events to judge them
        GetRun=_ANYONE,
        ListAttempts=_ANYONE,
        GetTask=_ANYONE,
        ListEvents=_ANYONE,
        ListRuns=_USERS,
        GetRunReport=_USERS,
        CompareSides=_USERS,
        GetAttempt=_USERS,
        ListDatasets=_USERS,
        ListTasks=_USERS,
        ListHarnesses=_USERS,
        ListScorers=_USERS,
        ListJudges=_USERS,
        GetCriterionTable=_USERS,
        ListAttemptUsage=_USERS,
        ListHistoryMining=_USERS,
        ExportRun=_USERS,
        CancelRun=_USERS,
        ResumeRun=_USERS,
        RepairRun=_USERS,
        # blobs, content-addressed: how folders travel and artifacts are kept
        PutBlobs=_ANYONE,
        GetBlobs=_ANYONE,
        FindMissingBlobs=_ANYONE,
        # the queue and what it records
        ClaimJob=_WORKERS,
        HeartbeatJob=_WORKERS,
        AppendEvents=_WORKERS,
        CompleteJob=_WORKERS,
        ReleaseJob=_WORKERS,
        RecordJudgeScores=_WORKERS,
        # what the planner and importer record
        RecordRun=_ADMINS,
        RecordDataset=_ADMINS,
        RecordDatasetAudit=_ADMINS,
        RestoreRun=_ADMINS,
    ),
    **_rpc("ExecutorService", GetExecutorStatus=_ADMINS),
    **_rpc(
        "HarnessService",
        **dict.fromkeys(
            ("GetTrial", "RunCommand", "ReadFile", "ReadFiles", "WriteFiles", "RemovePath", "EmitEvents", "Finish"),
            frozenset({HARNESS}),
        ),
    ),
}
#: The contracts the table covers (their messages registered in the default pool).
CONTRACTS = (
    planner_service_pb2,
    importer_service_pb2,
    scorer_service_pb2,
    store_service_pb2,
    executor_service_pb2,
    harness_service_pb2,
)


def check(method: str, roles: str | Iterable[str]) -> Rule:
    """The rule of `method` when one of `roles` (a caller's: one, or every role of a deployment
    with one token) may call it; PermissionDenied in one line otherwise."""
    roles = {roles} if isinstance(roles, str) else set(roles)
    rule = RULES.get(method)
    if rule is None:
        raise errors.PermissionDenied(f"{method.lstrip('/')}: not an RPC HEMRA serves to anyone")
    if not roles & rule.roles:
        allowed = ", ".join(sorted(rule.roles))
        raise errors.PermissionDenied(f"{method.lstrip('/')} is for {allowed}, not for a {' or '.join(sorted(roles))}")
    return rule


def check_paths(method: str, rule: Rule, request: bytes) -> None:
    """Refuse (PermissionDenied, one line) a request of `method` that names a path on the server.
    The request is parsed here only for the RPCs whose requests may name one."""
    if rule.server_paths is None:
        return
    try:
        message = _request_class(method).FromString(request)
    except DecodeError:
        raise errors.InvalidArgument(f"{method.lstrip('/')}: the request is not a valid message") from None
    named = rule.server_paths(message)
    if named:
        raise errors.PermissionDenied(
            f"{method.rpartition('/')[2]}: {named[:300]} names a path on the server; through the front door a "
            f"caller sends contents, not server paths ({ALLOW_SERVER_PATHS_ENV}=1 on the gateway allows them)"
        )


def _request_class(method: str) -> type[Message]:
    service, _, name = method.lstrip("/").partition("/")
    descriptor = descriptor_pool.Default().FindServiceByName(service).methods_by_name[name].input_type
    return message_factory.GetMessageClass(descriptor)
