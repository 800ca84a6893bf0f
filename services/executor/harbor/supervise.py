"""One supervised `harbor run` for the queued trials of a harbor cell.

The executor claims a harbor cell's job like any other; the worker then gathers the cell's
other queued jobs (ClaimJob with `cell`) and hands them all here. Each task is copied once
into a dataset folder of Harbor's layout; Harbor runs them all (-k the most repetitions a
task has) with the local Docker engine, each trial's containers offline (a compose overlay:
no network, labelled as HEMRA's). Its job folder is followed as Harbor writes it: each trial
that finishes is read by the importer's Harbor reader and completes one claimed job of its
task, rewards copied as Harbor's verifier gave them. Cancel (the heartbeat's, or the worker
shutting down) is SIGTERM to Harbor's process group, a deadline, then SIGKILL, and whatever
containers of its trials are left are removed. A job no trial finished is cancelled
(cancel), released (shutdown), or an infrastructure failure (Harbor stopped without it).
"""

import asyncio
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services import digests
from hemra.services.common import errors, harbor_options, parsing
from hemra.services.domain import vocabulary
from hemra.services.environments.engine import LABEL_ATTEMPT, client, container_labels
from hemra.services.executor import attempt
from hemra.services.executor.events import EventLog, event
from hemra.services.executor.harbor import jobfolder, toolenv
from hemra.services.executor.harnesses.cli.install import InstallError
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

logger = logging.getLogger(__name__)

KIND = "harbor"
#: Jobs a gathering claim asks for at once: a run's largest concurrency (ClaimJob's most).
GATHER_BATCH = 1000
#: How often Harbor's job folder is read for finished trials.
POLL_SECS = 0.5
#: How long Harbor has to stop after SIGTERM (it cancels its trials and takes their
#: containers down, ~5 s here) before its process group is killed.
STOP_GRACE_SECS = 30.0
#: A trial's files larger than this are not kept (a runaway log); the rest of the trial is.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The most of Harbor's own output kept (as the cell's log artifact).
MAX_LOG_BYTES = 1024 * 1024
#: prctl's option: the signal a child gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1
#: Variables Harbor itself needs from the executor's environment, besides the harness's own.
_PASSED = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CERT_PATH")


def is_harbor(job) -> bool:
    return job.harness.kind == KIND


async def gather(deps: attempt.Deps, first, request: spb.ClaimJobRequest) -> list:
    """`first` and every other queued job of its cell (the store leases them beyond the run's
    free slots: Harbor's -n keeps to its concurrency), as many a call as a claim may lease."""
    jobs = [first]
    ask = spb.ClaimJobRequest()
    ask.CopyFrom(request)
    ask.run, ask.cell, ask.max_jobs = first.attempt.run_id, first.attempt.cell_id, GATHER_BATCH
    while True:
        try:
            response = await deps.store.ClaimJob(ask)
        except errors.HemraError as exc:  # the rest stay queued: a later supervisor takes them
            logger.warning("harbor cell %s: gathering stopped: %s", first.attempt.cell_id, exc)
            break
        more = attempt.claimed(response)
        if not more:
            break
        jobs.extend(more)
    return jobs


@dataclass
class Pending:
    """A claimed job waiting for its Harbor trial."""

    job: object
    events: EventLog
    started: float = field(default_factory=time.time)


