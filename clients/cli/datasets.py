"""hemra datasets: what is pinned, pinning from a source, and one dataset's tasks."""

import json
from typing import Annotated

import typer
from google.protobuf import json_format
from rich.table import Table

from hemra.clients.cli import connect
from hemra.clients.cli.common import EXIT_INCOMPLETE, command, console
from hemra.clients.cli.safe import plain, safe_json
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb

app = typer.Typer(
    help="Datasets: what is pinned, pinning one from its source, its tasks, auditing them for leaks.",
    no_args_is_help=True,
)
#: Tasks read per ListTasks page.
_PAGE = 1000
#: An audit builds and inspects every task's image: it may take long.
_AUDIT_TIMEOUT_SECS = 24 * 3600
#: Findings shown per task in the table (--json has them all).
_SHOWN_FINDINGS = 3


def _json(message) -> dict:
    # Every field, zero or not (a missing key would read as unknown, not as 0).
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json", help="JSON for scripts.")] = False) -> None:
    """Every dataset pinned in the store: name, source, digest, tasks, and its use."""
    _list(as_json)


@command
async def _list(as_json: bool) -> None:
    async with connect.services(read_only=True) as services:
        datasets = (await services.store.ListDatasets(spb.ListDatasetsRequest())).datasets
    if as_json:
        print(safe_json(json.dumps([_json(d) for d in datasets], indent=2)))
        return
    table = Table(title="datasets", title_justify="left")
    for column in ("name", "digest", "tasks", "runs", "imports", "last used", "source"):
        table.add_column(column)
    for d in datasets:
        used = d.last_used_time.ToDatetime().strftime("%Y-%m-%d %H:%M") if d.last_used_time.seconds else "-"
        table.add_row(
            plain(d.dataset_name), d.digest[7:19], str(d.tasks), str(d.runs), str(d.imports), used, plain(d.source)
        )
    console.print(table)


@app.command()
def pin(
    source: Annotated[
        str,
        typer.Argument(
            help="A dataset as -d takes it: a folder, harbor:NAME@VERSION (the Harbor registry), "
            "hf:ORG/NAME@REVISION, swebench:FILE or swebench:ORG/NAME@REVISION."
        ),
    ],
    allow_head: Annotated[
        bool,
        typer.Option("--allow-head", help="Pin registry tasks that name no commit (HEAD) at the commit fetched now."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for scripts.")] = False,
) -> None:
    """Fetch a dataset from its source, pin it by digest and store its files; print NAME@DIGEST."""
    _pin(source, allow_head, as_json)


@command
async def _pin(source: str, allow_head: bool, as_json: bool) -> None:
    async with connect.services() as services:
        response = await services.planner.PinDataset(ppb.PinDatasetRequest(ref=source, allow_head=allow_head))
    dataset = response.dataset
    tasks = json.loads(response.origin_json) if response.origin_json else []
    if as_json:
        out = {"dataset_name": dataset.dataset_name, "digest": dataset.digest, "source": dataset.source, "tasks": tasks}
        print(safe_json(json.dumps(out, indent=2)))
        return
    commits = sorted({t["commit"][:12] for t in tasks if t.get("commit")})
    at = f" at commit {', '.join(commits)}" if commits else ""
    console.print(plain(f"{dataset.dataset_name}@{dataset.digest[7:19]}: {len(dataset.tasks)} tasks{at}"))
    console.print(plain(f"source: {dataset.source}"), highlight=False)


@app.command()
def show(
    name: Annotated[str, typer.Argument(help="A dataset: its name, name@<digest prefix> or digest.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON for scripts.")] = False,
) -> None:
    """A dataset's tasks with their digests, and where the dataset came from."""
    _show(name, as_json)


@command
async def _show(name: str, as_json: bool) -> None:
    async with connect.services(read_only=True) as services:
        tasks, token = [], ""
        while True:
            page = await services.store.ListTasks(spb.ListTasksRequest(parent=name, page_size=_PAGE, page_token=token))
            tasks += page.tasks
            token = page.next_page_token
            if not token:
                break
        datasets = (await services.store.ListDatasets(spb.ListDatasetsRequest())).datasets
    dataset = next((d for d in datasets if d.digest == page.dataset_digest), None)
    if as_json:
        out = {"dataset": _json(dataset) if dataset else None, "tasks": [_json(t) for t in tasks]}
        print(safe_json(json.dumps(out, indent=2)))
        return
    if dataset is not None:
        console.print(plain(f"{dataset.dataset_name}@{dataset.digest[7:19]} · {dataset.source}"), highlight=False)
    table = Table(title="tasks", title_justify="left")
    origins = any(t.origin for t in tasks)
    for column in ("task", "digest", "attempts", "passed", *(["source"] if origins else [])):
        table.add_column(column)
    for t in tasks:
        origin = [plain(t.origin)] if origins else []
        table.add_row(plain(t.task_name), t.digest[7:19], str(t.attempts), str(t.passed), *origin)
    console.print(table)


@app.command()
def audit(
    name: Annotated[
        str,
        typer.Argument(help="A dataset as -d takes it: a name, a folder, name@<digest prefix>, swebench:FILE, ..."),
    ],
    tasks: Annotated[
        list[str] | None,
        typer.Option("-t", "--task", help="Audit only tasks whose name matches (glob; repeatable), as a run's -t."),
    ] = None,
    allow_history: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-history",
            help="Audit these tasks (glob; repeatable) as a run that keeps their history runs them; not recorded.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON for scripts.")] = False,
) -> None:
    """Inspect each task's environment (Docker, no network) for what could leak the answer; record it."""
    _audit(name, tasks or [], allow_history or [], as_json)


@command
async def _audit(name: str, tasks: list[str], allow_history: list[str], as_json: bool) -> None:
    async with connect.services() as services:
        response = await services.planner.AuditDataset(
            ppb.AuditDatasetRequest(ref=name, tasks=tasks, allow_history=allow_history), timeout=_AUDIT_TIMEOUT_SECS
        )
    found = response.audit
    if as_json:
        print(safe_json(json.dumps(_json(found), indent=2)))
    else:
        _print_audit(found)
    if found.verdict != "clean":
        raise typer.Exit(EXIT_INCOMPLETE)


def _print_audit(found) -> None:
    when = found.audit_time.ToDatetime().strftime("%Y-%m-%d %H:%M")
    console.print(plain(f"{found.dataset_name}@{found.dataset_digest[7:19]} audited {when}: {found.verdict}"))
    table = Table(title="audit", title_justify="left")
    for column in ("task", "verdict", "findings"):
        table.add_column(column)
    for task in found.tasks:
        leaks = [f for f in task.findings if f.severity == "leak"]
        warnings = [f for f in task.findings if f.severity != "leak"]
        lines = [task.error] if task.error else []
        lines += [f"{f.kind}: {f.detail}" for f in (leaks + warnings)[:_SHOWN_FINDINGS]]
        more = len(task.findings) - min(len(task.findings), _SHOWN_FINDINGS)
        if more:
            lines.append(f"and {more} more (--json)")
        counts = f"{len(leaks)} leaks, {len(warnings)} warnings" if task.findings else "-"
        table.add_row(plain(task.task_name), task.verdict, plain("\n".join([counts, *lines]), multiline=True))
    console.print(table)
    leaking = sum(t.verdict == "leaks" for t in found.tasks)
    errors = sum(t.verdict == "error" for t in found.tasks)
    console.print(f"{len(found.tasks)} tasks: {leaking} leak, {errors} could not be audited")
