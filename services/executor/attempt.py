"""Work one leased job: prepare the sandbox, drive the harness, score, keep artifacts, complete.

Whose failure it is, blame.py decides: every failure HEMRA observed of its own (sandbox, engine,
cache, scorer service) closes the attempt as an infrastructure failure; what the agent caused
(a harness that failed or timed out, a fault HEMRA found in what it sent or left) is a result and
is scored like any other. Cancellation and a lost lease come from the heartbeat.
"""

import asyncio
import functools
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from hemra.services import digests
from hemra.services.common import errors, judges, parsing, transport
from hemra.services.domain import blame, folders, vocabulary
from hemra.services.environments.capabilities import carried, verifier_isolation, verifier_network
from hemra.services.executor.artifacts import collect as collect_artifacts
from hemra.services.executor.events import EventLog, event, output_events, text
from hemra.services.executor.harnesses import (
    HarnessDriver,
    HarnessResult,
    TrialContext,
    driver_for,
)
from hemra.services.executor.harnesses.base import TIMED_OUT
from hemra.services.executor.protocol import Grant, Grants
from hemra.services.executor.sandboxes import Sandbox, open_sandbox
from hemra.services.executor.taskcache import TaskCache
from hemra.v1 import common_pb2 as pb
from hemra.v1 import harness_service_pb2 as hpb
from hemra.v1 import scorer_service_pb2 as scpb
from hemra.v1 import store_service_pb2 as spb

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECS = 900.0
#: How long past its timeout a harness driver may take to stop before HEMRA cuts it off.
DEADLINE_GRACE_SECS = 15.0
#: The most of a failed build's log kept.
MAX_BUILD_LOG_BYTES = 64 * 1024 * 1024
#: What the harness may say of itself through Finish (its version, its failure) is cut to this.
MAX_FINISH_CHARS = 1000
#: The longest the executor waits for its run's judges on one attempt (each model call has its
#: own timeout and retries; this only bounds a scorer service that stopped answering).
JUDGE_RPC_TIMEOUT_SECS = 6 * 3600.0
#: Where a failed sandbox's build output is kept among the attempt's artifacts.
BUILD_LOG = "/logs/build/build.log"


@dataclass
class Deps:
    """What an executor shares between its attempts."""

    store: transport.Client
    scorer: transport.Client
    cache: TaskCache
    grants: Grants
    work_root: Path
    harness_address: str
    worker: str
    lease_secs: float
    heartbeat_secs: float


class Stop(Exception):
    """The attempt must stop: cancelled, released (the worker is shutting down), or the lease was lost."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Control:
    """How others tell a running attempt to stop, and why."""

    def __init__(self):
        self.event = asyncio.Event()
        self.reason = ""

    def stop(self, reason: str) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()


def attempt_timeout(job) -> float:
    if job.spec.timeout_secs > 0:
        return float(job.spec.timeout_secs)
    return job.task.agent_timeout.ToNanoseconds() / 1e9 or DEFAULT_TIMEOUT_SECS


async def work(job, deps: Deps, control: Control | None = None, claim_next=lambda: None):
    """Work `job` to its completion (or until it is released or its lease is lost). With its
    completion the store claims the next job for this slot as `claim_next()` asks (a
    ClaimJobRequest, or None for no next job): that job is returned, to be worked next."""
    next_job = None
    events = EventLog(deps.store, job.id, job.lease_token, retry_for=deps.lease_secs)
    started = time.time()
    control = control or Control()
    heartbeat = asyncio.create_task(_heartbeat(job, deps, control))
    boxes = _Boxes()
    try:
        next_job = await _attempt(job, deps, control, claim_next, events, started, boxes)
    except Stop as stopped:
        next_job = await _stopped(job, deps, events, stopped, started, claim_next)
    except errors.LeaseLost:
        logger.warning("attempt %s: lease lost; another worker owns it now", job.attempt.id)
    except errors.StoreUnwritable:  # nothing more can be recorded: the worker stops (worker.py)
        await release(deps, job)
    except Exception as exc:
        failure = blame.attempt_failure(exc)
        if failure.counts:
            next_job = await _agent_fault(job, deps, events, failure, started, claim_next)
        else:
            next_job = await _infrastructure_failure(job, deps, events, exc, failure, started, claim_next)
    finally:
        heartbeat.cancel()
        try:
            await _teardown(boxes.verifier, boxes.sandbox)
        except BaseException:
            if next_job is not None:  # not left to its lease: nobody will work it
                await release(deps, next_job)
            raise
    return next_job


@dataclass
class _Boxes:
    """The attempt's sandboxes as they are made: whatever exists is torn down, however it ends."""

    sandbox: Sandbox | None = None
    verifier: Sandbox | None = None


