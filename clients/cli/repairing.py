"""hemra resume and hemra repair: queue again the trials of a run that have no usable score."""

import asyncio
import getpass
import os
import signal
import socket
from pathlib import Path
from typing import Annotated

import typer

from hemra.clients.cli import connect, render
from hemra.clients.cli.common import EXIT_INCOMPLETE, command, console, fail
from hemra.clients.cli.runfile import _resolve_judges
from hemra.clients.cli.running import _send_local_folders, _until_finished, _work_with_progress
from hemra.clients.cli.safe import plain
from hemra.services.common import errors
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb

RUN_HELP = "A run's ID or label."
ALLOW_CHANGED_HELP = (
    "Go on when a dataset, harness or judge no longer matches what the run pinned: the change is "
    "recorded and the report flags the run as not a fair comparison."
)
DRY_RUN_HELP = "List what would be queued and its expected model cost; queue and record nothing."
DETACH_HELP = "Queue and return; hemra serve or workers run the trials."


def resume(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    allow_changed: Annotated[bool, typer.Option("--allow-changed", help=ALLOW_CHANGED_HELP)] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help=DRY_RUN_HELP)] = False,
    detach: Annotated[bool, typer.Option("--detach", help=DETACH_HELP)] = False,
) -> None:
    """Queue again the trials of a cancelled or interrupted run that did not finish, then run them."""
    if not _requeue(run, "resume", [], allow_changed, dry_run, detach):
        raise typer.Exit(EXIT_INCOMPLETE)


def repair(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    infra: Annotated[
        bool, typer.Option("--infra", help="Trials whose latest attempt failed for the infrastructure.")
    ] = False,
    scorer: Annotated[
        bool, typer.Option("--scorer", help="Trials whose latest attempt the scorer left unscored.")
    ] = False,
    cancelled: Annotated[bool, typer.Option("--cancelled", help="Trials whose latest attempt was cancelled.")] = False,
    allow_changed: Annotated[bool, typer.Option("--allow-changed", help=ALLOW_CHANGED_HELP)] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help=DRY_RUN_HELP)] = False,
    detach: Annotated[bool, typer.Option("--detach", help=DETACH_HELP)] = False,
) -> None:
    """Queue a new attempt for each trial of a run left without a usable score (never a scored one)."""
    reasons = [name for name, asked in (("infra", infra), ("scorer", scorer), ("cancelled", cancelled)) if asked]
    if not _requeue(run, "repair", reasons, allow_changed, dry_run, detach):
        raise typer.Exit(EXIT_INCOMPLETE)


