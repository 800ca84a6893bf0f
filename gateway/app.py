"""The gateway: a read-only HTTP API over the store, and the trace viewer at /."""

from pathlib import Path

from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from hemra.gateway import errors
from hemra.gateway.routes import attempts, catalog, compare, health, runs
from hemra.gateway.security import LOOPBACK_HOSTS, SecurityHeaders
from hemra.services.common.heap import freeze_for_good

VIEWER = Path(__file__).parent / "viewer"
TITLE = "HEMRA gateway"
VERSION = "1"


def _operation_id(route: APIRoute) -> str:
    return route.name


def create_app(store, *, ui_dir: Path | None = None, allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS) -> FastAPI:
    """The gateway over `store` (a hemra.services.common.transport store client); it never opens the database.

    `ui_dir` is served at / instead of the trace viewer. `allowed_hosts` are the Host
    names answered (loopback names by default; None answers any, for --expose).
    """
    app = FastAPI(
        title=TITLE,
        version=VERSION,
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        generate_unique_id_function=_operation_id,
        description="Read-only API over HEMRA's store: runs, reports, attempts, events, "
        "artifacts, comparisons, datasets, tasks, harnesses, scorers and judges. "
        "No authentication: loopback only unless exposed.",
    )
    app.state.store = store
    errors.install(app)
    for module in (health, runs, attempts, compare, catalog):
        app.include_router(module.router)
    app.mount("/", StaticFiles(directory=ui_dir or VIEWER, html=True), name="ui")
    app.add_middleware(SecurityHeaders, allowed_hosts=allowed_hosts)
    # What is loaded by now (modules, services, the app) lives as long as the process: keep it
    # out of the collector's full passes, which otherwise stop a request for up to ~100 ms on
    # the heap of a big store (measured by bench/gateway.py).
    freeze_for_good()
    return app
