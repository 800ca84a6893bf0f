"""Run files (TOML) and the flags that replace or add to their values, merged into a RunSpec."""

from dataclasses import dataclass, field
from pathlib import Path

from hemra.clients.cli.common import RunFileError
from hemra.services.common import judges, parsing, runspec
from hemra.services.environments.capabilities import ISOLATIONS, VERIFIER_NETWORKS
from hemra.v1 import common_pb2 as pb

#: Every key a run file may hold, with its type.
KEYS = {
    "name": str,
    "baseline": str,
    "harnesses": list,
    "datasets": list,
    "attempts": int,
    "concurrency": int,
    "model": str,
    "timeout_secs": int,
    "max_infra_retries": int,
    "tasks": list,
    "exclude": list,
    "require": list,
    "sandbox": dict,
    "verifier": dict,
    "judge": list,
    "pool": str,
    "allow_history": list,
}
SANDBOX_KEYS = {"kind": str, "image": str, "network": str}
VERIFIER_KEYS = {"network": str, "env": list, "isolation": str}


@dataclass
class Flags:
    """Command-line values: None or empty means "not given"."""

    harnesses: list[str] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    attempts: int | None = None
    tasks: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    baseline: str | None = None
    concurrency: int | None = None
    sandbox: str | None = None
    require: list[str] = field(default_factory=list)
    verifier_env: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    label: str | None = None
    pool: str | None = None
    model: str | None = None
    timeout_secs: int | None = None
    max_infra_retries: int | None = None
    allow_history: list[str] = field(default_factory=list)


def read(path: Path) -> dict:
    try:
        data = parsing.read_toml(path)
    except FileNotFoundError:
        raise RunFileError(f"{path}: no such run file") from None
    except parsing.Unreadable as exc:
        raise RunFileError(str(exc)) from None
    _check(path, data, KEYS, "")
    _check(path, data.get("sandbox", {}), SANDBOX_KEYS, "sandbox.")
    _check(path, data.get("verifier", {}), VERIFIER_KEYS, "verifier.")
    for list_key in ("harnesses", "datasets", "tasks", "exclude", "require", "allow_history"):
        if not all(isinstance(v, str) for v in data.get(list_key, [])):
            raise RunFileError(f"{path}: {list_key} must be a list of strings")
    if not all(isinstance(v, str) for v in data.get("verifier", {}).get("env", [])):
        raise RunFileError(f"{path}: verifier.env must be a list of environment variable names")
    if data.get("verifier", {}).get("isolation", "fresh") not in ISOLATIONS:
        raise RunFileError(f"{path}: verifier.isolation must be one of {', '.join(ISOLATIONS)}")
    if data.get("verifier", {}).get("network", "none") not in VERIFIER_NETWORKS:
        raise RunFileError(f"{path}: verifier.network must be one of {', '.join(VERIFIER_NETWORKS)}")
    for judge in data.get("judge", []):
        if not isinstance(judge, dict) or not isinstance(judge.get("name"), str):
            raise RunFileError(f"{path}: every [[judge]] needs a name")
        unknown = sorted(set(judge) - {"name"})
        if unknown:
            raise RunFileError(f"{path}: unknown key judge.{unknown[0]!r} (a judge is defined in judges/<name>.toml)")
    return data


def _resolve_judges(spec: pb.RunSpec, base: Path) -> None:
    """Read the judge files the run names (a name: judges/<name>.toml beside the run file; or a
    path to a .toml) into the spec, so the judges travel with it to any deployment."""
    found: dict[str, pb.JudgeSpec] = {}
    for ref in spec.judges:
        try:
            judge = judges.load(judges.find(ref, base)).spec()
        except judges.JudgeFileError as exc:
            raise RunFileError(str(exc)) from None
        if judge.name in found and found[judge.name].fingerprint != judge.fingerprint:
            raise RunFileError(f"judge {judge.name!r} is named twice, by two different files")
        found[judge.name] = judge
    spec.judges[:] = list(found)
    spec.judge_specs.extend(found.values())


