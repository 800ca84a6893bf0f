"""Resolve a run spec: datasets to digests and selected tasks, harnesses to digests,
the sandbox against `require` and every task. Pure functions over the file system."""

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services import envtemplate
from hemra.services.common import judges, offline, runspec, tools
from hemra.services.domain import dockerfile
from hemra.services.domain import harnesses as hs
from hemra.services.domain.planerrors import PlanError
from hemra.services.domain.tasks import LoadedTask
from hemra.services.environments import history
from hemra.services.environments.capabilities import (
    BRIDGE_CAPABLE,
    ENFORCES,
    ISOLATIONS,
    VERIFIER_NETWORKS,
    bridge_refusal,
    fresh_refusal,
    verifier_isolation,
)
from hemra.services.planner import datasets as ds
from hemra.v1 import common_pb2 as pb

#: What each sandbox enforces, checked against a run's `require` (the executor's own table).
SANDBOXES = ENFORCES
KNOWN_REQUIREMENTS = {"network_block", "filesystem_isolation", "process_isolation", "gpu"}
#: Trials a run may plan at most (tasks x harnesses x attempts).
MAX_TRIALS = 1_000_000


@dataclass
class Resolved:
    datasets: list[tuple[ds.LoadedDataset, list[LoadedTask]]]
    harnesses: list[hs.LoadedHarness]
    baseline: str
    #: (dataset index, harness index)
    cells: list[tuple[int, int]]
    #: (cell index, task, repetition)
    trials: list[tuple[int, LoadedTask, int]]
    #: One per judge the run names, in its order.
    judges: list[pb.JudgeSpec]
    #: Names of the tasks whose environments keep their repositories' history (allow_history).
    history_kept: list[str] = field(default_factory=list)


def resolve(spec: pb.RunSpec, home: Path, cwd: Path) -> Resolved:
    """Everything the run needs, or PlanError/NotFound naming the problem. Records nothing."""
    _check_numbers(spec)
    base = Path(spec.run_file).parent if spec.run_file else cwd
    judge_specs = _judges(spec, base)
    if not spec.harnesses:
        raise PlanError("a run needs at least one harness (-H or harnesses = [...])")
    if not spec.datasets:
        raise PlanError("a run needs at least one dataset (-d or datasets = [...])")
    harnesses = [hs.resolve(ref, base) for ref in dict.fromkeys(spec.harnesses)]
    _check_names(harnesses)
    baseline = spec.baseline or harnesses[0].harness_name
    if baseline not in {h.harness_name for h in harnesses}:
        raise PlanError(
            f"baseline {baseline!r} is not one of the run's harnesses ({', '.join(h.harness_name for h in harnesses)})"
        )
    _check_models(spec, harnesses)
    _check_sandbox(spec)
    _check_sdk_sandbox(spec, harnesses)
    _check_offline(spec, harnesses)
    _check_harbor_sandbox(spec, harnesses)
    _check_computer_use_sandbox(spec, harnesses)
    _check_verifier_env(spec)
    loaded = []
    for ref in dict.fromkeys(spec.datasets):
        dataset = ds.resolve(ref, home, base if spec.run_file else None)
        selected = ds.select_tasks(dataset.tasks, spec.tasks, spec.exclude)
        if not selected:
            raise PlanError(f"dataset {dataset.name}: no task matches tasks={spec.tasks} exclude={spec.exclude}")
        _check_tasks(spec, selected)
        _check_env_templates(spec, harnesses, selected)
        loaded.append((dataset, selected))
    kept = history_kept(spec, [task for _, selected in loaded for task in selected])
    cells = [(d, h) for d in range(len(loaded)) for h in range(len(harnesses))]
    count = sum(len(selected) for _, selected in loaded) * spec.attempts * len(harnesses)
    if count > MAX_TRIALS:
        raise PlanError(
            f"the run would plan {count:,} trials; a run holds at most {MAX_TRIALS:,} "
            f"(fewer attempts, tasks or harnesses)"
        )
    trials = []
    # Task-major order: every harness makes progress on the same tasks together.
    for d, (_, selected) in enumerate(loaded):
        for task in selected:
            for repetition in range(1, spec.attempts + 1):
                for h in range(len(harnesses)):
                    trials.append((cells.index((d, h)), task, repetition))
    return Resolved(loaded, harnesses, baseline, cells, trials, judge_specs, kept)


def allows_history(task: LoadedTask, patterns) -> bool:
    """Whether an allow_history pattern names the task (its name or folder, as -t matches)."""
    return any(fnmatch.fnmatchcase(n, p) for p in patterns for n in (task.task_name, task.folder.name))


