"""Run a task's verifier in an attempt's sandbox, through the harness protocol.

The steps are Harbor's: clear /logs/verifier (so a harness cannot plant a
reward), copy tests/ to /tests, run tests/test.sh with its output in
/logs/verifier/test-stdout.txt, then read reward.json or reward.txt. The exit
status of test.sh is ignored; only the reward file counts.

Unlike Harbor, test.sh never runs the agent's code by accident: it starts in /tests (HEMRA's
copy of the task's tests, not the agent's workspace), so Python started from there finds no
module the agent left first on its path, with a HOME of its own made for the run, and no user
site (PYTHONNOUSERSITE, over the task's env). A test that changes into the workspace and runs
Python there imports from it, as the benchmark intends (SWE-bench's eval scripts run
`python -m unittest` in /testbed); PYTHONSAFEPATH would break exactly those. And which reward
file counts is never decided by who wrote last: reward.json and reward.txt both written in one
run are a conflict (a program the tests ran wrote one of them), the agent's failure.

A run that gives no usable reward (a timeout, no reward file, an invalid one, a conflict, a
SWE-bench log with the environment's failure signature) is the agent's result, scored 0 with
its fault (services/domain/blame.py), never "not graded": the agent can cause each of them. A task whose verifier judges
with a rubric also leaves reward-details.json: its criteria are kept beside the rewards
(services/common/rubric.py). A SWE-bench task's test.sh writes no reward: its log is graded
here with SWE-bench's grading (services/scorer/swebench.py).
"""

import asyncio
import json
import time
from dataclasses import dataclass, field

from hemra.services.common import rubric
from hemra.services.domain import blame
from hemra.services.domain.rewards import reward_problem
from hemra.services.scorer import rewards as rw
from hemra.services.scorer import swebench
from hemra.v1 import common_pb2 as pb

#: The most of the verifier's output kept with its score (the whole file stays an artifact, within caps).
MAX_STDOUT_BYTES = 4 * 1024 * 1024
#: A reward file is a few numbers; anything larger is not one.
MAX_REWARD_FILE_BYTES = 1024 * 1024
STDOUT_FILE = "/logs/verifier/test-stdout.txt"
#: The reward files a verifier may write, the first present counting (Harbor's order).
REWARD_FILES = (("reward.json", rw.parse_reward_json), ("reward.txt", rw.parse_reward_txt))
#: Where test.sh starts: HEMRA's copy of the tests, never a folder of the agent's.
TEST_CWD = "/tests"
#: A fresh HOME made for the run (mktemp: a name the agent cannot guess ahead, in a shared
#: sandbox where /tmp is its own), so no dotfile or user site the agent left is read.
TEST_COMMAND = (
    'mkdir -p /logs/verifier && chmod +x /tests/test.sh && HOME="$(mktemp -d)" && export HOME && '
    "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1"
)
#: Set over the task's verifier env: Python never imports from a user site (a usercustomize the
#: agent left in a home it worked in).
VERIFIER_ENV = {"PYTHONNOUSERSITE": "1"}


@dataclass
class Verdict:
    scored: bool
    rewards: dict[str, float] = field(default_factory=dict)
    fingerprint: str = ""
    error: str = ""
    stdout: bytes = b""
    duration: float = 0.0
    #: The task's own rubric judges, criterion by criterion.
    judgments: list[pb.Judgment] = field(default_factory=list)
    #: Why the run gave no usable reward (blame.FAULTS), when that is the agent's result.
    fault: str = ""


class SandboxAccess:
    """What the verifier needs of a sandbox (implemented over the harness protocol)."""

    async def run(self, command: str, env: dict[str, str], timeout: float, cwd: str = ""):  # -> (exit, timed_out)
        raise NotImplementedError

    async def read(self, path: str, limit: int = 0) -> bytes | None:
        """At most `limit` bytes of the file (0: all of it); None when absent."""
        raise NotImplementedError

    async def write(self, files: list[tuple[str, bytes, bool]]) -> None:
        raise NotImplementedError

    async def remove(self, path: str) -> None:
        raise NotImplementedError

    async def read_many(self, wanted: list[tuple[str, int]]) -> list[bytes | None]:
        """Each (path, limit) as `read` reads it; an implementation may ask in one call."""
        return [await self.read(path, limit) for path, limit in wanted]


