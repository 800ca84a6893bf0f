"""StoreService over gRPC: convert the request, call the Store, convert the result."""

import dataclasses
import logging

import msgspec

from hemra.services.bulk import gc_paused
from hemra.services.store import convert, report, requests
from hemra.services.store.service import Store
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc

DEFAULT_LEASE_SECS = 60.0
#: Parsed tasks, harnesses and run specs kept per store process.
PARSED_CACHE_SIZE = 4096

logger = logging.getLogger(__name__)


class StoreServicer(spb_grpc.StoreServiceServicer):
    def __init__(self, store: Store):
        self.store = store
        self._messages: dict = {}

    async def RecordRun(self, request, context):
        with gc_paused():  # an import's request holds 100,000s of entries
            run, cells = await self.store.record_run(requests.planned_run(request))
        return spb.RecordRunResponse(run=convert.run_to_proto(run, cells))

    async def GetRun(self, request, context):
        run, cells, progress = await self.store.get_run(request.run)
        matches = await self.store.label_matches(request.run, run)
        return spb.GetRunResponse(run=convert.run_to_proto(run, cells, progress), label_matches=matches)

    async def ListRuns(self, request, context):
        runs, token = await self.store.list_runs(request.page_size, request.page_token, request.kind)
        # Settled runs have no open jobs: only the others are asked.
        jobs = await self.store.open_jobs([r[0].id for r in runs if r[2][0]["queued"] or r[2][0]["running"]])
        return spb.ListRunsResponse(
            runs=[convert.with_open_jobs(convert.run_to_proto(*r), jobs.get(r[0].id, [])) for r in runs],
            next_page_token=token,
        )

    async def GetRunReport(self, request, context):
        report = await self.store.run_report(request.run)
        return spb.GetRunReportResponse(report=convert.message(report, spb.Report))

    async def CompareSides(self, request, context):
        comparison = await self.store.compare(request.a, request.b, request.judge, request.list_limit)
        return spb.CompareSidesResponse(comparison=convert.message(comparison, spb.Comparison))

    async def CancelRun(self, request, context):
        run, cells, cancelled, attempt_id = await self.store.cancel(request.run)
        matches = await self.store.label_matches(request.run, run)
        return spb.CancelRunResponse(
            run=convert.run_to_proto(run, cells), cancelled_jobs=cancelled, attempt_id=attempt_id, label_matches=matches
        )

    async def ResumeRun(self, request, context):
        return await self._requeue(request, "resume", [], spb.ResumeRunResponse)

    async def RepairRun(self, request, context):
        return await self._requeue(request, "repair", list(request.reasons), spb.RepairRunResponse)

    async def _requeue(self, request, kind: str, reasons: list[str], response_type):
        changes = [dict(what=c.what, pinned=c.pinned, current=c.current) for c in request.allowed_changes]
        run, cells, progress, done = await self.store.requeue(
            request.run, kind, reasons, request.dry_run, request.requested_by, changes
        )
        return response_type(
            run=convert.run_to_proto(run, cells, progress),
            trials=[spb.RequeuedTrial(**dataclasses.asdict(trial)) for trial in done.trials],
            already_queued=done.already_queued,
            still_running=done.still_running,
            expected_cost_usd=done.expected_cost_usd,
            cost_known=done.cost_known,
            repair=None if done.repair is None else convert.message(report.repair_record(done.repair), spb.RunRepair),
        )

    async def ListAttempts(self, request, context):
        filters = dict(
            cell_id=request.cell_id,
            task_digest=request.task_digest,
            harness_name=request.harness_name,
            verdict=request.verdict,
            task_tag=request.task_tag,
        )
        return await self.store.list_attempts(
            request.parent, request.page_size, request.page_token, filters, shape=_attempts_page
        )

    async def GetAttempt(self, request, context):
        found = await self.store.get_attempt(request.attempt)
        job_id = (await self.store.job_ids([found.attempt.id])).get(found.attempt.id, "")
        return spb.GetAttemptResponse(attempt=convert.attempt_to_proto(found.attempt, found.trial, found.cell, job_id))

    async def RecordDataset(self, request, context):
        await self.store.record_dataset(requests.dataset_row(request.dataset), requests.task_rows(request.dataset))
        return spb.RecordDatasetResponse()

    async def RecordDatasetAudit(self, request, context):
        row = await self.store.record_dataset_audit(requests.dataset_audit(request.audit))
        return spb.RecordDatasetAuditResponse(audit=convert.audit_to_proto(row))

    async def RecordJudgeScores(self, request, context):
        await self.store.record_judge_scores(
            [(judged.attempt_id, requests.judge_scores(judged.scores)) for judged in request.attempts]
        )
        return spb.RecordJudgeScoresResponse()

    async def GetTask(self, request, context):
        return spb.GetTaskResponse(task=convert.from_dict(await self.store.get_task(request.name), pb.Task()))

    async def ListEvents(self, request, context):
        events, token = await self.store.list_events(
            request.parent, request.page_size, request.page_token, request.max_payload_bytes, request.after_seq
        )
        return spb.ListEventsResponse(events=[convert.event_to_proto(e) for e in events], next_page_token=token)

    async def ListDatasets(self, request, context):
        datasets = await self.store.list_datasets()
        return spb.ListDatasetsResponse(datasets=[convert.message(d, spb.DatasetSummary) for d in datasets])

    async def ListTasks(self, request, context):
        page = await self.store.list_tasks(request.parent, request.page_size, request.page_token)
        return convert.message(page, spb.ListTasksResponse)

    async def ListHarnesses(self, request, context):
        harnesses = await self.store.list_harnesses()
        return spb.ListHarnessesResponse(harnesses=[convert.message(h, spb.HarnessSummary) for h in harnesses])

    async def ListScorers(self, request, context):
        scorers = await self.store.list_scorers()
        return spb.ListScorersResponse(scorers=[convert.message(s, spb.ScorerSummary) for s in scorers])

    async def ListJudges(self, request, context):
        judges, note = await self.store.list_judges()
        return spb.ListJudgesResponse(judges=[convert.message(j, spb.JudgeSummary) for j in judges], note=note)

    async def ListAttemptUsage(self, request, context):
        usage = await self.store.attempt_usage(request.parent)
        return spb.ListAttemptUsageResponse(attempts=[convert.message(u, spb.AttemptUsage) for u in usage])

    async def ListHistoryMining(self, request, context):
        found = await self.store.history_mining(request.parent)
        return convert.message(found, spb.ListHistoryMiningResponse)

    async def GetCriterionTable(self, request, context):
        table = await self.store.criterion_table(request.dataset, request.source)
        return spb.GetCriterionTableResponse(table=convert.message(table, spb.CriterionTable))

    async def ClaimJob(self, request, context):
        jobs = await self._claim(request)
        if request.max_jobs > 1:
            return spb.ClaimJobResponse(jobs=jobs)
        return spb.ClaimJobResponse(job=jobs[0] if jobs else None)

    async def _claim(self, request: spb.ClaimJobRequest, after: str = "") -> list[spb.Job]:
        lease = convert.duration_secs(request.lease) or DEFAULT_LEASE_SECS
        work = await self.store.claim_jobs(
            request.worker, lease, request.run, request.pool, after, request.cell, requests.max_jobs(request)
        )
        return [self._job(one) for one in work]

    def _job(self, work) -> spb.Job:
        job = spb.Job(
            id=work.job.id,
            lease_token=work.job.lease_token,
            lease_expire_time=convert.timestamp(work.job.lease_expire_time),
            attempt=convert.attempt_to_proto(work.attempt, work.trial, work.cell),
            task=self._parsed(("task", work.task.digest), work.task.record, pb.Task),
            harness=self._parsed(("harness", work.harness.digest), work.harness.record, pb.Harness),
            spec=self._parsed(("run", work.run.id), work.run.spec, pb.RunSpec),
        )
        if job.harness.model != work.cell.model:
            # The model is the run's (its cell's): runs of one harness file with different
            # models share its digest, and the record stored under it holds one of them.
            job.harness.model = work.cell.model
        return job

    def _parsed(self, key, record: dict, message_type):
        """Parse each pinned record once (JSON to protobuf is slow in Python). Keyed by the
        record object too: a record a later run replaced (sqlrows.insert_or_replace) is a new
        object once the store's cache forgot the old one."""
        found = self._messages.get(key)
        if found is None or found[0] is not record:
            if len(self._messages) >= PARSED_CACHE_SIZE:
                self._messages.pop(next(iter(self._messages)))
            found = self._messages[key] = (record, convert.from_dict(record, message_type()))
        return found[1]

    async def HeartbeatJob(self, request, context):
        lease = convert.duration_secs(request.lease) or DEFAULT_LEASE_SECS
        expire, cancel = await self.store.heartbeat_job(request.job, request.lease_token, lease)
        return spb.HeartbeatJobResponse(lease_expire_time=convert.timestamp(expire), cancel_requested=cancel)

    async def AppendEvents(self, request, context):
        now = self.store.clock()
        rows = [convert.event_row(e, now) for e in request.events]
        last = await self.store.append_events(request.job, request.lease_token, rows, request.first_seq)
        return spb.AppendEventsResponse(last_seq=last)

    async def CompleteJob(self, request, context):
        done = requests.completion(request)
        if request.HasField("claim_next"):
            requests.max_jobs(request.claim_next)  # refused before the completion, not after
        completed = await self.store.complete_job(request.job, request.lease_token, done)
        response = spb.CompleteJobResponse(
            attempt=convert.attempt_to_proto(completed.attempt, completed.trial, completed.cell),
            retry_attempt_id=completed.retry,
        )
        if request.HasField("claim_next"):
            next_jobs = await self._claim_next(request, completed.repeated)
            if request.claim_next.max_jobs > 1:
                response.next_jobs.extend(next_jobs)
            elif next_jobs:
                response.next_job.CopyFrom(next_jobs[0])
        return response

    async def _claim_next(self, request: spb.CompleteJobRequest, repeated: bool) -> list[spb.Job]:
        try:
            if repeated:  # the first answer was lost: the jobs it named are this worker's, unworked
                held = await self.store.claimed_after(request.job, request.claim_next.worker)
                if held:
                    return [self._job(one) for one in held]
            return await self._claim(request.claim_next, after=request.job)
        except Exception:  # the completion stands; the worker claims with ClaimJob instead
            logger.warning("claim after completing %s failed", request.job, exc_info=True)
            return []

    async def ReleaseJob(self, request, context):
        retry = await self.store.release_job(request.job, request.lease_token, request.reason or "worker stopped")
        return spb.ReleaseJobResponse(retry_attempt_id=retry)

    async def PutBlobs(self, request, context):
        digests = await self.store.put_blobs([(b.digest, b.data) for b in request.blobs])
        return spb.PutBlobsResponse(digests=digests)

    async def GetBlobs(self, request, context):
        data = self.store.get_blobs(list(request.digests))
        return spb.GetBlobsResponse(blobs=[spb.Blob(digest=d, data=b) for d, b in zip(request.digests, data)])

    async def ExportRun(self, request, context):
        rows, blobs = await self.store.export_run(request.run)
        return spb.ExportRunResponse(manifest_json=msgspec.json.encode(rows).decode(), blob_digests=sorted(blobs))

    async def RestoreRun(self, request, context):
        rows, events, origin = requests.restore_rows(request, self.store.clock())
        run, cells = await self.store.restore_run(rows, events, origin)
        return spb.RestoreRunResponse(run=convert.run_to_proto(run, cells))

    async def FindMissingBlobs(self, request, context):
        return spb.FindMissingBlobsResponse(missing=self.store.missing_blobs(list(request.digests)))


def _attempts_page(rows: list, token: str, jobs: dict[str, str]) -> spb.ListAttemptsResponse:
    """ListAttempts' answer; the store keeps a settled run's (Store.list_attempts)."""
    attempts = [convert.attempt_to_proto(r.attempt, r.trial, r.cell, job_id=jobs.get(r.attempt.id, "")) for r in rows]
    return spb.ListAttemptsResponse(attempts=attempts, next_page_token=token)
