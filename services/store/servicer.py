"""StoreService over gRPC: convert the request, call the Store, convert the result."""

import json

import msgspec
from google.protobuf import json_format

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc
from services.bulk import gc_paused
from services.rpc import handle_errors
from services.store import convert
from services.store.errors import InvalidArgument
from services.store.queue import Completion
from services.store.records import PlannedRun, reward_problem
from services.store.service import Store

DEFAULT_LEASE_SECS = 60.0
#: Parsed tasks, harnesses and run specs kept per store process.
PARSED_CACHE_SIZE = 4096


class StoreServicer(spb_grpc.StoreServiceServicer):
    def __init__(self, store: Store):
        self.store = store
        self._messages: dict = {}

    @handle_errors
    async def RecordRun(self, request, context):
        with gc_paused():  # an import's request holds 100,000s of entries
            run, cells = await self.store.record_run(planned_run(request))
        return spb.RecordRunResponse(run=convert.run_to_proto(run, cells))

    @handle_errors
    async def GetRun(self, request, context):
        run, cells, progress = await self.store.get_run(request.run)
        return spb.GetRunResponse(run=convert.run_to_proto(run, cells, progress))

    @handle_errors
    async def ListRuns(self, request, context):
        runs, token = await self.store.list_runs(request.page_size, request.page_token, request.kind)
        return spb.ListRunsResponse(runs=[convert.run_to_proto(*r) for r in runs], next_page_token=token)

    @handle_errors
    async def GetRunReport(self, request, context):
        report = await self.store.run_report(request.run)
        return spb.GetRunReportResponse(report=convert.report_to_proto(report))

    @handle_errors
    async def CompareSides(self, request, context):
        comparison = await self.store.compare(request.a, request.b, request.judge)
        return spb.CompareSidesResponse(comparison=convert.comparison_to_proto(comparison))

    @handle_errors
    async def CancelRun(self, request, context):
        run, cells, cancelled, attempt_id = await self.store.cancel(request.run)
        return spb.CancelRunResponse(run=convert.run_to_proto(run, cells), cancelled_jobs=cancelled,
                                     attempt_id=attempt_id)

    @handle_errors
    async def ListAttempts(self, request, context):
        filters = dict(cell_id=request.cell_id, task_digest=request.task_digest,
                       harness_name=request.harness_name, verdict=request.verdict)
        rows, token = await self.store.list_attempts(request.parent, request.page_size, request.page_token, filters)
        return spb.ListAttemptsResponse(attempts=[convert.attempt_to_proto(*row) for row in rows],
                                        next_page_token=token)

    @handle_errors
    async def GetAttempt(self, request, context):
        return spb.GetAttemptResponse(attempt=convert.attempt_to_proto(*await self.store.get_attempt(request.attempt)))

    @handle_errors
    async def ListEvents(self, request, context):
        events, token = await self.store.list_events(request.attempt, request.page_size, request.page_token,
                                                     request.max_payload_bytes)
        return spb.ListEventsResponse(events=[convert.event_to_proto(e) for e in events], next_page_token=token)

    @handle_errors
    async def ListDatasets(self, request, context):
        datasets = await self.store.list_datasets()
        return spb.ListDatasetsResponse(datasets=[_summary(d, spb.DatasetSummary, "last_used_time")
                                                  for d in datasets])

    @handle_errors
    async def ListTasks(self, request, context):
        page = await self.store.list_tasks(request.dataset, request.page_size, request.page_token)
        return spb.ListTasksResponse(dataset_name=page["dataset_name"], dataset_digest=page["dataset_digest"],
                                     tasks=[spb.TaskSummary(**task) for task in page["tasks"]],
                                     next_page_token=page["next_page_token"])

    @handle_errors
    async def ListHarnesses(self, request, context):
        harnesses = await self.store.list_harnesses()
        return spb.ListHarnessesResponse(harnesses=[_summary(h, spb.HarnessSummary, "last_used_time")
                                                    for h in harnesses])

    @handle_errors
    async def ListScorers(self, request, context):
        scorers = await self.store.list_scorers()
        return spb.ListScorersResponse(scorers=[
            spb.ScorerSummary(**{**s, "tasks": [spb.ScoredTask(**x) for x in s["tasks"]]}) for s in scorers])

    @handle_errors
    async def ListJudges(self, request, context):
        judges, note = await self.store.list_judges()
        return spb.ListJudgesResponse(judges=[spb.JudgeSummary(**j) for j in judges], note=note)

    @handle_errors
    async def ListAttemptUsage(self, request, context):
        usage = await self.store.attempt_usage(request.run)
        return spb.ListAttemptUsageResponse(attempts=[spb.AttemptUsage(**u) for u in usage])

    @handle_errors
    async def GetCriterionTable(self, request, context):
        table = await self.store.criterion_table(request.dataset, request.source)
        sources = [_summary(s, spb.CriterionSource, "create_time") for s in table["sources"]]
        rows = [spb.CriterionRow(**{**r, "cells": [spb.CriterionCell(**c) for c in r["cells"]]})
                for r in table["rows"]]
        return spb.GetCriterionTableResponse(table=spb.CriterionTable(
            dataset_name=table["dataset_name"], dataset_digest=table["dataset_digest"], source=table["source"],
            sources=sources, rows=rows))

    @handle_errors
    async def ClaimJob(self, request, context):
        lease = convert.duration_secs(request.lease) or DEFAULT_LEASE_SECS
        work = await self.store.claim_job(request.worker, lease, request.run_id)
        if work is None:
            return spb.ClaimJobResponse()
        job = spb.Job(id=work.job.id, lease_token=work.job.lease_token,
                      lease_expire_time=convert.timestamp(work.job.lease_expire_time),
                      attempt=convert.attempt_to_proto(work.attempt, work.trial, work.cell),
                      task=self._parsed(("task", work.task.digest), work.task.record, pb.Task),
                      harness=self._parsed(("harness", work.harness.digest), work.harness.record, pb.Harness),
                      spec=self._parsed(("run", work.run.id), work.run.spec, pb.RunSpec))
        if job.harness.model != work.cell.model:
            # The model is the run's (its cell's): runs of one harness file with different
            # models share its digest, and the record stored under it holds one of them.
            job.harness.model = work.cell.model
        return spb.ClaimJobResponse(job=job)

    def _parsed(self, key, record: dict, message_type):
        """Parse each pinned record once (JSON to protobuf is slow in Python). Keyed by the
        record object too: a record a later run replaced (records.insert_or_replace) is a new
        object once the store's cache forgot the old one."""
        found = self._messages.get(key)
        if found is None or found[0] is not record:
            if len(self._messages) >= PARSED_CACHE_SIZE:
                self._messages.pop(next(iter(self._messages)))
            found = self._messages[key] = (record, convert.from_dict(record, message_type()))
        return found[1]

    @handle_errors
    async def HeartbeatJob(self, request, context):
        lease = convert.duration_secs(request.lease) or DEFAULT_LEASE_SECS
        expire, cancel = await self.store.heartbeat_job(request.job_id, request.lease_token, lease)
        return spb.HeartbeatJobResponse(lease_expire_time=convert.timestamp(expire), cancel_requested=cancel)

    @handle_errors
    async def AppendEvents(self, request, context):
        now = self.store.clock()
        rows = [convert.event_row(e, now) for e in request.events]
        last = await self.store.append_events(request.job_id, request.lease_token, rows)
        return spb.AppendEventsResponse(last_seq=last)

    @handle_errors
    async def CompleteJob(self, request, context):
        if request.outcome == pb.OUTCOME_UNSPECIFIED:
            raise InvalidArgument("CompleteJob needs an outcome")
        done = Completion(
            outcome=convert.outcome_name(request.outcome), exit_code=request.exit_code, error=request.error,
            artifacts=[convert.to_dict(a) for a in request.artifacts],
            score=_recordable_score(request.score) if request.HasField("score") else None,
            agent_version=request.agent_version, start_time=convert.seconds(request.start_time),
            end_time=convert.seconds(request.end_time), agent_name=request.agent_name)
        attempt, trial, cell, retry = await self.store.complete_job(request.job_id, request.lease_token, done)
        return spb.CompleteJobResponse(attempt=convert.attempt_to_proto(attempt, trial, cell),
                                       retry_attempt_id=retry)

    @handle_errors
    async def ReleaseJob(self, request, context):
        retry = await self.store.release_job(request.job_id, request.lease_token, request.reason or "worker stopped")
        return spb.ReleaseJobResponse(retry_attempt_id=retry)

    @handle_errors
    async def PutBlobs(self, request, context):
        digests = await self.store.put_blobs([(b.digest, b.data) for b in request.blobs])
        return spb.PutBlobsResponse(digests=digests)

    @handle_errors
    async def GetBlobs(self, request, context):
        data = self.store.get_blobs(list(request.digests))
        return spb.GetBlobsResponse(blobs=[spb.Blob(digest=d, data=b) for d, b in zip(request.digests, data)])

    @handle_errors
    async def ExportRun(self, request, context):
        rows, blobs = await self.store.export_run(request.run)
        return spb.ExportRunResponse(manifest_json=msgspec.json.encode(rows).decode(), blob_digests=sorted(blobs))

    @handle_errors
    async def RestoreRun(self, request, context):
        try:
            rows = json.loads(request.manifest_json)
        except ValueError:
            raise InvalidArgument("the export manifest is not JSON") from None
        now = self.store.clock()
        events = {batch.attempt_id: [dict(seq=e.seq, **convert.event_row(e, now)) for e in batch.events]
                  for batch in request.events}
        run, cells = await self.store.restore_run(rows, events)
        return spb.RestoreRunResponse(run=convert.run_to_proto(run, cells))

    @handle_errors
    async def FindMissingBlobs(self, request, context):
        return spb.FindMissingBlobsResponse(missing=self.store.missing_blobs(list(request.digests)))


