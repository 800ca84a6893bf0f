"""GET /api/health: the gateway answers and the store is reachable."""

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gateway.deps import StoreDep
from gateway.schemas import Health
from hemra.v1 import store_service_pb2 as spb
from services.common import errors

router = APIRouter(prefix="/api/health", tags=["health"])


@router.get("", response_model=Health, responses={503: {"model": Health}})
async def get_health(store: StoreDep):
    try:
        await store.ListRuns(spb.ListRunsRequest(page_size=1), timeout=5)
    except errors.HemraError as exc:
        return JSONResponse({"status": "unavailable", "store": str(exc)}, status_code=503)
    return {"status": "ok", "store": "ok"}
