"""Agent CLIs in the Docker sandbox: the real Claude Code, Codex and pi run inside a container
with no network, reach the scripted model server on the host's loopback through HEMRA's
model relay, and solve a bundled task; nothing else is reachable from inside."""

import json
import socket

import pytest

from tests.e2e.test_cli_agents import (
    API_PATH,
    KEY,
    MODEL,
    PINNED,
    SOLVE,
    TOOL_CALL,
    _of,
    _run,
    _workspace,
    agent_clis,
    model_server,
)
from tests.modelserver import parse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.usefixtures("docker_engine")]
__all__ = ["agent_clis", "model_server"]  # fixtures, used by name


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_cli_docker__agent_reaches_only_its_model_and_solves_the_task(
    agent, agent_clis, model_server, hemra_env, tmp_path
):
    with socket.socket() as other:  # a service on the host's loopback that no harness names
        other.bind(("127.0.0.1", 0))
        other.listen()
        probe = f"(echo > /dev/tcp/127.0.0.1/{other.getsockname()[1]}) 2>/dev/null && echo reached-$((40 + 2)) || echo blocked-$((1 + 1))"
        model_server.script = parse([{"shell": f"{probe}; {SOLVE}"}, {"text": "Reversed the steps."}])
        attempt = _run(
            hemra_env,
            agent_clis,
            model_server,
            _workspace(tmp_path, agent),
            agent,
            f"docker-{agent}",
            flags=("--sandbox", "docker", "--require", "network_block"),
        )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert attempt["agent_version"] == PINNED[agent]
    assert _of(attempt, "status", "sandbox_ready")[0]["sandbox"] == "docker"
    [call] = _of(attempt, "tool_call", TOOL_CALL[agent])
    assert SOLVE in json.dumps(call["arguments"])
    [result] = _of(attempt, "tool_result", TOOL_CALL[agent])
    assert result["is_error"] is False
    assert "blocked-2" in json.dumps(result) and "reached-42" not in json.dumps(result)
    # Both model calls went through the relay, with the pinned model and the key.
    requests = model_server.model_requests()
    assert [r.path for r in requests] == [API_PATH[agent]] * 2
    assert {r.body["model"] for r in requests} == {MODEL}
    assert any(KEY in value for value in requests[0].headers.values())
