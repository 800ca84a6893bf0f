"""hemra run and hemra cancel."""

import asyncio
import signal
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from clients.cli import render
from clients.cli.common import EXIT_INCOMPLETE, command, console, database_url, err_console, home
from clients.cli.runfile import Flags, merge
from clients.cli.safe import plain
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb
from services import embedded
from services.store.ids import kind_of

#: How often the progress display reads the run's counts.
PROGRESS_SECS = 0.2


def run(
    run_file: Annotated[
        Path | None, typer.Argument(help="A run file (TOML); flags replace or add to its values.")
    ] = None,
    harness: Annotated[
        list[str],
        typer.Option(
            "-H",
            "--harness",
            help="Harness: built-in (oracle, nop), name in harnesses/, or file. Repeatable; replaces the file's.",
        ),
    ] = [],
    dataset: Annotated[
        list[str],
        typer.Option(
            "-d", "--dataset", help="Dataset: name, name@<digest prefix> or folder. Repeatable; replaces the file's."
        ),
    ] = [],
    attempts: Annotated[int | None, typer.Option("-k", "--attempts", help="Trials per task (repetitions).")] = None,
    tasks: Annotated[
        list[str], typer.Option("-t", "--task", help="Only tasks matching this pattern. Repeatable.")
    ] = [],
    exclude: Annotated[
        list[str], typer.Option("-x", "--exclude", help="Skip tasks matching this pattern. Repeatable.")
    ] = [],
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="The harness every other is compared with.")
    ] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", help="Trials at once.")] = None,
    sandbox: Annotated[str | None, typer.Option("--sandbox", help="Where trials run: host, docker or modal.")] = None,
    require: Annotated[list[str], typer.Option("--require", help="A requirement the sandbox must enforce. Adds.")] = [],
    verifier_env: Annotated[
        list[str], typer.Option("--verifier-env", help="An environment variable name verifiers may read. Adds.")
    ] = [],
    judge: Annotated[list[str], typer.Option("--judge", help="A HEMRA judge to run. Adds.")] = [],
    label: Annotated[str | None, typer.Option("--label", help="The run's label (run file: name).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="The model every harness must use.")] = None,
    timeout: Annotated[
        int | None, typer.Option("--timeout", help="Seconds per attempt (run file: timeout_secs).")
    ] = None,
    max_infra_retries: Annotated[
        int | None, typer.Option("--max-infra-retries", help="Retries after infrastructure failures only.")
    ] = None,
    detach: Annotated[
        bool,
        typer.Option(
            "--detach", help="Record and queue the run, print its ID and return; hemra serve or workers run it."
        ),
    ] = False,
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
        model=model,
        timeout_secs=timeout,
        max_infra_retries=max_infra_retries,
    )
    complete = _run(run_file, flags, detach)
    if not complete:
        raise typer.Exit(EXIT_INCOMPLETE)


@command
async def _run(run_file: Path | None, flags: Flags, detach: bool) -> bool:
    spec = merge(run_file, flags)
    async with embedded.services(home(), database_url()) as services:
        run = (await services.planner.PlanRun(ppb.PlanRunRequest(spec=spec))).run
        if detach:
            print(run.id)
            return True
        console.print(plain(f"run {run.id} ({run.label}), concurrency {run.spec.concurrency}"))
        worker = await services.start_executor(run.spec.concurrency, run_id=run.id)
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            await _work_with_progress(services, worker, run, cancel)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        report = (await services.store.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
        render.print_report(console, report)
        return report.complete


async def _work_with_progress(services, worker, run, cancel: asyncio.Event) -> None:
    work = asyncio.create_task(worker.run(until_idle=True))
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
    with Progress(*columns, console=err_console, transient=False) as progress:
        bar = progress.add_task("attempts", total=None, passed=0, failed=0, errored=0, cancelled=0)
        cancelling = False
        while not work.done():
            await asyncio.wait({work}, timeout=PROGRESS_SECS)
            if cancel.is_set() and not cancelling:
                cancelling = True
                progress.console.print("cancelling: unfinished attempts will be recorded as cancelled")
                await services.store.CancelRun(spb.CancelRunRequest(run=run.id))
            await _update(services, progress, bar, run.id)
        await _update(services, progress, bar, run.id)
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


def cancel(
    ref: Annotated[
        str, typer.Argument(help="A run's ID or label, or an attempt ID or job ID (cancels only that trial).")
    ],
) -> None:
    """Cancel a run's unfinished attempts, or one trial's (cancelled, never failed)."""
    _cancel(ref)


@command
async def _cancel(ref: str) -> None:
    async with embedded.services(home(), database_url()) as services:
        response = await services.store.CancelRun(spb.CancelRunRequest(run=ref))
    run = response.run
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
