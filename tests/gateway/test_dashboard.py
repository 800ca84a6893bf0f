"""The web dashboard: its JavaScript unit tests, and a real browser over a real store."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
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


@pytest.mark.slow
def test_attempt_rubric_in_chromium(judged_dashboard):
    if not Path(CHROMIUM).exists() or shutil.which("node") is None:
        _skip_or_fail("needs /usr/bin/chromium and node (apt-get install -y chromium)")
    url, attempt = judged_dashboard
    env = {**os.environ, "GATEWAY_URL": url, "ATTEMPT_ID": attempt}
    result = subprocess.run(
        ["node", "--test", "rubric.test.mjs"], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def _built(path: Path) -> Path:
    if not path.is_file():
        _skip_or_fail("the web package is not built (cd clients/dashboard && npm ci && npm run build)")
    return path


@pytest.mark.parametrize("page", ["index.html", "viewer/index.html"])
def test_built_pages_have_no_inline_script_or_style(page):
    html = _built(DASHBOARD / "dist" / page).read_text()
    scripts = [tag.strip() for tag in html.split("\n") if tag.strip().startswith("<script")]
    assert "<style" not in html and "style=" not in html
    assert scripts and all(
        re.fullmatch(r'<script type="module" crossorigin src="(/|\./)[^":]+"></script>', tag) for tag in scripts
    ), html


def test_gateway_serves_the_current_viewer_build():
    """gateway/viewer is committed (pip installs need no npm); it must be today's build."""
    built = _built(DASHBOARD / "dist" / "viewer" / "index.html").parent
    served = REPO / "gateway" / "viewer"
    names = sorted(p.relative_to(built).as_posix() for p in built.rglob("*") if p.is_file())
    assert sorted(p.relative_to(served).as_posix() for p in served.rglob("*") if p.is_file()) == names
    stale = [name for name in names if (built / name).read_bytes() != (served / name).read_bytes()]
    assert not stale, (
        f"gateway/viewer is not the current build of clients/dashboard ({', '.join(stale)}): run make viewer"
    )


@pytest.fixture
def cancelled_home(tmp_path):
    """A HEMRA_HOME holding one run, queued and cancelled before anything ran: two trials."""
    from tests.conftest import clean_env
    from tests.e2e.helpers import hemra

    env = {**clean_env(), "HEMRA_HOME": str(tmp_path / "home")}
    planned = hemra(env, "run", "--detach", "-H", "nop", "-d", "hemra-offline", "-t", "fix-*", "--label", "cut")
    assert planned.returncode == 0, planned.stderr
    assert hemra(env, "cancel", "cut").returncode == 0
    # and one loose attempt (hemra try), which the runs list offers as its attempt's page
    task = Path(__file__).resolve().parents[2] / "examples" / "hemra-offline" / "text-stats"
    tried = hemra(env, "try", "-H", "oracle", "-t", str(task), "--label", "tried")
    assert tried.returncode == 0, tried.stderr
    return tmp_path / "home", planned.stdout.strip()


@pytest.mark.slow
def test_run_page_offers_resume_and_repair_in_chromium(cancelled_home):
    if not Path(CHROMIUM).exists() or shutil.which("node") is None:
        _skip_or_fail("needs /usr/bin/chromium and node (apt-get install -y chromium)")
    if not (BROWSER / "node_modules" / "playwright-core").exists():
        _skip_or_fail("needs playwright-core: cd tests/gateway/browser && npm ci")
    from tests.gateway.conftest import _dashboard_dist, _live

    home, run_id = cancelled_home
    served = _live(home, ui_dir=_dashboard_dist())
    url = next(served)
    try:
        # attempts cancelled while queued (start = end) are no wall-time samples, never 0 s ones
        table = httpx.get(f"{url}/api/datasets/hemra-offline/criteria").json()
        wall = next(r for r in table["rows"] if r["criterion"] == "Wall time per attempt")
        assert [c.get("samples", 0) for c in wall["cells"]] == [0]
        loose = httpx.get(f"{url}/api/runs", params={"kind": "loose"}).json()["runs"]
        assert [(r["label"], r["kind"]) for r in loose] == [("tried", "loose")]
        env = {**os.environ, "GATEWAY_URL": url, "RUN_ID": run_id}
        result = subprocess.run(
            ["node", "--test", "repairs.test.mjs"], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    finally:
        next(served, None)
