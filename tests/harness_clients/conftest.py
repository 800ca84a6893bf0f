"""The TypeScript client package, built by scripts/setup.sh (npm ci + npm run build)."""

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO

TS_CLIENT = REPO / "clients" / "harness-ts"


def require_node_package(package: Path) -> None:
    """Skip when node or the built package is missing, except in CI (which must have them)."""
    problem = None
    if shutil.which("node") is None:
        problem = "needs node (apt-get install -y nodejs npm)"
    elif not (package / "dist").is_dir() or not (package / "node_modules").is_dir():
        problem = f"needs {package.relative_to(REPO)} built: bash scripts/setup.sh (npm ci && npm run build)"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"required in CI: {problem}")
        pytest.skip(problem)


@pytest.fixture
def ts_client() -> Path:
    require_node_package(TS_CLIENT)
    return TS_CLIENT
