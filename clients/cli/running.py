"""hemra run and hemra cancel."""

import asyncio
import os
import signal
import uuid
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hemra.clients.cli import connect, render
from hemra.clients.cli.common import EXIT_INCOMPLETE, RunFileError, command, console, err_console, fail
from hemra.clients.cli.runfile import Flags, merge
from hemra.clients.cli.safe import plain
from hemra.services.common import judges
from hemra.services.domain import folders
from hemra.services.domain.ids import kind_of
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb

#: How often the progress display reads the run's counts.
PROGRESS_SECS = 0.2
#: How often when stderr is not a terminal: the display then shows only its last state, and
#: each read (about 5 ms of the store's time on a run being worked) is taken from the run.
UNSEEN_PROGRESS_SECS = 2.0


# hemra run's arguments and options, one alias each (the command's signature stays one line per option).
_RunFile = Annotated[Path | None, typer.Argument(help="A run file (TOML); flags replace or add to its values.")]
_Harness = Annotated[
    list[str],
    typer.Option(
        "-H",
        "--harness",
        help="Harness: built-in (oracle, nop), name in harnesses/, or file. Repeatable; replaces the file's.",
    ),
]
_Dataset = Annotated[
    list[str],
    typer.Option(
        "-d", "--dataset", help="Dataset: name, name@<digest prefix> or folder. Repeatable; replaces the file's."
    ),
]
_Attempts = Annotated[int | None, typer.Option("-k", "--attempts", help="Trials per task (repetitions).")]
_Tasks = Annotated[list[str], typer.Option("-t", "--task", help="Only tasks matching this pattern. Repeatable.")]
_Exclude = Annotated[list[str], typer.Option("-x", "--exclude", help="Skip tasks matching this pattern. Repeatable.")]
_Baseline = Annotated[str | None, typer.Option("--baseline", help="The harness every other is compared with.")]
_Concurrency = Annotated[int | None, typer.Option("--concurrency", help="Trials at once.")]
_Sandbox = Annotated[str | None, typer.Option("--sandbox", help="Where trials run: host, docker or modal.")]
_Require = Annotated[list[str], typer.Option("--require", help="A requirement the sandbox must enforce. Adds.")]
_VerifierEnv = Annotated[
    list[str], typer.Option("--verifier-env", help="An environment variable name verifiers may read. Adds.")
]
_Judge = Annotated[list[str], typer.Option("--judge", help="A HEMRA judge to run. Adds.")]
_Label = Annotated[str | None, typer.Option("--label", help="The run's label (run file: name).")]
_Pool = Annotated[
    str | None, typer.Option("--pool", help="The executor pool that works the run (deployments; default: default).")
]
_Model = Annotated[str | None, typer.Option("--model", help="The model every harness must use.")]
_Timeout = Annotated[int | None, typer.Option("--timeout", help="Seconds per attempt (run file: timeout_secs).")]
_MaxInfraRetries = Annotated[
    int | None, typer.Option("--max-infra-retries", help="Retries after infrastructure failures only.")
]
_AllowHistory = Annotated[
    list[str],
    typer.Option(
        "--allow-history",
        help="Keep the repository history of tasks matching this pattern (no strip; the report flags them). Adds.",
    ),
]
_Detach = Annotated[
    bool,
    typer.Option("--detach", help="Record and queue the run, print its ID and return; hemra serve or workers run it."),
]


def run(
    run_file: _RunFile = None,
    harness: _Harness = [],
    dataset: _Dataset = [],
    attempts: _Attempts = None,
    tasks: _Tasks = [],
    exclude: _Exclude = [],
    baseline: _Baseline = None,
    concurrency: _Concurrency = None,
    sandbox: _Sandbox = None,
    require: _Require = [],
    verifier_env: _VerifierEnv = [],
    judge: _Judge = [],
    label: _Label = None,
    pool: _Pool = None,
    model: _Model = None,
    timeout: _Timeout = None,
    max_infra_retries: _MaxInfraRetries = None,
    allow_history: _AllowHistory = [],
    detach: _Detach = False,
) -> None:
    """Resolve, record and run harnesses x datasets x attempts, then print the report."""
    flags = Flags(
        harnesses=harness,
        datasets=dataset,
        attempts=attempts,
        tasks=tasks,
        exclude=exclude,
        baseline=baseline,
        concurrency=concurrency,
        sandbox=sandbox,
        require=require,
        verifier_env=verifier_env,
        judges=judge,
        label=label,
        pool=pool,
        model=model,
        timeout_secs=timeout,
        max_infra_retries=max_infra_retries,
        allow_history=allow_history,
    )
    complete = _run(run_file, flags, detach)
    if not complete:
        raise typer.Exit(EXIT_INCOMPLETE)