async def supervise(jobs: list, deps: attempt.Deps, control: attempt.Control) -> None:
    """Run Harbor on `jobs` (all of one harbor cell) and complete each of them."""
    first = jobs[0]
    folder = deps.work_root / f"harbor-{first.attempt.id}"
    pending = {
        job.attempt.id: Pending(job, EventLog(deps.store, job.id, job.lease_token, retry_for=deps.lease_secs))
        for job in jobs
    }
    beats = asyncio.create_task(_heartbeats(jobs, deps, control, pending))
    process: asyncio.subprocess.Process | None = None
    try:
        slugs = await _dataset(jobs, deps, folder / "tasks")
        tool = await toolenv.ensure(first.harness.agent_version)
        if control.event.is_set():  # cancelled (or released) while Harbor was installed
            await _close_rest(pending, deps, control, None, folder)
            return
        overlay = _overlay(folder, first.attempt.id)
        process = await _start(tool, first, jobs, folder, overlay)
        await _note(pending, "harbor_start", pid=process.pid, jobs=len(jobs), version=first.harness.agent_version)
        follower = jobfolder.Follower(folder / "jobs" / _job_name(first))
        code = await _follow(process, follower, slugs, pending, deps, control)
        if control.event.is_set():
            code = await _stop(process)
        await _finish(follower, slugs, pending, deps)  # what finished as Harbor stopped
        await _close_rest(pending, deps, control, code, folder)
    except (InstallError, OSError, parsing.Unreadable) as exc:
        logger.error("harbor cell %s: %s", first.attempt.cell_id, exc)
        await _close_rest(pending, deps, control, None, folder, str(exc))
    except (errors.LeaseLost, errors.StoreUnwritable):
        raise  # nothing more can be recorded here: the leases run out (worker.py says why)
    except Exception as exc:  # our own code failed: an infrastructure failure, retried
        logger.error("harbor cell %s: the supervisor failed", first.attempt.cell_id, exc_info=exc)
        await _close_rest(pending, deps, control, None, folder, f"HEMRA's harbor supervisor failed: {exc}")
    finally:
        beats.cancel()
        if process is not None and process.returncode is None:
            await _stop(process)
        await asyncio.to_thread(remove_containers, first.attempt.id)
        shutil.rmtree(folder, ignore_errors=True)


async def _dataset(jobs: list, deps: attempt.Deps, into: Path) -> dict[str, str]:
    """Each task of `jobs` once, in Harbor's dataset layout; folder name -> task digest."""
    into.mkdir(parents=True, exist_ok=True)
    slugs: dict[str, str] = {}
    for job in jobs:
        if job.task.digest in slugs.values():
            continue
        source = await deps.cache.folder(job.task)
        slug = f"t{len(slugs)}-{job.task.digest.removeprefix('sha256:')[:12]}"
        await asyncio.to_thread(shutil.copytree, source, into / slug, symlinks=True)
        slugs[slug] = job.task.digest
    return slugs


def _overlay(folder: Path, supervisor: str) -> Path:
    """The compose overlay every trial's project gets: offline, and labelled as this
    executor's (its start-up sweep removes what a crashed executor left)."""
    labels = {**container_labels(), LABEL_ATTEMPT: supervisor}
    lines = ["services:", "  main:", "    network_mode: none", "    init: true", "    build:", "      network: none"]
    lines += ["    labels:"] + [f"      {key}: {_yaml_text(value)}" for key, value in labels.items()]
    path = folder / "hemra-compose-offline.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _yaml_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _job_name(first) -> str:
    return f"hemra-{first.attempt.id}"


def _settings(first) -> dict:
    """The harness file's keys, as the planner checked them."""
    return tomllib.loads(first.harness.source_text) if first.harness.source_text else {}


def command(tool: Path, first, jobs: list, folder: Path, overlay: Path) -> list[str]:
    repetitions: dict[str, int] = {}
    for job in jobs:
        repetitions[job.task.digest] = repetitions.get(job.task.digest, 0) + 1
    harness = first.harness
    argv = [*toolenv.command(tool), "run", "-p", str(folder / "tasks"), "-a", harness.agent]
    if harness.model or first.spec.model:
        argv += ["-m", harness.model or first.spec.model]
    for option in harbor_options.agent_kwargs(_settings(first)):  # checked at resolve
        argv += ["--ak", option]
    argv += ["-e", "docker", "-o", str(folder / "jobs"), "--job-name", _job_name(first)]
    # The whole cell in one harbor run, at most the run's concurrency of its trials at a time.
    at_once = min(len(jobs), first.spec.concurrency) if first.spec.concurrency > 0 else len(jobs)
    argv += ["-n", str(at_once), "-k", str(max(repetitions.values())), "-r", "0"]
    return [*argv, "--extra-docker-compose", str(overlay), "-q", "-y"]


def environment(first) -> dict[str, str]:
    """Harbor's environment: what it needs to find Docker, the harness's named variables, and
    nothing else of the executor's (no HEMRA_* setting or token)."""
    env = {name: os.environ[name] for name in _PASSED if name in os.environ}
    env.update({name: os.environ[name] for name in first.harness.env if name in os.environ})
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # litellm fetches its price list otherwise
    env["PYTHONUNBUFFERED"] = "1"
    return env


