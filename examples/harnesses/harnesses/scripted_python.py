"""A scripted harness in Python, on the harness SDK (clients/harness_sdk.py).

It has no model: for each task it carries a script, scripts/<task>/steps.json,
a list of steps it replays through the harness protocol. A step may say
something (a message event), read a sandbox file (ReadFile), run a command in
the sandbox (RunCommand), or write a file of the script's folder into the
sandbox (WriteFiles). A task
without a script, or a step that fails, ends the attempt as failed, with why.
"""

import asyncio
import json
import sys
from pathlib import Path

from hemra.clients.harness_sdk import HarnessSession

VERSION = "1.0.0"
SCRIPTS = Path(__file__).resolve().parent / "scripts"


def load_script(task_name: str) -> list[dict] | None:
    """The task's steps, or None when this harness has no script for it."""
    path = SCRIPTS / task_name.rsplit("/", 1)[-1] / "steps.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))["steps"]


async def run_step(session: HarnessSession, folder: Path, number: int, step: dict) -> str | None:
    """Play one step; the reason it failed, or None."""
    if "say" in step:
        await session.emit("message", "assistant", role="assistant", text=step["say"])
    if "read" in step:
        content = await session.read_file(step["read"])
        await session.emit("tool_call", "read_file", path=step["read"], bytes=len(content))
    if "write" in step:
        content = (folder / step["from"]).read_bytes()
        await session.write_file(step["write"], content, executable=bool(step.get("executable")))
        await session.emit("tool_call", "write_file", path=step["write"], bytes=len(content))
    if "run" in step:
        result = await session.run(step["run"])
        if result.timed_out or result.exit_code != 0:
            why = "timed out" if result.timed_out else f"exited {result.exit_code}"
            stderr = result.stderr.decode(errors="replace").strip().splitlines()
            return f"step {number} ({step['run'][:60]!r}) {why}: {stderr[-1] if stderr else ''}".rstrip(": ")
    return None


async def main() -> int:
    sys.stdin.read()  # the instruction; GetTrial has it too
    async with HarnessSession.from_env() as session:
        trial = await session.trial()
        await session.emit("message", "user", role="user", text=trial.instruction)
        steps = load_script(trial.task_name)
        if steps is None:
            message = f"no script for task {trial.task_name} (this harness only knows {', '.join(known())})"
            await session.emit("error", "no_script", message=message)
            await session.finish(completed=False, message=message, agent_version=VERSION)
            return 0
        folder = SCRIPTS / trial.task_name.rsplit("/", 1)[-1]
        for number, step in enumerate(steps, 1):
            failure = await run_step(session, folder, number, step)
            if failure:
                await session.emit("error", "step_failed", message=failure)
                await session.finish(completed=False, message=failure, agent_version=VERSION)
                return 0
        await session.emit("message", "assistant", role="assistant", text=f"done: {len(steps)} steps")
        await session.finish(completed=True, agent_version=VERSION)
    return 0


def known() -> list[str]:
    return sorted(p.parent.name for p in SCRIPTS.glob("*/steps.json"))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