def history_kept(spec: pb.RunSpec, tasks: list[LoadedTask]) -> list[str]:
    """The names of the tasks whose history the run keeps (a name or folder matching an
    allow_history pattern). A task the run does not keep but that needs its history (it says
    so, or the host sandbox would copy a repository of its environment as it is) is refused."""
    kept = set()
    for task in tasks:
        if allows_history(task, spec.allow_history):
            kept.add(task.task_name)
            continue
        why = ""
        if task.environment.keep_history:
            why = f"{task.folder / 'task.toml'}: [environment] keep_history = true"
        elif spec.sandbox == "host":
            found = history.repository_folders(f.path for f in task.files if f.path.startswith("environment/"))
            if found:
                why = f"{task.folder / found[0]}: a git repository, copied as it is by the host sandbox"
        if why:
            raise PlanError(
                f"{why}: task {task.task_name} would keep its repository's history (the agent could read "
                f"its future); run it only with --allow-history {task.task_name!r} (run file: allow_history)"
            )
    return sorted(kept)


def _judges(spec: pb.RunSpec, base: Path) -> list[pb.JudgeSpec]:
    """A spec for each judge the run names: as the client sent it (read from the caller's judge
    file), else read from judges/<name>.toml beside the run file. A spec whose definition does
    not give its fingerprint, or that the run does not name, is refused."""
    sent = {s.name: s for s in spec.judge_specs}
    unnamed = sorted(set(sent) - set(spec.judges))
    if unnamed:
        raise PlanError(f"judge {unnamed[0]!r} is defined but the run does not name it")
    found = []
    for name in dict.fromkeys(spec.judges):
        try:
            if name in sent:  # checked, and made whole again (its fingerprint as its definition gives it)
                found.append(judges.from_spec(sent[name]).spec())
            else:
                found.append(judges.load(judges.find(name, base)).spec())
        except judges.JudgeFileError as exc:
            raise PlanError(str(exc)) from None
    return found


def _check_numbers(spec: pb.RunSpec) -> None:
    for key in runspec.BOUNDS:
        bound = runspec.out_of_bounds(key, getattr(spec, key))
        if bound:
            raise PlanError(f"{key} must be {bound} (got {getattr(spec, key):,})")


def _check_names(harnesses: list[hs.LoadedHarness]) -> None:
    seen = set()
    for harness in harnesses:
        if harness.harness_name in seen:
            raise PlanError(f"two harnesses are named {harness.harness_name!r}")
        seen.add(harness.harness_name)


def _check_models(spec: pb.RunSpec, harnesses: list[hs.LoadedHarness]) -> None:
    if not spec.model:
        return
    for harness in harnesses:
        if harness.model and harness.model != spec.model:
            raise PlanError(
                f"harness {harness.harness_name} uses model {harness.model!r} but the run pins "
                f"{spec.model!r}; every harness must use the run's model"
            )


def _check_sandbox(spec: pb.RunSpec) -> None:
    if spec.sandbox not in SANDBOXES:
        raise PlanError(f"sandbox {spec.sandbox!r} is not available (available: {', '.join(SANDBOXES)})")
    for requirement in spec.require:
        if requirement not in KNOWN_REQUIREMENTS:
            raise PlanError(f"unknown requirement {requirement!r} (known: {', '.join(sorted(KNOWN_REQUIREMENTS))})")
        if requirement not in SANDBOXES[spec.sandbox]:
            raise PlanError(f"sandbox {spec.sandbox} cannot enforce {requirement}; choose a sandbox that does")
    _check_network(spec)
    _check_image(spec)
    _check_verifier_network(spec)
    if spec.verifier_isolation not in ("", *ISOLATIONS):
        raise PlanError(f"verifier.isolation = {spec.verifier_isolation!r}: must be one of {', '.join(ISOLATIONS)}")


def _check_offline(spec: pb.RunSpec, harnesses) -> None:
    """Offline (HEMRA_OFFLINE), a run that would fetch is refused before it is recorded: an agent
    CLI not in the tool cache (npm would install it), or the modal sandbox (Modal builds its
    images from registries). Datasets and Docker images are checked where they are read."""
    if spec.sandbox == "modal" and (why := offline.refused("the modal sandbox's images, built by Modal")):
        raise PlanError(why)
    for harness in harnesses:
        where = f"not in the tool cache {tools.tools_dir()}"
        if harness.kind == "cli" and not tools.installed(harness.agent, harness.agent_version):
            what = f"the {harness.agent} agent CLI {harness.agent_version or '(newest)'} from npm ({where})"
        elif harness.kind == "harbor" and not tools.installed("harbor", harness.agent_version):
            what = f"harbor=={harness.agent_version} from PyPI ({where})"
        else:
            continue
        if why := offline.refused(what):
            raise PlanError(f"harness {harness.harness_name}: {why}")


