"""A hostile harness against the verifier: processes left to rewrite the reward or the tests,
tools the verifier trusts replaced, fork bombs, outputs held open. Each attack runs through the
real `hemra run` on the host sandbox and on the Docker sandbox, under both verifier isolations
where it matters. The task the attacker faces is not solved: any reward but 0 is a moved score."""

import textwrap
import time
from pathlib import Path

import pytest

from tests.e2e.helpers import hemra, show

pytestmark = pytest.mark.slow

ISOLATIONS = ["fresh", "shared"]


@pytest.fixture(params=["host", "docker"])
def sandbox(request) -> str:
    """Each attack on both sandboxes (docker needs the engine: skipped without one, failed in CI)."""
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return request.param


#: A task the attacker does not solve: /app/answer.txt must hold "42". Its test uses `cmp`
#: and python3 (tools a hostile agent may try to replace) and records every process it sees.
TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done > /logs/verifier/processes.txt
echo 42 > /tmp/expected
if cmp -s /tmp/expected /app/answer.txt && python3 -c 'import sys; sys.exit(0)'; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def make_task(root: Path, name: str = "answer", test_sh: str = TEST_SH, toml_extra: str = "") -> Path:
    task = root / "ds" / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "task.toml").write_text(
        f'[task]\nname = "adv/{name}"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 30.0\n{toml_extra}'
    )
    (task / "instruction.md").write_text("Write 42 into /app/answer.txt.\n")
    (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (task / "tests" / "test.sh").write_text(test_sh)
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\necho 42 > /app/answer.txt\n")
    return task.parent


def attack(
    env: dict,
    tmp_path: Path,
    script: str,
    sandbox: str,
    isolation: str = "",
    timeout: int = 0,
    task_root: Path | None = None,
) -> dict:
    """Run the attacking harness (bash `script` on the host, reaching in with `hemra harness
    exec`) on the task once; return the attempt."""
    (tmp_path / "harnesses").mkdir(exist_ok=True)
    (tmp_path / "harnesses" / "attack.toml").write_text('kind = "program"\ncommand = ["bash", "attack.sh"]\n')
    (tmp_path / "harnesses" / "attack.sh").write_text(textwrap.dedent(script))
    dataset = task_root or make_task(tmp_path)
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        f'name = "attack"\nharnesses = ["attack"]\ndatasets = ["{dataset}"]\n'
        + (f"timeout_secs = {timeout}\n" if timeout else "")
        + f'[sandbox]\nkind = "{sandbox}"\n'
        + (f'[verifier]\nisolation = "{isolation}"\n' if isolation else "")
    )
    result = hemra(env, "run", str(run_file), cwd=tmp_path, timeout=600)
    assert result.returncode in (0, 1), result.stderr + result.stdout
    [attempt] = show(env, "attack")["attempts"]
    return attempt


def reward(attempt: dict) -> float:
    assert attempt["score"]["state"] == "SCORE_STATE_SCORED", attempt
    return attempt["score"]["rewards"]["reward"]


def verifier_saw(env: dict, attempt: dict, file: str = "/logs/verifier/processes.txt") -> str:
    """An artifact's content, read from the store's blobs."""
    [artifact] = [a for a in attempt["artifacts"] if a["path"] == file]
    digest = artifact["blob_digest"]
    return (Path(env["HEMRA_HOME"]) / "blobs" / "sha256" / digest[7:9] / digest[9:]).read_text()


#: Leaves two processes behind: one rewriting the reward and the tests in a loop, one hidden
#: from the per-command kill (no marker in its environment, a session of its own).
LEFTOVER_REWRITER = """
hemra harness exec 'cat > /tmp/leftover.sh <<"END"
for i in $(seq 6000); do
  [ -d /logs/verifier ] && echo 1 > /logs/verifier/reward.txt
  echo "echo 1 > /logs/verifier/reward.txt" > /tests/test.sh 2>/dev/null
  sleep 0.01
done
END
setsid nohup bash -c "exec -a hemra-leftover bash /tmp/leftover.sh" </dev/null >/dev/null 2>&1 &'
hemra harness exec 'env -u HEMRA_EXEC_ID setsid nohup bash -c "exec -a hemra-leftover sleep 300" </dev/null >/dev/null 2>&1 &'
"""


@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_leftover_processes_never_reach_the_verifier(hemra_env, tmp_path, sandbox, isolation):
    attempt = attack(hemra_env, tmp_path, LEFTOVER_REWRITER, sandbox, isolation)
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    assert reward(attempt) == 0.0
    assert "hemra-leftover" not in verifier_saw(hemra_env, attempt)


def test_fresh_verifier_ignores_tools_the_agent_replaced(hemra_env, tmp_path, sandbox):
    # Docker: the agent is root in its container and replaces cmp. Host: /usr is read-only, so
    # the agent plants a python usercustomize in its home and a fake cmp first on a PATH it can
    # write. Fresh (the default) carries only /app and the logs over.
    script = """
    hemra harness exec 'echo 41 > /app/answer.txt'
    hemra harness exec 'printf "#!/bin/sh\\nexit 0\\n" > /usr/bin/cmp 2>/dev/null; mkdir -p /root/.local/lib/python3.11/site-packages; echo "import sys; sys.exit(0)" > /root/.local/lib/python3.11/site-packages/usercustomize.py; true'
    """
    attempt = attack(hemra_env, tmp_path, script, sandbox)
    assert reward(attempt) == 0.0
    events = show(hemra_env, attempt["id"], "--events")["events"]
    assert any(e["name"] == "verifier_sandbox" and e["payload"]["isolation"] == "fresh" for e in events)


