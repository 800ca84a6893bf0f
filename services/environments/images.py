"""Task images: each task's environment/ folder built once per task digest (and base image),
by the planner while a run resolves and by an executor whose engine lacks one. Builds of one
tag wait for each other, in this process and across the host. HEMRA never pulls.

On the environment's image HEMRA builds one layer of its own, which strips every git
repository's history to its HEAD's past (services/environments/history.py); that image, tagged
with the layer's key and labelled hemra.history=stripped-<version>, is the one attempts run in.
A run that keeps a task's history (allow_history) runs the environment's image itself."""

import fcntl
import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path

from hemra.services.common import offline
from hemra.services.environments import history
from hemra.services.environments.engine import client, docker_errors
from hemra.services.environments.errors import SandboxError

IMAGE_REPOSITORY = "hemra-task"
#: The network a task's image is built with; the engine's default unless set.
BUILD_NETWORK_VAR = "HEMRA_DOCKER_BUILD_NETWORK"
#: The label naming the task an image or container belongs to.
LABEL_TASK = "hemra.task"

_build_locks: dict[str, threading.Lock] = {}


class BuildFailed(SandboxError):
    """The task's Dockerfile did not build; `log` holds the build's output."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


class StripFailed(BuildFailed):
    """HEMRA's history layer could not strip (or check) a repository of the task's image."""


def image_tag(task, base_image: str = "", keep_history: bool = False) -> str:
    """The tag of the image a task's attempts run in: the environment's image (`keep_history`),
    else the one HEMRA's history layer made of it (its key in the tag)."""
    tag = f"{IMAGE_REPOSITORY}:{task.digest.removeprefix('sha256:')[:24]}"
    tag = tag if not base_image else f"{tag}-on-{hashlib.sha256(base_image.encode()).hexdigest()[:12]}"
    return tag if keep_history else f"{tag}-h{history.KEY}"


def ensure_image(task, task_dir: Path, base_image: str = "", keep_history: bool = False) -> str:
    """The task's image, built once per task digest (and base image) (blocking). Concurrent
    calls for one task, in this process or another on the host, wait for a single build.

    With `base_image` (a run's [sandbox] image) the task's Dockerfile is built FROM it. Unless
    `keep_history`, HEMRA's history layer is built on it (StripFailed when it cannot strip)."""
    environment = _environment_image(task, task_dir, base_image)
    if keep_history:
        return environment
    return _stripped(task, environment, image_tag(task, base_image))


def _stripped(task, image: str, tag: str) -> str:
    """`image` with HEMRA's history layer on it, as `tag` (built once)."""

    def build(api, errors) -> None:
        user = ((api.inspect_image(image) or {}).get("Config") or {}).get("User") or ""
        repository, base_commit = history.of_task(task)
        with tempfile.TemporaryDirectory(prefix="hemra-history-") as folder:
            (Path(folder) / "Dockerfile").write_text(history.dockerfile(image, repository, base_commit, user))
            _build(api, errors, task, Path(folder), tag, labels={history.LABEL: history.STRIPPED})

    return _built_once(tag, build)


def _environment_image(task, task_dir: Path, base_image: str) -> str:
    dockerfile = task_dir / "environment" / "Dockerfile"
    if not dockerfile.is_file():
        return _prebuilt(client().api, docker_errors(), task, base_image)
    tag = image_tag(task, base_image, keep_history=True)

    def build(api, errors) -> None:
        if not base_image:
            _build(api, errors, task, task_dir / "environment", tag)
            return
        with tempfile.TemporaryDirectory(prefix="hemra-rebased-") as folder:
            rebased = Path(folder) / "Dockerfile"
            rebased.write_text(rebase(dockerfile.read_text(), base_image))
            _build(api, errors, task, task_dir / "environment", tag, str(rebased))

    return _built_once(tag, build)


def _built_once(tag: str, build) -> str:
    """`tag`, built by `build(api, errors)` unless the engine has it already: one build of a
    tag at a time, across this process's threads and the host's executors."""
    api, errors = client().api, docker_errors()
    with _build_locks.setdefault(tag, threading.Lock()), _file_lock(tag):
        try:
            api.inspect_image(tag)
        except errors.ImageNotFound:
            build(api, errors)
    return tag


