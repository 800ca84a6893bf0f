"""The committed generated code is what the .proto files generate."""

import subprocess
import sys

from tests.conftest import REPO


def test_generated_code__matches_the_protos():
    result = subprocess.run(
        [sys.executable, "scripts/gen_protos.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_contracts__pass_buf_lint():
    """buf's STANDARD rules (buf.yaml): one naming rule for every message, field and method, no
    request or response shared between methods. buf comes from npm (scripts/build-npm.sh)."""
    buf = REPO / "protos" / "node_modules" / ".bin" / "buf"
    assert buf.exists(), "buf is missing: run `make setup` (scripts/build-npm.sh installs it)"
    result = subprocess.run([str(buf), "lint"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
