"""The harness's deadline is final, even for a driver that will not stop when cancelled."""

import asyncio
import time
from types import SimpleNamespace

from hemra.services.executor import attempt
from hemra.services.executor.harnesses.base import HarnessResult


class _Stubborn:
    """A driver stuck in its own cleanup: its cancel takes far longer than any grace."""

    async def run(self, context):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.sleep(3600))
        return HarnessResult("completed", 0)


class _Sandbox:
    killed = 0

    async def kill(self):
        self.killed += 1


async def test_a_driver_that_ignores_its_cancel_does_not_hold_the_attempt(monkeypatch):
    monkeypatch.setattr(attempt, "DEADLINE_GRACE_SECS", 0.2)
    sandbox = _Sandbox()
    context = SimpleNamespace(timeout=0.1, attempt_id="a-test")
    started = time.monotonic()
    result = await attempt._run_until_deadline(_Stubborn(), context, sandbox)
    assert result.outcome == "timed_out"
    assert sandbox.killed == 1
    assert time.monotonic() - started < 5


async def test_a_driver_that_finishes_in_time_gives_its_own_result():
    class Quick:
        async def run(self, context):
            return HarnessResult("harness_failed", 3, "its own")

    result = await attempt._run_until_deadline(Quick(), SimpleNamespace(timeout=5, attempt_id="a"), _Sandbox())
    assert (result.outcome, result.exit_code, result.error) == ("harness_failed", 3, "its own")
