"""The calibration harnesses: oracle runs the task's solution (must score 1), nop does nothing (must score 0)."""

from hemra.services import envtemplate
from hemra.services.executor.events import MAX_TEXT, event, text
from hemra.services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    TIMED_OUT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.sandboxes import SandboxError


class Oracle(HarnessDriver):
    async def run(self, trial: TrialContext) -> HarnessResult:
        solution = trial.task_dir / "solution"
        if not (solution / "solve.sh").is_file():
            await trial.events.emit(event("error", "oracle", message="the task has no solution/solve.sh"))
            return HarnessResult(HARNESS_FAILED, -1, "the task has no solution/solve.sh", "1")
        files = [
            ("/solution/" + p.relative_to(solution).as_posix(), p.read_bytes(), True)
            for p in sorted(solution.rglob("*"))
            if p.is_file()
        ]
        await trial.sandbox.write_files(files)
        solution_env = envtemplate.resolve(dict(trial.task.solution_env), trial.env_names)
        env = {"DEBIAN_FRONTEND": "noninteractive", **solution_env}
        command = "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1"
        result = await trial.sandbox.exec(command, env=env, timeout=trial.timeout)
        output = await _read_or_empty(trial, "/logs/agent/oracle.txt")
        await trial.events.emit(
            event(
                "command",
                "solve.sh",
                result.duration,
                command=command,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
            ),
            event("output", "oracle.txt", text=text(output)),
        )
        if result.timed_out:
            return HarnessResult(TIMED_OUT, -1, f"solve.sh timed out after {trial.timeout:g} s", "1")
        if result.exit_code != 0:
            return HarnessResult(HARNESS_FAILED, result.exit_code, f"solve.sh exited {result.exit_code}", "1")
        return HarnessResult(COMPLETED, 0, "", "1")


class Nop(HarnessDriver):
    async def run(self, trial: TrialContext) -> HarnessResult:
        await trial.events.emit(event("status", "nop", message="did nothing"))
        return HarnessResult(COMPLETED, 0, "", "1")


async def _read_or_empty(trial: TrialContext, path: str) -> bytes:
    """The head of the solution's output; nothing when it is gone or was made unreadable
    (solve.sh runs in the sandbox and may do anything there)."""
    try:
        return await trial.sandbox.read_file(path, limit=MAX_TEXT)
    except (OSError, SandboxError):
        return b""


DRIVERS = {"oracle": Oracle, "nop": Nop}
