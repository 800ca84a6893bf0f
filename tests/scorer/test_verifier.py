"""The verifier's steps over a sandbox that holds what a verifier wrote: rewards out of range,
reward files that are not a few numbers, and output read no further than its cap."""

import pytest

from services.scorer import verifier


class Written(verifier.SandboxAccess):
    """A sandbox whose verifier wrote `files`; records how much of each was asked for."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.limits: dict[str, int] = {}

    async def run(self, command, env, timeout):
        return 0, False

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
async def test_rewards_outside_the_finite_range_are_a_scorer_failure(file, content):
    verdict = await verdict_of({f"/logs/verifier/{file}": content})
    assert not verdict.scored and "outside the range a reward may have" in verdict.error


async def test_rewards_at_the_edge_of_the_range_are_scored():
    verdict = await verdict_of({"/logs/verifier/reward.json": b'{"a": 1e12, "b": -1e12}'})
    assert verdict.scored and verdict.rewards == {"a": 1e12, "b": -1e12}


async def test_a_reward_file_larger_than_a_few_numbers_is_a_scorer_failure():
    verdict = await verdict_of({"/logs/verifier/reward.txt": b"1" + b" " * (2 * 1024 * 1024)})
    assert not verdict.scored and "reward.txt is larger than" in verdict.error


async def test_the_verifiers_output_is_read_no_further_than_its_cap():
    sandbox = Written(
        {"/logs/verifier/test-stdout.txt": b"x" * (verifier.MAX_STDOUT_BYTES + 10), "/logs/verifier/reward.txt": b"1"}
    )
    verdict = await verifier.verify(sandbox, [], "sha256:" + "0" * 64, {}, 10.0)
    assert verdict.scored and len(verdict.stdout) == verifier.MAX_STDOUT_BYTES
    assert sandbox.limits["/logs/verifier/test-stdout.txt"] == verifier.MAX_STDOUT_BYTES
