"""hemra service: run one service as its own process."""

import asyncio
from enum import Enum
from typing import Annotated

import typer


class ServiceName(str, Enum):
    store = "store"
    planner = "planner"
    executor = "executor"
    scorer = "scorer"
    importer = "importer"


def service(
    name: Annotated[ServiceName, typer.Argument(help="Which service to run.")],
    args: Annotated[list[str] | None, typer.Argument(help="Its options, e.g. --listen 127.0.0.1:7801 --store HOST:PORT.")] = None,
) -> None:
    """Run one service alone (the same as python -m services.<name>)."""
    import importlib

    module = importlib.import_module(f"services.{name.value}.__main__")
    asyncio.run(module.main(args or []))
