"""Load a Harbor-format task folder and pin it by the digest of its files."""

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services import digests
from hemra.services.common import parsing
from hemra.services.common.runspec import MAX_TIMEOUT_SECS
from hemra.services.domain import dockerfile
from hemra.services.domain.planerrors import PlanError
from hemra.services.domain.tree import MAX_FILE_BYTES
from hemra.services.environments.capabilities import ISOLATIONS, VERIFIER_NETWORKS
from hemra.v1 import common_pb2 as pb

#: Never part of a task: version control and interpreter caches.
_IGNORED = {".git", "__pycache__", ".DS_Store"}
DEFAULT_AGENT_TIMEOUT = 900.0
DEFAULT_VERIFIER_TIMEOUT = 600.0
# The longest timeout a task (or a run) may set is runspec.MAX_TIMEOUT_SECS (7 days): past it a
# timer is no longer a limit, and nan, inf or 1e308 reach no clock.
#: [environment] cpus and memory_mb: at most this much (a machine far larger than any sandbox's).
MAX_CPUS = 1024
MAX_MEMORY_MB = 64 * 1024 * 1024
# MAX_FILE_BYTES (200 MiB, the importer's): a task file larger than it is refused by name before it
# is read. Each file travels to the store whole, in one message of at most 256 MiB.
# Links are followed: a link to a file inside the task is read as that file.


@dataclass
class TaskFile:
    path: str
    data: bytes
    executable: bool

    @property
    def digest(self) -> str:
        return digests.sha256(self.data)


@dataclass
class LoadedTask:
    folder: Path
    digest: str
    task_name: str
    instruction: str
    files: list[TaskFile]
    config: dict
    environment: dockerfile.EnvironmentPlan
    agent_timeout: float
    verifier_timeout: float
    verifier_env: dict[str, str] = field(default_factory=dict)
    solution_env: dict[str, str] = field(default_factory=dict)
    #: [verifier] isolation ("" when the task does not say).
    verifier_isolation: str = ""
    #: [verifier] network ("" when the task does not say).
    verifier_network: str = ""
    #: Where a source pinned it from (pb.Task.origin; "" for a plain folder).
    origin: str = ""

    @property
    def has_solution(self) -> bool:
        return any(f.path == "solution/solve.sh" for f in self.files)


def read_files(folder: Path) -> list[TaskFile]:
    """Every file of the task, in path order. A link to a file inside the task is read as that
    file; a link to a folder, outside the task, that dangles or loops is refused by name, as is
    a name that is not UTF-8, anything but a regular file, and a file over MAX_FILE_BYTES."""
    files = []
    root = folder.resolve()

    def walk_error(exc: OSError) -> None:
        raise PlanError(f"{exc.filename}: cannot be read: {exc.strerror or exc}")

    for top, dirs, names in os.walk(folder, onerror=walk_error):
        for name in (*dirs, *names):
            _check_name(Path(top) / name)
        for name in dirs:
            if name not in _IGNORED and (Path(top) / name).is_symlink():
                raise PlanError(
                    f"{Path(top) / name}: a symbolic link to a folder; a task's links may point "
                    f"only to files inside the task (copy the folder instead)"
                )
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED)
        for name in sorted(names):
            if name in _IGNORED:
                continue
            path = Path(top) / name
            if path.is_symlink():
                _check_link(path, root)
            data, mode = _read_file(path)
            files.append(TaskFile(path.relative_to(folder).as_posix(), data, bool(mode & 0o111)))
    return files


def _check_name(path: Path) -> None:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise PlanError(f"{shown}: a file name that is not UTF-8 cannot be part of a task") from None


def _check_link(path: Path, root: Path) -> None:
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        raise PlanError(f"{path}: symbolic link to {os.readlink(path)!r}, which does not exist") from None
    except (RuntimeError, OSError) as exc:  # RuntimeError: a loop (Python < 3.13)
        if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40:
            raise PlanError(f"{path}: symbolic link loop") from None
        raise PlanError(f"{path}: cannot follow the symbolic link: {exc}") from None
    if not target.is_relative_to(root):
        raise PlanError(f"{path}: symlink points outside the task")


