"""Text renderings of runs, reports and attempts for the terminal."""

import datetime as dt
import gc

import msgspec
from google.protobuf.descriptor import FieldDescriptor
from rich.console import Console
from rich.table import Table
from rich.text import Text

from hemra.clients.cli.safe import clean, plain, safe_json

_COUNTS = ("trials", "queued", "running", "passed", "failed", "errored", "cancelled")


def when(ts) -> str:
    if not (ts.seconds or ts.nanos):
        return "-"
    try:
        return dt.datetime.fromtimestamp(ts.seconds, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):  # a year datetime cannot hold: shown as it is
        return f"{ts.seconds} s"


def runs_table(runs) -> Table:
    """One row per run or import, then one per cell (dataset/harness) with its own progress."""
    table = Table(title="runs, imports and loose attempts, newest first", title_justify="left")
    for column in ("run / cell", "kind", "label", "created (UTC)", *_COUNTS):
        table.add_column(
            column,
            justify="right" if column in _COUNTS else "left",
            no_wrap=column in ("run / cell", "kind", "created (UTC)"),
            min_width=6 if column == "kind" else None,  # "import" whole, however narrow the terminal
        )
    for run in runs:
        table.add_row(
            plain(run.id),
            plain(run.kind or "run"),  # an import says so wherever it is listed
            plain(run.label),
            when(run.create_time),
            *_counts(run.progress),
            style="bold",
        )
        for cell in run.cells:
            table.add_row(plain(f"  {cell.dataset_name}/{cell.harness_name}"), "", "", "", *_counts(cell.progress))
        for job in run.open_jobs:  # what `hemra cancel <job>` takes, to stop one trial
            line = job_line(job.id, job.state, job.dataset_name, job.harness_name, job.task_name, job.repetition)
            table.add_row(plain(f"  {line}"), "job", "", "", *[""] * len(_COUNTS))
        more = run.progress.queued + run.progress.running - len(run.open_jobs)
        if run.open_jobs and more > 0:
            table.add_row(plain(f"  ... {more} more unfinished jobs (hemra show {run.id})"), "", "", "")
    return table


def label_note(ref: str, matches: int, run_id: str) -> str:
    """The note a command prints when `ref` named its run by a label several runs carry, or ""."""
    if matches <= 1:
        return ""
    return (
        f"note: {ref!r}: {matches} runs or imports carry that label; it names the newest, {run_id} "
        f"(name another by its ID)"
    )


def job_line(job_id: str, state: str, dataset: str, harness: str, task: str, repetition: int) -> str:
    """One unfinished job: its ID (what `hemra cancel` takes), its state and its trial."""
    return f"{job_id} {state:<7} {dataset}/{harness} {task} #{repetition}"


def problem_lines(records) -> list[Text]:
    """One line per run or attempt the store could not wholly read (its `problem`), after the
    rest is shown."""
    return [plain(f"! {r.problem}", style="yellow") for r in records if r.problem]


def import_lines(record) -> list[str]:
    """Where an import's results came from and how they came in (a Run, or a Report's header)."""
    if record.kind != "import":
        return []
    found = record.provenance
    lines = [
        f"  results made elsewhere ({record.import_format or 'format not recorded'}), read from {record.source or '-'}"
    ]
    came = f"  imported {when(found.import_time)} UTC" if found.HasField("import_time") else "  imported"
    came += f" by {found.imported_by}" if found.imported_by else " (who and when were not recorded)"
    if found.export_digest:
        came += f"; export manifest {found.export_digest}"
    lines.append(came)
    if found.original_id:
        lines.append(f"  the export called it {found.original_kind} {found.original_id} ({found.original_label})")
    return lines


def _counts(progress) -> list[str]:
    return [str(getattr(progress, name)) for name in _COUNTS]


