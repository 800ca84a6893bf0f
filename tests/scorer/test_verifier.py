"""The verifier's steps over a sandbox that holds what a verifier wrote: rewards out of range,
reward files that are not a few numbers, two reward files, none, a timeout, and output read no
further than its cap. Whatever a run leaves that gives no usable reward is the agent's failure
(scored 0, with its fault), never "not graded"."""

import pytest

from hemra.services.domain import blame
from hemra.services.scorer import verifier


class Written(verifier.SandboxAccess):
    """A sandbox whose verifier wrote `files`; records how much of each was asked for."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.limits: dict[str, int] = {}
        self.ran: list[tuple[str, dict, str]] = []
        self.timed_out = False

    async def run(self, command, env, timeout, cwd=""):
        self.ran.append((command, env, cwd))
        return 0, self.timed_out

    async def read(self, path, limit=0):
        self.limits[path] = limit
        data = self.files.get(path)
        return None if data is None else (data[:limit] if limit else data)

    async def write(self, files):
        pass

    async def remove(self, path):
        pass


async def verdict_of(files: dict[str, bytes]) -> verifier.Verdict:
    return await verifier.verify(Written(files), [], "sha256:" + "0" * 64, {}, 10.0)


@pytest.mark.parametrize(
    "file,content",
    [("reward.txt", b"1e308"), ("reward.txt", b"-2e12"), ("reward.json", b'{"reward": 1, "cost": 1e13}')],
)
async def test_rewards_outside_the_finite_range_are_the_agents_failure(file, content):
    verdict = await verdict_of({f"/logs/verifier/{file}": content})
    assert verdict.scored and verdict.rewards == {"reward": 0.0} and verdict.fault == blame.REWARD_INVALID
    assert "outside the range a reward may have" in verdict.error


async def test_rewards_at_the_edge_of_the_range_are_scored():
    verdict = await verdict_of({"/logs/verifier/reward.json": b'{"a": 1e12, "b": -1e12}'})
    assert verdict.scored and verdict.rewards == {"a": 1e12, "b": -1e12}


async def test_a_reward_file_larger_than_a_few_numbers_is_the_agents_failure():
    verdict = await verdict_of({"/logs/verifier/reward.txt": b"1" + b" " * (2 * 1024 * 1024)})
    assert verdict.scored and verdict.fault == blame.REWARD_INVALID and "reward.txt is larger than" in verdict.error


async def test_both_reward_files_are_a_conflict_whichever_says_pass():
    # A program the tests ran wrote reward.json while test.sh wrote reward.txt: neither is read.
    verdict = await verdict_of({"/logs/verifier/reward.json": b'{"reward": 1}', "/logs/verifier/reward.txt": b"0"})
    assert verdict.scored and verdict.rewards == {"reward": 0.0} and verdict.fault == blame.REWARD_CONFLICT
    assert "both reward.json and reward.txt" in verdict.error


async def test_no_reward_file_is_a_crashed_verifier_and_the_agents_failure():
    verdict = await verdict_of({})
    assert verdict.scored and verdict.rewards == {"reward": 0.0} and verdict.fault == blame.VERIFIER_CRASHED
    assert verdict.fingerprint == verifier.rw.fingerprint("sha256:" + "0" * 64, ["reward"])


async def test_a_verifier_timeout_is_the_agents_failure():
    sandbox = Written({"/logs/verifier/reward.txt": b"1"})
    sandbox.timed_out = True
    verdict = await verifier.verify(sandbox, [], "sha256:" + "0" * 64, {}, 10.0)
    assert verdict.scored and verdict.rewards == {"reward": 0.0} and verdict.fault == blame.VERIFIER_TIMED_OUT
    assert verdict.error == "the verifier timed out after 10 s"


async def test_a_swebench_task_fails_under_its_own_reward_name():
    sandbox = Written({})
    verdict = await verifier.verify(sandbox, [("tests/swebench.json", b"{}")], "sha256:" + "0" * 64, {}, 10.0)
    assert verdict.scored and verdict.rewards == {"resolved": 0.0} and verdict.fault == blame.VERIFIER_CRASHED


async def test_the_tests_start_in_their_own_folder_with_an_environment_of_hemras():
    sandbox = Written({"/logs/verifier/reward.txt": b"1"})
    env = {"PYTHONNOUSERSITE": "", "TASK_SETTING": "kept"}
    await verifier.verify(sandbox, [], "sha256:" + "0" * 64, env, 10.0)
    [(command, env, cwd)] = sandbox.ran
    assert cwd == "/tests"
    assert env == {"PYTHONNOUSERSITE": "1", "TASK_SETTING": "kept"}
    assert 'HOME="$(mktemp -d)"' in command


async def test_the_verifiers_output_is_read_no_further_than_its_cap():
    sandbox = Written(
        {"/logs/verifier/test-stdout.txt": b"x" * (verifier.MAX_STDOUT_BYTES + 10), "/logs/verifier/reward.txt": b"1"}
    )
    verdict = await verifier.verify(sandbox, [], "sha256:" + "0" * 64, {}, 10.0)
    assert verdict.scored and len(verdict.stdout) == verifier.MAX_STDOUT_BYTES
    assert sandbox.limits["/logs/verifier/test-stdout.txt"] == verifier.MAX_STDOUT_BYTES