def _recordable_score(score: pb.Score) -> dict:
    """The score as recorded: rewards outside the range a reward may have (records.MAX_ABS_REWARD)
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


def _summary(data: dict, message_type, time_field: str):
    """A summary message from a dict whose `time_field` holds epoch seconds (or None)."""
    fields = {k: v for k, v in data.items() if k in message_type.DESCRIPTOR.fields_by_name}
    fields[time_field] = convert.timestamp(fields.get(time_field))
    return message_type(**fields)


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
        trials.append((trial.cell_index, trial.task_digest, tasks[trial.task_digest].task_name, trial.repetition,
                       result))
    if request.kind not in ("", "run", "import"):
        raise InvalidArgument(f"unknown kind {request.kind!r}")
    return PlannedRun(
        kind=request.kind or "run", import_format=request.import_format, source=request.source,
        tree=convert.tree_from_json(request.tree_json) if request.kind == "import" else None,
        label=spec.label or "run", spec=convert.to_dict(spec), concurrency=max(spec.concurrency, 1),
        max_infra_retries=max(spec.max_infra_retries, 0),
        datasets=[dict(digest=d.digest, dataset_name=d.dataset_name, source=d.source,
                       task_digests=[x.digest for x in d.tasks], create_time=0.0) for d in request.datasets],
        tasks=[dict(digest=x.digest, task_name=x.task_name, record=_task_record(x)) for x in tasks.values()],
        harnesses=[dict(digest=h.digest, harness_name=h.harness_name, record=convert.to_dict(h))
                   for h in request.harnesses],
        cells=[(c.dataset_digest, c.dataset_name, c.harness_digest, c.harness_name, c.model) for c in request.cells],
        trials=trials)


def imported_result(result: spb.ImportedResult) -> dict:
    """Attempt columns for a trial that finished elsewhere."""
    if result.outcome == pb.OUTCOME_UNSPECIFIED:
        raise InvalidArgument("an imported result needs an outcome")
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
    return dict(outcome=convert.outcome_name(result.outcome), error=result.error, score=score,
                agent_version=result.agent_version, agent_name=result.agent_name,
                start_time=convert.seconds(result.start_time),
                end_time=convert.seconds(result.end_time),
                artifacts=[convert.to_dict(a) for a in result.artifacts])


def _task_record(task: pb.Task) -> dict:
    return json_format.MessageToDict(task)