def print_report(console: Console, report) -> None:
    kind = "import" if report.kind == "import" else "run"
    console.print(plain(f"{kind} {report.run_id} ({report.label}), baseline {report.baseline}", style="bold"))
    for line in import_lines(report):  # paths and digests whole, to copy
        console.print(plain(line), soft_wrap=True)
    for dataset in report.datasets:
        console.print(report_table(dataset, report.baseline))
        if any(row.judges for row in dataset.rows):
            console.print(judges_table(dataset))
        for row in dataset.rows:
            for flag in row.flags:
                console.print(plain(f"  ! {row.harness_name}: {flag}", style="yellow"))
            for reason in row.vs_baseline.not_comparable:
                console.print(plain(f"  not comparable ({row.harness_name} vs {report.baseline}): {reason}"))
            for reason in row.retry_reasons:
                console.print(plain(f"  retried ({row.harness_name}): {reason.attempts} × {reason.reason}"))
    if any(row.retried for dataset in report.datasets for row in dataset.rows):
        console.print(
            plain(f"each trial is retried at most {report.max_infra_retries} times for the infrastructure's failures")
        )
    for line in repair_lines(report):
        console.print(plain(line, style="yellow" if line.startswith("!") else ""), soft_wrap=True)
    if not report.complete:
        console.print(Text("incomplete: some cells did not finish", style="yellow"))


def repair_lines(report) -> list[str]:
    """A resumed or repaired run says so: each resume and repair (who, when, why, how many
    trials), trials by how many attempts they took, and a changed input it was allowed."""
    if not report.repairs:
        return []
    lines = []
    for repair in report.repairs:
        at = when(repair.create_time)
        who = f" by {repair.requested_by}" if repair.requested_by else ""
        reasons = ", ".join(repair.reasons)
        lines.append(f"{repair.kind}d {at} UTC{who}: {repair.queued} trials queued again ({reasons})")
        for change in repair.allowed_changes:
            lines.append(
                f"! {change.what} changed since the run ({change.pinned} -> {change.current or 'gone'}), allowed"
            )
    taken = ", ".join(f"{report.trials_by_attempts[n]} in {n}" for n in sorted(report.trials_by_attempts))
    lines.append(f"trials by attempts taken: {taken}")
    if report.unfair:
        lines.append("! not a fair comparison: a resume or repair ran on inputs changed since the run was planned")
    return lines


def report_table(dataset, baseline: str) -> Table:
    table = Table(
        title=plain(f"dataset {dataset.dataset_name} ({dataset.dataset_digest[:19]}, {dataset.tasks} tasks)"),
        title_justify="left",
    )
    names = [plain(row.harness_name + (" (baseline)" if row.is_baseline else "")) for row in dataset.rows]
    # The harness is what a reader looks up a row by (and greps for): never broken over lines.
    table.add_column("harness", no_wrap=True, min_width=min(max(map(len, names), default=0), 40))
    # Retries are the infrastructure's, rare: a column only when there were some (the rest then
    # keep the width they need on one line).
    retried = any(row.retried for row in dataset.rows)
    for column in (
        "model",
        "pass rate (0/1 tasks)",
        "mean reward (other tasks)",
        f"vs {baseline}",
        "failed / timed out / verifier fault",
        "not graded",
        *(["retried"] if retried else []),
    ):
        table.add_column(plain(column))
    for name, row in zip(names, dataset.rows, strict=True):
        table.add_row(
            name,
            plain(row.model or "-"),
            pass_rate(row),
            means(row.mean_rewards, row.numeric_graded),
            versus(row) if not row.is_baseline else "-",
            f"{row.harness_failed} / {row.timed_out} / {row.verifier_faults}",
            not_graded(row),
            *([str(row.retried)] if retried else []),
        )
    return table


