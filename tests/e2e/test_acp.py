"""kind = "acp" end to end through `hemra run`: the real @zed-industries/claude-agent-acp from
npm against the scripted model server, our own scripted ACP agent on every bundled task,
and the faults (a refusing policy, a timeout, an agent that dies or babbles).

The npm adapter's bundled Claude Code looks up hosts other than its model's, so
each of its runs happens in a network namespace of its own with only loopback
(`unshare -n`, as root), with the scripted model server inside it. The adapter
is installed by HEMRA's own installer into the tools folder the CLI agent tests
share (HEMRA_TEST_TOOLS_DIR, default ~/.cache/hemra-test-tools).
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import HEMRA, REPO
from tests.e2e.helpers import hemra, show

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

TOOLS = Path(os.environ.get("HEMRA_TEST_TOOLS_DIR", "~/.cache/hemra-test-tools")).expanduser()
ADAPTER, ADAPTER_VERSION = "@zed-industries/claude-agent-acp", "0.23.1"
EXAMPLES = REPO / "examples" / "harnesses"
SOLVE = "tac /app/data/steps.txt > /app/reversed.txt"
KEY = "scripted-key-0123"
PORT = 18123  # free in a fresh network namespace
TASKS = sorted(p.name for p in (REPO / "examples" / "hemra-offline").iterdir() if (p / "task.toml").exists())
#: Runs hemra with the scripted model server beside it, both in a network namespace of their own.
ISOLATED = """set -u
ip link set lo up
PYTHONPATH="$REPO" "$PYTHON" -m tests.modelserver --script "$SCRIPT" --port $PORT > "$SERVER_LOG" 2>&1 &
server=$!
for _ in $(seq 200); do grep -q listening "$SERVER_LOG" && break; sleep 0.05; done
"$HEMRA" "$@"
code=$?
kill "$server"
wait "$server" 2>/dev/null
exit "$code"
"""


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("HEMRA_REQUIRE_AGENT_CLIS") or os.environ.get("CI"):
        pytest.fail(f"the ACP agent tests are required here: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def adapter_tools():
    """The tools folder, with the adapter installed (npm needs the registry, so outside the namespace)."""
    if not (shutil.which("npm") and shutil.which("bwrap") and shutil.which("ip")):
        _skip_or_fail("npm, bwrap and ip (iproute2) are needed")
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        _skip_or_fail("unshare -n is not permitted here (needs root or user namespaces)")
    TOOLS.mkdir(parents=True, exist_ok=True)
    from hemra.services.executor.harnesses.acp.driver import tool_name
    from hemra.services.executor.harnesses.cli import install

    previous = os.environ.get("HEMRA_TOOLS_DIR")
    os.environ["HEMRA_TOOLS_DIR"] = str(TOOLS)
    try:
        asyncio.run(install.ensure(tool_name(ADAPTER), ADAPTER, ADAPTER_VERSION, True))
    finally:
        if previous is None:
            os.environ.pop("HEMRA_TOOLS_DIR")
        else:
            os.environ["HEMRA_TOOLS_DIR"] = previous
    return TOOLS


def _adapter_workspace(tmp_path: Path, permission: str = "allow") -> Path:
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "claude-acp.toml").write_text(
        f'kind = "acp"\nagent = "{ADAPTER}"\nversion = "{ADAPTER_VERSION}"\npermission = "{permission}"\n'
        'env = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]\n'
    )
    return tmp_path


def _run_isolated(hemra_env, tools: Path, workspace: Path, script: list, label: str, *extra: str) -> dict:
    script_file = workspace / "model-script.json"
    script_file.write_text(json.dumps(script))
    env = dict(
        hemra_env,
        HEMRA_TOOLS_DIR=str(tools),
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{PORT}",
        ANTHROPIC_API_KEY=KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        REPO=str(REPO),
        PYTHON=sys.executable,
        SCRIPT=str(script_file),
        PORT=str(PORT),
        SERVER_LOG=str(workspace / "model-server.log"),
        HEMRA=HEMRA,
    )
    result = subprocess.run(
        [
            "unshare",
            "-n",
            "bash",
            "-c",
            ISOLATED,
            "isolated",
            "run",
            "-H",
            "claude-acp",
            "-d",
            "hemra-offline",
            "-t",
            "hemra/reverse-lines",
            "--label",
            label,
            *extra,
        ],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    return _attempt(hemra_env, label)


def _attempt(env: dict, label: str) -> dict:
    [attempt] = show(env, label)["attempts"]
    attempt["events"] = show(env, attempt["id"], "--events")["events"]
    return attempt


def _of(attempt: dict, type_: str, name: str | None = None) -> list[dict]:
    return [e["payload"] for e in attempt["events"] if e["type"] == type_ and (name is None or e["name"] == name)]


def test_npm_acp_agent__solves_a_task(adapter_tools, hemra_env, tmp_path):
    attempt = _run_isolated(
        hemra_env,
        adapter_tools,
        _adapter_workspace(tmp_path),
        [{"shell": SOLVE}, {"text": "Reversed the steps into /app/reversed.txt."}],
        "acp",
    )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert attempt["agent_version"] == ADAPTER_VERSION
    [init] = _of(attempt, "status", "initialize")
    assert init["agent"]["name"] == ADAPTER and init["protocol_version"] == 1
    [call] = _of(attempt, "tool_call", "execute")
    assert call["arguments"]["command"] == SOLVE
    [permission] = _of(attempt, "permission")
    assert (permission["id"], permission["policy"], permission["option"]) == (call["id"], "allow", "allow")
    [result] = _of(attempt, "tool_result", "execute")
    assert result["id"] == call["id"] and result["is_error"] is False
    assert {"role": "assistant", "text": "Reversed the steps into /app/reversed.txt."} in _of(attempt, "message")
    [total] = _of(attempt, "usage", "total")
    assert (total["input_tokens"], total["output_tokens"]) == (200, 40)
    assert any(u["cost_usd"] > 0 for u in _of(attempt, "usage", "context"))
    assert _of(attempt, "status", "stop") == [{"stop_reason": "end_turn"}]
    assert {"/logs/agent/acp.jsonl", "/logs/agent/acp-stderr.txt"} <= {a["path"] for a in attempt["artifacts"]}
    assert KEY not in json.dumps(attempt)


def test_npm_acp_agent__deny_policy_refuses_its_tool(adapter_tools, hemra_env, tmp_path):
    attempt = _run_isolated(
        hemra_env,
        adapter_tools,
        _adapter_workspace(tmp_path, permission="deny"),
        [{"shell": SOLVE}, {"text": "I was not allowed to run it."}],
        "deny",
    )

    assert attempt["outcome"] == "OUTCOME_COMPLETED"
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    [permission] = _of(attempt, "permission")
    assert (permission["policy"], permission["option"]) == ("deny", "reject")
    [result] = _of(attempt, "tool_result", "execute")
    assert result["is_error"] is True


def test_npm_acp_agent__timeout_cancels_the_session_then_kills(adapter_tools, hemra_env, tmp_path):
    started = time.monotonic()
    attempt = _run_isolated(
        hemra_env, adapter_tools, _adapter_workspace(tmp_path), [{"shell": "sleep 120"}], "slow", "--timeout", "8"
    )

    assert attempt["outcome"] == "OUTCOME_TIMED_OUT"
    assert attempt["error"] == "the agent timed out after 8 s"
    # The adapter ends its turn on session/cancel; it never exits by itself, so it is then killed.
    assert _of(attempt, "status", "cancel") == [{"reason": "timeout", "stop_reason": "cancelled", "ended": True}]
    assert _of(attempt, "status", "exit") == [{"exit_code": -1, "killed": True}]
    assert time.monotonic() - started < 90


def test_own_acp_agent__solves_every_bundled_task_through_fs_and_terminal(hemra_env):
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "scripted-acp",
        "-d",
        "hemra-offline",
        "--concurrency",
        "2",
        "--label",
        "own",
        cwd=EXAMPLES,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    attempts = show(hemra_env, "own")["attempts"]
    assert sorted(a["task_name"] for a in attempts) == [f"hemra/{t}" for t in TASKS]
    for attempt in attempts:
        assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
        assert set(attempt["score"]["rewards"].values()) == {1.0}, attempt
        assert attempt["agent_version"] == "1.0.0"
    fix = next(a for a in attempts if a["task_name"] == "hemra/fix-inventory")
    events = show(hemra_env, fix["id"], "--events")["events"]
    served = [
        (e["name"], e["payload"])
        for e in events
        if e["type"] == "tool_call" and e["name"] in ("fs/read_text_file", "fs/write_text_file", "terminal")
    ]
    broken = (
        REPO / "examples" / "hemra-offline" / "fix-inventory" / "environment" / "src" / "inventory.py"
    ).read_text()
    assert served[0] == ("fs/read_text_file", {"path": "/app/inventory.py", "chars": len(broken)})
    assert ("fs/write_text_file", {"path": "/app/inventory.py", "chars": 789}) in served
    assert any(
        name == "terminal"
        and p["command"] == "bash -c 'python3 /tmp/smoke.py'"
        and p["exit_status"] == {"exitCode": 0, "signal": None}
        and p["output"] == "inventory ok\n"
        for name, p in served
    )


def _own_workspace(tmp_path: Path, command: list[str]) -> Path:
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "odd.toml").write_text(f'kind = "acp"\ncommand = {json.dumps(command)}\n')
    return tmp_path


def test_acp_agent_that_dies_is_a_harness_failure(hemra_env, tmp_path):
    workspace = _own_workspace(
        tmp_path, ["python3", "-c", "import sys; print('no agent here', file=sys.stderr); sys.exit(3)"]
    )
    result = hemra(
        hemra_env, "run", "-H", "odd", "-d", "hemra-offline", "-t", "hemra/text-stats", "--label", "dies", cwd=workspace
    )
    assert result.returncode == 0, result.stderr + result.stdout
    attempt = _attempt(hemra_env, "dies")
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED"
    assert attempt["error"] == "the agent exited 3 before answering initialize: no agent here"


def test_acp_agent_that_babbles_and_hangs_times_out(hemra_env, tmp_path):
    workspace = _own_workspace(tmp_path, ["bash", "-c", "echo 'this is not JSON-RPC'; sleep 300"])
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "odd",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/text-stats",
        "--label",
        "hangs",
        "--timeout",
        "3",
        cwd=workspace,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    attempt = _attempt(hemra_env, "hangs")
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT"
    assert attempt["error"] == "the agent timed out after 3 s before its prompt"
    assert {"text": "this is not JSON-RPC"} in _of(attempt, "output", "stdout")


@pytest.mark.parametrize(
    "body, problem",
    [
        (
            'kind = "acp"\nagent = "@zed-industries/claude-agent-acp"\npermission = "sometimes"\n',
            "permission must be one of allow, deny (got 'sometimes')",
        ),
        ('kind = "acp"\npermission = "deny"\n', "an acp harness needs agent, an npm package"),
        (
            'kind = "acp"\nagent = "@zed-industries/claude-agent-acp"\nversion = "^0.23"\n',
            "version must be an npm version like 0.23.1 (got '^0.23')",
        ),
    ],
)
def test_bad_acp_harness_file_is_refused_before_recording(hemra_env, tmp_path, body, problem):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "bad.toml").write_text(body)
    result = hemra(hemra_env, "run", "-H", "bad", "-d", "hemra-offline", cwd=tmp_path)
    assert result.returncode == 2
    assert problem in result.stderr and "bad.toml" in result.stderr
    assert hemra(hemra_env, "runs", "--json").stdout.strip() in ("", "[]")


async def test_relay_feeds_whole_messages_in_order(tmp_path):
    """The stdin half of the pipe: numbered files, each passed on once whole, in order, until close."""
    from hemra.services.executor.harnesses.acp.channel import relay_script
    from hemra.services.executor.harnesses.acp.protocol import CHANNEL
    from hemra.services.executor.sandboxes.host import HostSandbox
    from hemra.v1 import common_pb2 as pb

    (tmp_path / "task" / "environment").mkdir(parents=True)
    sandbox = HostSandbox(
        "relay", pb.Task(environment=pb.Environment(workdir="/app")), tmp_path / "task", tmp_path / "work"
    )
    await sandbox.prepare()
    received = bytearray()

    async def collect(stream, chunk):
        if stream == "stdout":
            received.extend(chunk)

    async def settle(expected: bytes) -> None:
        for _ in range(100):
            if bytes(received) == expected:
                return
            await asyncio.sleep(0.05)
        assert bytes(received) == expected

    try:
        agent = asyncio.create_task(sandbox.exec(relay_script(["cat"]), timeout=30, on_output=collect))
        await sandbox.write_files(
            [(f"{CHANNEL}/in/00000002", b'{"second":2}\n', False), (f"{CHANNEL}/in/00000001", b'{"first":', False)]
        )  # caught half-written
        await asyncio.sleep(0.3)
        assert received == b""
        await sandbox.write_files([(f"{CHANNEL}/in/00000001", b'{"first":1}\n', False)])
        await settle(b'{"first":1}\n{"second":2}\n')
        await sandbox.write_files([(f"{CHANNEL}/in/close", b"", False)])
        result = await asyncio.wait_for(agent, 10)
        assert result.exit_code == 0
        assert await sandbox.list_files(f"{CHANNEL}/in") == [f"{CHANNEL}/in/close"]
    finally:
        await sandbox.teardown()


def test_own_acp_agent__timeout_cancels_its_terminal(hemra_env, tmp_path):
    """At the timeout, session/cancel: our agent kills its running terminal and ends the turn cancelled."""
    harnesses = tmp_path / "harnesses"
    (harnesses / "scripts" / "slow").mkdir(parents=True)
    shutil.copy(EXAMPLES / "harnesses" / "scripted_acp_agent.py", harnesses)
    (harnesses / "scripts" / "slow" / "steps.json").write_text(
        json.dumps({"recognise": "/app/answer.txt", "steps": [{"say": "Waiting.", "run": "sleep 300"}]})
    )
    (harnesses / "slow-acp.toml").write_text('kind = "acp"\ncommand = ["python3", "scripted_acp_agent.py"]\n')
    started = time.monotonic()
    result = hemra(
        hemra_env,
        "run",
        "-H",
        "slow-acp",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/text-stats",
        "--label",
        "slow-own",
        "--timeout",
        "4",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    attempt = _attempt(hemra_env, "slow-own")
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT"
    assert _of(attempt, "status", "cancel") == [{"reason": "timeout", "stop_reason": "cancelled", "ended": True}]
    [terminal] = _of(attempt, "tool_call", "terminal")
    assert terminal["command"] == "bash -c 'sleep 300'"
    assert terminal["exit_status"] == {"exitCode": None, "signal": "SIGKILL"}
    assert _of(attempt, "status", "exit")[0]["killed"] is False  # it exits when its stdin closes
    assert time.monotonic() - started < 60
