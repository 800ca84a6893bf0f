"""`hemra run --sandbox docker` end to end: the real CLI, the real engine, task images
built from the bundled Dockerfiles, and nothing of ours left behind, even after kill -9."""

import json
import signal
import socket
from pathlib import Path

import docker
import pytest

from tests.e2e import test_cli_agents as cli
from tests.e2e.helpers import BUNDLED, copy_task, hemra, runs, show
from tests.e2e.queue_helpers import finished, start, stop, wait_for
from tests.e2e.test_cli_agents import agent_clis  # noqa: F401  (a fixture)
from tests.modelserver import ModelServer, parse

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]
TASKS = sorted(p.name for p in BUNDLED.iterdir() if (p / "task.toml").exists())


def ours(engine, attempt_ids) -> list[dict]:
    """Containers of the engine labelled with one of these attempts."""
    return [
        c
        for c in engine.api.containers(all=True, filters={"label": "hemra.attempt"})
        if c["Labels"]["hemra.attempt"] in set(attempt_ids)
    ]


def events_of(env, attempt_id) -> list[dict]:
    return show(env, attempt_id, "--events")["events"]


def test_run__oracle_scores_1_and_nop_0_on_every_task_and_no_container_is_left(hemra_env, docker_engine):
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "oracle",
        "-H",
        "nop",
        "-d",
        "hemra-offline",
        "--sandbox",
        "docker",
        "--require",
        "network_block",
        "--concurrency",
        "2",
        timeout=600,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    data = show(hemra_env, runs(hemra_env)[0]["id"])
    assert len(data["attempts"]) == 2 * len(TASKS)
    for attempt in data["attempts"]:
        expected = 1.0 if attempt["harness_name"] == "oracle" else 0.0
        assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
        assert attempt["score"]["rewards"] and set(attempt["score"]["rewards"].values()) == {expected}, attempt
        assert "/logs/verifier/test-stdout.txt" in {a["path"] for a in attempt["artifacts"]}
    oracle = next(a for a in data["attempts"] if a["harness_name"] == "oracle")
    assert "/logs/agent/oracle.txt" in {a["path"] for a in oracle["artifacts"]}
    assert events_of(hemra_env, oracle["id"])[0]["payload"]["sandbox"] == "docker"
    assert ours(docker_engine, [a["id"] for a in data["attempts"]]) == []


def test_require__refused_before_anything_is_recorded_where_the_sandbox_cannot_enforce_it(hemra_env, tmp_path):
    refused = hemra(hemra_env, "run", "-H", "nop", "-d", "hemra-offline", "--require", "gpu")
    assert refused.returncode == 2
    assert "sandbox host cannot enforce gpu" in refused.stderr
    (tmp_path / "run.toml").write_text(
        'datasets = ["hemra-offline"]\nharnesses = ["nop"]\n'
        'tasks = ["hemra/reverse-lines"]\nrequire = ["gpu"]\n'
        '[sandbox]\nkind = "docker"\n'
    )
    refused = hemra(hemra_env, "run", str(tmp_path / "run.toml"))
    assert refused.returncode == 2 and "sandbox docker cannot enforce gpu" in refused.stderr
    (tmp_path / "run.toml").write_text(
        'datasets = ["hemra-offline"]\nharnesses = ["nop"]\n'
        'require = ["network_block"]\n[sandbox]\nkind = "docker"\nnetwork = "host"\n'
    )
    refused = hemra(hemra_env, "run", str(tmp_path / "run.toml"))
    assert refused.returncode == 2
    assert "sandbox.network = 'host' opens the network, but the run requires network_block" in refused.stderr
    assert runs(hemra_env) == []
    (tmp_path / "run.toml").write_text(
        'datasets = ["hemra-offline"]\nharnesses = ["oracle"]\nname = "filed"\n'
        'tasks = ["hemra/reverse-lines"]\nrequire = ["network_block"]\n'
        '[sandbox]\nkind = "docker"\n'
    )
    accepted = hemra(hemra_env, "run", str(tmp_path / "run.toml"))
    assert accepted.returncode == 0, accepted.stderr
    [attempt] = show(hemra_env, "filed")["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 1.0}


def test_build_failure__stops_the_run_at_resolve_naming_the_task_and_keeping_the_log(hemra_env, tmp_path):
    task = copy_task("reverse-lines", tmp_path / "broken", "broken-build")
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo cannot-build-this && exit 3\n")
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "oracle",
        "-H",
        "nop",
        "-d",
        str(tmp_path / "broken"),
        "--sandbox",
        "docker",
        "--label",
        "broken",
    )
    assert result.returncode == 2, result.stderr + result.stdout
    [line] = result.stderr.strip().splitlines()
    assert "docker build of task hemra/broken-build failed" in line
    log = Path(line.rpartition("(build log: ")[2].removesuffix(")"))
    assert "cannot-build-this" in log.read_text()
    assert runs(hemra_env) == []  # nothing recorded