async def _start(tool: Path, first, jobs: list, folder: Path, overlay: Path) -> asyncio.subprocess.Process:
    log = (folder / "harbor.log").open("wb")
    try:
        return await asyncio.create_subprocess_exec(
            *command(tool, first, jobs, folder, overlay),
            cwd=folder,
            env=environment(first),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole
            preexec_fn=_die_with_parent,
        )
    finally:
        log.close()


def _die_with_parent() -> None:
    """In the child, before Harbor starts: SIGTERM when the executor dies (Linux), so a killed
    executor leaves no Harbor running on (Harbor cancels its trials on SIGTERM)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


async def _follow(process, follower, slugs, pending, deps, control) -> int | None:
    """Complete jobs as their trials finish, until Harbor exits or the supervisor must stop."""
    stop = asyncio.ensure_future(control.event.wait())
    try:
        while True:
            await _finish(follower, slugs, pending, deps)
            if not pending:  # every trial is in: Harbor only writes its summary and exits
                try:
                    return await asyncio.wait_for(process.wait(), STOP_GRACE_SECS)
                except TimeoutError:
                    return await _stop(process)
            exited = asyncio.ensure_future(process.wait())
            done, _ = await asyncio.wait({exited, stop}, timeout=POLL_SECS, return_when=asyncio.FIRST_COMPLETED)
            if exited in done:
                return exited.result()
            exited.cancel()
            if stop in done:
                return None
    finally:
        stop.cancel()


async def _stop(process) -> int:
    """SIGTERM to Harbor's process group (it cancels its trials and takes their containers
    down), then SIGKILL to the group once STOP_GRACE_SECS have passed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        return await asyncio.wait_for(process.wait(), STOP_GRACE_SECS)
    except TimeoutError:
        logger.warning("harbor (pid %s) did not stop within %g s: killed", process.pid, STOP_GRACE_SECS)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    return await process.wait()


async def _finish(follower, slugs: dict[str, str], pending: dict, deps) -> None:
    for finished in await asyncio.to_thread(follower.poll):
        trial = finished.trial
        digest = slugs.get(Path(trial.task_path).name, "")
        waiting = next((p for p in pending.values() if p.job.task.digest == digest), None)
        if waiting is None:  # a repetition beyond what this cell asked for (or not ours)
            continue
        pending.pop(waiting.job.attempt.id)
        await _complete_trial(waiting, finished, deps)


async def _complete_trial(waiting: Pending, finished: jobfolder.FinishedTrial, deps) -> None:
    job, trial = waiting.job, finished.trial
    artifacts = await _keep_files(deps, finished)
    score = None
    if trial.outcome not in vocabulary.UNGRADED:
        score = _score(job, trial)
    await waiting.events.emit_own(
        event(
            "status",
            "harbor_trial",
            trial=finished.folder,
            outcome=trial.outcome,
            rewards=trial.rewards or {},
            error=trial.error,
        )
    )
    if score is not None:
        # Harbor runs its verifier in the trial's own container, after the agent: what the
        # agent changed there, the verifier sees (HEMRA's "shared" isolation, said as such).
        await waiting.events.emit_own(event("status", "verifier_sandbox", isolation="shared", by="harbor"))
    await _flush(waiting.events)
    started = trial.start_time or waiting.started
    await attempt.complete(
        deps,
        job,
        None,
        vocabulary.OUTCOMES[trial.outcome],
        0,
        trial.error,
        started,
        artifacts=artifacts,
        score=score,
        agent_version=job.harness.agent_version,
        agent_name=job.harness.agent,
    )


def _score(job, trial) -> pb.Score:
    """Harbor's verifier's rewards, copied; the fingerprint HEMRA's own verifier gives the same
    tests and reward names, so the cell pairs with HEMRA's cells of the same task digest."""
    tests = digests.tests_digest((f.path, f.blob_digest) for f in job.task.files)
    if trial.rewards is None:
        return pb.Score(
            state=pb.SCORE_STATE_SCORER_FAILED,
            scorer=KIND,
            scorer_fingerprint=digests.scorer_fingerprint(tests, []),
            error=trial.score_error or "Harbor's verifier left no reward",
        )
    numbers = {k: float(v) for k, v in trial.rewards.items() if isinstance(v, (int, float))}
    return pb.Score(
        state=pb.SCORE_STATE_SCORED,
        rewards=numbers,
        scorer=KIND,
        scorer_fingerprint=digests.scorer_fingerprint(tests, trial.rewards),
        judgments=trial.judgments,
    )


