"""A hostile agent against the verifier's verdict: code it leaves for the tests to import by
accident, reward files its program writes while the tests run it, a program that hangs or kills
the tests, a workspace swapped for a link or a file. Each attack runs through the real `hemra
run` on the host and the Docker sandbox. None of them may make a pass, and none may turn the
agent's failure into "not graded": the attempt is scored 0 with the fault recorded, and exactly
one attempt exists (an infrastructure failure would have been retried as a second one)."""

import base64

import pytest

from tests.adversarial.test_scoring_integrity import ISOLATIONS, attack, make_task
from tests.e2e.helpers import show

pytestmark = pytest.mark.slow


@pytest.fixture(params=["host", "docker"])
def sandbox(request) -> str:
    """Each attack on both sandboxes (docker needs the engine: skipped without one, failed in CI)."""
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return request.param


def failed_with(attempt: dict, fault: str = "") -> None:
    """The agent's result: completed or failed (never an infrastructure failure), scored 0."""
    assert attempt["outcome"] in ("OUTCOME_COMPLETED", "OUTCOME_HARNESS_FAILED"), attempt
    score = attempt["score"]
    assert score["state"] == "SCORE_STATE_SCORED", attempt
    assert score["rewards"] == {"reward": 0.0}, attempt
    assert score.get("fault", "") == fault, attempt


#: The tests import Python's own json module from `python3 -c`, whose path starts with the
#: working directory: the verifier's, which must not be the agent's workspace.
IMPORTING_TEST = """#!/bin/bash
mkdir -p /logs/verifier
python3 -c '
import json
ok = open("/app/answer.txt").read().strip() == "42"
open("/logs/verifier/reward.txt", "w").write(json.dumps(1 if ok else 0))
' || echo 0 > /logs/verifier/reward.txt
"""

#: A module that passes the test on import and ends the interpreter before the test can check.
PASSING_MODULE = 'import os\nopen("/logs/verifier/reward.txt", "w").write("1")\nos._exit(0)\n'


def plant(path: str, content: str, mode: str = "644") -> str:
    """A line of the attacking script: write `content` to `path` in the sandbox (its folder made)."""
    data = base64.b64encode(content.encode()).decode()
    return f"hemra harness exec 'mkdir -p \"$(dirname {path})\" && echo {data} | base64 -d > {path} && chmod {mode} {path}'\n"


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_module_left_in_the_workspace_is_not_imported_by_the_tests(hemra_env, tmp_path, sandbox, isolation):
    dataset = make_task(tmp_path, test_sh=IMPORTING_TEST)
    script = "hemra harness exec 'echo 41 > /app/answer.txt'\n" + plant("/app/json.py", PASSING_MODULE)
    attempt = attack(hemra_env, tmp_path, script, sandbox, isolation, task_root=dataset)
    failed_with(attempt)


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_user_site_left_in_a_home_workspace_is_not_read_by_the_tests(hemra_env, tmp_path, sandbox, isolation):
    # The task's workspace is the home: what the agent leaves there is carried to the verifier.
    dataset = make_task(tmp_path, test_sh=IMPORTING_TEST.replace("/app/answer.txt", "/root/answer.txt"))
    (dataset / "answer" / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /root\n")
    site = "/root/.local/lib/python3.11/site-packages"
    script = "hemra harness exec 'echo 41 > /root/answer.txt'\n" + plant(f"{site}/usercustomize.py", PASSING_MODULE)
    attempt = attack(hemra_env, tmp_path, script, sandbox, isolation, task_root=dataset)
    failed_with(attempt)


#: The tests run the agent's program and check what it prints.
RUNNING_TEST = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(timeout 60 bash /app/answer.sh)" = 42 ]; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; fi
"""


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_a_reward_json_written_by_the_program_under_test_is_a_conflict_not_a_pass(
    hemra_env, tmp_path, sandbox, isolation
):
    dataset = make_task(tmp_path, test_sh=RUNNING_TEST)
    program = "echo '{\"reward\": 1}' > /logs/verifier/reward.json\necho 41\n"
    script = plant("/app/answer.sh", program)
    attempt = attack(hemra_env, tmp_path, script, sandbox, isolation, task_root=dataset)
    failed_with(attempt, "reward_conflict")
    assert "both reward.json and reward.txt" in attempt["score"]["error"]


def test_a_program_that_hangs_the_tests_is_the_agents_failure(hemra_env, tmp_path, sandbox):
    test_sh = RUNNING_TEST.replace("timeout 60 ", "")
    dataset = make_task(tmp_path, test_sh=test_sh) / "answer"
    toml = (dataset / "task.toml").read_text()
    (dataset / "task.toml").write_text(toml.replace("timeout_sec = 30.0", "timeout_sec = 3.0"))
    script = plant("/app/answer.sh", "sleep 1000\n")
    attempt = attack(hemra_env, tmp_path, script, sandbox, task_root=dataset.parent)
    failed_with(attempt, "verifier_timed_out")
    assert attempt["score"]["error"] == "the verifier timed out after 3 s"
    [row] = show(hemra_env, "attack")["report"]["datasets"][0]["rows"]
    assert row["verifier_faults"] == 1 and row["binary_graded"] == 1 and row.get("scorer_failed", 0) == 0


def test_a_program_that_kills_the_tests_is_the_agents_failure(hemra_env, tmp_path, sandbox):
    dataset = make_task(tmp_path, test_sh=RUNNING_TEST)
    script = plant("/app/answer.sh", "kill -KILL -1\n")
    attempt = attack(hemra_env, tmp_path, script, sandbox, task_root=dataset)
    failed_with(attempt, "verifier_crashed")


@pytest.mark.usefixtures("docker_engine")
@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("swap", ["link", "file"])
def test_a_docker_workspace_swapped_for_a_link_or_a_file_is_scored(hemra_env, tmp_path, isolation, swap):
    # On the host sandbox the workspace is a mount point the agent cannot replace; in a
    # container it can: the verifier gets an empty workspace (fresh) or the swapped one (shared).
    script = {
        "link": "hemra harness exec 'cd / && rm -rf /app && ln -s /etc /app'",
        "file": "hemra harness exec 'cd / && rm -rf /app && echo 42 > /app'",
    }[swap]
    attempt = attack(hemra_env, tmp_path, script, "docker", isolation)
    # A container whose workdir is a file cannot start again for a verifier in it: that is the
    # agent's doing, and its failure.
    failed_with(attempt, "verifier_crashed" if (swap, isolation) == ("file", "shared") else "")
    events = show(hemra_env, attempt["id"], "--events")["events"]
    carried = [e for e in events if e["name"] == "workspace_not_carried"]
    assert [e["payload"]["paths"] for e in carried] == ([["/app"]] if isolation == "fresh" else []), carried