def requested_by() -> str:
    """Who asks, as this machine can tell: recorded as the caller said it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's)
        user = f"uid {os.getuid()}"
    return f"{user}@{socket.gethostname()}"


@command
async def _requeue(ref: str, kind: str, reasons: list[str], allow_changed: bool, dry_run: bool, detach: bool) -> bool:
    async with connect.services() as services:
        run = (await services.store.GetRun(spb.GetRunRequest(run=ref))).run
        if run.kind == "import":
            raise errors.FailedPrecondition(f"{run.id} is an import: nothing of it runs here, so it cannot be {kind}d")
        changes = await changed_inputs(services, run)
        if changes and not allow_changed:
            first = changes[0]
            more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
            fail(
                f"run {run.id}: {first.what} changed since the run was planned "
                f"({first.pinned} -> {first.current or 'gone'}){more}; --allow-changed to {kind} it anyway, "
                "flagged as not a fair comparison"
            )
        fields = dict(run=run.id, dry_run=dry_run, allowed_changes=changes, requested_by=requested_by())
        if kind == "resume":
            response = await services.store.ResumeRun(spb.ResumeRunRequest(**fields))
        else:
            response = await services.store.RepairRun(spb.RepairRunRequest(reasons=reasons, **fields))
        _print_requeued(kind, response, dry_run)
        # Queued trials are worked too, whether this queued them or a killed run left them.
        if dry_run or detach or not (response.trials or response.already_queued or response.still_running):
            return True
        if services.remote:  # the deployment's executors work them; this follows its progress
            work = _until_finished(services, run.id)
        else:
            work = (await services.start_executor(run.spec.concurrency or 1, run_id=run.id)).run(until_idle=True)
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            await _work_with_progress(services, work, response.run, cancel)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        report = (await services.store.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
        render.print_report(console, report)
        return report.complete


async def changed_inputs(services, run: pb.Run) -> list[spb.RunChange]:
    """What the run pinned that resolves differently now: each cell's dataset and harness, and
    each judge the run names (a task's verifier, and so its scorer fingerprint, is in the
    task's digest and so in its dataset's)."""
    spec = pb.RunSpec()
    spec.CopyFrom(run.spec)
    sent = []
    if services.remote:
        sent = await _send_local_folders(services, spec)
        spec.ClearField("run_file")
    try:
        resolved = await services.planner.ResolveRun(ppb.ResolveRunRequest(spec=spec, folders=sent))
    except (errors.NotFound, errors.InvalidArgument, errors.PermissionDenied) as exc:
        # A dataset folder or harness file gone (through a server: not here to send again).
        return [spb.RunChange(what="its inputs", pinned="as planned", current=f"no longer resolve: {exc}"[:300])]
    changes = []
    datasets = {d.dataset_name: d.digest for d in resolved.datasets}
    harnesses = {h.harness_name: h.digest for h in resolved.harnesses}
    seen = set()
    for cell in run.cells:
        for what, pinned, now in (
            (f"dataset {cell.dataset_name}", cell.dataset_digest, datasets.get(cell.dataset_name, "")),
            (f"harness {cell.harness_name}", cell.harness_digest, harnesses.get(cell.harness_name, "")),
        ):
            if what not in seen and pinned != now:
                changes.append(spb.RunChange(what=what, pinned=pinned, current=now))
            seen.add(what)
    changes.extend(_changed_judges(run.spec))
    return changes


def _changed_judges(pinned: pb.RunSpec) -> list[spb.RunChange]:
    if not pinned.judges:
        return []
    now = pb.RunSpec(judges=pinned.judges)
    base = Path(pinned.run_file).parent if pinned.run_file else Path.cwd()
    try:
        _resolve_judges(now, base)
    except ValueError as exc:
        return [spb.RunChange(what="judges", pinned="as planned", current=f"no longer read: {exc}"[:300])]
    found = {j.name: j.fingerprint for j in now.judge_specs}
    return [
        spb.RunChange(what=f"judge {j.name}", pinned=j.fingerprint, current=found.get(j.name, ""))
        for j in pinned.judge_specs
        if found.get(j.name, "") != j.fingerprint
    ]


def _print_requeued(kind: str, response, dry_run: bool) -> None:
    run = response.run
    verb = "would queue" if dry_run else "queued"
    for trial in response.trials:
        cost = f", expected ${trial.expected_cost_usd:.4f}" if trial.HasField("expected_cost_usd") else ""
        console.print(
            plain(
                f"  {verb} {trial.dataset_name}/{trial.harness_name} {trial.task_name} #{trial.repetition}: "
                f"{trial.reason} (attempt {trial.earlier_attempts + 1}{cost})"
            ),
            soft_wrap=True,
        )
    left = []
    if response.already_queued:
        left.append(f"{response.already_queued} already queued")
    if response.still_running:
        left.append(f"{response.still_running} still running")
    cost = (
        f"; expected model cost ${response.expected_cost_usd:.4f} for {response.cost_known} of them"
        if response.cost_known
        else ("; expected model cost unknown (no earlier attempt reported usage)" if response.trials else "")
    )
    console.print(
        plain(
            f"run {run.id} ({run.label}): {kind} {verb} {len(response.trials)} trials"
            + (f" ({', '.join(left)})" if left else "")
            + cost
        )
    )