def judges_table(dataset) -> Table:
    """Each rubric judge's mean and pass rate per cell; trials it could not judge apart."""
    table = Table(title="rubric judges", title_justify="left")
    for column in ("harness", "judge", "model", "mean", "all criteria passed", "judge failed"):
        table.add_column(column)
    for row in dataset.rows:
        for judge in row.judges:
            rate = f"{judge.passed}/{judge.judged} ({100 * judge.passed / judge.judged:.1f}%)" if judge.judged else "-"
            table.add_row(
                plain(row.harness_name),
                plain(f"{judge.judge or '(reward-details.json)'} ({judge.source})"),
                plain(judge.judge_model or "-"),
                f"{judge.mean:.3f}" if judge.judged else "-",
                rate,
                str(judge.failed),
            )
    return table


def pass_rate(row) -> str:
    if not row.binary_graded:
        return "-"
    return f"{row.passed}/{row.binary_graded} ({100 * row.passed / row.binary_graded:.1f}%)"


def means(rewards, count: int) -> str:
    if not count:
        return "-"
    return plain(
        "\n".join(f"{clean(k)} {v:.3f}" for k, v in sorted(rewards.items())) + f"\n(n={count})", multiline=True
    )


def not_graded(row) -> str:
    parts = [
        f"{n} {label}"
        for n, label in (
            (row.infra_failed, "infra"),
            (row.scorer_failed, "scorer"),
            (row.cancelled, "cancelled"),
            (row.unfinished, "unfinished"),
        )
        if n
    ]
    return ", ".join(parts) or "0"


def versus(row) -> str:
    paired = row.vs_baseline
    parts = []
    if paired.binary_tasks:
        parts.append(f"{paired.delta_points:+.1f} pts on {paired.binary_tasks} tasks")
    if paired.numeric_tasks:
        parts += [
            f"{clean(k)} {paired.mean_rewards[k] - paired.baseline_mean_rewards.get(k, 0):+.3f}"
            for k in sorted(paired.mean_rewards)
        ]
        parts.append(f"(on {paired.numeric_tasks} tasks)")
    return plain("\n".join(parts) or "no paired tasks", multiline=True)


#: Field types a flat message may hold for flat_dicts (scalars json_format prints as they are).
_PLAIN = {
    FieldDescriptor.TYPE_STRING,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_DOUBLE,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_SINT32,
}


def message_json(message, bulk: tuple[str, ...] = ()) -> dict:
    """json_format.MessageToDict (proto field names, every field printed), with the repeated
    fields named in `bulk` converted by flat_dicts: json_format walks descriptors in Python,
    tens of microseconds per entry, which 10,000s of paired tasks turn into seconds."""
    from google.protobuf import json_format  # on the paths that print JSON only

    head = type(message)()
    head.CopyFrom(message)
    for name in bulk:
        head.ClearField(name)
    data = json_format.MessageToDict(head, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    # 10,000s of dicts that all stay alive: the cyclic collector would walk them again and
    # again as they are made. They hold no cycles; collection resumes afterwards.
    enabled = gc.isenabled()
    gc.disable()
    try:
        for name in bulk:
            data[name] = flat_dicts(getattr(message, name), message.DESCRIPTOR.fields_by_name[name].message_type)
    finally:
        if enabled:
            gc.enable()
    return data


def flat_dicts(messages, descriptor) -> list[dict]:
    """MessageToDict of each message of a flat type (plain scalars and maps of them), fast."""
    from google.protobuf import json_format  # on the paths that print JSON only

    plain, maps = [], []
    for field in descriptor.fields:
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry and all(f.type in _PLAIN for f in entry.fields):
            maps.append(field.name)
        elif field.type in _PLAIN and not field.is_repeated:
            plain.append(field.name)
        else:
            return [
                json_format.MessageToDict(
                    m, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
                )
                for m in messages
            ]
    return [
        {**{name: getattr(m, name) for name in plain}, **{name: dict(getattr(m, name)) for name in maps}}
        for m in messages
    ]


def dumps(data) -> str:
    """JSON as json.dumps(indent=2, sort_keys=True, ensure_ascii=False) would write it, in C
    (the standard library's indenting encoder is pure Python: seconds for megabytes)."""
    return safe_json(msgspec.json.format(msgspec.json.encode(data, order="sorted"), indent=2).decode())
