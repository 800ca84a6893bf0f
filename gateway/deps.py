"""Dependencies shared by the routes: the store client and validated parameters."""

from typing import Annotated

from fastapi import Depends, Path, Query, Request

from hemra.services.common.transport import Client


async def get_store(request: Request) -> Client:
    # async: FastAPI runs a plain `def` dependency in its thread pool, a hop to a worker thread
    # and back through the event loop's wake-up pipe on every request.
    return request.app.state.store


StoreDep = Annotated[Client, Depends(get_store)]

#: A run's ID or label.
RunRef = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]
#: An attempt's ID ("a-" and base32 characters).
AttemptId = Annotated[str, Path(min_length=3, max_length=64, pattern=r"^a-[0-9a-z]{1,62}$")]
PageToken = Annotated[str, Query(max_length=100, pattern=r"^[0-9A-Za-z_-]*$")]
#: A side of a comparison: an import or a run cell (run, run/harness, run/dataset/harness).
SideRef = Annotated[str, Query(min_length=1, max_length=400, pattern=r"^[^\x00-\x1f\x7f]+$")]
