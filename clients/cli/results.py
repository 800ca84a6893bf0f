"""hemra runs and hemra show: reading what the store holds."""

import json
from typing import Annotated

import typer

from hemra.clients.cli import connect, render
from hemra.clients.cli.common import command, console, fail
from hemra.clients.cli.safe import clean, safe_json
from hemra.services.domain.ids import kind_of
from hemra.v1 import store_service_pb2 as spb

EVENT_PAGE = 5000
#: `hemra runs --limit` at most (read from the store 1000 runs a page).
MAX_RUNS_LIMIT = 100_000
_RUNS_PAGE = 1000


def runs(
    limit: Annotated[int, typer.Option("--limit", help=f"How many runs to list (1 to {MAX_RUNS_LIMIT:,}).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for scripts.")] = False,
) -> None:
    """Runs, newest first, with their progress."""
    if not 1 <= limit <= MAX_RUNS_LIMIT:
        shown = f"{limit:,}" if len(str(limit)) <= 30 else f"{str(limit)[:27]}..."
        fail(f"--limit must be from 1 to {MAX_RUNS_LIMIT:,} (got {shown})")
    _runs(limit, as_json)


@command
async def _runs(limit: int, as_json: bool) -> None:
    async with connect.services(read_only=True) as services:
        found, token = [], ""
        while len(found) < limit:
            response = await services.store.ListRuns(
                spb.ListRunsRequest(page_size=min(_RUNS_PAGE, limit - len(found)), page_token=token)
            )
            found.extend(response.runs)
            token = response.next_page_token
            if not token:
                break
        if as_json:
            print(safe_json(json.dumps([_dict(r) for r in found], indent=2)))
        else:
            console.print(render.runs_table(found))
            for line in render.problem_lines(found):
                console.print(line)


def show(
    ref: Annotated[str, typer.Argument(help="A run's or import's ID or label, an attempt ID or a job ID.")],
    report: Annotated[bool, typer.Option("--report", help="A run's report as text.")] = False,
    events: Annotated[bool, typer.Option("--events", help="An attempt with its event log.")] = False,
) -> None:
    """Show a run (as JSON, or its report) or an attempt (with its events)."""
    _show(ref, report, events)


@command
async def _show(ref: str, report: bool, events: bool) -> None:
    async with connect.services(read_only=True) as services:
        store = services.store
        if kind_of(ref) in ("attempt", "job"):
            attempt = (await store.GetAttempt(spb.GetAttemptRequest(attempt=ref))).attempt
            data = {"attempt": _dict(attempt)}
            if events:
                data["events"] = [_event(e) for e in await _all_events(store, ref)]
            print(safe_json(json.dumps(data, indent=2, ensure_ascii=False)))
            if attempt.usage_differs:
                typer.echo(_usage_note(attempt), err=True)
            _problem_notes([attempt])
            return
        if events:
            raise typer.BadParameter("--events takes an attempt ID")
        found = await store.GetRun(spb.GetRunRequest(run=ref))
        run = found.run
        _label_note(ref, found.label_matches, run.id)
        if report:
            response = await store.GetRunReport(spb.GetRunReportRequest(run=run.id))
            render.print_report(console, response.report)
            return
        attempts = await _all_attempts(store, run.id)
        # A loose attempt (hemra try) has no report: it is never compared with anything.
        result = None if run.kind == "loose" else (await store.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
        print(
            safe_json(
                json.dumps(
                    {
                        "run": _dict(run),
                        "report": None if result is None else _dict(result),
                        "attempts": [_dict(a) for a in attempts],
                    },
                    indent=2,
                    ensure_ascii=False,
                )
            )
        )
        _problem_notes([run, *attempts])


def _label_note(ref: str, matches: int, run_id: str) -> None:
    """Which run a label several runs carry resolved to (on stderr: the output stays as it is)."""
    note = render.label_note(ref, matches, run_id)
    if note:
        typer.echo(clean(note), err=True)


def _problem_notes(records) -> None:
    """Rows the store could not wholly read, named on stderr (the JSON says the same in `problem`)."""
    for record in records:
        if record.problem:
            typer.echo(clean(f"note: {record.problem}"), err=True)


async def _all_attempts(store, run_id: str) -> list:
    attempts, token = [], ""
    while True:
        page = await store.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run_id}", page_token=token))
        attempts.extend(page.attempts)
        token = page.next_page_token
        if not token:
            return attempts


async def _all_events(store, attempt_id: str) -> list:
    events, token = [], ""
    while True:
        page = await store.ListEvents(spb.ListEventsRequest(parent=attempt_id, page_size=EVENT_PAGE, page_token=token))
        events.extend(page.events)
        token = page.next_page_token
        if not token:
            return events


def _usage_note(attempt) -> str:
    """Says that the harness's usage and what HEMRA's model relay read disagree (on stderr: the
    JSON stays as it is)."""
    said, seen = attempt.usage, attempt.usage_observed
    return (
        f"note: usage differs: the harness reported {said.input_tokens} input / {said.output_tokens} output "
        f"tokens; HEMRA's model relay read {seen.input_tokens} / {seen.output_tokens} in "
        f"{seen.model_calls} model call(s) ({seen.unreadable} unreadable)"
    )


def _dict(message) -> dict:
    from google.protobuf import json_format  # on the paths that print JSON only

    # Every field, zero or not: a script reads `"failed": 0`, never a missing key.
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def _event(event) -> dict:
    data = _dict(event)
    data.pop("payload_json", None)
    data["payload"] = json.loads(event.payload_json or "{}")
    return data
