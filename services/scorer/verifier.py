"""Run a task's verifier in an attempt's sandbox, through the harness protocol.

The steps are Harbor's: clear /logs/verifier (so a harness cannot plant a
reward), copy tests/ to /tests, run tests/test.sh with its output in
/logs/verifier/test-stdout.txt, then read reward.json or reward.txt. The exit
status of test.sh is ignored; only the reward file counts. A task whose verifier judges
with a rubric also leaves reward-details.json: its criteria are kept beside the rewards
(services/common/rubric.py). A SWE-bench task's test.sh writes no reward: its log is graded
here with SWE-bench's grading (services/scorer/swebench.py).
"""

import asyncio
import json
import time
from dataclasses import dataclass, field

from hemra.v1 import common_pb2 as pb
from services.common import rubric
from services.scorer import rewards as rw
from services.scorer import swebench
from services.store.records import reward_problem

#: The most of the verifier's output kept with its score (the whole file stays an artifact, within caps).
MAX_STDOUT_BYTES = 4 * 1024 * 1024
#: A reward file is a few numbers; anything larger is not one.
MAX_REWARD_FILE_BYTES = 1024 * 1024
STDOUT_FILE = "/logs/verifier/test-stdout.txt"
#: The reward files a verifier may write, the first present counting (Harbor's order).
REWARD_FILES = (("reward.json", rw.parse_reward_json), ("reward.txt", rw.parse_reward_txt))
TEST_COMMAND = (
    "mkdir -p /logs/verifier && chmod +x /tests/test.sh && (/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1"
)


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


class SandboxAccess:
    """What the verifier needs of a sandbox (implemented over the harness protocol)."""

    async def run(self, command: str, env: dict[str, str], timeout: float):  # -> (exit, timed_out)
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
    _, timed_out = await sandbox.run(TEST_COMMAND, env, timeout)
    spec = next((data for path, data in tests if path == swebench.SPEC_FILE), None)
    if timed_out:
        stdout = await sandbox.read(STDOUT_FILE, MAX_STDOUT_BYTES) or b""
        error = f"the verifier timed out after {timeout:g} s"
        return Verdict(False, error=error, stdout=stdout, duration=time.monotonic() - started)
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
    elapsed = time.monotonic() - started
    try:
        found = _rewards_of(rewards)
    except rw.RewardError as exc:
        return Verdict(False, error=str(exc), stdout=stdout, duration=elapsed)
    return Verdict(
        True,
        found,
        rw.fingerprint(tests_digest, found),
        stdout=stdout,
        duration=elapsed,
        judgments=rubric.judgments_of(details),
    )


def _rewards_of(contents: list[bytes | None]) -> dict[str, float]:
    """The rewards of the first reward file present (contents in REWARD_FILES' order)."""
    for (name, parse), data in zip(REWARD_FILES, contents, strict=True):
        if data is None:
            continue
        if len(data) > MAX_REWARD_FILE_BYTES:
            raise rw.RewardError(f"{name} is larger than {MAX_REWARD_FILE_BYTES} bytes")
        found = parse(data)
        problem = reward_problem(found)
        if problem:
            raise rw.RewardError(f"{name}: {problem}")
        return found
    raise rw.RewardError("the verifier wrote no reward file (reward.json or reward.txt)")


async def _swebench_verdict(
    sandbox: SandboxAccess, spec_data: bytes, tests_digest: str, stdout: bytes, started: float
) -> Verdict:
    """Grade the SWE-bench eval script's log; leave the harness's report.json and the reward
    beside it. Raises swebench.EnvironmentFailure when the log says the environment failed."""

    def failed(error: str) -> Verdict:
        return Verdict(False, error=error, stdout=stdout, duration=time.monotonic() - started)

    log = await sandbox.read(swebench.LOG, swebench.MAX_LOG_BYTES + 1)
    if log is None:
        return failed("the SWE-bench eval script left no /logs/verifier/test_output.txt")
    if len(log) > swebench.MAX_LOG_BYTES:
        return failed(f"test_output.txt is larger than {swebench.MAX_LOG_BYTES} bytes")
    patch = await sandbox.read(swebench.PATCH, swebench.MAX_PATCH_BYTES)
    try:
        graded = await asyncio.to_thread(swebench.grade, swebench.spec_of(spec_data), log, patch)
    except (swebench.SpecError, swebench.package.Missing) as exc:
        return failed(str(exc))
    reward = 1.0 if graded.resolved else 0.0
    await sandbox.write(
        [
            ("/logs/verifier/report.json", json.dumps(graded.report, indent=4).encode(), False),
            ("/logs/verifier/reward.json", json.dumps({"resolved": reward}).encode(), False),
        ]
    )
    if graded.environment_failure:
        raise swebench.EnvironmentFailure(f"SWE-bench says the environment failed: {graded.environment_failure}")
    rewards = {"resolved": reward}  # SWE-bench's word, as an import of its harness's runs names it
    return Verdict(
        True, rewards, rw.fingerprint(tests_digest, rewards), stdout=stdout, duration=time.monotonic() - started
    )
