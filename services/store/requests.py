"""The store's requests checked and turned into domain records: what a servicer receives
is validated here, never in the servicer, which only translates and delegates."""

import json

from google.protobuf import json_format

from hemra.services.common import runspec
from hemra.services.common.errors import InvalidArgument
from hemra.services.digests import sha256
from hemra.services.domain import vocabulary
from hemra.services.domain.rewards import reward_problem
from hemra.services.store import convert, sqlrows
from hemra.services.store import tables as t
from hemra.services.store.completion import Completion
from hemra.services.store.exporting import Origin
from hemra.services.store.records import PlannedRun
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: runs.request_id's width.
MAX_REQUEST_ID = 64


def planned_run(request: spb.RecordRunRequest) -> PlannedRun:
    """The recording plan from a RecordRunRequest, checked for consistency."""
    spec = request.spec
    tasks = {task.digest: task for ds in request.datasets for task in ds.tasks}
    harness_digests = {h.digest for h in request.harnesses}
    dataset_digests = {d.digest for d in request.datasets}
    for cell in request.cells:
        if cell.dataset_digest not in dataset_digests or cell.harness_digest not in harness_digests:
            raise InvalidArgument("a cell names a dataset or harness the request does not carry")
    trials = []
    for trial in request.trials:
        if trial.task_digest not in tasks:
            raise InvalidArgument(f"a planned trial names unknown task {trial.task_digest}")
        result = imported_result(trial.result) if trial.HasField("result") else None
        trials.append(
            (trial.cell_index, trial.task_digest, tasks[trial.task_digest].task_name, trial.repetition, result)
        )
    if request.kind not in ("", "run", "import", "loose"):
        raise InvalidArgument(f"unknown kind {request.kind!r}")
    if len(request.request_id) > MAX_REQUEST_ID or not request.request_id.isprintable():
        raise InvalidArgument(f"RecordRun: request_id must be at most {MAX_REQUEST_ID} printable characters")
    return PlannedRun(
        kind=request.kind or "run",
        import_format=request.import_format,
        source=request.source,
        imported_by=request.imported_by if request.kind == "import" else "",
        tree=convert.tree_from_json(request.tree_json) if request.kind == "import" else None,
        label=spec.label or "run",
        spec=convert.to_dict(spec),
        concurrency=max(spec.concurrency, 1),
        pool=_pool(spec.pool),
        max_infra_retries=max(spec.max_infra_retries, 0),
        datasets=[dataset_row(d) for d in request.datasets],
        tasks=[dict(digest=x.digest, task_name=x.task_name, record=_task_record(x)) for x in tasks.values()],
        harnesses=[
            dict(digest=h.digest, harness_name=h.harness_name, record=convert.to_dict(h)) for h in request.harnesses
        ],
        cells=[(c.dataset_digest, c.dataset_name, c.harness_digest, c.harness_name, c.model) for c in request.cells],
        trials=trials,
        request_id=request.request_id,
    )


def dataset_row(dataset: pb.Dataset) -> dict:
    return dict(
        digest=dataset.digest,
        dataset_name=dataset.dataset_name,
        source=dataset.source,
        task_digests=[x.digest for x in dataset.tasks],
        create_time=0.0,
    )


def task_rows(dataset: pb.Dataset) -> list[dict]:
    return [dict(digest=x.digest, task_name=x.task_name, record=_task_record(x)) for x in dataset.tasks]


def imported_result(result: spb.ImportedResult) -> dict:
    """Attempt columns for a trial that finished elsewhere."""
    outcome = vocabulary.outcome_name(result.outcome)
    if not outcome:
        raise InvalidArgument(f"an imported result needs an outcome (got {result.outcome})")
    score = convert.to_dict(result.score) if result.HasField("score") else None
    problem = reward_problem(dict(result.score.rewards))
    if score is not None and result.rewards_json:
        try:
            score["rewards"] = json.loads(result.rewards_json)
        except ValueError:
            raise InvalidArgument("rewards_json is not JSON") from None
        problem = problem or reward_problem(score["rewards"])
    if problem:
        raise InvalidArgument(f"an imported result: {problem}")
    return dict(
        outcome=outcome,
        error=result.error,
        score=score,
        agent_version=result.agent_version,
        agent_name=result.agent_name,
        start_time=convert.seconds(result.start_time),
        end_time=convert.seconds(result.end_time),
        artifacts=[convert.to_dict(a) for a in result.artifacts],
        # Not a column: records.record_run stores them as the attempt's events.
        events=[sqlrows.fit(t.Event.__table__, convert.event_row(e, 0.0)) for e in result.events],
    )