def test_no_engine__stops_the_run_at_resolve(hemra_env, tmp_path):
    gone = dict(hemra_env, DOCKER_HOST=f"unix://{tmp_path / 'no-engine.sock'}")
    result = hemra(gone, "run", "-H", "nop", "-d", "hemra-offline", "-t", "hemra/reverse-lines", "--sandbox", "docker")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "sandbox docker: no Docker engine answers" in line
    assert runs(hemra_env) == []


def test_build_failure_on_a_worker__infrastructure_failure_with_the_build_log_kept(hemra_env, tmp_path, docker_engine):
    # The run is planned (its image built) while the base image exists; then the engine loses
    # both, so the executor's own build fails: an infrastructure failure, never a failed task.
    queue_env = dict(hemra_env, HEMRA_TOKEN="docker-test-token")
    docker_engine.api.tag("hemra-base:bookworm", "hemra-test-vanishing", "1")
    task = copy_task("reverse-lines", tmp_path / "vanishing", "vanishing-base")
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("FROM debian:bookworm-slim", "FROM hemra-test-vanishing:1"))
    planned = hemra(
        queue_env,
        "run",
        "-H",
        "oracle",
        "-H",
        "nop",
        "-d",
        str(tmp_path / "vanishing"),
        "--sandbox",
        "docker",
        "--label",
        "vanishing",
        "--detach",
        "--max-infra-retries",
        "0",
    )
    assert planned.returncode == 0, planned.stderr
    [attempt] = show(queue_env, "vanishing")["attempts"][:1]
    # The history layer's image first: it is a child of the environment's.
    images = docker_engine.api.images(filters={"label": "hemra.task"})
    for image in sorted(images, key=lambda i: "hemra.history" not in i["Labels"]):
        if image["Labels"].get("hemra.task") == attempt["task_digest"]:
            docker_engine.api.remove_image(image["Id"], force=True)
    docker_engine.api.remove_image("hemra-test-vanishing:1")
    serve = start(queue_env, "serve", "--concurrency", "2", "--store-listen", "127.0.0.1:0", log=tmp_path / "serve.log")
    try:
        wait_for(lambda: finished(queue_env, "vanishing"), 300)
    finally:
        stop(serve)
    attempts = show(queue_env, "vanishing")["attempts"]
    assert len(attempts) == 2
    for attempt in attempts:
        assert attempt["outcome"] == "OUTCOME_INFRA_FAILED", attempt
        assert "docker build of task hemra/vanishing-base failed" in attempt["error"]
        assert [a["path"] for a in attempt["artifacts"]] == ["/logs/build/build.log"]
        logged = [e for e in events_of(queue_env, attempt["id"]) if e["name"] == "build.log"]
        assert "hemra-test-vanishing" in logged[0]["payload"]["text"]


