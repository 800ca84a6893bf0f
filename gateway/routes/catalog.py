"""What the store holds besides runs: datasets and their tasks, harnesses, scorers, judges,
and the criterion table of a dataset."""

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from hemra.gateway.deps import StoreDep
from hemra.gateway.schemas import (
    CriterionTable,
    DatasetsList,
    HarnessesList,
    JSONResponse,
    JudgesList,
    ScorersList,
    TasksPage,
    to_json,
)
from hemra.v1 import store_service_pb2 as spb

router = APIRouter(prefix="/api", tags=["catalog"])

#: A dataset: its name, name@digest-prefix, or digest.
DatasetRef = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f/]+$")]


@router.get("/datasets", response_model=DatasetsList)
async def list_datasets(store: StoreDep):
    """Datasets recorded by runs and imports, last used first, with task counts and use."""
    response = await store.ListDatasets(spb.ListDatasetsRequest())
    return JSONResponse(to_json(response))


@router.get("/datasets/{dataset}/tasks", response_model=TasksPage)
async def list_dataset_tasks(
    store: StoreDep,
    dataset: DatasetRef,
    page_size: Annotated[int, Query(ge=1, le=1000)] = 200,
    page_token: Annotated[str, Query(max_length=800, pattern=r"^[0-9A-Za-z_-]*$")] = "",
):
    """A dataset's tasks by name, with how often they were tried, passed, failed and errored."""
    response = await store.ListTasks(spb.ListTasksRequest(parent=dataset, page_size=page_size, page_token=page_token))
    return JSONResponse(to_json(response))


@router.get("/datasets/{dataset}/criteria", response_model=CriterionTable)
async def get_criterion_table(store: StoreDep, dataset: DatasetRef, source: Literal["newest", "largest"] = "newest"):
    """Harnesses as columns, tasks as rows; one source (run or import cell) per harness."""
    response = await store.GetCriterionTable(spb.GetCriterionTableRequest(dataset=dataset, source=source))
    return JSONResponse(to_json(response.table))


@router.get("/harnesses", response_model=HarnessesList)
async def list_harnesses(store: StoreDep):
    """Harnesses recorded by runs and imports, last used first (environment variable names, never values)."""
    return JSONResponse(to_json(await store.ListHarnesses(spb.ListHarnessesRequest())))


@router.get("/scorers", response_model=ScorersList)
async def list_scorers(store: StoreDep):
    """Scorer fingerprints with the tasks they graded."""
    return JSONResponse(to_json(await store.ListScorers(spb.ListScorersRequest())))


@router.get("/judges", response_model=JudgesList)
async def list_judges(store: StoreDep):
    """HEMRA judges that scored attempts or that runs named; `note` says why the list is empty."""
    return JSONResponse(to_json(await store.ListJudges(spb.ListJudgesRequest())))