async def _attempt(job, deps: Deps, control: Control, claim_next, events: EventLog, started: float, boxes: _Boxes):
    """The attempt's phases in order: its sandbox, the agent, the verifier, the judges, then its
    completion (which claims the next job)."""
    task_dir = await deps.cache.folder(job.task)
    driver = driver_for(job.harness)
    await _harness_folder(job, deps)  # before mounts: a driver may mount it (acp command, MCP servers)
    boxes.sandbox = sandbox = await _open(job, deps, driver, task_dir)
    isolation = _isolation(job)
    if isolation == "fresh":
        sandbox.reserve_fresh(carried(job.task.environment.workdir or "/"))
    await sandbox.prepare()
    await events.emit_own(event("status", "sandbox_ready", time.time() - started, sandbox=job.spec.sandbox or "host"))
    result, captured = await _run_agent(job, deps, driver, sandbox, task_dir, events, control)
    score = await _verify(job, deps, isolation, events, control, boxes)
    artifacts = captured + await collect_artifacts(boxes.verifier, deps.store, events)
    judged = await _until_stopped(_judge(job, deps, artifacts, events), control, boxes.verifier)
    await events.flush()
    return await _complete(
        deps,
        job,
        claim_next(),
        vocabulary.OUTCOMES[result.outcome],
        result.exit_code,
        result.error,
        started,
        artifacts=artifacts,
        score=score,
        agent_version=result.agent_version,
        agent_name=job.harness.agent,
        judge_scores=judged,
    )


async def _open(job, deps: Deps, driver, task_dir: Path) -> Sandbox:
    """The agent's sandbox, not yet prepared: the run's kind, with what the harness mounts and
    the model endpoints it may reach."""
    return open_sandbox(
        job.spec.sandbox or "host",
        job.attempt.id,
        job.task,
        task_dir,
        deps.work_root,
        mounts=await driver.mounts(job.harness),
        network=job.spec.sandbox_network,
        image=job.spec.sandbox_image,
        endpoints=driver.endpoints(job.harness) + driver.protocol_endpoints(deps.harness_address),
        keep_history=job.task.task_name in job.spec.history_kept,
        verifier_network=_verifier_network(job, task_dir),
    )


async def _run_agent(job, deps: Deps, driver, sandbox: Sandbox, task_dir: Path, events: EventLog, control: Control):
    """The harness phase: the agent's result, and the artifacts captured before and after it."""
    captured = await _capture(job, deps, sandbox, "start")
    result = await _until_stopped(_drive(job, deps, driver, sandbox, task_dir, events), control, sandbox)
    await _note_oom(job, sandbox, events)
    # Nothing the agent started may outlive its phase: a leftover process could rewrite
    # the reward or the tests while the verifier runs.
    await sandbox.stop_processes()
    await _note_relay_usage(sandbox, events)
    captured += await _capture(job, deps, sandbox, "end")
    return result, captured


async def _verify(job, deps: Deps, isolation: str, events: EventLog, control: Control, boxes: _Boxes):
    """The verifier phase in its sandbox (boxes.verifier, the agent's own when it cannot run): the score."""
    try:
        # Held before anything else is recorded of it: a failure from here on (an event the
        # store did not take) still tears its container down (work's `finally`).
        boxes.verifier = await _until_stopped(_verifier_sandbox(job, isolation, boxes.sandbox), control, boxes.sandbox)
        await _note_verifier_sandbox(isolation, boxes.verifier, events)
        score = await _until_stopped(_score(job, deps, boxes.verifier, events), control, boxes.verifier)
        await _note_service(boxes.verifier, events)
    except blame.AgentFault as exc:  # what the agent left keeps the verifier from running at all
        boxes.verifier = boxes.verifier or boxes.sandbox
        score = await _unrunnable(job, events, blame.attempt_failure(exc))
    return score


