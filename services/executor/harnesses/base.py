"""The interface of a harness driver, and what it is given and returns."""

import abc
from dataclasses import dataclass
from pathlib import Path

from hemra.services.domain.vocabulary import COMPLETED, HARNESS_FAILED, TIMED_OUT  # noqa: F401  (drivers' words)
from hemra.services.executor.events import EventLog
from hemra.services.executor.sandboxes import Sandbox

#: Where a harness file's folder is mounted read-only inside the sandbox, when its harness runs
#: something of it there (an acp `command`, an MCP server's script).
HARNESS_MOUNT = "/opt/hemra/harness"


@dataclass
class TrialContext:
    attempt_id: str
    task: object  # hemra.v1.Task
    task_dir: Path
    harness: object  # hemra.v1.Harness
    model: str
    timeout: float
    sandbox: Sandbox
    events: EventLog
    #: The executor's harness protocol endpoint and this attempt's token.
    harness_address: str
    harness_token: str
    #: The variables the user named for the run (RunSpec.verifier_env): all that the task's
    #: `${VAR}` templates may read (services/envtemplate.py).
    env_names: tuple[str, ...] = ()


@dataclass
class HarnessResult:
    outcome: str
    exit_code: int = 0
    error: str = ""
    agent_version: str = ""


class HarnessDriver(abc.ABC):
    async def mounts(self, harness) -> dict[str, str]:
        """Host folders the harness needs inside the sandbox, read-only ({sandbox path: host folder}).

        Called before the sandbox opens; may install what it mounts. Raises
        SandboxError when that fails (an infrastructure failure)."""
        return {}

    def endpoints(self, harness) -> list[tuple[str, int]]:
        """The (host, port) pairs the harness must reach from inside the sandbox (its model APIs).

        A sandbox without a network relays exactly these (services/executor/sandboxes/relay.py);
        the default is none: harnesses that run on the host call their models from there."""
        return []

    def protocol_endpoints(self, address: str) -> list[tuple[str, int]]:
        """The harness protocol's endpoint, when the harness calls it from inside the sandbox
        (an sdk harness's program); relayed like a model endpoint, its answers never read."""
        return []

    @abc.abstractmethod
    async def run(self, trial: TrialContext) -> HarnessResult:
        """Work the trial until the harness ends or `trial.timeout` passes.

        A harness that fails or times out is a result (HarnessResult), not an
        exception. Raises SandboxError only when the sandbox itself broke.
        """
