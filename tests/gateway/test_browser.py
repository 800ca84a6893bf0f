"""The trace viewer in headless chromium: node --test tests/gateway/browser/viewer.test.mjs."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.gateway.conftest import LABEL

BROWSER = Path(__file__).parent / "browser"
CHROMIUM = "/usr/bin/chromium"


def _skip_or_fail(reason: str) -> None:
    """CI (HEMRA_REQUIRE_BROWSER=1, set by .ci/run after installing both) must run these."""
    if os.environ.get("HEMRA_REQUIRE_BROWSER"):
        pytest.fail(f"browser tests are required here: {reason}")
    pytest.skip(reason)


@pytest.mark.slow
def test_viewer_in_chromium(live_server, tmp_path):
    if not Path(CHROMIUM).exists() or shutil.which("node") is None:
        _skip_or_fail("needs /usr/bin/chromium and node (apt-get install -y chromium)")
    if not (BROWSER / "node_modules" / "playwright-core").exists():
        _skip_or_fail("needs playwright-core: cd tests/gateway/browser && npm ci")
    env = {**os.environ, "GATEWAY_URL": live_server, "SCREENSHOT_DIR": str(tmp_path), "RUN_LABEL": LABEL}
    result = subprocess.run(
        ["node", "--test", "viewer.test.mjs"], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=180
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert (tmp_path / "viewer.png").stat().st_size > 0