async def _stopped(job, deps: Deps, events: EventLog, stopped: Stop, started: float, claim_next):
    """An attempt told to stop: cancelled (completed as such), released (back to the queue), or
    its lease lost (nothing more to record)."""
    if stopped.reason == "cancelled":
        await _finish_quietly(events)
        return await _complete(deps, job, claim_next(), pb.OUTCOME_CANCELLED, 0, "cancelled while running", started)
    if stopped.reason == "released":
        await _finish_quietly(events, event("status", "released", message="the worker shut down"))
        await release(deps, job)
    else:
        logger.warning("attempt %s stopped: %s", job.attempt.id, stopped.reason)
    return None


async def _teardown(*boxes: Sandbox | None) -> None:
    """Tear each sandbox down whatever the others' teardown did (none is left behind for
    another's failure); the first failure is raised once all were tried."""
    failure: BaseException | None = None
    for box in dict.fromkeys(box for box in boxes if box is not None):
        try:
            await box.teardown()
        except BaseException as exc:
            failure = failure or exc
    if failure is not None:
        raise failure


async def _infrastructure_failure(job, deps: Deps, events: EventLog, exc: Exception, failure, started, claim_next):
    """Close the attempt as an infrastructure failure HEMRA observed (kept apart, retried)."""
    logger.error("attempt %s: infrastructure failure", job.attempt.id, exc_info=exc)
    log = getattr(exc, "log", "")  # e.g. the output of a Dockerfile that did not build
    await _finish_quietly(
        events,
        event("error", "infrastructure", message=failure.error),
        *([event("output", "build.log", text=text(log.encode()))] if log else []),
    )
    # HEMRA's own logs kept before the failure (e.g. the stderr of an MCP server that did not start).
    artifacts = list(events.artifacts) + (await _keep_log(deps.store, log) if log else [])
    return await _complete(
        deps, job, claim_next(), pb.OUTCOME_INFRA_FAILED, 0, failure.error, started, artifacts=artifacts
    )


async def _agent_fault(job, deps: Deps, events: EventLog, failure, started, claim_next):
    """Close the attempt as the agent's failure when what it sent or left stopped HEMRA before
    anything else could be done: scored 0, as a verifier that could not run."""
    score = await _unrunnable(job, events, failure)
    return await _complete(
        deps, job, claim_next(), vocabulary.OUTCOMES[failure.outcome], -1, failure.error, started, score=score
    )


async def _unrunnable(job, events: EventLog, failure) -> pb.Score:
    """The score of an attempt whose verifier could not run for what the agent left: its
    failure (0 for the task's reward names), the verifier's fault being that it crashed."""
    logger.info("attempt %s: the agent's fault: %s", job.attempt.id, failure.error)
    await _finish_quietly(events, event("error", "agent_fault", message=failure.error))
    files = job.task.files
    unscored = blame.verifier_failure(
        blame.VERIFIER_CRASHED,
        f"the verifier could not run: {failure.error}",
        blame.reward_names([f.path for f in files]),
    )
    tests = digests.tests_digest((f.path, f.blob_digest) for f in files)
    return pb.Score(
        state=pb.SCORE_STATE_SCORED,
        rewards=unscored.rewards,
        scorer_fingerprint=digests.scorer_fingerprint(tests, unscored.rewards),
        scorer="verifier",
        error=unscored.error,
        fault=unscored.fault,
    )


async def _harness_folder(job, deps: Deps) -> None:
    """A harness file sent from the submitter's machine and missing here: written back from
    the store (under the task cache's sibling), and the job pointed at it."""
    harness = job.harness
    if not harness.HasField("folder") or not harness.source_path or Path(harness.source_path).exists():
        return
    path = await folders.receive(deps.store, harness.folder, deps.cache.root.parent / "folders")
    harness.source_path = str(path)


