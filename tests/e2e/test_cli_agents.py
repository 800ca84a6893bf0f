"""kind = "cli" end to end: the real Claude Code, Codex and pi from npm, through `hemra run`,
against the scripted model server on loopback.

The CLIs are installed by HEMRA itself into a tools folder kept between test
runs (HEMRA_TEST_TOOLS_DIR, default ~/.cache/hemra-test-tools), so only the
first run downloads them.
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.helpers import hemra, show
from tests.modelserver import ModelServer, parse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

TOOLS = Path(os.environ.get("HEMRA_TEST_TOOLS_DIR", "~/.cache/hemra-test-tools")).expanduser()
#: Versions known to run offline on Node 20; the newest of claude-code needs Node 22.
PINNED = {"claude-code": "2.1.332", "codex": "0.171.0", "pi": "0.73.1"}
#: The variables each harness names: the scripted server's URL and a key that is not a secret.
ENV = {
    "claude-code": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "codex": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "pi": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
}
#: The shell tool each agent's model sees, and the name HEMRA records its calls under.
TOOL_CALL = {"claude-code": "Bash", "codex": "command_execution", "pi": "bash"}
API_PATH = {"claude-code": "/v1/messages", "codex": "/v1/responses", "pi": "/v1/chat/completions"}
SOLVE = "tac /app/data/steps.txt > /app/reversed.txt"
KEY = "scripted-key-0123"
MODEL = "gpt-5.5"  # in codex's bundled catalog, so codex adds no fallback-metadata warning


@pytest.fixture(scope="module")
def agent_clis():
    problem = None if shutil.which("npm") and shutil.which("bwrap") else "npm and bwrap are needed"
    if problem:
        if os.environ.get("HEMRA_REQUIRE_AGENT_CLIS"):
            pytest.fail(f"the agent CLI tests are required here: {problem}")
        pytest.skip(problem)
    TOOLS.mkdir(parents=True, exist_ok=True)
    return TOOLS


@pytest.fixture
def model_server():
    with ModelServer() as server:
        yield server


def _workspace(tmp_path: Path, agent: str, version: str | None = None) -> Path:
    version = PINNED[agent] if version is None else version
    (tmp_path / "harnesses").mkdir()
    env = ", ".join(f'"{name}"' for name in ENV[agent])
    (tmp_path / "harnesses" / f"{agent}.toml").write_text(
        f'kind = "cli"\nagent = "{agent}"\nversion = "{version}"\nmodel = "{MODEL}"\nenv = [{env}]\n'
    )
    return tmp_path


def _run(
    hemra_env,
    tools: Path,
    server: ModelServer,
    workspace: Path,
    agent: str,
    label: str,
    timeout: int | None = None,
    flags: tuple[str, ...] = (),
) -> dict:
    """`hemra run` of one agent on reverse-lines against `server`; the attempt with its events."""
    key, url = ENV[agent]
    env = dict(
        hemra_env, HEMRA_TOOLS_DIR=str(tools), **{key: KEY, url: server.url + ("/v1" if "OPENAI" in url else "")}
    )
    extra = ["--timeout", str(timeout)] if timeout else []
    result = hemra(
        env,
        "run",
        "-H",
        agent,
        "-d",
        "hemra-offline",
        "-t",
        "hemra/reverse-lines",
        "--label",
        label,
        *extra,
        *flags,
        cwd=workspace,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    [attempt] = show(env, label)["attempts"]
    attempt["events"] = show(env, attempt["id"], "--events")["events"]
    for e in attempt["events"]:
        e["data"] = json.loads(e["payload"]) if isinstance(e.get("payload"), str) else e.get("payload", {})
    return attempt


def _of(attempt: dict, type_: str, name: str | None = None) -> list[dict]:
    return [e["data"] for e in attempt["events"] if e["type"] == type_ and (name is None or e["name"] == name)]


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_cli_agent__solves_task_through_its_shell_tool(agent, agent_clis, model_server, hemra_env, tmp_path):
    model_server.script = parse([{"shell": SOLVE}, {"text": "Reversed the steps into /app/reversed.txt."}])
    attempt = _run(hemra_env, agent_clis, model_server, _workspace(tmp_path, agent), agent, "solve")

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert attempt["agent_version"] == PINNED[agent]
    [started] = _of(attempt, "status", "agent")
    assert started["version"] == PINNED[agent] and started["model"] == MODEL
    assert started["env_names"] == sorted(ENV[agent])  # names only, never values
    [call] = _of(attempt, "tool_call", TOOL_CALL[agent])
    assert SOLVE in json.dumps(call["arguments"])
    [result] = _of(attempt, "tool_result", TOOL_CALL[agent])
    assert result["id"] == call["id"] and result["is_error"] is False
    assert any(m["text"] == "Reversed the steps into /app/reversed.txt." for m in _of(attempt, "message", "assistant"))
    usage = _of(attempt, "usage")
    assert sum(u["input_tokens"] for u in usage) == 200 and sum(u["output_tokens"] for u in usage) == 40
    if agent == "claude-code":
        assert usage[0]["cost_usd"] > 0
    assert f"/logs/agent/{agent}.jsonl" in {a["path"] for a in attempt["artifacts"]}
    installed = json.loads((agent_clis / f"{agent}@{PINNED[agent]}" / "hemra-tool.json").read_text())
    assert installed["version"] == PINNED[agent]
    if agent == "pi":  # a JavaScript agent brings the host's node into the sandbox
        assert (agent_clis / f"pi@{PINNED[agent]}" / "node" / "bin" / "node").is_file()
    # Two model calls: the shell call, then the final text after its result; with the pinned model and key.
    requests = model_server.model_requests()
    assert [r.path for r in requests] == [API_PATH[agent]] * 2
    assert {r.body["model"] for r in requests} == {MODEL}
    assert any(KEY in value for value in requests[0].headers.values())
    assert KEY not in json.dumps(attempt) and model_server.url not in json.dumps(attempt)


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_cli_agent__giving_up_scores_zero(agent, agent_clis, model_server, hemra_env, tmp_path):
    model_server.script = parse([{"text": "I cannot do this task."}])
    attempt = _run(hemra_env, agent_clis, model_server, _workspace(tmp_path, agent), agent, "give-up")

    assert attempt["outcome"] == "OUTCOME_COMPLETED"
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    assert _of(attempt, "tool_call") == []
    assert [r.path for r in model_server.model_requests()] == [API_PATH[agent]]


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_cli_agent__model_api_error_is_a_harness_failure(agent, agent_clis, model_server, hemra_env, tmp_path):
    model_server.script = parse([{"error": 500, "message": "scripted outage"}])
    attempt = _run(hemra_env, agent_clis, model_server, _workspace(tmp_path, agent), agent, "api-error")

    # pi exits 0 here; its last message's stopReason is what fails it.
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED", attempt
    assert attempt["error"]
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    assert _of(attempt, "error")
    # Retries are capped at one: the first call and one retry (codex also retries the stream once each).
    assert len(model_server.model_requests()) == (4 if agent == "codex" else 2)


# -- Faults: a CLI that crashes, hangs or prints malformed JSON -----------------------------------
# A fake claude (a bash script) in a tool folder of its own, found where HEMRA caches the real ones.

FAKES = {
    "crash": 'echo \'{"type":"system","subtype":"init","claude_code_version":"0.0.1-crash"}\'\n'
    'echo "fatal: the agent crashed" >&2\nexit 139\n',
    "hang": 'echo \'{"type":"system","subtype":"init","claude_code_version":"0.0.1-hang"}\'\nexec sleep 600\n',
    "garbage": 'echo \'{"type":"assistant","message":{"content":[{"type":"text","text":"partial\'\n'
    'echo "not json at all"\necho \'["a", "list"]\'\n'
    'echo \'{"type":"assistant","message":{"content":"not a list"}}\'\n'
    'echo \'{"type":"result","subtype":"success","is_error":false,"usage":{"input_tokens":1,'
    '"output_tokens":2},"total_cost_usd":0.5}\'\n',
}


def _fake_tools(tmp_path: Path, fault: str) -> tuple[Path, str]:
    version = f"0.0.1-{fault}"
    binary = tmp_path / "tools" / f"claude-code@{version}" / "node_modules" / ".bin" / "claude"
    binary.parent.mkdir(parents=True)
    binary.write_text(
        f'#!/bin/bash\nif [ "$1" = --version ]; then echo "{version} (Claude Code)"; exit 0; fi\n' + FAKES[fault]
    )
    binary.chmod(0o755)
    return tmp_path / "tools", version


def test_cli_fault__crash_is_a_harness_failure_with_its_output_kept(model_server, hemra_env, tmp_path):
    tools, version = _fake_tools(tmp_path, "crash")
    attempt = _run(hemra_env, tools, model_server, _workspace(tmp_path, "claude-code", version), "claude-code", "crash")
    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED"
    assert attempt["exit_code"] == 139 and "fatal: the agent crashed" in attempt["error"]
    assert attempt["agent_version"] == version
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    assert any("the agent crashed" in o["text"] for o in _of(attempt, "output", "stderr"))
    assert {"/logs/agent/claude-code.jsonl", "/logs/agent/claude-code-stderr.txt"} <= {
        a["path"] for a in attempt["artifacts"]
    }


def test_cli_fault__hang_times_out_and_is_killed(model_server, hemra_env, tmp_path):
    tools, version = _fake_tools(tmp_path, "hang")
    attempt = _run(
        hemra_env, tools, model_server, _workspace(tmp_path, "claude-code", version), "claude-code", "hang", timeout=4
    )
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT"
    assert "timed out" in attempt["error"]
    # What it printed before it hung was streamed in and kept.
    assert _of(attempt, "status", "init")[0]["version"] == version
    assert attempt["score"]["rewards"] == {"reward": 0.0}


def test_cli_fault__malformed_json_lines_are_kept_as_output(model_server, hemra_env, tmp_path):
    tools, version = _fake_tools(tmp_path, "garbage")
    attempt = _run(
        hemra_env, tools, model_server, _workspace(tmp_path, "claude-code", version), "claude-code", "garbage"
    )
    assert attempt["outcome"] == "OUTCOME_COMPLETED"
    kept = "\n".join(o["text"] for o in _of(attempt, "output", "claude-code"))
    assert '"text":"partial' in kept and "not json at all" in kept and '["a", "list"]' in kept
    assert "not a list" in kept
    [usage] = _of(attempt, "usage")
    assert usage["output_tokens"] == 2 and usage["cost_usd"] == 0.5


def test_cli_version_drift_is_recorded_and_flagged(model_server, hemra_env, tmp_path):
    """The version that ran (here the stream's init event) is the attempt's; the report flags the drift."""
    version = "0.0.1-drift"
    binary = tmp_path / "tools" / f"claude-code@{version}" / "node_modules" / ".bin" / "claude"
    binary.parent.mkdir(parents=True)
    binary.write_text(
        '#!/bin/bash\necho "0.0.1-drift (Claude Code)"\n'
        '[ "$1" = --version ] || echo \'{"type":"system","subtype":"init","claude_code_version":"0.0.2"}\'\n'
    )
    binary.chmod(0o755)
    attempt = _run(
        hemra_env,
        tmp_path / "tools",
        model_server,
        _workspace(tmp_path, "claude-code", version),
        "claude-code",
        "drift",
    )
    assert attempt["agent_version"] == "0.0.2"
    report = hemra(dict(hemra_env), "show", "drift", "--report", cwd=tmp_path)
    assert "agent version drifted: pinned 0.0.1-drift, ran 0.0.2" in report.stdout
    # The agent that reported another version is not the agent the harness file pinned.
    expected = "agent other than the one pinned: pinned claude-code 0.0.1-drift, ran claude-code 0.0.2 in 1 of 1 trials"
    assert expected in report.stdout, report.stdout


def test_cli_unknown_agent_is_refused_before_anything_is_recorded(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    path = tmp_path / "harnesses" / "gem.toml"
    path.write_text('kind = "cli"\nagent = "gemini"\n')
    result = hemra(hemra_env, "run", "-H", "gem", "-d", "hemra-offline", cwd=tmp_path)
    assert result.returncode == 2
    assert f"{path}: agent must be one of claude-code, codex, pi" in result.stderr
    assert hemra(hemra_env, "runs", "--json").stdout.strip() == "[]"


def test_cli_agent__concurrent_attempts_share_the_tool_folder(agent_clis, model_server, hemra_env, tmp_path):
    model_server.script = parse([{"shell": SOLVE}, {"text": "Done."}])
    workspace = _workspace(tmp_path, "codex")
    env = dict(hemra_env, HEMRA_TOOLS_DIR=str(agent_clis), OPENAI_API_KEY=KEY, OPENAI_BASE_URL=model_server.url + "/v1")
    result = hemra(
        env,
        "run",
        "-H",
        "codex",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/reverse-lines",
        "-k",
        "3",
        "--concurrency",
        "3",
        "--label",
        "together",
        cwd=workspace,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    attempts = show(env, "together")["attempts"]
    assert [a["score"]["rewards"] for a in attempts] == [{"reward": 1.0}] * 3
    assert len(model_server.model_requests()) == 6


def test_cli_pi__anthropic_messages_provider(agent_clis, model_server, hemra_env, tmp_path):
    """pi given ANTHROPIC_BASE_URL speaks Anthropic Messages (its provider's base URL has no /v1)."""
    model_server.script = parse([{"shell": SOLVE}, {"text": "Done."}])
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "pi.toml").write_text(
        f'kind = "cli"\nagent = "pi"\nversion = "{PINNED["pi"]}"\nmodel = "{MODEL}"\n'
        'env = ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]\n'
    )
    env = dict(hemra_env, HEMRA_TOOLS_DIR=str(agent_clis), ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=model_server.url)
    result = hemra(
        env,
        "run",
        "-H",
        "pi",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/reverse-lines",
        "--label",
        "pa",
        cwd=tmp_path,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    [attempt] = show(env, "pa")["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    requests = model_server.model_requests()
    assert [r.path for r in requests] == ["/v1/messages"] * 2 and requests[0].headers["x-api-key"] == KEY
