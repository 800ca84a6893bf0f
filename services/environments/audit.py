"""The leak audit of a task's environment (hemra datasets audit): what in the built image could
hand the agent the answer. Each task's image is built (images.ensure_image) and started with no
network, the task's workdir and limits, and no model relay; a probe (audit_probe.py, Python's
standard library only) is copied in and run as root; its JSON findings make the task's verdict.

What the probe is told to look for comes from the task's files, which the agent never sees:
the reference fix's added lines (a SWE-bench task's solution/gold.patch; else the distinctive
lines of solution/*), the content hashes of tests/ and solution/ files, the base commit.

Blocking (the Docker SDK is): callers run it in a thread.
"""

import io
import json
import re
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from hemra.services import digests
from hemra.services.environments.engine import client, container_labels, docker_errors, limits
from hemra.services.environments.errors import SandboxError
from hemra.services.environments.images import LABEL_TASK, ensure_image

PROBE = Path(__file__).with_name("audit_probe.py")
#: Where the probe and its input go in the container (the probe never scans it).
PROBE_DIR = "/.hemra-audit"
#: The longest one task's audit may take (its image's build not counted).
TASK_TIMEOUT_SECS = 120.0
#: The probe's own time limit: it stops with what it has, before the task's is up.
PROBE_SECS = 100.0
#: The probe's output read at most (findings are capped in count and length).
MAX_OUTPUT_BYTES = 1024 * 1024
#: A line of the fix shorter than this is searched in git objects past HEAD only (where HEAD's
#: tree does not hold it); in files it would match too much.
MIN_FILE_NEEDLE = 20
MIN_GIT_NEEDLE = 8
MAX_NEEDLES = 40
#: A task file smaller than this is not looked for by content hash (an empty __init__.py is everywhere).
MIN_HASHED_BYTES = 32
LABEL_AUDIT = "hemra.audit"
LEAK, WARNING = "leak", "warning"
CLEAN, LEAKS, ERROR = "clean", "leaks", "error"
_BOILERPLATE = re.compile(r"^(#|//|set -[euxo]|cd |exit\b|\}|\{|fi$|done$|else$|then$|EOF|PY$)")


@dataclass
class Finding:
    kind: str
    severity: str
    detail: str


@dataclass
class TaskAudit:
    task_name: str
    task_digest: str
    verdict: str = CLEAN
    findings: list[Finding] = field(default_factory=list)
    error: str = ""
    image: str = ""
    network_mode: str = ""
    seconds: float = 0.0


def verdict_of(findings: list[Finding], complete: bool = True) -> str:
    if any(f.severity == LEAK for f in findings):
        return LEAKS
    return CLEAN if complete else ERROR


def dataset_verdict(tasks: list[TaskAudit]) -> str:
    verdicts = {t.verdict for t in tasks}
    return LEAKS if LEAKS in verdicts else ERROR if ERROR in verdicts else CLEAN


# --- what the probe looks for ---------------------------------------------------------------
def _file(task, path: str) -> bytes | None:
    return next((f.data for f in task.files if f.path == path), None)


def patch_lines(patch: str) -> list[tuple[str, str]]:
    """(file, stripped line) of each line a unified diff adds."""
    found, current = [], ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            current = line[4:].strip().split("\t")[0]
            current = current[2:] if current.startswith("b/") else current
        elif line.startswith("+") and not line.startswith("+++"):
            found.append((current, line[1:].strip()))
    return found


def _distinctive(line: str, minimum: int) -> bool:
    """Long enough, and more than punctuation or shell boilerplate."""
    return len(line) >= minimum and sum(c.isalnum() for c in line) >= minimum // 2 and not _BOILERPLATE.match(line)


def needles(task) -> list[dict]:
    """The lines the probe searches for: a SWE-bench task's gold patch's added lines (short ones
    too: they are searched in git objects past HEAD only), else the distinctive lines of the
    task's solution files that its environment/ does not hold already. Longest first, capped."""
    gold = _file(task, "solution/gold.patch")
    found: dict[str, dict] = {}
    if gold is not None:
        for path, line in patch_lines(gold.decode("utf-8", "replace")):
            if _distinctive(line, MIN_GIT_NEEDLE):
                found.setdefault(line, {"text": line, "file": path, "source": "reference fix's"})
    else:
        environment = b"\n".join(f.data for f in task.files if f.path.startswith("environment/"))
        for f in task.files:
            if not f.path.startswith("solution/"):
                continue
            for line in f.data.decode("utf-8", "replace").splitlines():
                line = line.strip()
                if _distinctive(line, MIN_FILE_NEEDLE) and line.encode() not in environment:
                    found.setdefault(line, {"text": line, "file": "", "source": f"{f.path}'s"})
    return sorted(found.values(), key=lambda n: -len(n["text"]))[:MAX_NEEDLES]


def hashes(task) -> dict[str, dict]:
    """sha256 -> {path, size} of the task's tests/ and solution/ files."""
    return {
        digests.sha256(f.data).removeprefix("sha256:"): {"path": f.path, "size": len(f.data)}
        for f in task.files
        if f.path.startswith(("tests/", "solution/")) and len(f.data) >= MIN_HASHED_BYTES
    }


def base_commit(task) -> str:
    """The commit the task's repository starts at: `[environment] base_commit` (the one HEMRA's
    history layer strips to), else `[metadata] base_commit` (SWE-bench task folders of layout 1)."""
    for section in ("environment", "metadata"):
        found = (task.config.get(section) or {}).get("base_commit")
        if found:
            return str(found)
    return ""