def _check_sdk_sandbox(spec: pb.RunSpec, harnesses) -> None:
    """An sdk harness's program reaches the harness protocol from inside the sandbox, through
    the model relay: the modal sandbox has none yet."""
    sdk = next((h for h in harnesses if h.kind == "sdk"), None)
    if sdk is not None and spec.sandbox == "modal":
        raise PlanError(
            f"harness {sdk.harness_name}: an sdk harness runs in the host or docker sandbox "
            "(the modal sandbox cannot relay the harness protocol to it yet)"
        )


def _check_harbor_sandbox(spec: pb.RunSpec, harnesses) -> None:
    """A harbor harness runs Harbor's own Docker environment on the executor's engine, offline:
    only a docker run says what it enforces, and no [sandbox] setting of ours reaches it."""
    harbor = next((h for h in harnesses if h.kind == "harbor"), None)
    if harbor is None:
        return
    if spec.sandbox != "docker":
        raise PlanError(
            f"harness {harbor.harness_name}: a harbor harness runs Harbor's docker environment "
            f"(run it with --sandbox docker; this run's sandbox is {spec.sandbox or 'host'})"
        )
    if spec.sandbox_image or spec.sandbox_network not in ("", "none"):
        raise PlanError(
            f"harness {harbor.harness_name}: Harbor builds each task's own environment with no network; "
            "[sandbox] image and network are for HEMRA's own sandboxes"
        )
    # What Harbor does its own way, or not at all: refused by name, never silently dropped.
    unsupported = [
        (spec.timeout_secs, "timeout_secs (--timeout): Harbor keeps each task's own timeouts"),
        (spec.verifier_env, "[verifier] env (--verifier-env): Harbor's verifier is handed no variables by HEMRA"),
        (spec.verifier_network, "[verifier] network: Harbor's verifier runs in the task's own container"),
        (spec.verifier_isolation, "[verifier] isolation: Harbor's verifier runs in the task's own container"),
        (spec.judges, "[[judge]] (--judge): judge the run's attempts afterwards with hemra judge"),
    ]
    for value, why in unsupported:
        if value:
            raise PlanError(f"harness {harbor.harness_name}: a harbor harness cannot take {why}")


def _check_computer_use_sandbox(spec: pb.RunSpec, harnesses) -> None:
    """A computer-use harness works a desktop inside a container (its X server, window manager
    and programs would otherwise run on the executor's own machine)."""
    computer = next((h for h in harnesses if h.kind == "computer-use"), None)
    if computer is not None and spec.sandbox != "docker":
        raise PlanError(
            f"harness {computer.harness_name}: a computer-use harness runs in the docker sandbox "
            f"(this run's is {spec.sandbox}); "
            'a run file\'s [sandbox] kind = "docker", image = "hemra-desktop:bookworm"'
        )


def _check_network(spec: pb.RunSpec) -> None:
    """`[sandbox] network` opens a container sandbox's network; the host's is always open."""
    network = spec.sandbox_network
    if spec.sandbox == "host":
        if network not in ("", "host"):
            raise PlanError(f"sandbox.network = {network!r}: the host sandbox always shares the host's network")
    elif network not in ("", "none") and "network_block" in spec.require:
        raise PlanError(f"sandbox.network = {network!r} opens the network, but the run requires network_block")


def _check_image(spec: pb.RunSpec) -> None:
    """`[sandbox] image` rebases every task's environment; only a container sandbox can."""
    if spec.sandbox_image and spec.sandbox != "docker":
        raise PlanError(
            f"sandbox.image = {spec.sandbox_image!r}: only the docker sandbox builds task images "
            f"on another base (this run's sandbox is {spec.sandbox})"
        )


def _check_verifier_network(spec: pb.RunSpec) -> None:
    """`[verifier] network`: none, or bridge where the sandbox can make a network per attempt
    (each task's isolation is checked with the tasks)."""
    network = spec.verifier_network
    if network not in ("", *VERIFIER_NETWORKS):
        raise PlanError(f"verifier.network = {network!r}: must be one of {', '.join(VERIFIER_NETWORKS)}")
    if network == "bridge" and spec.sandbox not in BRIDGE_CAPABLE:
        raise PlanError(f"verifier.network = 'bridge': {bridge_refusal(spec.sandbox, 'fresh')}")


def _check_verifier_env(spec: pb.RunSpec) -> None:
    own = next((name for name in spec.verifier_env if envtemplate.own(name)), None)
    if own:
        raise PlanError(
            f"verifier env {own} (--verifier-env, run file: [verifier] env): HEMRA's own variables "
            f"({envtemplate.OWN_PREFIX}*) are never passed to a task"
        )


