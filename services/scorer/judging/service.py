"""Judging as the scorer service does it: attempts of a running run (JudgeAttempt, called by the
executor once the attempt's artifacts are kept) and existing runs and imports after the fact
(JudgeRun, `hemra judge`). Model calls go out with bounded concurrency per judge; each call's
request and response are kept as blobs and named by the score's JudgeCall records.
"""

import asyncio
import os
from collections.abc import Mapping

import httpx

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from services.common import errors, judges
from services.scorer.judging import inputs
from services.scorer.judging.calls import ModelClient
from services.scorer.judging.judge import judge_attempt

#: Attempts of one `hemra judge` judged at once (their calls are bounded by each judge's concurrency).
ATTEMPTS_AT_ONCE = 64
#: Outcomes with nothing of the agent to judge.
NOT_JUDGED = (pb.OUTCOME_INFRA_FAILED, pb.OUTCOME_CANCELLED, pb.OUTCOME_UNSPECIFIED)


class Judges:
    def __init__(self, store, env: Mapping[str, str] | None = None):
        self.store = store
        self.env = os.environ if env is None else env
        self._http: httpx.AsyncClient | None = None
        self._clients: dict[str, ModelClient] = {}

    def _client(self, judge: judges.Judge) -> ModelClient:
        """One client per judge definition, so its concurrency bound holds across attempts."""
        key = judge.definition_json()
        if key not in self._clients:
            if self._http is None:
                self._http = httpx.AsyncClient(timeout=None, limits=httpx.Limits(max_connections=None))
            self._clients[key] = ModelClient(judge, self.env, self._http)
        return self._clients[key]

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def judge_attempt(self, attempt_id: str, task, artifacts, specs) -> list[pb.Score]:
        """One score per judge spec, in order (a judge that cannot judge: a failed score)."""
        defined = [_judge_or_error(spec) for spec in specs]
        usable = [j for j in defined if isinstance(j, judges.Judge)]
        seen = await inputs.gather(self.store, usable, attempt_id, task, artifacts) if usable else None
        scores = await asyncio.gather(
            *(self._score(j, seen) if isinstance(j, judges.Judge) else _failed(*j) for j in defined)
        )
        return list(scores)

    async def _score(self, judge: judges.Judge, seen) -> pb.Score:
        judging = await judge_attempt(judge, self._client(judge), seen)
        blobs = [b for _, call in judging.calls for b in (call.request, call.response)]
        if blobs:
            put = await self.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=b) for b in blobs]))
            digests = iter(put.digests)
            for record in judging.score.judge_calls:
                record.request_blob_digest, record.response_blob_digest = next(digests), next(digests)
        return judging.score

    async def judge_run(self, run_ref: str, spec: pb.JudgeSpec, only_missing: bool) -> tuple[str, int, int, int]:
        """(run ID, judged, of which failed, skipped): every finished attempt of the run that
        has something of its agent to judge, recorded beside the scores it had."""
        judge = judges.from_spec(spec)
        run = (await self.store.GetRun(spb.GetRunRequest(run=run_ref))).run
        attempts = [a for a in await _attempts(self.store, run.id) if a.outcome not in NOT_JUDGED]
        todo = [a for a in attempts if not (only_missing and _judged(a, spec.fingerprint))]
        tasks: dict[str, pb.Task] = {}
        slots = asyncio.Semaphore(ATTEMPTS_AT_ONCE)

        async def one(attempt) -> bool:
            async with slots:
                if attempt.task_digest not in tasks:
                    tasks[attempt.task_digest] = await _task(self.store, attempt.task_digest)
                seen = await inputs.gather(
                    self.store, [judge], attempt.id, tasks[attempt.task_digest], attempt.artifacts
                )
                score = await self._score(judge, seen)
                await self.store.RecordJudgeScores(spb.RecordJudgeScoresRequest(attempt_id=attempt.id, scores=[score]))
                return score.state == pb.SCORE_STATE_SCORED

        results = await asyncio.gather(*(one(a) for a in todo))
        return run.id, len(todo), sum(1 for ok in results if not ok), len(attempts) - len(todo)


def _judge_or_error(spec: pb.JudgeSpec):
    try:
        return judges.from_spec(spec)
    except judges.JudgeFileError as exc:
        return spec, str(exc)


async def _failed(spec: pb.JudgeSpec, error: str) -> pb.Score:
    return pb.Score(
        state=pb.SCORE_STATE_SCORER_FAILED,
        scorer=f"judge:{spec.name}",
        judge=spec.name,
        scorer_fingerprint=spec.fingerprint,
        error=error,
    )


def _judged(attempt, fingerprint: str) -> bool:
    return any(s.scorer_fingerprint == fingerprint and s.state == pb.SCORE_STATE_SCORED for s in attempt.judge_scores)


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