async def _drive(
    job, deps: Deps, driver: HarnessDriver, sandbox: Sandbox, task_dir: Path, events: EventLog
) -> HarnessResult:
    timeout = attempt_timeout(job)
    await _harness_folder(job, deps)
    grant = Grant(job.attempt.id, "harness", sandbox, job.task, job.harness.model, time.monotonic() + timeout, events)
    token = deps.grants.issue(grant)
    try:
        context = TrialContext(
            job.attempt.id,
            job.task,
            task_dir,
            job.harness,
            job.harness.model,
            timeout,
            sandbox,
            events,
            deps.harness_address,
            token,
            tuple(job.spec.verifier_env),
        )
        await events.emit_own(
            event(
                "status", "harness_start", harness=job.harness.harness_name, kind=job.harness.kind, timeout_secs=timeout
            )
        )
        try:
            result = await _run_until_deadline(driver, context, sandbox)
        except blame.AgentFault as exc:  # what the agent sent stopped its driver: a result, scored
            failure = blame.attempt_failure(exc)
            result = HarnessResult(failure.outcome, -1, failure.error)
    finally:
        deps.grants.revoke(token)
    if grant.finish is not None:
        result.agent_version = grant.finish.agent_version[:MAX_FINISH_CHARS] or result.agent_version
        if grant.finish.status == hpb.FINISH_STATUS_FAILED and result.outcome == "completed":
            result.outcome = vocabulary.HARNESS_FAILED
            result.error = grant.finish.message[:MAX_FINISH_CHARS] or "the harness reported failure"
    await events.emit_own(
        event("status", "harness_end", outcome=result.outcome, exit_code=result.exit_code, error=result.error)
    )
    return result


async def _run_until_deadline(driver: HarnessDriver, context: TrialContext, sandbox: Sandbox) -> HarnessResult:
    """The harness's time is wall-clock and final: drivers stop at it themselves, and a driver
    still running a moment later (a process that ignored its kill, a stuck engine) is cut off
    and every process in the sandbox killed."""
    running = asyncio.ensure_future(driver.run(context))
    try:
        done, _ = await asyncio.wait({running}, timeout=context.timeout + DEADLINE_GRACE_SECS)
    except asyncio.CancelledError:
        running.cancel()
        raise
    if done:
        return running.result()
    # Not wait_for: it waits for the cancelled driver without end, and a driver stuck in its
    # own cleanup would hold the attempt (and the run) forever.
    running.cancel()
    await sandbox.kill()
    await asyncio.wait({running}, timeout=DEADLINE_GRACE_SECS)
    if not running.done():
        logger.error("attempt %s: the harness driver did not stop after its cancel", context.attempt_id)
        running.add_done_callback(lambda task: task.cancelled() or task.exception())  # retrieved, whenever
    return HarnessResult(TIMED_OUT, -1, f"the harness timed out after {context.timeout:g} s")


def _isolation(job) -> str:
    return verifier_isolation(
        job.spec.verifier_isolation,
        job.task.verifier_isolation,
        job.task.environment.workdir or "/",
        job.spec.sandbox or "host",
    )


def _verifier_network(job, task_dir: Path) -> str:
    """The run's verifier.network, else the task's [verifier] network, else none."""
    if job.spec.verifier_network:
        return verifier_network(job.spec.verifier_network, "")
    return _tasks_verifier_network(task_dir)


@functools.lru_cache(maxsize=1024)
def _tasks_verifier_network(task_dir: Path) -> str:
    """The task's [verifier] network, read from its pinned task.toml (the planner checked it;
    the Task message does not carry it). Once per task folder: the task cache's folder of a
    digest never changes, and parsing it took a millisecond of every trial."""
    try:
        section = parsing.read_toml(task_dir / "task.toml").get("verifier", {})
    except (OSError, parsing.Unreadable):
        return "none"
    return verifier_network("", section.get("network", "") if isinstance(section, dict) else "")


async def _verifier_sandbox(job, isolation: str, sandbox: Sandbox) -> Sandbox:
    """Where the verifier runs: a fresh sandbox holding only the agent's workspace and logs,
    or (shared) the agent's own, now without any of its processes."""
    if isolation == "fresh":
        return await sandbox.fresh(carried(job.task.environment.workdir or "/"))
    await sandbox.reopen()
    return sandbox


async def _note_verifier_sandbox(isolation: str, box: Sandbox, events: EventLog) -> None:
    await events.emit_own(event("status", "verifier_sandbox", isolation=isolation, **(box.network_note or {})))
    if box.not_carried:
        await events.emit_own(
            event(
                "error",
                "workspace_not_carried",
                paths=list(box.not_carried),
                message="the agent replaced these folders with a link or a file: the verifier gets them empty",
            )
        )


