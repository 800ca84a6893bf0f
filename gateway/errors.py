"""Store errors as HTTP statuses."""

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from clients import rpc

STATUS = {rpc.NotFound: 404, rpc.InvalidArgument: 400, rpc.FailedPrecondition: 400, rpc.Unavailable: 503}


def install(app: FastAPI) -> None:
    @app.exception_handler(rpc.RpcError)
    async def store_error(request: Request, exc: rpc.RpcError) -> JSONResponse:
        status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 502)
        return JSONResponse({"detail": str(exc), "code": exc.code.name}, status_code=status)
