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
ENV = {"claude-code": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
       "codex": ("OPENAI_API_KEY", "OPENAI_BASE_URL"), "pi": ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
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
        f'kind = "cli"\nagent = "{agent}"\nversion = "{version}"\nmodel = "{MODEL}"\nenv = [{env}]\n')
    return tmp_path


def _run(hemra_env, tools: Path, server: ModelServer, workspace: Path, agent: str, label: str,
         timeout: int | None = None) -> dict:
    key, url = ENV[agent]
    env = dict(hemra_env, HEMRA_TOOLS_DIR=str(tools), **{key: KEY, url: server.url + ("/v1" if "OPENAI" in url
                                                                                        else "")})
    extra = ["--timeout", str(timeout)] if timeout else []
    result = hemra(env, "run", "-H", agent, "-d", "hemra-offline", "-t", "hemra/reverse-lines", "--label", label,
                   *extra, cwd=workspace, timeout=900)
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
    # Two model calls: the shell call, then the final text after its result; with the pinned model and key.
    requests = model_server.model_requests()
    assert [r.path for r in requests] == [API_PATH[agent]] * 2
    assert {r.body["model"] for r in requests} == {MODEL}
    assert any(KEY in value for value in requests[0].headers.values())
    assert KEY not in json.dumps(attempt)


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
    # Retries are capped at one: the first call and one retry.
    assert len(model_server.model_requests()) == 2
