"""A hostile agent forging HEMRA's own signals on the host sandbox: a command that prints what
bubblewrap prints when it fails, and exits 1, wants its failure taken for the sandbox's (an
infrastructure failure: out of the denominator, and retried). It is a result like any other:
the command's exit code reaches the harness, the verifier's scores 0, one attempt, no retry."""

import textwrap
from pathlib import Path

import pytest

from tests.adversarial.test_scoring_integrity import make_task, reward, verifier_saw
from tests.e2e.helpers import hemra, show

pytestmark = pytest.mark.slow

BWRAP_SAYS = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"

#: The task's test exits with its check's status, as pytest-run tests do.
TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -c 'import sys; sys.exit(open("/app/answer.txt").read().strip() != "42")' || exit 1
echo 1 > /logs/verifier/reward.txt
"""


def run_attack(env: dict, tmp_path: Path, script: str, isolation: str = "", harness: str = "") -> list[dict]:
    """The attacking harness (by default a program running bash `script` on the host, reaching
    in with `hemra harness exec`) on the unsolved task, with one infrastructure retry allowed:
    every attempt of the run."""
    (tmp_path / "harnesses").mkdir()
    program = 'kind = "program"\ncommand = ["bash", "attack.sh"]\n'
    (tmp_path / "harnesses" / "attack.toml").write_text(harness or program)
    (tmp_path / "harnesses" / "attack.sh").write_text(textwrap.dedent(script))
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        f'name = "attack"\nharnesses = ["attack"]\ndatasets = ["{make_task(tmp_path, test_sh=TEST_SH)}"]\n'
        'max_infra_retries = 1\n[sandbox]\nkind = "host"\n'
        + (f'[verifier]\nisolation = "{isolation}"\n' if isolation else "")
    )
    result = hemra(env, "run", str(run_file), cwd=tmp_path, timeout=600)
    assert result.returncode in (0, 1), result.stderr + result.stdout
    return show(env, "attack")["attempts"]


def test_a_forged_bubblewrap_error_is_the_commands_result(hemra_env, tmp_path):
    script = f"""
    hemra harness exec 'echo 41 > /app/answer.txt'
    hemra harness exec "echo \\"{BWRAP_SAYS}\\" >&2; exit 3"
    echo "exec exited $?"
    exit 1
    """
    [attempt] = run_attack(hemra_env, tmp_path, script)
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED", attempt
    assert reward(attempt) == 0.0
    assert "exec exited 3\n" in verifier_saw(hemra_env, attempt, "/logs/agent/harness-stdout.txt")


def test_an_acp_agent_that_forges_a_bubblewrap_error_and_dies_is_a_harness_failure(hemra_env, tmp_path):
    """An ACP agent is itself a command of the sandbox: its forged error is its own failure."""
    harness = f'kind = "acp"\ncommand = ["bash", "-c", "echo \\"{BWRAP_SAYS}\\" >&2; exit 1"]\n'
    [attempt] = run_attack(hemra_env, tmp_path, "", harness=harness)
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED", attempt
    assert attempt["error"] == f"the agent exited 1 before answering initialize: {BWRAP_SAYS}"
    assert reward(attempt) == 0.0


def test_a_forged_bubblewrap_error_in_the_verifiers_command_is_its_result(hemra_env, tmp_path):
    """Shared isolation: the verifier's python3 loads the usercustomize the agent left in its
    home, which prints bubblewrap's error and exits 1 before the check runs."""
    script = f"""
    plant=$(base64 -w0 <<"END"
    import os, sys
    sys.stderr.write("{BWRAP_SAYS}\\n")
    sys.stderr.flush()
    os._exit(1)
    END
    )
    hemra harness exec "echo 41 > /app/answer.txt; d=\\$(python3 -m site --user-site); mkdir -p \\$d; echo $plant | base64 -d > \\$d/usercustomize.py"
    """
    [attempt] = run_attack(hemra_env, tmp_path, script, isolation="shared")
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    assert reward(attempt) == 0.0
