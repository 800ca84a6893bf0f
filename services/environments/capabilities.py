"""What each sandbox kind can do, as plain data: the planner checks a run against it at plan
time without loading any sandbox's SDK, and the executor's sandboxes declare it."""

#: What each sandbox kind enforces, checked against a run's `require` when it is planned.
#: Plain data, so the planner reads it without loading any sandbox's SDK.
ENFORCES: dict[str, frozenset[str]] = {
    "host": frozenset({"network_block", "filesystem_isolation", "process_isolation"}),
    "docker": frozenset({"network_block", "filesystem_isolation", "process_isolation"}),
    "modal": frozenset({"network_block", "filesystem_isolation", "process_isolation"}),
}

#: `[verifier] isolation` values. "fresh": the verifier runs in a new sandbox of the task's
#: environment holding only what `carried` names, copied from the agent's; "shared": in the
#: agent's own sandbox, once every process the agent left is killed (Harbor's way).
ISOLATIONS = ("fresh", "shared")
#: Sandbox kinds that can make a fresh sandbox for the verifier.
FRESH_CAPABLE = frozenset({"host", "docker"})
#: `[verifier] network` values. "none": the verifier's sandbox has no network; "bridge": the
#: attempt gets a network of its own on which the verifier reaches the task's service (the
#: task image's own command, run on the agent's workspace) and nothing else.
VERIFIER_NETWORKS = ("none", "bridge")
#: Sandbox kinds that can give a verifier a network of its own (a Docker network per attempt).
BRIDGE_CAPABLE = frozenset({"docker"})
#: Top folders that are the environment's own, never the agent's workspace.
_SYSTEM_FOLDERS = frozenset(
    {
        "",
        "usr",
        "etc",
        "bin",
        "sbin",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "dev",
        "sys",
        "var",
        "opt",
        "run",
        "boot",
        "logs",
        "tests",
        "solution",
        "tmp",
    }
)


def fresh_refusal(workdir: str, sandbox: str) -> str:
    """Why a task cannot have its verifier in a fresh sandbox ("" when it can)."""
    if sandbox not in FRESH_CAPABLE:
        return f"the {sandbox} sandbox cannot make a fresh sandbox for the verifier"
    top = (workdir or "/").strip("/").split("/")[0]
    if top in _SYSTEM_FOLDERS:
        return f"its workspace (WORKDIR {workdir or '/'}) is not a folder of its own to carry over"
    return ""


def verifier_isolation(run: str, task: str, workdir: str, sandbox: str) -> str:
    """The isolation an attempt's verifier gets: the run's choice, else the task's, else
    fresh wherever the task and the sandbox allow it."""
    chosen = run or task
    if chosen:
        return chosen
    return "shared" if fresh_refusal(workdir, sandbox) else "fresh"


def verifier_network(run: str, task: str) -> str:
    """The network an attempt's verifier gets: the run's choice, else the task's, else none."""
    return run or task or "none"


def bridge_refusal(sandbox: str, isolation: str) -> str:
    """Why a verifier cannot have `[verifier] network = "bridge"` here ("" when it can)."""
    if sandbox not in BRIDGE_CAPABLE:
        return f"the {sandbox} sandbox cannot give a verifier a network of its own (only docker can)"
    if isolation != "fresh":
        return 'the verifier must run in a fresh sandbox of its own (isolation = "fresh"), not in the agent\'s'
    return ""


def carried(workdir: str) -> list[str]:
    """What a fresh verifier sandbox receives from the agent's: its workspace and its logs."""
    return [workdir.rstrip("/"), "/logs/agent", "/logs/artifacts"]