def _read_file(path: Path) -> tuple[bytes, int]:
    """The bytes and mode of a regular file of at most MAX_FILE_BYTES; never reads past that."""
    limit = f"a task file may hold at most {MAX_FILE_BYTES // 1024 // 1024} MiB"
    try:
        return parsing.read_regular(path, MAX_FILE_BYTES, follow_links=True)
    except parsing.TooLarge as exc:
        if exc.grew:
            raise PlanError(f"{path}: grew past {MAX_FILE_BYTES // 1024 // 1024} MiB while read; {limit}") from None
        raise PlanError(f"{path}: {exc.size:,} bytes; {limit}") from None
    except parsing.NotRegular:
        raise PlanError(f"{path}: not a regular file (a task holds files and folders only)") from None
    except OSError as exc:
        raise PlanError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def task_digest(files: list[TaskFile]) -> str:
    """sha256 over every file's path, executable bit and content digest, in path order."""
    return digests.task_digest((f.path, f.executable, f.digest) for f in files)


#: Harbor's package content hash covers these (besides task.toml, instruction.md, README.md).
_HARBOR_FOLDERS = ("environment/", "tests/", "solution/", "steps/")
_HARBOR_IGNORED_SUFFIXES = (".pyc", ".swp", ".swo")


def harbor_content_hash(files: list[TaskFile]) -> str:
    """Harbor's package content hash (its lock.json `digest`), to check a folder is the one a job ran."""
    chosen = [
        f
        for f in files
        if f.path in ("task.toml", "instruction.md", "README.md")
        or (f.path.startswith(_HARBOR_FOLDERS) and not f.path.endswith(_HARBOR_IGNORED_SUFFIXES))
    ]
    lines = "".join(f"{f.path}\0{f.digest.removeprefix('sha256:')}\n" for f in sorted(chosen, key=lambda f: f.path))
    return digests.sha256(lines.encode())


def load_task(folder: Path) -> LoadedTask:
    """Read and check one task. Raises PlanError naming the file and the problem."""
    config = _read_toml(folder / "task.toml")
    for required in ("instruction.md", "tests/test.sh"):
        if not (folder / required).is_file():
            raise PlanError(f"{folder / required}: missing (every task needs {required})")
    if not (folder / "environment").is_dir():
        raise PlanError(f"{folder / 'environment'}: missing (every task needs an environment/ folder)")
    if config.get("steps"):
        raise PlanError(f"{folder / 'task.toml'}: multi-step tasks ([[steps]]) are not supported yet")
    files = read_files(folder)
    env_section = _table(config, "environment", folder)
    _check_environment(env_section, folder)
    read = {f.path: f.data for f in files}  # each file as read once, never opened again
    environment = _environment(folder, env_section, read.get("environment/Dockerfile"))
    return LoadedTask(
        folder=folder,
        digest=task_digest(files),
        task_name=str(_table(config, "task", folder).get("name") or folder.name),
        instruction=read["instruction.md"].decode("utf-8", errors="replace"),
        files=files,
        config=config,
        environment=environment,
        agent_timeout=_seconds(_table(config, "agent", folder), "timeout_sec", DEFAULT_AGENT_TIMEOUT, folder, "agent"),
        verifier_timeout=_seconds(
            _table(config, "verifier", folder), "timeout_sec", DEFAULT_VERIFIER_TIMEOUT, folder, "verifier"
        ),
        verifier_env=_env_table(_table(config, "verifier", folder), folder, "verifier"),
        solution_env=_env_table(_table(config, "solution", folder), folder, "solution"),
        verifier_isolation=_isolation(_table(config, "verifier", folder), folder),
        verifier_network=_verifier_network(_table(config, "verifier", folder), folder),
    )