def probe_input(task, deadline_secs: float = PROBE_SECS) -> dict:
    return {
        "workdir": task.environment.workdir or "/",
        "base_commit": base_commit(task),
        "needles": needles(task),
        "hashes": hashes(task),
        "deadline_secs": deadline_secs,
        "min_file_needle": MIN_FILE_NEEDLE,
    }


def findings_of(result: dict) -> tuple[list[Finding], bool]:
    """The probe's findings, and whether it finished every check (its notes become warnings)."""
    found = [
        Finding(
            str(f.get("kind", ""))[:60], LEAK if f.get("severity") == LEAK else WARNING, str(f.get("detail", ""))[:600]
        )
        for f in result.get("findings", [])
        if isinstance(f, dict)
    ]
    found += [Finding("audit_bounds", WARNING, str(note)[:600]) for note in result.get("notes", [])]
    return found, bool(result.get("complete", False))


# --- running it -----------------------------------------------------------------------------
def audit_task(task, timeout: float = TASK_TIMEOUT_SECS, keep_history: bool = False) -> TaskAudit:
    """One task's audit, of the image a run uses (with HEMRA's history layer, unless
    `keep_history`: as a run that allows the task its history runs it). A task that cannot be
    audited (its image does not build, no container, no Python in the image, the time limit)
    gets verdict error, saying why."""
    result = TaskAudit(task.task_name, task.digest)
    started = time.monotonic()
    try:
        result.image = ensure_image(task, task.folder, keep_history=keep_history)
        audit_image(result, task, result.image, timeout)
    except SandboxError as exc:
        result.verdict, result.error = ERROR, str(exc).splitlines()[0][:600] if str(exc) else "sandbox error"
    result.seconds = round(time.monotonic() - started, 2)
    return result


def audit_image(result: TaskAudit, task, image: str, timeout: float = TASK_TIMEOUT_SECS) -> None:
    api = client().api
    errors = docker_errors()
    config = probe_input(task, min(PROBE_SECS, max(timeout - 15, 5)))
    try:
        container = api.create_container(
            image,
            entrypoint=["sleep", "infinity"],
            working_dir=task.environment.workdir or "/",
            hostname="hemra",
            environment=dict(task.environment.env),
            labels={LABEL_AUDIT: task.digest, LABEL_TASK: task.digest, **container_labels()},
            host_config=api.create_host_config(network_mode="none", init=True, **_limits(task)),
        )["Id"]
    except errors.APIError as exc:
        raise SandboxError(f"cannot start a container of {image}: {exc.explanation or exc}") from None
    try:
        api.put_archive(container, "/", _archive(config))
        api.start(container)
        result.network_mode = api.inspect_container(container)["HostConfig"].get("NetworkMode", "")
        if result.network_mode != "none":
            result.findings.append(Finding("network", LEAK, f"the container's network mode is {result.network_mode}"))
        python = _exec(api, container, ["sh", "-c", "command -v python3 || command -v python"], 20)[0].strip()
        if not python:
            raise SandboxError(f"image {image} has no python3 (the audit's probe needs it)")
        out, err, code = _exec(
            api, container, [python.splitlines()[0], f"{PROBE_DIR}/probe.py", f"{PROBE_DIR}/input.json"], timeout
        )
        try:
            parsed = json.loads(out)
        except ValueError:
            last = (err.strip().splitlines() or [f"exit status {code}"])[-1]
            raise SandboxError(f"the audit's probe failed in image {image}: {last[:300]}") from None
        found, complete = findings_of(parsed)
        result.findings += found
        result.verdict = verdict_of(result.findings, complete)
        if result.verdict == ERROR:
            result.error = (
                "the audit did not finish every check: " + "; ".join(str(n) for n in parsed.get("notes", []))[:500]
            )
    except errors.APIError as exc:
        raise SandboxError(f"container of {image}: {exc.explanation or exc}") from None
    finally:
        try:
            api.remove_container(container, force=True, v=True)
        except errors.APIError:
            pass


def _limits(task) -> dict:
    """The container limits the docker sandbox gives the task (engine.limits)."""
    section = task.config.get("environment") if isinstance(task.config.get("environment"), dict) else {}
    asked = SimpleNamespace(cpus=float(section.get("cpus") or 0), memory_mb=int(section.get("memory_mb") or 0))
    cpus, memory, pids = limits(asked)
    return dict(nano_cpus=int(cpus * 1e9), mem_limit=f"{memory}m", memswap_limit=f"{memory}m", pids_limit=pids)


def _archive(config: dict) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        folder = tarfile.TarInfo(PROBE_DIR.lstrip("/"))
        folder.type, folder.mode = tarfile.DIRTYPE, 0o700
        tar.addfile(folder)
        for name, data in (("probe.py", PROBE.read_bytes()), ("input.json", json.dumps(config).encode())):
            info = tarfile.TarInfo(f"{PROBE_DIR.lstrip('/')}/{name}")
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _exec(api, container: str, command: list[str], timeout: float) -> tuple[str, str, int]:
    """(stdout, stderr, exit status) of a command run as root; SandboxError past `timeout`
    (the caller removes the container, which ends the command)."""
    exec_id = api.exec_create(container, command, user="0", stdout=True, stderr=True)["Id"]
    done: dict = {}

    def run() -> None:
        try:
            done["output"] = api.exec_start(exec_id, demux=True)
        except Exception as exc:  # reported below
            done["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise SandboxError(f"the audit took longer than {timeout:.0f} s")
    if "error" in done:
        raise SandboxError(f"the audit's command failed: {done['error']}")
    out, err = done["output"] or (b"", b"")
    code = api.exec_inspect(exec_id).get("ExitCode") or 0
    return (
        (out or b"")[:MAX_OUTPUT_BYTES].decode("utf-8", "replace"),
        (err or b"")[-4096:].decode("utf-8", "replace"),
        code,
    )
