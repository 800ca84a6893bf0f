"""hemra judge: judge a finished run or import with a HEMRA judge, after the fact."""

import json
from pathlib import Path
from typing import Annotated

import typer

from hemra.clients.cli import connect
from hemra.clients.cli.common import command, console, fail
from hemra.clients.cli.running import check_judges
from hemra.clients.cli.safe import plain
from hemra.services.common import judges
from hemra.v1 import scorer_service_pb2 as scpb

#: The longest `hemra judge` waits for its judging (each model call has its own timeout).
JUDGE_TIMEOUT_SECS = 24 * 3600.0


def judge(
    run: Annotated[str, typer.Argument(help="A run or import: ID, unique ID prefix or label.")],
    judge: Annotated[
        list[str],
        typer.Option("--judge", help="A HEMRA judge: its name (judges/<name>.toml here) or a judge file. Repeats."),
    ],
    only_missing: Annotated[
        bool,
        typer.Option(
            "--only-missing", help="Judge only attempts this judge, as now defined, has not scored (or failed on)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="What was judged, as JSON.")] = False,
) -> None:
    """Judge a finished run or import with HEMRA judges, recorded beside any earlier judging."""
    specs = []
    for ref in dict.fromkeys(judge):
        try:
            specs.append(judges.load(judges.find(ref, Path.cwd())).spec())
        except judges.JudgeFileError as exc:
            fail(str(exc))
    _judge(run, specs, only_missing, as_json)


@command
async def _judge(run: str, specs: list, only_missing: bool, as_json: bool) -> None:
    results = []
    async with connect.services() as services:
        if not services.remote:
            check_judges(specs)
        for spec in specs:
            request = scpb.JudgeRunRequest(run=run, judge=spec, only_missing=only_missing)
            response = await services.scorer.JudgeRun(request, timeout=JUDGE_TIMEOUT_SECS)
            results.append((spec, response))
            if not as_json:
                console.print(plain(_line(spec, response)), highlight=False)
    if as_json:
        print(json.dumps([_json(spec, response) for spec, response in results], indent=2))


def _line(spec, response) -> str:
    failed = f", {response.failed} failed (counted apart, never 0)" if response.failed else ""
    skipped = f", {response.skipped} already judged" if response.skipped else ""
    return (
        f"judge {spec.name} ({spec.fingerprint[:19]}): run {response.run_id}: "
        f"judged {response.judged} attempt(s){failed}{skipped}"
    )


def _json(spec, response) -> dict:
    return {
        "judge": spec.name,
        "fingerprint": spec.fingerprint,
        "run_id": response.run_id,
        "judged": response.judged,
        "failed": response.failed,
        "skipped": response.skipped,
    }