def _check(path: Path, data: dict, keys: dict, prefix: str) -> None:
    for key, value in data.items():
        if key not in keys:
            raise RunFileError(f"{path}: unknown key {prefix}{key!r}")
        expected = keys[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise RunFileError(f"{path}: {prefix}{key} must be {_type_name(expected)}")


def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", list: "a list", dict: "a table"}[kind]


def merge(run_file: Path | None, flags: Flags) -> pb.RunSpec:
    """Flags replace the file's values (-H -d -k -t -x --baseline --concurrency --sandbox),
    or add to them (--require --verifier-env --judge --allow-history)."""
    data = read(run_file) if run_file else {}
    sandbox = data.get("sandbox", {})
    verifier = data.get("verifier", {})
    harnesses = flags.harnesses or data.get("harnesses", [])
    baseline = flags.baseline if flags.baseline is not None else data.get("baseline", "")
    if flags.harnesses and flags.baseline is None and baseline not in harnesses:
        baseline = ""  # -H replaced the file's harnesses: the first one given is the baseline
    numbers = {}
    for key in runspec.BOUNDS:
        flag = getattr(flags, key)
        numbers[key] = value = _pick(flag, data.get(key), runspec.DEFAULTS[key])
        bound = runspec.out_of_bounds(key, value)
        if bound:
            where = "--" + _FLAG.get(key, key).replace("_", "-") if flag is not None else f"{run_file}: {key}"
            raise RunFileError(f"{where} must be {bound} (got {_shown(value)})")
    spec = pb.RunSpec(
        label=flags.label or data.get("name", ""),  # none: the planner names it (runspec.default_label)
        baseline=baseline,
        harnesses=harnesses,
        datasets=flags.datasets or data.get("datasets", []),
        **numbers,
        model=flags.model if flags.model is not None else data.get("model", ""),
        tasks=flags.tasks or data.get("tasks", []),
        exclude=flags.exclude or data.get("exclude", []),
        require=list(dict.fromkeys(data.get("require", []) + flags.require)),
        sandbox=flags.sandbox or sandbox.get("kind") or _implied_sandbox(sandbox),
        sandbox_network=sandbox.get("network", ""),
        sandbox_image=sandbox.get("image", ""),
        verifier_env=list(dict.fromkeys(verifier.get("env", []) + flags.verifier_env)),
        verifier_network=verifier.get("network", ""),
        verifier_isolation=verifier.get("isolation", ""),
        judges=list(dict.fromkeys([j["name"] for j in data.get("judge", [])] + flags.judges)),
        run_file=str(run_file.resolve()) if run_file else "",
        pool=flags.pool or data.get("pool", runspec.DEFAULTS["pool"]),
        allow_history=list(dict.fromkeys(data.get("allow_history", []) + flags.allow_history)),
    )
    _resolve_judges(spec, run_file.resolve().parent if run_file else Path.cwd())
    if runspec.pool_error(spec.pool):
        where = "--pool" if flags.pool else f"{run_file}: pool"
        raise RunFileError(f"{where}: {runspec.pool_error(spec.pool)}")
    if not all(isinstance(v, str) and v.isidentifier() for v in spec.verifier_env):
        raise RunFileError(f"{run_file or 'flags'}: verifier env lists variable names only")
    return spec


def _implied_sandbox(sandbox: dict) -> str:
    """The sandbox of a run file that names none: docker when it names an image (an image means
    something only where tasks run in containers built from it), else the default (host)."""
    return "docker" if sandbox.get("image") else runspec.DEFAULTS["sandbox"]


#: The flag of a run file key when its name differs.
_FLAG = {"timeout_secs": "timeout"}


def _shown(value: int) -> str:
    text = f"{value:,}"
    return text if len(text) <= 30 else text[:27] + "..."


def _pick(flag, value, default):
    return flag if flag is not None else (value if value is not None else default)