def test_sandbox_image__every_task_is_built_on_the_runs_base_image(hemra_env, tmp_path, docker_engine):
    task = copy_task("reverse-lines", tmp_path / "elsewhere", "rebased")
    dockerfile = task / "environment" / "Dockerfile"
    # An image this engine has never seen: only the run's base image makes the task buildable.
    dockerfile.write_text(dockerfile.read_text().replace("FROM debian:bookworm-slim", "FROM example.invalid/os:1"))
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        f'datasets = ["{tmp_path / "elsewhere"}"]\nharnesses = ["oracle", "nop"]\n'
        'name = "rebased"\n[sandbox]\nkind = "docker"\nimage = "hemra-base:bookworm"\n'
    )
    result = hemra(hemra_env, "run", str(run_file), timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    data = show(hemra_env, "rebased")
    assert data["run"]["spec"]["sandbox_image"] == "hemra-base:bookworm"
    rewards = {a["harness_name"]: a["score"]["rewards"]["reward"] for a in data["attempts"]}
    assert rewards == {"oracle": 1.0, "nop": 0.0}
    built = docker_engine.api.images(filters={"label": "hemra.task"})
    assert any(tag.startswith("hemra-task:") and "-on-" in tag for image in built for tag in image["RepoTags"] or [])
    on_host = hemra(hemra_env, "run", "-H", "nop", "-d", str(tmp_path / "elsewhere"), "--label", "host-image")
    assert on_host.returncode == 0  # without [sandbox] image the host sandbox never builds images
    run_file.write_text(run_file.read_text().replace('kind = "docker"', 'kind = "host"'))
    refused = hemra(hemra_env, "run", str(run_file))
    assert refused.returncode == 2
    assert "sandbox.image = 'hemra-base:bookworm': only the docker sandbox builds task images" in refused.stderr


def test_oom__the_tasks_own_memory_limit_killing_the_solution_is_a_result(hemra_env, tmp_path):
    task = copy_task("reverse-lines", tmp_path / "hungry", "hungry")
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("memory_mb = 512", "memory_mb = 64"))
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + "python3 -c 'x = bytearray(400 * 1024 * 1024)'\n")
    result = hemra(
        hemra_env, "run", "-H", "oracle", "-d", str(tmp_path / "hungry"), "--sandbox", "docker", "--label", "hungry"
    )
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "hungry")["attempts"]
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED" and "137" in attempt["error"], attempt
    assert attempt["score"]["rewards"] == {"reward": 1.0}  # scored like any result: the file was written first
    oom = [e for e in events_of(hemra_env, attempt["id"]) if e["name"] == "oom"]
    assert oom and oom[0]["payload"]["memory_mb"] == 64 and oom[0]["payload"]["kills"] >= 1


def _attempt_containers(docker_engine, pid: int) -> list[str]:
    """The containers of the attempt that `pid`'s executor runs: the harness's and the spare the
    verifier will get, once the harness's `sleep 300` runs. PIDs repeat across test runs, so a
    leftover of another run is told apart by its attempt label."""
    labelled = {"label": [f"hemra.pid={pid}", f"hemra.host={socket.gethostname()}"]}
    for container in docker_engine.api.containers(filters=labelled):
        try:
            if b"sleep 300" in json.dumps(docker_engine.api.top(container["Id"])).encode():
                attempt = container["Labels"]["hemra.attempt"]
                family = {"label": [f"hemra.attempt={attempt}", f"hemra.attempt={attempt}-verifier"]}
                return [c["Id"] for c in _any_label(docker_engine, family["label"])]
        except docker.errors.APIError:  # gone or not running
            continue
    return []


def _any_label(docker_engine, labels: list[str]) -> list[dict]:
    return [c for label in labels for c in docker_engine.api.containers(all=True, filters={"label": label})]


def _exists(docker_engine, container: str) -> bool:
    return docker_engine.api.containers(all=True, filters={"id": container}) != []


def test_kill_9__the_next_executor_removes_the_orphaned_container(hemra_env, tmp_path, docker_engine):
    task = copy_task("reverse-lines", tmp_path / "slow", "slow")
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text().replace("set -euo pipefail\n", "set -euo pipefail\nsleep 300\n"))
    log = tmp_path / "run.log"
    running = start(
        hemra_env,
        "run",
        "-H",
        "oracle",
        "-d",
        str(tmp_path / "slow"),
        "--sandbox",
        "docker",
        "--label",
        "killed",
        log=log,
    )
    try:
        orphans = wait_for(lambda: len(found := _attempt_containers(docker_engine, running.pid)) == 2 and found, 180)
    finally:
        stop(running, signal.SIGKILL)
    assert all(_exists(docker_engine, c) for c in orphans)  # the harness's and the verifier's spare, left behind
    after = hemra(
        hemra_env,
        "run",
        "-H",
        "nop",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/reverse-lines",
        "--sandbox",
        "docker",
        "--label",
        "next",
    )
    assert after.returncode == 0, after.stderr
    assert [c for c in orphans if _exists(docker_engine, c)] == []