async def _note_service(box: Sandbox, events: EventLog) -> None:
    """What the task's service beside the verifier printed (verifier.network = "bridge"), as
    output events: the service runs the agent's workspace, so they are bounded like the agent's."""
    output = await box.service_output()
    if output:
        await events.emit(*output_events("service", output))


async def _note_oom(job, sandbox: Sandbox, events: EventLog) -> None:
    """A command killed by the task's own memory limit is part of the result; say so."""
    kills = await sandbox.oom_kills()
    if kills:
        await events.emit_own(
            event(
                "error",
                "oom",
                kills=kills,
                memory_mb=job.task.environment.memory_mb,
                message=f"the task's memory limit killed {kills} process(es)",
            )
        )


async def _note_relay_usage(sandbox: Sandbox, events: EventLog) -> None:
    """The usage HEMRA's model relay read itself, once the harness's processes are gone (kept
    apart from what the harness reports; see relayusage.py)."""
    observed = sandbox.relay_usage()
    if observed is not None:
        await events.emit_own(event(vocabulary.USAGE_OBSERVED, "relay", **observed))


async def _keep_log(store, log: str) -> list[pb.Artifact]:
    """The build log of a failed sandbox, kept as the attempt's one artifact."""
    try:
        data = log.encode()[-MAX_BUILD_LOG_BYTES:]
        [digest] = (await store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=data)]))).digests
        return [pb.Artifact(path=BUILD_LOG, size_bytes=len(data), blob_digest=digest)]
    except errors.HemraError:
        return []


async def _score(job, deps: Deps, sandbox: Sandbox, events: EventLog) -> pb.Score:
    grant = Grant(job.attempt.id, "verifier", sandbox, job.task, job.harness.model, time.monotonic() + 10**9)
    token = deps.grants.issue(grant)
    try:
        response = await deps.scorer.ScoreAttempt(
            scpb.ScoreAttemptRequest(
                attempt=job.attempt.id,
                task=job.task,
                sandbox_address=deps.harness_address,
                sandbox_token=token,
                verifier_env=job.spec.verifier_env,
            )
        )
    finally:
        deps.grants.revoke(token)
    score = response.score
    await events.emit_own(
        event(
            "status",
            "scored",
            score.duration.ToNanoseconds() / 1e9,
            state=pb.ScoreState.Name(score.state),
            rewards=dict(score.rewards),
            error=score.error,
        )
    )
    return score


async def _capture(job, deps: Deps, sandbox: Sandbox, phase: str) -> list[pb.Artifact]:
    """The files the run's judges read, as they are now (`phase` is "start" or "end"), kept as
    artifacts under CAPTURE_ROOT: judges read them from the store, never from the sandbox.
    A file that is not there (or not readable) is not captured; the judge is told so."""
    start, end = judges.captured_files(job.spec.judge_specs) if job.spec.judge_specs else ([], [])
    found: list[tuple[str, bytes]] = []
    for path in start if phase == "start" else end:
        try:
            found.append((path, await sandbox.read_file(path, limit=judges.MAX_CAPTURE_BYTES)))
        except OSError:
            continue
    if not found:
        return []
    put = await deps.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=data) for _, data in found]))
    return [
        pb.Artifact(path=f"{judges.CAPTURE_ROOT}/{phase}{path}", blob_digest=digest, size_bytes=len(data))
        for (path, data), digest in zip(found, put.digests)
    ]


async def _judge(job, deps: Deps, artifacts: list[pb.Artifact], events: EventLog) -> list[pb.Score]:
    """The run's HEMRA judges' scores of this attempt, from what was recorded of it. A scorer
    service that cannot judge at all leaves each judge's score failed (hemra judge
    --only-missing judges them again); the attempt's own result stands."""
    specs = list(job.spec.judge_specs)
    if not specs:
        return []
    await events.flush()  # the judges read the attempt's final message and trajectory from the store
    request = scpb.JudgeAttemptRequest(attempt=job.attempt.id, task=job.task, artifacts=artifacts, judges=specs)
    try:
        scores = list((await deps.scorer.JudgeAttempt(request, timeout=JUDGE_RPC_TIMEOUT_SECS)).scores)
    except errors.HemraError as exc:
        scores = [judges.failed_score(s, f"the scorer service could not judge: {exc}") for s in specs]
    for score in scores:
        await events.emit_own(
            event(
                "status",
                "judged",
                score.duration.ToNanoseconds() / 1e9,
                judge=score.judge,
                state=pb.ScoreState.Name(score.state),
                rewards=dict(score.rewards),
                error=score.error,
            )
        )
    return scores


