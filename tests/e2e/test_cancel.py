"""Ctrl-C on `hemra run` cancels unfinished attempts: cancelled, never failed."""

import secrets
import signal
import subprocess
import time

import pytest

from tests.conftest import HEMRA
from tests.e2e.helpers import hemra, show

pytestmark = pytest.mark.slow


def test_ctrl_c__cancels_running_and_queued_attempts(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    marker = f"hemra-sleepy-{secrets.token_hex(4)}"  # unique, so other runs' sleeps never count
    (tmp_path / "harnesses" / "sleepy.toml").write_text(
        f'kind = "program"\ncommand = ["bash", "-c", "exec -a {marker} sleep 120"]\n'
    )
    process = subprocess.Popen(
        [HEMRA, "run", "-H", "sleepy", "-d", "hemra-offline", "--concurrency", "2", "--label", "interrupted"],
        cwd=tmp_path,
        env=hemra_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = hemra(hemra_env, "show", "interrupted")
        if listed.returncode == 0 and '"running"' in listed.stdout and '"running": 2' in listed.stdout:
            break
        time.sleep(0.2)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 10
    assert process.returncode == 1, err
    assert "cancelling" in err and "Traceback" not in err, err
    data = show(hemra_env, "interrupted")
    outcomes = {a["outcome"] for a in data["attempts"]}
    assert outcomes == {"OUTCOME_CANCELLED"}, [(a["outcome"], a.get("error")) for a in data["attempts"]]
    row = data["report"]["datasets"][0]["rows"][0]
    assert row["cancelled"] == len(data["attempts"]) and row.get("graded", 0) == 0
    assert data["report"].get("complete", False) is False
    assert marker not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
