"""Judging as the scorer service does it: attempts of a running run (JudgeAttempt, called by the
executor once the attempt's artifacts are kept) and existing runs and imports after the fact
(JudgeRun, `hemra judge`). Model calls go out with bounded concurrency per judge; each call's
request and response are kept as blobs and named by the score's JudgeCall records.
"""

import asyncio
import os
from collections.abc import Mapping

import httpx

from hemra.services.common import errors, judges
from hemra.services.scorer.judging import inputs
from hemra.services.scorer.judging.calls import ModelClient
from hemra.services.scorer.judging.judge import Judging, judge_attempt
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: Attempts of one `hemra judge` judged at once (their calls are bounded by each judge's concurrency).
ATTEMPTS_AT_ONCE = 64
#: Judged attempts recorded together (or fewer, once their calls reach RECORD_BATCH_BYTES).
RECORD_BATCH = 200
RECORD_BATCH_BYTES = 32 * 1024 * 1024
#: Outcomes with nothing of the agent to judge.
NOT_JUDGED = (pb.OUTCOME_INFRA_FAILED, pb.OUTCOME_CANCELLED, pb.OUTCOME_UNSPECIFIED)


class Judges:
    def __init__(self, store, env: Mapping[str, str] | None = None):
        self.store = store
        self.env = os.environ if env is None else env
        self._clients: dict[str, ModelClient] = {}

    def _client(self, judge: judges.Judge) -> ModelClient:
        """One client per judge definition, so its concurrency bound holds across attempts; its
        connection pool is as large as that bound (a larger one only costs its bookkeeping)."""
        key = judge.definition_json()
        if key not in self._clients:
            limits = httpx.Limits(max_connections=judge.concurrency, max_keepalive_connections=judge.concurrency)
            self._clients[key] = ModelClient(judge, self.env, httpx.AsyncClient(timeout=None, limits=limits))
        return self._clients[key]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.http.aclose()

    async def judge_attempt(self, attempt_id: str, task, artifacts, specs) -> list[pb.Score]:
        """One score per judge spec, in order (a judge that cannot judge: a failed score)."""
        defined = [_judge_or_error(spec) for spec in specs]
        usable = [j for j in defined if isinstance(j, judges.Judge)]
        seen = await inputs.gather(self.store, usable, attempt_id, task, artifacts) if usable else None
        return list(await asyncio.gather(*(self._judged_or_failed(j, seen) for j in defined)))

    async def _judged_or_failed(self, judge, seen) -> pb.Score:
        return await self._score(judge, seen) if isinstance(judge, judges.Judge) else judges.failed_score(*judge)

    async def _score(self, judge: judges.Judge, seen) -> pb.Score:
        judging = await judge_attempt(judge, self._client(judge), seen)
        await _keep_calls(self.store, [judging])
        return judging.score

    async def judge_run(self, run_ref: str, spec: pb.JudgeSpec, only_missing: bool) -> tuple[str, int, int, int]:
        """(run ID, judged, of which failed, skipped): every finished attempt of the run that
        has something of its agent to judge, recorded beside the scores it had."""
        judge = judges.from_spec(spec)
        spec = judge.spec()  # its fingerprint as its definition gives it
        run = (await self.store.GetRun(spb.GetRunRequest(run=run_ref))).run
        attempts = [a for a in await _attempts(self.store, run.id) if a.outcome not in NOT_JUDGED]
        todo = [a for a in attempts if not (only_missing and _judged(a, spec))]
        tasks: dict[str, asyncio.Future] = {}  # one fetch per task, however many attempts wait for it
        slots = asyncio.Semaphore(ATTEMPTS_AT_ONCE)
        recorder = _Recorder(self.store)

        async def one(attempt) -> bool:
            async with slots:
                if attempt.task_digest not in tasks:
                    tasks[attempt.task_digest] = asyncio.ensure_future(_task(self.store, attempt.task_digest))
                task = await tasks[attempt.task_digest]
                seen = await inputs.gather(
                    self.store, [judge], attempt.id, task, attempt.artifacts, has_events=attempt.event_count > 0
                )
                judging = await judge_attempt(judge, self._client(judge), seen)
            await recorder.add(attempt.id, judging)
            return judging.score.state == pb.SCORE_STATE_SCORED

        results = await asyncio.gather(*(one(a) for a in todo))
        await recorder.flush()
        return run.id, len(todo), sum(1 for ok in results if not ok), len(attempts) - len(todo)


class _Recorder:
    """Judged attempts recorded in batches (calls as blobs, then scores in one transaction):
    a store commit per attempt would bound judging to the database's commit rate."""

    def __init__(self, store):
        self.store = store
        self._pending: list[tuple[str, Judging]] = []
        self._bytes = 0
        self._lock = asyncio.Lock()

    async def add(self, attempt_id: str, judging: Judging) -> None:
        self._pending.append((attempt_id, judging))
        self._bytes += sum(len(c.request) + len(c.response) for _, c in judging.calls)
        if len(self._pending) >= RECORD_BATCH or self._bytes >= RECORD_BATCH_BYTES:
            await self.flush()

    async def flush(self) -> None:
        async with self._lock:
            batch, self._pending, self._bytes = self._pending, [], 0
            if not batch:
                return
            await _keep_calls(self.store, [judging for _, judging in batch])
            request = spb.RecordJudgeScoresRequest(
                attempts=[spb.JudgedAttempt(attempt_id=a, scores=[j.score]) for a, j in batch]
            )
            await self.store.RecordJudgeScores(request)


async def _keep_calls(store, judgings: list[Judging]) -> None:
    """Every call's request and response as blobs, their digests set on the call records."""
    blobs = [b for judging in judgings for _, call in judging.calls for b in (call.request, call.response)]
    if not blobs:
        return
    digests = iter((await store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=b) for b in blobs]))).digests)
    for judging in judgings:
        for record in judging.score.judge_calls:
            record.request_blob_digest, record.response_blob_digest = next(digests), next(digests)


def _judge_or_error(spec: pb.JudgeSpec):
    try:
        return judges.from_spec(spec)
    except judges.JudgeFileError as exc:
        return spec, str(exc)


def _judged(attempt, spec: pb.JudgeSpec) -> bool:
    """Whether this judge, by its name and as now defined (its fingerprint), scored the attempt.
    Two judges may share a fingerprint (a copy under another name): each is its own column of
    scores, so one's judging never stands for the other's."""
    return any(
        s.judge == spec.name and s.scorer_fingerprint == spec.fingerprint and s.state == pb.SCORE_STATE_SCORED
        for s in attempt.judge_scores
    )


async def _attempts(store, run_id: str) -> list:
    found, token = [], ""
    while True:
        page = await store.ListAttempts(spb.ListAttemptsRequest(parent=run_id, page_size=1000, page_token=token))
        found += [a for a in page.attempts if a.state == pb.ATTEMPT_STATE_FINISHED]
        token = page.next_page_token
        if not token:
            return found


async def _task(store, digest: str) -> pb.Task | None:
    try:
        return (await store.GetTask(spb.GetTaskRequest(name=digest))).task
    except errors.NotFound:  # an import of results whose tasks were not given: no instruction
        return None
