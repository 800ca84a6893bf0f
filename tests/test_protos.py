"""The committed generated code is what the .proto files generate."""

import subprocess
import sys

from tests.conftest import REPO


def test_generated_code__matches_the_protos():
    result = subprocess.run(
        [sys.executable, "scripts/gen_protos.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
