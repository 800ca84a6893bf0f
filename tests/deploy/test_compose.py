"""The compose stack for real: the project's own image built here, deploy/compose.yaml started by
testcontainers on this machine's Docker engine (PostgreSQL in a container made from Debian's
packages), the `hemra` CLI on the host reaching it only through the gateway (HEMRA_SERVER).
Trials run in Docker sandboxes the executors start through the engine's socket."""

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import REPO, clean_env
from tests.deploy import test_helm
from tests.e2e.helpers import hemra
from tests.importer.test_imports import unpack

pytestmark = pytest.mark.slow
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
    work: Path  # the executors' work folder (owned by uid 10001)
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
    work = root / "work"
    work.mkdir()
    os.chown(work, 10001, 10001)
    project = f"hemra-test-{os.getpid()}"
    front, http = free_port(), free_port()
    env = {
        "HEMRA_PROJECT": project,
        "HEMRA_IMAGE": image,
        "HEMRA_POSTGRES_IMAGE": os.environ.get("HEMRA_POSTGRES_IMAGE", "hemra-postgres:bookworm"),
        "HEMRA_SECRETS_DIR": str(secrets),
        "HEMRA_WORK_DIR": str(work),
        "HEMRA_DOCKER_GID": str(os.stat("/var/run/docker.sock").st_gid),
        "HEMRA_FRONT_DOOR_PORT": str(front),
        "HEMRA_HTTP_PORT": str(http),
        "HEMRA_EXECUTORS": "2",
        # Short enough that a killed executor's attempts come back soon, long enough that
        # executors ride out a store or database restart within their leases.
        "HEMRA_LEASE_SECS": "15",
    }
    env_file = root / "stack.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    compose = DockerCompose(DEPLOY, compose_file_name="compose.yaml", env_file=str(env_file), wait=True)
    compose.start()
    executors = {c.ID[:12] for c in compose.get_containers() if c.Service == "executor"}
    try:
        yield Stack(compose, f"http://127.0.0.1:{front}", f"http://127.0.0.1:{http}", project, secrets, work, image)
    finally:
        compose.stop(down=True)
        # Task containers are the executors' (not the project's): a killed executor leaves its own.
        for line in _docker_ps("label=hemra.host", '{{.ID}} {{.Label "hemra.host"}}'):
            container, host = line.split()
            if any(host.startswith(executor) for executor in executors):
                subprocess.run(["docker", "rm", "-f", container], capture_output=True)


def _build_image() -> str:
    env = dict(os.environ, HEMRA_IMAGE_BASE=os.environ.get("HEMRA_IMAGE_BASE", "hemra-base:bookworm"))
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
    # start); started again, it removes the task containers its killed self left.
    subprocess.run(["docker", "start", victim], check=True, capture_output=True)
    _healthy_again(compose, "executor", count=2)


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
    leftovers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=hemra.host={_container_id(victim)}"],
        capture_output=True,
        text=True,
        check=True,
    )
    # It removed its task containers on the way out (its log says why not, when it did not).
    assert leftovers.stdout.strip() == "", _described(leftovers.stdout.split()) + _log_tail(victim)
    run = wait_done(cli, run_id, timeout=240)
    assert run["progress"]["done"] == run["progress"]["trials"] == 4
    attempts = finished_once(cli, run_id)
    released = [a for a in attempts if a.get("error") == "released: worker stopped"]
    assert released and all("worker lost" not in a.get("error", "") for a in attempts)
    subprocess.run(["docker", "start", victim], check=True, capture_output=True)
    _healthy_again(compose, "executor", count=2)


def _described(containers: list[str]) -> str:
    """Each container's name, state, creation and executor labels, a line each."""
    form = '{{.Name}} {{.State.Status}} {{.Created}} {{index .Config.Labels "hemra.executor"}} {{index .Config.Labels "hemra.instance"}}'
    found = subprocess.run(["docker", "inspect", "-f", form, *containers], capture_output=True, text=True)
    return found.stdout + found.stderr


def _log_tail(container: str, lines: int = 60) -> str:
    found = subprocess.run(["docker", "logs", "--tail", str(lines), container], capture_output=True, text=True)
    return found.stdout + found.stderr


def _container_id(name: str) -> str:
    return subprocess.run(
        ["docker", "inspect", "-f", "{{.Config.Hostname}}", name], capture_output=True, text=True, check=True
    ).stdout.strip()


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
    executor whose hostname labels a task container of the run's attempts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        attempts = {a["id"] for a in json.loads(ok(hemra(env, "show", run_id)))["attempts"]}
        hosts = _docker_ps("label=hemra.attempt", '{{.Label "hemra.attempt"}} {{.Label "hemra.host"}}')
        executors = _docker_ps(f"label=com.docker.compose.project={project}", "{{.ID}} {{.Names}}")
        for attempt, host in (line.split() for line in hosts if len(line.split()) == 2):
            if attempt.removesuffix("-verifier") in attempts:
                name = next((n for cid, n in (e.split() for e in executors) if host.startswith(cid[:12])), "")
                if "-executor-" in name:
                    return name
        time.sleep(0.3)
    pytest.fail(f"no executor took an attempt of {run_id} within {timeout:g} s")


def _docker_ps(label_filter: str, template: str) -> list[str]:
    result = subprocess.run(
        ["docker", "ps", "--filter", label_filter, "--format", template], capture_output=True, text=True, check=True
    )
    return [line for line in result.stdout.splitlines() if line.strip()]


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


def test_helm_chart_commands__each_starts_the_service_it_names(stack):
    """Every container the chart renders (migrations, init containers, services, an executor),
    run as rendered from the image in the stack: its args, its environment and settings, its
    secret files where the chart mounts them, its uid, a read-only root with the chart's
    writable folders, and the chart's service names resolving to the stack's containers."""
    objects = test_helm.render(
        "default",
        "database.host=postgres",
        "database.sslmode=disable",
        f"image.tag={stack.image.partition(':')[2]}",
        "executorPools.default.docker.mode=node",
        f"executorPools.default.docker.workDir={stack.work}",
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
            ["docker", "exec", name, "python3", "-m", "services.common.health", f"127.0.0.1:{check[0]}", check[1]],
            capture_output=True,
            text=True,
        )
        if result.returncode == 0:
            return
        if time.monotonic() > deadline:
            logs = subprocess.run(["docker", "logs", "--tail", "20", name], capture_output=True, text=True)
            pytest.fail(f"{name} is not serving after {timeout:g} s: {result.stderr} {logs.stderr[-2000:]}")
        time.sleep(0.5)