@command
async def _run(run_file: Path | None, flags: Flags, detach: bool) -> bool:
    spec = merge(run_file, flags)
    async with connect.services() as services:
        if not services.remote:  # this process scores: its judges must be able to call their models
            check_judges(spec.judge_specs)
        sent = []
        if services.remote:  # contents, not paths: the deployment reads no path of this machine
            sent = await _send_local_folders(services, spec)
            spec.ClearField("run_file")
        # A request ID of this command's own: PlanRun repeated after the deployment was away
        # answers the run the first call recorded instead of recording a second.
        request = ppb.PlanRunRequest(spec=spec, folders=sent, request_id=uuid.uuid4().hex)
        run = (await services.planner.PlanRun(request)).run
        if detach:
            print(run.id)
            await _print_jobs(services, run, err_console)  # stdout stays the run's ID alone, for scripts
            return True
        console.print(plain(_header(run)), highlight=False, soft_wrap=True)
        await _print_jobs(services, run, console)
        if services.remote:  # the deployment's executors work it; this follows its progress
            work = _until_finished(services, run.id)
        else:
            work = (await services.start_executor(run.spec.concurrency, run_id=run.id)).run(until_idle=True)
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            await _work_with_progress(services, work, run, cancel)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        report = (await services.store.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
        render.print_report(console, report)
        return report.complete


def _header(run) -> str:
    """The run's first line: its ID, label and concurrency, and where it runs when an image decided it."""
    header = f"run {run.id} ({run.label}), concurrency {run.spec.concurrency}"
    if run.spec.sandbox_image:  # where an image means something: tasks are built on it there
        header += f", sandbox {run.spec.sandbox}: every task built on {run.spec.sandbox_image}"
    return header


#: Jobs a submitted run names by ID (`hemra runs` lists the unfinished ones later).
SHOWN_JOBS = 20


async def _print_jobs(services, run, where) -> None:
    """The run's queued jobs by ID, one a line: `hemra cancel <job>` stops that one trial."""
    page = await services.store.ListAttempts(
        spb.ListAttemptsRequest(parent=f"runs/{run.id}", page_size=SHOWN_JOBS, verdict="unfinished")
    )
    for attempt in page.attempts:
        line = render.job_line(
            attempt.job_id, "queued", attempt.dataset_name, attempt.harness_name, attempt.task_name, attempt.repetition
        )
        where.print(plain(f"  job {line}"), highlight=False, soft_wrap=True)
    if page.next_page_token:
        where.print(
            plain(f"  ... more jobs: hemra runs lists the unfinished ones, hemra show {run.id} every one"),
            soft_wrap=True,
        )


def check_judges(specs) -> None:
    """RunFileError naming the first judge whose endpoint or key variable is not set here: every
    judgment it made would fail, so nothing is recorded. (A deployment's executors judge with
    their own environment; it is theirs to have the variables.)"""
    for spec in specs:
        missing = judges.missing_variable(judges.from_spec(spec), os.environ)
        if missing:
            raise RunFileError(missing)


async def _send_local_folders(services, spec) -> list:
    """Datasets and harness files of `spec` that are on this machine, sent to the deployment as
    blobs (names of its own datasets and built-in harnesses stay names)."""
    base = Path(spec.run_file).parent if spec.run_file else Path.cwd()
    sent = []
    for ref in dict.fromkeys(spec.datasets):
        folder = (base / ref).expanduser()
        if ("/" in ref or ref.startswith(".") or not spec.run_file) and folder.is_dir():
            sent.append(await folders.send(services.store, folder.resolve(), ref=ref))
    for ref in dict.fromkeys(spec.harnesses):
        # As the planner looks them up: a file path, else a name in harnesses/ (else a built-in).
        path = (
            base / Path(ref).expanduser() if ref.endswith(".toml") or "/" in ref else base / "harnesses" / f"{ref}.toml"
        )
        if path.is_file():
            sent.append(await folders.send(services.store, path.resolve().parent, ref=ref, file=path.name))
    return sent


async def _until_finished(services, run_id: str) -> None:
    """Returns once no attempt of the run is queued or running."""
    while True:
        p = (await services.store.GetRun(spb.GetRunRequest(run=run_id))).run.progress
        if p.queued == 0 and p.running == 0:
            return
        await asyncio.sleep(PROGRESS_SECS * 5)


async def _work_with_progress(services, work, run, cancel: asyncio.Event) -> None:
    work = asyncio.create_task(work)
    asked = asyncio.create_task(cancel.wait())
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "passed {task.fields[passed]}  failed {task.fields[failed]}  "
            "errored {task.fields[errored]}  cancelled {task.fields[cancelled]}"
        ),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=err_console, transient=False) as progress:
            bar = progress.add_task("attempts", total=None, passed=0, failed=0, errored=0, cancelled=0)
            cancelling = False
            every = PROGRESS_SECS if err_console.is_terminal else UNSEEN_PROGRESS_SECS
            while not work.done():
                # Ctrl-C is answered at once, whatever the display's pace.
                await asyncio.wait(
                    {work} if cancelling else {work, asked}, timeout=every, return_when="FIRST_COMPLETED"
                )
                if cancel.is_set() and not cancelling:
                    cancelling = True
                    progress.console.print("cancelling: unfinished attempts will be recorded as cancelled")
                    await services.store.CancelRun(spb.CancelRunRequest(run=run.id))
                await _update(services, progress, bar, run.id)
            await _update(services, progress, bar, run.id)
    finally:
        asked.cancel()
        # The display's own read failed (the store away too long): the work is stopped and its
        # own error read here, else asyncio prints it as a traceback on the way out.
        if not work.done():
            work.cancel()
        await asyncio.gather(work, return_exceptions=True)
    work.result()


