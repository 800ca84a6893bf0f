"""GET /api/health: the gateway answers (liveness). GET /api/ready: and the store answers,
ready to serve (readiness: a load balancer sends it requests only then)."""

from fastapi import APIRouter

from hemra.gateway.deps import StoreDep
from hemra.gateway.schemas import Health, JSONResponse
from hemra.services.common import errors
from hemra.v1 import store_service_pb2 as spb

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health", response_model=Health)
async def get_health():
    return {"status": "ok", "store": "not checked"}


@router.get("/ready", response_model=Health, responses={503: {"model": Health}})
async def get_ready(store: StoreDep):
    try:
        await store.ListRuns(spb.ListRunsRequest(page_size=1), timeout=5)
    except errors.HemraError as exc:
        return JSONResponse({"status": "unavailable", "store": str(exc)}, status_code=503)
    return {"status": "ok", "store": "ok"}
