"""The web dashboard: its JavaScript unit tests, and a real browser over a real store."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.gateway.conftest import LABEL
from tests.gateway.test_browser import BROWSER, CHROMIUM, _skip_or_fail

DASHBOARD = REPO / "clients" / "dashboard"


def test_dashboard_js_units():
    if shutil.which("node") is None:
        _skip_or_fail("needs node")
    result = subprocess.run(["node", "--test", "test/"], cwd=DASHBOARD, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


@pytest.mark.slow
def test_dashboard_in_chromium(dashboard_server, tmp_path):
    if not Path(CHROMIUM).exists() or shutil.which("node") is None:
        _skip_or_fail("needs /usr/bin/chromium and node (apt-get install -y chromium)")
    if not (BROWSER / "node_modules" / "playwright-core").exists():
        _skip_or_fail("needs playwright-core: cd tests/gateway/browser && npm ci")
    env = {**os.environ, "GATEWAY_URL": dashboard_server, "SCREENSHOT_DIR": str(tmp_path), "RUN_LABEL": LABEL}
    result = subprocess.run(
        ["node", "--test", "dashboard.test.mjs"], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert (tmp_path / "dashboard.png").stat().st_size > 0


def test_built_dashboard_has_no_inline_script_or_style():
    index = DASHBOARD / "dist" / "index.html"
    if not index.is_file():
        _skip_or_fail("the dashboard is not built (cd clients/dashboard && npm ci && npm run build)")
    html = index.read_text()
    assert "<style" not in html and "style=" not in html
    assert all(
        tag.strip().startswith('<script type="module" crossorigin src="/')
        for tag in html.split("\n")
        if tag.strip().startswith("<script")
    ), html