#: [metadata] keys kept as tags ("difficulty:easy"); a tag is cut to MAX_TAG_CHARS, a task keeps MAX_TAGS.
TAG_METADATA = ("difficulty", "category")
MAX_TAG_CHARS = 100
MAX_TAGS = 50


def task_tags(config: dict) -> list[str]:
    """A task's tags (pb.Task.tags), which the report breaks pass rates down by: each [task]
    keyword, then [metadata] difficulty and category as "key:value". Values of another type
    are skipped, not refused: tags describe a task, they never change how it runs."""
    task = config.get("task") if isinstance(config.get("task"), dict) else {}
    keywords = task.get("keywords") if isinstance(task.get("keywords"), list) else []
    tags = [k for k in keywords if isinstance(k, str) and k.strip()]
    metadata = config.get("metadata") if isinstance(config.get("metadata"), dict) else {}
    tags += [f"{key}:{metadata[key]}" for key in TAG_METADATA if isinstance(metadata.get(key), str) and metadata[key]]
    return list(dict.fromkeys(tag.strip()[:MAX_TAG_CHARS] for tag in tags))[:MAX_TAGS]


def _read_toml(path: Path) -> dict:
    try:
        return parsing.read_toml(path)
    except FileNotFoundError:
        raise PlanError(f"{path}: missing (every task needs task.toml)") from None
    except parsing.Unreadable as exc:
        raise PlanError(str(exc)) from None


def _table(config: dict, key: str, folder: Path) -> dict:
    value = config.get(key, {})
    if not isinstance(value, dict):
        raise PlanError(f"{folder / 'task.toml'}: [{key}] must be a table")
    return value


def _seconds(section: dict, key: str, default: float, folder: Path, table: str) -> float:
    value = section.get(key)
    if value is None:
        return default
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
        or value > MAX_TIMEOUT_SECS
    ):
        raise PlanError(
            f"{folder / 'task.toml'}: [{table}] {key} must be a positive number of seconds, "
            f"at most {MAX_TIMEOUT_SECS:,} (7 days) (got {_shown(value)})"
        )
    return float(value)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _isolation(section: dict, folder: Path) -> str:
    value = section.get("isolation", "")
    if value not in ("", *ISOLATIONS):
        raise PlanError(
            f"{folder / 'task.toml'}: [verifier] isolation must be one of {', '.join(ISOLATIONS)} (got {value!r})"
        )
    return value


def _verifier_network(section: dict, folder: Path) -> str:
    value = section.get("network", "")
    if value not in ("", *VERIFIER_NETWORKS):
        raise PlanError(
            f"{folder / 'task.toml'}: [verifier] network must be one of {', '.join(VERIFIER_NETWORKS)} "
            f"(got {_shown(value)})"
        )
    return value


def _env_table(section: dict, folder: Path, name: str) -> dict[str, str]:
    env = section.get("env", {})
    if not isinstance(env, dict) or not all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in env.values()
    ):
        raise PlanError(f"{folder / 'task.toml'}: [{name}].env must map names to strings or numbers")
    return {str(k): str(v) for k, v in env.items()}


def _check_environment(section: dict, folder: Path) -> None:
    """The [environment] keys HEMRA reads, each of its type and range (others are kept, unread)."""
    where = f"{folder / 'task.toml'}: [environment]"
    for key in ("docker_image", "workdir"):
        if key in section and not isinstance(section[key], str):
            raise PlanError(f"{where} {key} must be a string (got {_shown(section[key])})")
    workdir = section.get("workdir")
    if workdir and (not workdir.startswith("/") or "\0" in workdir):
        raise PlanError(f"{where} workdir must be an absolute path (got {_shown(workdir)})")
    cpus = section.get("cpus")
    if cpus is not None and (
        not isinstance(cpus, (int, float))
        or isinstance(cpus, bool)
        or not math.isfinite(cpus)
        or not 0 < cpus <= MAX_CPUS
    ):
        raise PlanError(f"{where} cpus must be a positive number, at most {MAX_CPUS} (got {_shown(cpus)})")
    memory = section.get("memory_mb")
    if memory is not None and (
        not isinstance(memory, int) or isinstance(memory, bool) or not 0 < memory <= MAX_MEMORY_MB
    ):
        raise PlanError(
            f"{where} memory_mb must be a positive whole number of megabytes, at most "
            f"{MAX_MEMORY_MB:,} (got {_shown(memory)})"
        )
    base = section.get("base_commit")
    if base is not None and (not isinstance(base, str) or not _COMMIT.fullmatch(base)):
        raise PlanError(f"{where} base_commit must be a commit hash (7 to 64 hex digits; got {_shown(base)})")
    if "keep_history" in section and not isinstance(section["keep_history"], bool):
        raise PlanError(f"{where} keep_history must be true or false (got {_shown(section['keep_history'])})")
    _env_table(section, folder, "environment")


