"""Errors of the shared tree (services/common/errors.py) as HTTP statuses, in one table."""

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from hemra.services.common import errors

#: Any other error of the tree is a bad gateway (502): the store failed, not the request.
STATUS = {errors.NotFound: 404, errors.InvalidArgument: 400, errors.FailedPrecondition: 400, errors.Unavailable: 503}


def install(app: FastAPI) -> None:
    @app.exception_handler(errors.HemraError)
    async def store_error(request: Request, exc: errors.HemraError) -> JSONResponse:
        status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 502)
        return JSONResponse({"detail": str(exc), "code": exc.code.name}, status_code=status)