async def _update(services, progress: Progress, bar, run_id: str) -> None:
    p = (await services.store.GetRun(spb.GetRunRequest(run=run_id))).run.progress
    progress.update(
        bar,
        total=p.trials,
        completed=p.done,
        passed=p.passed,
        failed=p.failed,
        errored=p.errored,
        cancelled=p.cancelled,
    )


def try_(
    harness: Annotated[
        str, typer.Option("-H", "--harness", help="The harness: built-in (oracle, nop), name in harnesses/, or file.")
    ],
    task: Annotated[Path, typer.Option("-t", "--task", help="The task's folder (the one holding task.toml).")],
    sandbox: Annotated[str | None, typer.Option("--sandbox", help="Where it runs: host, docker or modal.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="The model the harness must use.")] = None,
    timeout: Annotated[int | None, typer.Option("--timeout", help="Seconds for the attempt.")] = None,
    verifier_env: Annotated[
        list[str], typer.Option("--verifier-env", help="An environment variable name the verifier may read.")
    ] = [],
    label: Annotated[str | None, typer.Option("--label", help="Its label (default: harness_task_time).")] = None,
) -> None:
    """Run one attempt of a harness on a task, outside any run (a loose attempt), to debug either."""
    if not (task / "task.toml").is_file():
        fail(f"-t {task}: no task.toml in that folder (give the folder of one task)")
    flags = Flags(
        harnesses=[harness],
        datasets=[str(task.resolve())],
        sandbox=sandbox,
        model=model,
        timeout_secs=timeout,
        verifier_env=verifier_env,
        label=label,
    )
    if not _try(flags):
        raise typer.Exit(EXIT_INCOMPLETE)


@command
async def _try(flags: Flags) -> bool:
    spec = merge(None, flags)
    async with connect.services() as services:
        if services.remote:
            raise RunFileError("hemra try runs on this machine's store; unset HEMRA_SERVER (or --server)")
        request = ppb.PlanRunRequest(spec=spec, request_id=uuid.uuid4().hex, loose=True)
        run = (await services.planner.PlanRun(request)).run
        console.print(plain(f"loose attempt {run.id} ({run.label}): not part of any run, never in a report"))
        await _print_jobs(services, run, console)
        await (await services.start_executor(1, run_id=run.id)).run(until_idle=True)
        [attempt] = (await services.store.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}"))).attempts
    rewards = ", ".join(f"{k} {v:g}" for k, v in sorted(attempt.score.rewards.items())) or "none"
    console.print(
        plain(
            f"{attempt.task_name} with {attempt.harness_name}: {attempt.verdict or 'unfinished'} "
            f"(outcome {pb.Outcome.Name(attempt.outcome).removeprefix('OUTCOME_').lower()}, rewards {rewards})"
            + (f"; {attempt.error}" if attempt.error else "")
        ),
        highlight=False,
        soft_wrap=True,
    )
    console.print(plain(f"hemra show {attempt.id} --events   # what it did"), highlight=False, soft_wrap=True)
    return attempt.state == pb.ATTEMPT_STATE_FINISHED


def cancel(
    ref: Annotated[
        str, typer.Argument(help="A run's ID or label, or an attempt ID or job ID (cancels only that trial).")
    ],
) -> None:
    """Cancel a run's unfinished attempts, or one trial's (cancelled, never failed)."""
    _cancel(ref)


@command
async def _cancel(ref: str) -> None:
    async with connect.services(store_only=True) as services:
        response = await services.store.CancelRun(spb.CancelRunRequest(run=ref))
    run = response.run
    note = render.label_note(ref, response.label_matches, run.id)
    if note:
        err_console.print(plain(note), highlight=False, soft_wrap=True)
    if kind_of(ref.rpartition("/")[2]) not in ("attempt", "job"):
        console.print(
            plain(
                f"run {run.id}: cancelled {response.cancelled_jobs} queued attempts; "
                f"running ones stop at their next heartbeat"
            )
        )
    elif response.cancelled_jobs:
        console.print(plain(f"{ref}: cancelled its trial's unfinished attempt; the rest of run {run.id} goes on"))
    else:
        console.print(plain(f"{ref}: its trial has no unfinished attempt; nothing to cancel"))