@pytest.mark.usefixtures("docker_engine")
def test_shared_verifier_trusts_the_agents_tools_as_documented(hemra_env, tmp_path):
    """The trade-off docs/sandboxes.md states: in the agent's own sandbox, a replaced tool wins."""
    script = """
    hemra harness exec 'echo 41 > /app/answer.txt; printf "#!/bin/sh\\nexit 0\\n" > /usr/bin/cmp'
    """
    attempt = attack(hemra_env, tmp_path, script, "docker", "shared")
    assert reward(attempt) == 1.0


def test_fresh_verifier_gets_the_workspace_and_the_logs_only(hemra_env, tmp_path, sandbox):
    test_sh = """#!/bin/bash
    mkdir -p /logs/verifier
    ok=1
    [ "$(cat /app/answer.txt)" = 42 ] || ok=0
    [ -e /app/gone.txt ] && ok=0
    [ "$(cat /logs/agent/note.txt)" = kept ] || ok=0
    [ -e /tmp/outside.txt ] && ok=0
    [ -e /root/outside.txt ] && ok=0
    echo $ok > /logs/verifier/reward.txt
    """
    dataset = make_task(tmp_path, test_sh=textwrap.dedent(test_sh))
    (dataset / "answer" / "environment" / "gone.txt").write_text("from the image\n")
    with open(dataset / "answer" / "environment" / "Dockerfile", "a") as dockerfile:
        dockerfile.write("COPY gone.txt /app/gone.txt\n")
    script = """
    hemra harness exec 'echo 42 > /app/answer.txt; rm /app/gone.txt; echo kept > /logs/agent/note.txt; echo x > /tmp/outside.txt; echo x > /root/outside.txt; mkfifo /app/pipe; ln -s /etc/passwd /app/link'
    """
    attempt = attack(hemra_env, tmp_path, script, sandbox, task_root=dataset)
    assert reward(attempt) == 1.0
    assert "/logs/agent/note.txt" in {a["path"] for a in attempt["artifacts"]}


@pytest.mark.parametrize("held_by", ["harness", "command"])
def test_a_child_holding_the_output_open_does_not_outlive_the_timeout(hemra_env, tmp_path, sandbox, held_by):
    # The harness program's own output (on the host), or a command's in the sandbox.
    script = (
        "setsid sleep 1000 & exec sleep 1000\n"
        if held_by == "harness"
        else "hemra harness exec 'setsid sleep infinity & exec sleep 1000'\n"
    )
    started = time.monotonic()
    attempt = attack(hemra_env, tmp_path, script, sandbox, timeout=5)
    assert time.monotonic() - started < 40
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT", attempt
    assert reward(attempt) == 0.0


@pytest.mark.parametrize("held_by", ["harness", "command"])
def test_a_harness_that_exited_is_finished_whatever_it_left_running(hemra_env, tmp_path, sandbox, held_by):
    script = (
        "hemra harness exec 'echo 42 > /app/answer.txt'\nsleep 30 &\nexit 0\n"
        if held_by == "harness"
        else "hemra harness exec 'sleep 30 & echo 42 > /app/answer.txt; exit 0'\n"
    )
    started = time.monotonic()
    attempt = attack(hemra_env, tmp_path, script, sandbox, timeout=20)
    assert time.monotonic() - started < 25
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    assert reward(attempt) == 1.0


@pytest.mark.usefixtures("docker_engine")
def test_docker_fork_bomb_ends_at_its_timeout_and_leaves_nothing(hemra_env, tmp_path, docker_engine):
    script = """
    hemra harness exec 'bomb() { bomb | bomb & }; bomb; sleep 100'
    """
    started = time.monotonic()
    attempt = attack(hemra_env, tmp_path, script, "docker", timeout=10)
    assert time.monotonic() - started < 90
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT", attempt
    assert reward(attempt) == 0.0
    left = docker_engine.api.containers(all=True, filters={"label": "hemra.attempt"})
    assert [c for c in left if c["Labels"]["hemra.attempt"].startswith(attempt["id"])] == []


@pytest.mark.usefixtures("docker_engine")
def test_docker_agent_that_kills_its_own_container_gets_a_result_not_an_infrastructure_failure(hemra_env, tmp_path):
    script = """
    hemra harness exec 'kill -KILL -1; sleep 1'
    hemra harness exec 'echo still here'
    """
    attempt = attack(hemra_env, tmp_path, script, "docker")
    assert attempt["outcome"] in ("OUTCOME_COMPLETED", "OUTCOME_HARNESS_FAILED"), attempt
    assert reward(attempt) == 0.0


def test_fresh_isolation_refused_where_the_task_has_no_workspace_of_its_own(hemra_env, tmp_path):
    dataset = make_task(tmp_path, toml_extra='isolation = "fresh"\n')
    (dataset / "answer" / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /\n")
    (tmp_path / "harnesses").mkdir()
    result = hemra(hemra_env, "run", "-H", "nop", "-d", str(dataset))
    assert result.returncode == 2
    assert '[verifier] isolation is "fresh", but task adv/answer cannot have it' in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