def rebase(dockerfile: str, base_image: str) -> str:
    """The Dockerfile with every stage that starts FROM an image (not FROM an earlier
    stage) starting FROM `base_image`; platform flags and stage names are kept."""
    stages: set[str] = set()

    def replace(match: re.Match) -> str:
        flags, image, alias = match.group("flags") or "", match.group("image"), match.group("alias")
        if alias:
            stages.add(alias.split()[-1].lower())
        if image.lower() in stages:
            return match.group(0)
        return f"{match.group('lead')}{flags}{base_image}{alias or ''}"

    return _FROM.sub(replace, dockerfile)


_FROM = re.compile(
    r"^(?P<lead>[ \t]*FROM[ \t]+)(?P<flags>(?:--\S+[ \t]+)*)(?P<image>\S+)(?P<alias>[ \t]+AS[ \t]+\S+)?",
    re.IGNORECASE | re.MULTILINE,
)


def _prebuilt(api, errors, task, base_image: str = "") -> str:
    image = base_image or task.environment.base_image
    if not image:
        raise SandboxError(f"task {task.task_name} has neither environment/Dockerfile nor docker_image")
    try:
        api.inspect_image(image)
    except errors.ImageNotFound:
        raise SandboxError(
            f"task {task.task_name}: image {image} is not present in the Docker engine "
            "(HEMRA never pulls; load or build it first)"
        ) from None
    return image


def _build(api, errors, task, context: Path, tag: str, dockerfile: str = "Dockerfile", labels=None) -> None:
    if offline.enabled():
        _check_bases(api, errors, task, (context / dockerfile).read_text())
    lines, error = [], ""
    network = os.environ.get(BUILD_NETWORK_VAR) or None
    try:
        for chunk in api.build(
            path=str(context),
            dockerfile=dockerfile,
            tag=tag,
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            network_mode=network,
            labels={LABEL_TASK: task.digest, **(labels or {})},
        ):
            lines.append(chunk.get("stream") or chunk.get("status") or "")
            if chunk.get("error"):
                error = chunk["error"].strip()
                lines.append(chunk["error"])
    except errors.APIError as exc:
        error = str(exc.explanation or exc)
        lines.append(error + "\n")
    if error:
        said = [m.group(1) for chunk in lines for m in _SAID.finditer(chunk)]
        if labels and history.LABEL in labels:
            why = said[-1].strip() if said else error.splitlines()[-1]
            raise StripFailed(
                f"task {task.task_name}: HEMRA cannot strip the history of the repositories in its environment: {why}",
                "".join(lines),
            )
        raise BuildFailed(f"docker build of task {task.task_name} failed: {error.splitlines()[-1]}", "".join(lines))


def _check_bases(api, errors, task, dockerfile: str) -> None:
    """Offline: every image the Dockerfile starts FROM is in the engine already (the engine would
    pull a missing one while it builds). An image named through an ARG is left to the engine."""
    stages: set[str] = set()
    for match in _FROM.finditer(dockerfile):
        image = match["image"]
        if match["alias"]:
            stages.add(match["alias"].split()[-1].lower())
        if image.lower() in stages or image == "scratch" or "$" in image:
            continue
        try:
            api.inspect_image(image)
        except errors.ImageNotFound:
            why = offline.refused(
                f"the Docker image {image} (FROM in task {task.task_name}'s Dockerfile; not in the engine)"
            )
            raise SandboxError(why) from None


#: What the history layer's script says when it fails (the builder may colour its stderr).
_SAID = re.compile(rf"{history.NAME}: ([^\n\x1b]*)")


class _file_lock:
    """An exclusive lock file shared by every process on the host (builds of one tag)."""

    def __init__(self, name: str):
        folder = Path(tempfile.gettempdir()) / "hemra-docker-locks"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / (name.replace(":", "-").replace("/", "-") + ".lock")

    def __enter__(self):
        self.handle = open(self.path, "a")
        fcntl.flock(self.handle, fcntl.LOCK_EX)

    def __exit__(self, *_):
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