def _check_env_templates(spec: pb.RunSpec, harnesses: list[hs.LoadedHarness], tasks: list[LoadedTask]) -> None:
    """A task's `${VAR}` templates may read only the variables the run names (and never HEMRA's
    own): the values are read where the step runs, from an environment the task is not
    trusted with. Only names are checked here (a remote planner reads no environment)."""
    oracle = any(h.kind == "builtin" and h.harness_name == "oracle" for h in harnesses)
    for task in tasks:
        tables = [("verifier", task.verifier_env)] + ([("solution", task.solution_env)] if oracle else [])
        for table, values in tables:
            for key, name in envtemplate.unnamed(values, spec.verifier_env):
                why = (
                    "one of HEMRA's own variables, which no task may read"
                    if envtemplate.own(name)
                    else f"which the run does not name; pass it with --verifier-env {name} (run file: [verifier] env)"
                )
                raise PlanError(
                    f"{task.folder / 'task.toml'}: [{table}] env {key} reads ${{{name}}}, {why} (task {task.task_name})"
                )


def _check_tasks(spec: pb.RunSpec, tasks: list[LoadedTask]) -> None:
    for task in tasks:
        if (spec.verifier_isolation or task.verifier_isolation) == "fresh":
            refusal = fresh_refusal(task.environment.workdir, spec.sandbox)
            if refusal:
                where = (
                    "the run's verifier.isolation"
                    if spec.verifier_isolation
                    else f"{task.folder / 'task.toml'}: [verifier] isolation"
                )
                raise PlanError(f'{where} is "fresh", but task {task.task_name} cannot have it: {refusal}')
        _check_task_verifier_network(spec, task)
    if spec.sandbox != "host":
        return
    for task in tasks:
        _check_host_workdir(task)
        _check_host_image(task)
        if task.environment.host_unsupported:
            problem = task.environment.host_unsupported[0]
            raise PlanError(
                f"{task.folder / 'environment' / 'Dockerfile'}: {problem} "
                f"(task {task.task_name} needs a container sandbox)"
            )


def _check_task_verifier_network(spec: pb.RunSpec, task: LoadedTask) -> None:
    """A verifier on a network of its own needs a sandbox that makes one and a container of
    its own (the agent's has no network to join)."""
    if (spec.verifier_network or task.verifier_network) != "bridge":
        return
    isolation = verifier_isolation(
        spec.verifier_isolation, task.verifier_isolation, task.environment.workdir, spec.sandbox
    )
    refusal = bridge_refusal(spec.sandbox, isolation)
    if refusal:
        where = (
            "the run's verifier.network"
            if spec.verifier_network
            else f"{task.folder / 'task.toml'}: [verifier] network"
        )
        raise PlanError(f'{where} is "bridge", but task {task.task_name} cannot have it: {refusal}')


def _check_host_image(task: LoadedTask) -> None:
    """A task whose workspace comes from its image cannot run on the host, which starts the
    workspace empty and has no image: every attempt would run and score as failed. A task says
    so with [environment] base_commit (a repository in its image at that commit: SWE-bench's
    /testbed), or by naming a prebuilt docker_image without a Dockerfile to make it from."""
    toml = task.folder / "task.toml"
    if task.environment.base_commit:
        raise PlanError(
            f"{toml}: [environment] base_commit: task {task.task_name} needs the repository its image "
            f"holds at {task.environment.workdir}; the host sandbox has no image (run it with --sandbox docker)"
        )
    if not any(f.path == "environment/Dockerfile" for f in task.files) and task.environment.base_image:
        raise PlanError(
            f"{toml}: [environment] docker_image = {task.environment.base_image!r}: task {task.task_name} "
            f"needs that image; the host sandbox has none (run it with --sandbox docker)"
        )


def _check_host_workdir(task: LoadedTask) -> None:
    """A workspace the host sandbox cannot make fails every attempt: refuse it here, naming
    where it was set (task.toml's [environment] workdir, else the Dockerfile's WORKDIR line)."""
    workdir = task.environment.workdir
    problem = dockerfile.host_workdir_problem(workdir)
    if not problem:
        return
    environment = task.config.get("environment", {})
    if environment.get("workdir"):
        where = f"{task.folder / 'task.toml'}: [environment] workdir = {workdir!r}"
    else:
        where = f"{task.folder / 'environment' / 'Dockerfile'}: line {task.environment.workdir_line}: WORKDIR {workdir}"
    raise PlanError(f"{where}: {problem} (task {task.task_name} needs another WORKDIR or a container sandbox)")