def _task_record(task: pb.Task) -> dict:
    return json_format.MessageToDict(task)


def max_jobs(request: spb.ClaimJobRequest) -> int:
    """How many jobs a claim may lease: 0 asks for one; more than a run's largest concurrency
    (no worker has more free slots) or fewer than 0 is refused."""
    most = runspec.BOUNDS["concurrency"][1]
    if not 0 <= request.max_jobs <= most:
        raise InvalidArgument(f"ClaimJob: max_jobs must be from 0 to {most} (got {request.max_jobs})")
    return max(request.max_jobs, 1)


def completion(request: spb.CompleteJobRequest) -> Completion:
    """What a CompleteJob request records, its score checked (_recordable_score)."""
    outcome = vocabulary.outcome_name(request.outcome)
    if not outcome:
        raise InvalidArgument(f"CompleteJob needs an outcome (got {request.outcome})")
    return Completion(
        outcome=outcome,
        exit_code=request.exit_code,
        error=request.error,
        artifacts=[convert.to_dict(a) for a in request.artifacts],
        score=_recordable_score(request.score) if request.HasField("score") else None,
        agent_version=request.agent_version,
        start_time=convert.seconds(request.start_time),
        end_time=convert.seconds(request.end_time),
        agent_name=request.agent_name,
        judge_scores=judge_scores(request.judge_scores) or None,
    )


def judge_scores(scores) -> list[dict]:
    """HEMRA judge scores as recorded: each names its judge, and holds rewards in range."""
    found = []
    for score in scores:
        if not score.judge or score.scorer != f"judge:{score.judge}":
            raise InvalidArgument(f"a judge score must name its judge (scorer 'judge:<name>', got {score.scorer!r})")
        found.append(_recordable_score(score))
    return found


def restore_rows(request: spb.RestoreRunRequest, now: float) -> tuple[dict, dict[str, list[dict]], Origin]:
    """An export's manifest rows, its events by attempt ID (exporting.py checks them all) and how
    it came (its digest: the manifest's text as the importer read it)."""
    try:
        rows = json.loads(request.manifest_json)
    except (ValueError, RecursionError):
        raise InvalidArgument("the export manifest is not JSON") from None
    events = {
        batch.attempt_id: [dict(seq=e.seq, **convert.event_row(e, now)) for e in batch.events]
        for batch in request.events
    }
    origin = Origin(
        label=request.label,
        imported_by=request.imported_by,
        source=request.source,
        export_digest=sha256(request.manifest_json.encode()),
    )
    return rows, events, origin


def _recordable_score(score: pb.Score) -> dict:
    """The score as recorded: rewards outside the range a reward may have (services/domain/rewards.py)
    make it a scorer failure saying which, whatever sent them (the scorer refuses them first)."""
    problem = reward_problem(dict(score.rewards))
    if not problem:
        return convert.to_dict(score)
    failed = pb.Score()
    failed.CopyFrom(score)
    failed.ClearField("rewards")
    failed.state = pb.SCORE_STATE_SCORER_FAILED
    failed.error = problem
    return convert.to_dict(failed)


def _pool(name: str) -> str:
    """The run's executor pool: "" is the default one."""
    name = name or runspec.DEFAULTS["pool"]
    reason = runspec.pool_error(name)
    if reason:
        raise InvalidArgument(reason)
    return name


def dataset_audit(audit: spb.DatasetAudit) -> dict:
    """An audit to record: its dataset, verdict and tasks (as JSON, the proto's field names)."""
    if not audit.dataset_digest:
        raise InvalidArgument("an audit names the dataset digest it audited")
    return dict(
        dataset_digest=audit.dataset_digest,
        dataset_name=audit.dataset_name,
        verdict=audit.verdict,
        tasks=[json_format.MessageToDict(task, preserving_proto_field_name=True) for task in audit.tasks],
    )