async def _until_stopped(work, control: Control, sandbox: Sandbox):
    """Await `work` unless told to stop first; then kill the sandbox's processes."""
    if control.event.is_set():
        work.close()
        raise Stop(control.reason)
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(control.event.wait())
    done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        stopper.cancel()
        return task.result()
    await sandbox.kill()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise Stop(control.reason)


async def _heartbeat(job, deps: Deps, control: Control) -> None:
    request = spb.HeartbeatJobRequest(job=job.id, lease_token=job.lease_token)
    request.lease.FromNanoseconds(int(deps.lease_secs * 1e9))
    while True:
        await asyncio.sleep(deps.heartbeat_secs)
        try:
            # A call the store's restart left unanswered must not outlive the lease: each try
            # gives up well within it, and the next heartbeat is sent.
            response = await deps.store.HeartbeatJob(request, timeout=deps.lease_secs / 3)
        except errors.LeaseLost:
            control.stop("lease lost")
            return
        except errors.StoreUnwritable:  # the worker hands the attempt back (worker.py)
            return
        except errors.HemraError as exc:
            logger.warning("heartbeat of %s failed: %s", job.id, exc)
            continue
        if response.cancel_requested:
            control.stop("cancelled")
            return


async def _complete(
    deps: Deps,
    job,
    claim_next: spb.ClaimJobRequest | None,
    outcome: int,
    exit_code: int,
    error: str,
    started: float,
    artifacts=(),
    score: pb.Score | None = None,
    agent_version: str = "",
    agent_name: str = "",
    judge_scores=(),
):
    """Complete `job`; with `claim_next`, the store's next job for this slot (or None)."""
    request = spb.CompleteJobRequest(
        job=job.id,
        lease_token=job.lease_token,
        outcome=outcome,
        exit_code=exit_code,
        error=error,
        artifacts=list(artifacts),
        agent_version=agent_version,
        agent_name=agent_name,
        judge_scores=list(judge_scores),
    )
    if score is not None:
        request.score.CopyFrom(score)
    request.start_time.FromNanoseconds(int(started * 1e9))
    request.end_time.FromNanoseconds(int(time.time() * 1e9))
    if claim_next is not None:
        request.claim_next.CopyFrom(claim_next)
    try:
        response = await deps.store.CompleteJob(request, retry_for=deps.lease_secs)
    except errors.LeaseLost:
        logger.warning("attempt %s: lease lost before completion; its result is dropped", job.attempt.id)
    except errors.StoreUnwritable:
        pass  # the worker stops and says so once (worker.py); the lease runs out
    except errors.HemraError as exc:  # the store is away: the lease expires and the trial is retried
        logger.warning("attempt %s: could not complete (%s); the store will reclaim it", job.attempt.id, exc)
    else:
        return response.next_job if response.HasField("next_job") else None
    return None


def claimed(response: spb.ClaimJobResponse) -> list:
    """The jobs a ClaimJob answered with: `jobs` (max_jobs above 1), else the one `job`, if any.
    A store that predates max_jobs answers in `job` whatever was asked: taken too, not left
    leased to expire."""
    return list(response.jobs) or ([response.job] if response.HasField("job") else [])


#: For supervisors that complete jobs of their own (services/executor/harbor).
complete = _complete


async def release(deps: Deps, job) -> None:
    """Hand `job` back to the queue: it is retried at once as a new attempt, without using up
    a retry (the worker is shutting down; nothing went wrong with the attempt)."""
    try:
        await deps.store.ReleaseJob(
            spb.ReleaseJobRequest(job=job.id, lease_token=job.lease_token, reason="worker stopped")
        )
    except errors.StoreUnwritable:
        pass  # the worker stops and says so once (worker.py); the lease runs out
    except errors.HemraError as exc:  # the lease will expire instead; nothing is lost
        logger.warning("attempt %s: could not release its job: %s", job.attempt.id, exc)


async def _finish_quietly(events: EventLog, *extra) -> None:
    try:
        await events.emit_own(*extra)
        await events.flush()
    except errors.HemraError:
        pass
