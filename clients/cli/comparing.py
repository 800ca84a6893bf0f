"""hemra compare: two sides task by task, or one run's report."""

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from hemra.clients.cli import connect, render
from hemra.clients.cli.common import command, console, err_console, fail
from hemra.clients.cli.safe import clean, plain
from hemra.v1 import store_service_pb2 as spb

#: Lists longer than this are cut in text output (--json has everything).
SHOWN = 20
#: Comparison fields with an entry per task, converted to JSON in bulk.
BULK = ("tasks", "not_comparable", "criteria", "criteria_not_comparable")


def compare(
    a: Annotated[
        str,
        typer.Argument(help="Side a: an import (ID or label) or a run cell: run, run/harness, run/dataset/harness."),
    ],
    b: Annotated[str | None, typer.Argument(help="Side b (omit it to print run a's report).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The same content as JSON, for scripts.")] = False,
    criteria: Annotated[
        bool, typer.Option("--criteria", help="List every rubric criterion both sides were judged on.")
    ] = False,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Compare by this HEMRA judge's scores instead of the task's own.")
    ] = None,
) -> None:
    """Pair two sides task by task and report b - a."""
    if b is None and (criteria or judge):
        fail("--criteria and --judge compare two sides; give side b")
    _compare(a, b, as_json, criteria, judge or "")


@command
async def _compare(a: str, b: str | None, as_json: bool, criteria: bool, judge: str) -> None:
    async with connect.services(read_only=True) as services:
        if b is None:
            found = await services.store.GetRun(spb.GetRunRequest(run=a))
            _note(a, found.label_matches, found.run.id)
            report = (await services.store.GetRunReport(spb.GetRunReportRequest(run=found.run.id))).report
            if as_json:
                print(render.dumps(render.message_json(report)))
            else:
                render.print_report(console, report)
            return
        # Text prints at most SHOWN names of a per-task list: ask for no more (--json has all).
        limit = 0 if as_json else SHOWN
        request = spb.CompareSidesRequest(a=a, b=b, judge=judge, list_limit=limit)
        comparison = (await services.store.CompareSides(request)).comparison
    for side in (comparison.a, comparison.b):
        _note(side.ref, side.label_matches, side.run_id)
    if as_json:  # criteria included whenever there are any
        print(render.dumps(render.message_json(comparison, BULK)))
        return
    print_comparison(comparison)
    if criteria:
        print_criteria(comparison)
    elif comparison.criteria:
        console.print(
            f"{len(comparison.criteria)} rubric criteria were judged on both sides: --criteria lists them",
            highlight=False,
        )


def _note(ref: str, matches: int, run_id: str) -> None:
    """Which run a side's label resolved to, when several runs carry it (on stderr)."""
    note = render.label_note(ref, matches, run_id)
    if note:
        err_console.print(plain(note), highlight=False, soft_wrap=True)


def print_criteria(c) -> None:
    """Each criterion judged on both sides of a paired task: b - a on its values."""
    if not c.criteria:
        console.print("criteria: no rubric criterion was judged on both sides of a paired task", highlight=False)
    else:
        table = Table(title="rubric criteria (b - a)", title_justify="left")
        for column in ("judge / criterion", "model", "tasks", "a", "b", "b - a", "passed a / b"):
            table.add_column(column)
        for x in c.criteria:
            table.add_row(
                plain(f"{x.judge} / {x.criterion}"),
                plain(x.judge_model or "-"),
                str(x.tasks),
                f"{x.a_mean:.3f}",
                f"{x.b_mean:.3f}",
                f"{x.delta:+.3f} [{x.interval.low:+.3f}, {x.interval.high:+.3f}]",
                f"{100 * x.a_pass_rate:.0f}% / {100 * x.b_pass_rate:.0f}%",
            )
        console.print(table)
    _listing(
        c,
        "criteria not comparable",
        "criteria_not_comparable",
        [f"{x.task_name}: {x.reason}" for x in c.criteria_not_comparable],
    )


def print_comparison(c) -> None:
    console.print(
        Text(f"compare b - a\n  a: {clean(c.a.label)}\n  b: {clean(c.b.label)}", style="bold"), highlight=False
    )
    table = Table(title_justify="left")
    for column in ("", "a", "b", "b - a"):
        table.add_column(column)
    if c.binary_tasks:
        n = c.binary_tasks
        interval = c.delta_interval
        table.add_row(
            "pass rate (0/1 tasks)",
            f"{c.a_passed:g}/{n} ({100 * c.a_passed / n:.1f}%)",
            f"{c.b_passed:g}/{n} ({100 * c.b_passed / n:.1f}%)",
            f"{100 * c.delta:+.1f} pts [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}] "
            f"{int(interval.level * 100)}% CI",
        )
    for delta in c.reward_deltas:
        table.add_row(
            plain(f"mean {delta.name} ({delta.tasks} tasks)"),
            f"{delta.a_mean:.3f}",
            f"{delta.b_mean:.3f}",
            f"{delta.delta:+.3f} [{delta.interval.low:+.3f}, {delta.interval.high:+.3f}]",
        )
    for k in sorted(set(c.a.pass_at_k) | set(c.b.pass_at_k)):
        table.add_row(f"pass@{k} / pass^{k}", _k(c.a, k), _k(c.b, k), "")
    for label, name in (
        ("graded trials", "graded"),
        ("infra failures", "infra_failed"),
        ("scorer failures", "scorer_failed"),
        ("cancelled", "cancelled"),
        ("unfinished", "unfinished"),
    ):
        table.add_row(label, str(getattr(c.a, name)), str(getattr(c.b, name)), "")
    console.print(table)
    if c.binary_tasks:
        m = c.mcnemar
        console.print(
            f"McNemar exact test on paired 0/1 trials: {m.a_fail_b_pass} a fail/b pass, "
            f"{m.a_pass_b_fail} a pass/b fail, p = {m.p_value:.4g}",
            highlight=False,
        )
    _listing(c, "flipped to pass (a 0 -> b 1)", "flipped_to_pass", c.flipped_to_pass)
    _listing(c, "flipped to fail (a 1 -> b 0)", "flipped_to_fail", c.flipped_to_fail)
    _listing(c, "not comparable", "not_comparable", [f"{x.task_name}: {x.reason}" for x in c.not_comparable])
    for flag in c.flags:
        console.print(plain(f"! {flag}", style="yellow"))


def _k(side, k: int) -> str:
    if k not in side.pass_at_k:
        return "-"
    return f"{side.pass_at_k[k]:.3f} / {side.pass_hat_k[k]:.3f}"


def _listing(c, title: str, field: str, items) -> None:
    """The first SHOWN entries of a per-task list, which the store cut to those (list_limit)
    and whose full length it gives in list_lengths."""
    items = list(items)
    total = c.list_lengths.get(field, len(items))
    if not total:
        return
    console.print(f"{title} ({total}):", highlight=False)
    for item in items[:SHOWN]:
        console.print(plain(f"  {item}"))
    if total > SHOWN:
        console.print(f"  ... and {total - SHOWN} more (--json lists all)", highlight=False)
