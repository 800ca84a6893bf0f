"""GET /api/compare: two sides task by task (b - a)."""

from typing import Annotated

from fastapi import APIRouter, Query

from hemra.gateway.deps import SideRef, StoreDep
from hemra.gateway.schemas import Comparison, JSONResponse, to_json
from hemra.v1 import store_service_pb2 as spb

router = APIRouter(prefix="/api/compare", tags=["compare"])


@router.get("", response_model=Comparison)
async def compare_sides(
    store: StoreDep,
    a: SideRef,
    b: SideRef,
    judge: Annotated[str, Query(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")] = "",
):
    """A side is an import (ID or label) or a run cell: run, run/harness or run/dataset/harness."""
    response = await store.CompareSides(spb.CompareSidesRequest(a=a, b=b, judge=judge))
    return JSONResponse(to_json(response.comparison))