def test_timeout__the_harness_is_killed_and_the_attempt_still_scored(hemra_env, tmp_path, docker_engine):
    task = copy_task("reverse-lines", tmp_path / "slow", "sleepy")
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + "setsid sleep 300 &\nsleep 300\n")
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "oracle",
        "-d",
        str(tmp_path / "slow"),
        "--sandbox",
        "docker",
        "--timeout",
        "3",
        "--label",
        "sleepy",
    )
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "sleepy")["attempts"]
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT", attempt
    assert attempt["score"]["rewards"] == {"reward": 1.0}  # tac ran before the sleep; the verifier still ran
    assert ours(docker_engine, [attempt["id"]]) == []


def test_tests__absent_while_the_harness_runs(hemra_env, tmp_path):
    task = copy_task("reverse-lines", tmp_path / "peek", "peek")
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + 'if [ -n "$(ls -A /tests)" ]; then echo saw-tests; exit 9; fi\n')
    result = hemra(
        hemra_env, "run", "-H", "oracle", "-d", str(tmp_path / "peek"), "--sandbox", "docker", "--label", "peek"
    )
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "peek")["attempts"]
    assert attempt["outcome"] == "OUTCOME_COMPLETED" and attempt["score"]["rewards"] == {"reward": 1.0}, attempt


def test_ctrl_c__cancels_the_attempt_and_removes_its_container(hemra_env, tmp_path, docker_engine):
    task = copy_task("reverse-lines", tmp_path / "slow", "stuck")
    solve = task / "solution" / "solve.sh"
    solve.write_text(solve.read_text().replace("set -euo pipefail\n", "set -euo pipefail\nsleep 300\n"))
    running = start(
        hemra_env,
        "run",
        "-H",
        "oracle",
        "-d",
        str(tmp_path / "slow"),
        "--sandbox",
        "docker",
        "--label",
        "stuck",
        log=tmp_path / "run.log",
    )
    try:
        started = wait_for(lambda: len(found := _attempt_containers(docker_engine, running.pid)) == 2 and found, 180)
    finally:
        code = stop(running, signal.SIGINT)
    assert code == 1
    [attempt] = show(hemra_env, "stuck")["attempts"]
    assert attempt["outcome"] == "OUTCOME_CANCELLED"
    assert [c for c in started if _exists(docker_engine, c)] == []  # the harness's and the verifier's spare


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("network", ["host", "none"])
def test_network__a_real_agent_cli_reaches_its_model_on_the_open_network_or_through_the_relay(
    network, agent_clis, hemra_env, tmp_path
):
    solved = True  # "host": directly; "none": only through the model relay (see test_cli_docker.py)
    agent = "pi"  # brings its own node into the container; the image has none
    workspace = cli._workspace(tmp_path, agent)
    (workspace / "run.toml").write_text(
        f'harnesses = ["{agent}"]\ndatasets = ["hemra-offline"]\nname = "net"\n'
        f'tasks = ["hemra/reverse-lines"]\n[sandbox]\nkind = "docker"\n'
        f'network = "{network}"\n'
    )
    with ModelServer() as server:  # on this machine's loopback
        server.script = parse([{"shell": cli.SOLVE}, {"text": "Reversed."}])
        key, url = cli.ENV[agent]
        env = dict(hemra_env, HEMRA_TOOLS_DIR=str(agent_clis), **{key: cli.KEY, url: server.url + "/v1"})
        result = hemra(env, "run", str(workspace / "run.toml"), cwd=workspace, timeout=900)
        assert result.returncode == 0, result.stderr
        reached = bool(server.model_requests())
    [attempt] = show(env, "net")["attempts"]
    assert reached is solved
    assert attempt["score"]["rewards"] == {"reward": 1.0 if solved else 0.0}, attempt
    assert (attempt["outcome"] == "OUTCOME_COMPLETED") is solved