_COMMIT = re.compile(r"[0-9a-f]{7,64}")


def _expand(context: Path, copy: dockerfile.Copy, path: Path) -> list[dockerfile.Copy]:
    """A COPY source with wildcards becomes one step per match (into a folder)."""
    if not any(c in copy.source for c in "*?["):
        if not (context / copy.source).exists():
            raise PlanError(f"{path}: line {copy.line}: COPY source {copy.source!r} does not exist")
        return [copy]
    matches = sorted(p.relative_to(context).as_posix() for p in context.glob(copy.source))
    if not matches:
        raise PlanError(f"{path}: line {copy.line}: COPY source {copy.source!r} matches no file")
    if len(matches) > 1 and not copy.destination.endswith("/"):
        raise PlanError(f"{path}: line {copy.line}: COPY of several files needs a destination ending in /")
    return [dockerfile.Copy(m, copy.destination, copy.line) for m in matches]


def _environment(folder: Path, section: dict, text: bytes | None) -> dockerfile.EnvironmentPlan:
    path = folder / "environment" / "Dockerfile"
    if text is not None:
        try:
            plan = dockerfile.parse(text.decode("utf-8"))
        except dockerfile.DockerfileError as exc:
            raise PlanError(f"{path}: {exc}") from None
        except UnicodeDecodeError:
            raise PlanError(f"{path}: not UTF-8 text") from None
        plan.copies = [expanded for copy in plan.copies for expanded in _expand(folder / "environment", copy, path)]
    else:
        plan = dockerfile.EnvironmentPlan(base_image=str(section.get("docker_image") or ""), workdir="/app")
    if section.get("workdir"):
        plan.workdir = str(section["workdir"])
    plan.base_commit = section.get("base_commit") or ""
    plan.keep_history = section.get("keep_history") is True
    plan.env.update(_env_table(section, folder, "environment"))
    return plan


def task_to_proto(task: LoadedTask) -> pb.Task:
    env = task.environment
    message = pb.Task(
        name=f"tasks/{task.digest}",
        digest=task.digest,
        task_name=task.task_name,
        instruction=task.instruction,
        files=[
            pb.TaskFile(path=f.path, blob_digest=f.digest, size_bytes=len(f.data), executable=f.executable)
            for f in task.files
        ],
        verifier_env=task.verifier_env,
        solution_env=task.solution_env,
        has_solution=task.has_solution,
        verifier_isolation=task.verifier_isolation,
        origin=task.origin,
        tags=task_tags(task.config),
        harbor_digest=harbor_content_hash(task.files),
        environment=pb.Environment(
            base_image=env.base_image,
            workdir=env.workdir,
            env=env.env,
            copies=[pb.CopyStep(source=c.source, destination=c.destination, line=c.line) for c in env.copies],
            cpus=float(task.config.get("environment", {}).get("cpus") or 0),
            memory_mb=int(task.config.get("environment", {}).get("memory_mb") or 0),
            host_unsupported=env.host_unsupported,
            base_commit=env.base_commit,
        ),
    )
    message.agent_timeout.FromNanoseconds(int(task.agent_timeout * 1e9))
    message.verifier_timeout.FromNanoseconds(int(task.verifier_timeout * 1e9))
    return message
