"""The trace viewer in headless chromium: node --test tests/gateway/browser/viewer.test.mjs."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.gateway.conftest import LABEL

BROWSER = Path(__file__).parent / "browser"
CHROMIUM = "/usr/bin/chromium"


@pytest.mark.slow
def test_viewer_in_chromium(live_server, tmp_path):
    if not Path(CHROMIUM).exists() or shutil.which("node") is None:
        pytest.skip("needs /usr/bin/chromium and node (apt-get install -y chromium)")
    if not (BROWSER / "node_modules" / "playwright-core").exists():
        pytest.skip("needs playwright-core: cd tests/gateway/browser && npm install")
    env = {**os.environ, "GATEWAY_URL": live_server, "SCREENSHOT_DIR": str(tmp_path), "RUN_LABEL": LABEL}
    result = subprocess.run(["node", "--test", "viewer.test.mjs"], cwd=BROWSER, env=env, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert (tmp_path / "viewer.png").stat().st_size > 0


def test_viewer_js_units():
    if shutil.which("node") is None:
        pytest.skip("needs node")
    result = subprocess.run(["node", "--test", str(Path(__file__).parent / "js")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout[-4000:]