async def verify(
    sandbox: SandboxAccess, tests: list[tuple[str, bytes]], tests_digest: str, env: dict[str, str], timeout: float
) -> Verdict:
    started = time.monotonic()
    await sandbox.remove("/logs/verifier")
    await sandbox.remove("/tests")
    await sandbox.write([("/tests/" + path.removeprefix("tests/"), data, path.endswith(".sh")) for path, data in tests])
    _, timed_out = await sandbox.run(TEST_COMMAND, {**env, **VERIFIER_ENV}, timeout, TEST_CWD)
    spec = next((data for path, data in tests if path == swebench.SPEC_FILE), None)
    names = blame.reward_names([path for path, _ in tests])
    if timed_out:
        stdout = await sandbox.read(STDOUT_FILE, MAX_STDOUT_BYTES) or b""
        failure = blame.verifier_failure(blame.VERIFIER_TIMED_OUT, f"the verifier timed out after {timeout:g} s", names)
        return _failed(failure, tests_digest, stdout, started)
    if spec is not None:
        stdout = await sandbox.read(STDOUT_FILE, MAX_STDOUT_BYTES) or b""
        return await _swebench_verdict(sandbox, spec, tests_digest, stdout, started)
    # What a verifier may leave, in one call: its output, the rewards, the rubric's details.
    stdout, *rewards, details = await sandbox.read_many(
        [
            (STDOUT_FILE, MAX_STDOUT_BYTES),
            *((f"/logs/verifier/{name}", MAX_REWARD_FILE_BYTES + 1) for name, _ in REWARD_FILES),
            (f"/logs/verifier/{rubric.DETAILS_FILE}", rubric.MAX_DETAILS_BYTES + 1),
        ]
    )
    stdout = stdout or b""
    try:
        found = _rewards_of(rewards)
    except RewardFault as exc:
        return _failed(blame.verifier_failure(exc.fault, str(exc), names), tests_digest, stdout, started)
    return Verdict(
        True,
        found,
        rw.fingerprint(tests_digest, found),
        stdout=stdout,
        duration=time.monotonic() - started,
        judgments=rubric.judgments_of(details),
    )


class RewardFault(Exception):
    """The reward files the run left give no usable reward (its `fault`, blame.FAULTS)."""

    def __init__(self, fault: str, message: str):
        super().__init__(message)
        self.fault = fault


def _failed(failure: blame.VerifierFailure, tests_digest: str, stdout: bytes, started: float) -> Verdict:
    """The agent's failure for a verifier run that gave no usable reward: scored, 0 for each
    reward name (so it pairs with the task's other trials), with its fault and reason."""
    return Verdict(
        True,
        failure.rewards,
        rw.fingerprint(tests_digest, failure.rewards),
        error=failure.error,
        stdout=stdout,
        duration=time.monotonic() - started,
        fault=failure.fault,
    )


def _rewards_of(contents: list[bytes | None]) -> dict[str, float]:
    """The rewards of the one reward file present (contents in REWARD_FILES' order)."""
    present = [
        (name, parse, data) for (name, parse), data in zip(REWARD_FILES, contents, strict=True) if data is not None
    ]
    if not present:
        raise RewardFault(blame.VERIFIER_CRASHED, "the verifier wrote no reward file (reward.json or reward.txt)")
    if len(present) > 1:
        raise RewardFault(
            blame.REWARD_CONFLICT,
            "the verifier run left both reward.json and reward.txt: one of them was not written by the tests",
        )
    [(name, parse, data)] = present
    if len(data) > MAX_REWARD_FILE_BYTES:
        raise RewardFault(blame.REWARD_INVALID, f"{name} is larger than {MAX_REWARD_FILE_BYTES} bytes")
    try:
        found = parse(data)
    except rw.RewardError as exc:
        raise RewardFault(blame.REWARD_INVALID, str(exc)) from None
    problem = reward_problem(found)
    if problem:
        raise RewardFault(blame.REWARD_INVALID, f"{name}: {problem}")
    return found


async def _swebench_verdict(
    sandbox: SandboxAccess, spec_data: bytes, tests_digest: str, stdout: bytes, started: float
) -> Verdict:
    """Grade the SWE-bench eval script's log; leave the harness's report.json and the reward
    beside it. A log that reads as an environment failure is the agent's: HEMRA built and
    started the environment before the agent ran, so whatever the log says, the agent's code
    (its patch, the tests it changed) printed it."""

    def failed(fault: str, error: str) -> Verdict:
        return _failed(blame.verifier_failure(fault, error, swebench.REWARD_NAMES), tests_digest, stdout, started)

    log = await sandbox.read(swebench.LOG, swebench.MAX_LOG_BYTES + 1)
    if log is None:
        return failed(blame.VERIFIER_CRASHED, "the SWE-bench eval script left no /logs/verifier/test_output.txt")
    if len(log) > swebench.MAX_LOG_BYTES:
        return failed(blame.REWARD_INVALID, f"test_output.txt is larger than {swebench.MAX_LOG_BYTES} bytes")
    patch = await sandbox.read(swebench.PATCH, swebench.MAX_PATCH_BYTES)
    try:
        graded = await asyncio.to_thread(swebench.grade, swebench.spec_of(spec_data), log, patch)
    except (swebench.SpecError, swebench.package.Missing) as exc:  # the task's or HEMRA's, not the agent's
        return Verdict(False, error=str(exc), stdout=stdout, duration=time.monotonic() - started)
    reward = 1.0 if graded.resolved else 0.0
    await sandbox.write(
        [
            ("/logs/verifier/report.json", json.dumps(graded.report, indent=4).encode(), False),
            ("/logs/verifier/reward.json", json.dumps({"resolved": reward}).encode(), False),
        ]
    )
    if graded.environment_failure:
        return failed(
            blame.ENVIRONMENT_SIGNATURE,
            f"the test log reads as SWE-bench's environment failure ({graded.environment_failure}); "
            "HEMRA's environment was up, so the agent's code printed it",
        )
    rewards = {"resolved": reward}  # SWE-bench's word, as an import of its harness's runs names it
    return Verdict(
        True, rewards, rw.fingerprint(tests_digest, rewards), stdout=stdout, duration=time.monotonic() - started
    )
