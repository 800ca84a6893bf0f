"""Runs, their reports and their attempts."""

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from hemra.gateway.deps import PageToken, RunRef, StoreDep
from hemra.gateway.schemas import AttemptsPage, JSONResponse, MiningList, Report, Run, RunsPage, UsageList, to_json
from hemra.v1 import store_service_pb2 as spb

router = APIRouter(prefix="/api/runs", tags=["runs"])
_ID = r"^[0-9a-z-]*$"


@router.get("", response_model=RunsPage)
async def list_runs(
    store: StoreDep,
    page_size: Annotated[int, Query(ge=1, le=1000)] = 50,
    page_token: PageToken = "",
    kind: Literal["", "run", "import", "loose"] = "",
):
    """Runs, imports and loose attempts (`hemra try`), newest first (`kind=run`, `kind=import`
    or `kind=loose` for only those)."""
    page = await store.ListRuns(spb.ListRunsRequest(page_size=page_size, page_token=page_token, kind=kind))
    return JSONResponse({"runs": [to_json(r) for r in page.runs], "next_page_token": page.next_page_token})


@router.get("/{run}", response_model=Run)
async def get_run(store: StoreDep, run: RunRef):
    """A run by ID or label (the newest with that label), with its cells and progress."""
    return JSONResponse(to_json((await store.GetRun(spb.GetRunRequest(run=run))).run))


@router.get("/{run}/report", response_model=Report)
async def get_run_report(store: StoreDep, run: RunRef):
    """One table per dataset: harnesses against the baseline."""
    return JSONResponse(to_json((await store.GetRunReport(spb.GetRunReportRequest(run=run))).report))


@router.get("/{run}/attempts", response_model=AttemptsPage)
async def list_run_attempts(
    store: StoreDep,
    run: RunRef,
    page_size: Annotated[int, Query(ge=1, le=1000)] = 200,
    page_token: PageToken = "",
    cell: Annotated[str, Query(max_length=64, pattern=_ID)] = "",
    task: Annotated[str, Query(max_length=80, pattern=r"^(sha256:[0-9a-f]{1,64})?$")] = "",
    harness: Annotated[str, Query(max_length=300, pattern=r"^[^\x00-\x1f\x7f]*$")] = "",
    verdict: Literal["", "passed", "failed", "errored", "cancelled", "unfinished"] = "",
    tag: Annotated[str, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")] = "",
):
    """The run's attempts, in ID order; `cell`, `task` (digest), `harness`, `verdict` and `tag` (a
    task tag) filter them."""
    page = await store.ListAttempts(
        spb.ListAttemptsRequest(
            parent=f"runs/{run}",
            page_size=page_size,
            page_token=page_token,
            cell_id=cell,
            task_digest=task,
            harness_name=harness,
            verdict=verdict,
            task_tag=tag,
        )
    )
    return JSONResponse({"attempts": [to_json(a) for a in page.attempts], "next_page_token": page.next_page_token})


@router.get("/{run}/usage", response_model=UsageList)
async def list_run_usage(store: StoreDep, run: RunRef):
    """Tokens and cost per attempt, summed over each attempt's `usage` events (attempts without any are left out)."""
    return JSONResponse(to_json(await store.ListAttemptUsage(spb.ListAttemptUsageRequest(parent=run))))


@router.get("/{run}/mining", response_model=MiningList)
async def list_run_mining(store: StoreDep, run: RunRef):
    """Attempts whose events mine the repository's history beyond HEAD (`git log --all`,
    `git show <hash>`, `git reflog`, fetching the upstream, ...), each with its matching events:
    sequence number, pattern and command. A hash or remote ref is `possible` mining: whether it is
    an ancestor of HEAD cannot be told from the events."""
    return JSONResponse(to_json(await store.ListHistoryMining(spb.ListHistoryMiningRequest(parent=run))))