async def _keep_files(deps, finished: jobfolder.FinishedTrial) -> list[pb.Artifact]:
    """The trial's folder as Harbor wrote it, byte for byte, under /harbor/<trial>/."""
    files = [e for e in finished.entries if not e.is_dir and len(e.data) <= MAX_FILE_BYTES]
    if not files:
        return []
    put = await deps.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(data=e.data) for e in files]))
    return [
        pb.Artifact(path=f"/harbor/{finished.folder}/{e.path}", blob_digest=digest, size_bytes=len(e.data))
        for e, digest in zip(files, put.digests, strict=True)
    ]


async def _close_rest(pending: dict, deps, control, code, folder: Path, why: str = "") -> None:
    """Every job no trial finished: cancelled, handed back, or Harbor's failure (infrastructure)."""
    log = _log_tail(folder)
    for waiting in list(pending.values()):
        pending.pop(waiting.job.attempt.id)
        job = waiting.job
        if control.reason == "released":
            await _flush(waiting.events, event("status", "released", message="the worker shut down"))
            await attempt.release(deps, job)
            continue
        if control.reason == "cancelled":
            await _flush(waiting.events)
            await attempt.complete(deps, job, None, pb.OUTCOME_CANCELLED, 0, "cancelled while running", waiting.started)
            continue
        if control.reason:  # lease lost: another worker owns it now
            continue
        error = why or f"harbor exited with status {code} without a result for this trial"
        await _flush(waiting.events, event("error", "infrastructure", message=error, log=log))
        await attempt.complete(deps, job, None, pb.OUTCOME_INFRA_FAILED, 0, error, waiting.started)


def _log_tail(folder: Path) -> str:
    try:
        with (folder / "harbor.log").open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(log.tell() - MAX_LOG_BYTES, 0))
            return log.read().decode(errors="replace")[-4000:]
    except OSError:
        return ""


async def _note(pending: dict, name: str, **payload) -> None:
    for waiting in pending.values():
        await waiting.events.emit_own(event("status", name, **payload))


async def _flush(events: EventLog, *extra) -> None:
    with contextlib.suppress(errors.HemraError):
        await events.emit_own(*extra)
        await events.flush()


async def _heartbeats(jobs: list, deps, control: attempt.Control, pending: dict) -> None:
    """Keep every claimed job's lease; a cancelled run stops the supervisor."""
    while True:
        await asyncio.sleep(deps.heartbeat_secs)
        for job in jobs:
            if job.attempt.id not in pending:
                continue
            request = spb.HeartbeatJobRequest(job=job.id, lease_token=job.lease_token)
            request.lease.FromNanoseconds(int(deps.lease_secs * 1e9))
            try:
                response = await deps.store.HeartbeatJob(request, timeout=deps.lease_secs / 3)
            except errors.LeaseLost:
                pending.pop(job.attempt.id, None)  # another worker owns it now
                continue
            except errors.HemraError as exc:
                logger.warning("heartbeat of %s failed: %s", job.id, exc)
                continue
            if response.cancel_requested:
                control.stop("cancelled")


def remove_containers(supervisor: str) -> list[str]:
    """Remove what Harbor left of this supervisor's trials: containers (labelled through the
    overlay) and their compose projects' networks. Quietly nothing when none is left."""
    removed = []
    try:
        api = client().api
        found = api.containers(all=True, filters={"label": [f"{LABEL_ATTEMPT}={supervisor}"]})
        projects = {c["Labels"].get("com.docker.compose.project", "") for c in found} - {""}
        for container in found:
            with contextlib.suppress(Exception):
                api.remove_container(container["Id"], force=True, v=True)
                removed.append(container["Id"])
        for project in projects:
            for network in api.networks(filters={"label": [f"com.docker.compose.project={project}"]}):
                with contextlib.suppress(Exception):
                    api.remove_network(network["Id"])
    except Exception as exc:  # no engine reachable: nothing of ours can be running there
        logger.debug("harbor containers not checked: %s", exc)
    return removed
