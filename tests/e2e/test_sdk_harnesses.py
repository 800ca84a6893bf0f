"""kind = "sdk" end to end: the example harnesses of examples/harnesses/ on the real Claude
Agent SDK and OpenAI Agents SDK from npm, run inside the sandbox through `hemra run`, against
the scripted model server on loopback; their events come through the TypeScript harness
client, over the relayed harness protocol.

The SDKs are installed by HEMRA itself into the tools folder the CLI tests share
(HEMRA_TEST_TOOLS_DIR), so only the first run downloads them.
"""

import json
import shutil

import pytest

from tests.conftest import REPO
from tests.e2e.helpers import hemra, runs, show
from tests.e2e.test_cli_agents import KEY, _of, agent_clis, model_server
from tests.e2e.test_mcp_servers import DECLARATION, SERVER, WORD
from tests.harness_clients.conftest import TS_CLIENT, require_node_package
from tests.modelserver import parse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
__all__ = ["agent_clis", "model_server"]  # fixtures, used by name

EXAMPLES = REPO / "examples" / "harnesses"
TASK = REPO / "examples" / "hemra-offline" / "reverse-lines"
REVERSED = "".join(reversed((TASK / "environment" / "data" / "steps.txt").read_text().splitlines(keepends=True)))
PINNED = {"sdk-claude": "0.3.337", "sdk-openai": "0.20.0"}
#: How each example's model edits a file: Claude Code's Write tool, the program's own write_file.
WRITE = {
    "sdk-claude": {"tool": "Write", "arguments": {"file_path": "/app/reversed.txt", "content": REVERSED}},
    "sdk-openai": {"tool": "write_file", "arguments": {"path": "reversed.txt", "content": REVERSED}},
}
ENV_NAMES = {
    "sdk-claude": ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"],
    "sdk-openai": ["OPENAI_API_KEY", "OPENAI_BASE_URL"],
}
API_PATH = {"sdk-claude": "/v1/messages", "sdk-openai": "/v1/responses"}
SOLVE = "tac /app/data/steps.txt > /app/reversed.txt"


@pytest.fixture
def sdk_tools(agent_clis):
    require_node_package(TS_CLIENT)  # packed into the SDK's tools folder
    return agent_clis


def _run(hemra_env, tools, server, harness: str, label: str, flags: tuple[str, ...] = (), cwd=EXAMPLES) -> dict:
    env = dict(
        hemra_env,
        HEMRA_TOOLS_DIR=str(tools),
        ANTHROPIC_API_KEY=KEY,
        ANTHROPIC_BASE_URL=server.url,
        OPENAI_API_KEY=KEY,
        OPENAI_BASE_URL=server.url + "/v1",
    )
    result = hemra(
        env,
        "run",
        "-H",
        harness,
        "-d",
        "hemra-offline",
        "-t",
        "hemra/reverse-lines",
        "--label",
        label,
        *flags,
        cwd=cwd,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    [attempt] = show(env, label)["attempts"]
    attempt["events"] = show(env, attempt["id"], "--events")["events"]
    for e in attempt["events"]:
        e["data"] = json.loads(e["payload"]) if isinstance(e.get("payload"), str) else e.get("payload", {})
    return attempt


@pytest.mark.parametrize("harness", sorted(PINNED))
def test_sdk__solves_task_by_a_tool_call_that_writes_the_file(harness, sdk_tools, model_server, hemra_env):
    model_server.script = parse([WRITE[harness], {"text": "Wrote /app/reversed.txt."}])
    attempt = _run(hemra_env, sdk_tools, model_server, harness, "solve")

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert attempt["agent_version"] == PINNED[harness]  # the SDK version that ran
    [started] = _of(attempt, "status", "agent")
    assert started["pinned"] == started["version"] == PINNED[harness]
    assert started["env_names"] == ENV_NAMES[harness]  # names only, never values
    # Events the program sent through the harness client: the prompt, the call, its result, usage.
    assert _of(attempt, "message", "user")[0]["text"].startswith("The file `/app/data/steps.txt`")
    [call] = _of(attempt, "tool_call", WRITE[harness]["tool"])
    assert call["arguments"] == WRITE[harness]["arguments"]
    [result] = _of(attempt, "tool_result", WRITE[harness]["tool"])  # named by its call's tool
    assert result["id"] == call["id"] and result.get("is_error", False) is False
    assert any("Wrote /app/reversed.txt." in m["text"] for m in _of(attempt, "message", "assistant"))
    [usage] = _of(attempt, "usage", "total")
    assert usage["input_tokens"] == 200 and usage["output_tokens"] == 40  # two calls of the script's 100/20
    if harness == "sdk-claude":
        assert "cost_usd" in usage
    requests = model_server.model_requests()
    assert [r.path for r in requests] == [API_PATH[harness]] * 2
    # HEMRA's own count through the relay read the model's answers only, not the harness protocol.
    [observed] = _of(attempt, "usage_observed", "relay")
    assert observed["model_calls"] == 2 and observed["unreadable"] == 0


def test_sdk__concurrent_attempts_install_the_sdk_once(sdk_tools, model_server, hemra_env, tmp_path):
    """A fresh tools folder: three attempts at once install the SDK (with the harness client
    and a node) once, into one folder named by its version and the client's digest."""
    tools = tmp_path / "tools"
    model_server.script = parse([WRITE["sdk-openai"], {"text": "Done."}])
    env = dict(hemra_env, HEMRA_TOOLS_DIR=str(tools), OPENAI_API_KEY=KEY, OPENAI_BASE_URL=model_server.url + "/v1")
    flags = ("-t", "hemra/reverse-lines", "-k", "3", "--concurrency", "3", "--label", "together")
    result = hemra(env, "run", "-H", "sdk-openai", "-d", "hemra-offline", *flags, cwd=EXAMPLES, timeout=900)
    assert result.returncode == 0, result.stderr + result.stdout
    attempts = show(env, "together")["attempts"]
    assert [a["score"]["rewards"] for a in attempts] == [{"reward": 1.0}] * 3, attempts
    [folder] = [p for p in tools.iterdir() if not p.name.startswith(".")]
    assert folder.name.startswith("sdk-openai-agents@0.20.0+hemra-harness-")
    recorded = json.loads((folder / "hemra-tool.json").read_text())
    assert (recorded["package"], recorded["version"]) == ("@openai/agents", "0.20.0")
    assert (folder / "node" / "bin" / "node").is_file()
    assert (folder / "node_modules" / "hemra-harness" / "dist" / "src" / "index.js").is_file()
    assert not (folder / "node_modules" / "hemra-harness").is_symlink()  # a copy: links break in sandboxes


@pytest.mark.parametrize("harness", sorted(PINNED))
def test_sdk__a_model_that_gives_up_scores_0(harness, sdk_tools, model_server, hemra_env):
    model_server.script = parse([{"text": "I give up."}])
    attempt = _run(hemra_env, sdk_tools, model_server, harness, "give-up")

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    assert not [e for e in attempt["events"] if e["type"] == "tool_call"]


@pytest.mark.parametrize("harness", sorted(PINNED))
def test_sdk__model_api_error_is_a_harness_failure_saying_why(harness, sdk_tools, model_server, hemra_env):
    model_server.script = parse([{"error": 500, "message": "scripted overload"}] * 8)
    attempt = _run(hemra_env, sdk_tools, model_server, harness, "api-error")

    assert attempt["outcome"] == "OUTCOME_HARNESS_FAILED", attempt
    assert "500" in attempt["error"] and "scripted overload" in attempt["error"]  # the program's, through Finish
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    [said] = _of(attempt, "error", "agent")
    assert "scripted overload" in said["message"]


def test_sdk__timeout_is_timed_out_and_scored(sdk_tools, model_server, hemra_env):
    model_server.script = parse([{"shell": "sleep 300"}, {"text": "Slept."}])
    attempt = _run(hemra_env, sdk_tools, model_server, "sdk-openai", "slow", ("--timeout", "8"))

    assert attempt["outcome"] == "OUTCOME_TIMED_OUT", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 0.0}
    [exited] = _of(attempt, "status", "exit")
    assert exited["timed_out"] is True


@pytest.mark.usefixtures("docker_engine")
@pytest.mark.parametrize("harness", sorted(PINNED))
def test_sdk_docker__network_block_reaches_only_model_and_protocol(harness, sdk_tools, model_server, hemra_env):
    import socket

    with socket.socket() as other:  # a service on the host's loopback that no harness names
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        probe = f"(echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached-$((40 + 2)) || echo blocked-$((1 + 1))"
        model_server.script = parse([{"shell": f"{probe}; {SOLVE}"}, {"text": "Reversed the steps."}])
        attempt = _run(
            hemra_env,
            sdk_tools,
            model_server,
            harness,
            f"docker-{harness}",
            ("--sandbox", "docker", "--require", "network_block"),
        )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert _of(attempt, "status", "sandbox_ready")[0]["sandbox"] == "docker"
    [result] = [e["data"] for e in attempt["events"] if e["type"] == "tool_result"]
    assert "blocked-2" in json.dumps(result) and "reached-42" not in json.dumps(result)
    assert [r.path for r in model_server.model_requests()] == [API_PATH[harness]] * 2


#: What each example's model sees its MCP tool as, and its env names' last (for the variable added).
MCP_TOOL = {"sdk-claude": "mcp__notes__lookup", "sdk-openai": "lookup"}
LAST_ENV = {"sdk-claude": '"ANTHROPIC_BASE_URL"]', "sdk-openai": '"OPENAI_BASE_URL"]'}


@pytest.mark.parametrize("harness", sorted(PINNED))
def test_sdk__example_hands_its_mcp_server_to_the_sdk(harness, sdk_tools, model_server, hemra_env, tmp_path):
    """The examples pass HEMRA_MCP_SERVERS to their SDK: the model calls the server's tool
    inside the sandbox, and the event log shows the call and its result."""
    folder = tmp_path / "harnesses"
    shutil.copytree(EXAMPLES / "harnesses" / "sdk", folder / "sdk")
    (folder / "server.py").write_text(SERVER)
    (folder / f"{harness}.toml").write_text(
        (EXAMPLES / "harnesses" / f"{harness}.toml")
        .read_text()
        .replace(LAST_ENV[harness], LAST_ENV[harness][:-1] + ', "ENABLE_TOOL_SEARCH"]')
        + "\n"
        + DECLARATION
    )
    model_server.script = parse(
        [{"tool": "lookup", "arguments": {"key": "door"}}, WRITE[harness], {"text": "Looked it up; wrote it."}]
    )
    env = dict(hemra_env, NOTES_WORD=WORD, ENABLE_TOOL_SEARCH="false")
    attempt = _run(env, sdk_tools, model_server, harness, f"mcp-{harness}", cwd=tmp_path)

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    [started] = _of(attempt, "status", "mcp_server")  # HEMRA checked it starts, first
    assert started["server"] == "notes"
    [call] = _of(attempt, "tool_call", MCP_TOOL[harness])
    assert call["arguments"] == {"key": "door"}
    [result] = [e["data"] for e in attempt["events"] if e["type"] == "tool_result" and e["data"]["id"] == call["id"]]
    assert f"the word for door is {WORD}" in result["output"] and result.get("is_error", False) is False


BAD = {
    "an unknown sdk": (
        'kind = "sdk"\nsdk = "langchain"\nversion = "1.0.0"\ncommand = ["node", "a.mjs"]\n',
        "sdk must be one of",
    ),
    "no version": ('kind = "sdk"\nsdk = "openai-agents"\ncommand = ["node", "a.mjs"]\n', "needs version"),
    "a range for a version": (
        'kind = "sdk"\nsdk = "openai-agents"\nversion = "^0.20.0"\ncommand = ["node", "a.mjs"]\n',
        "exact npm version",
    ),
    "agent in an sdk harness": (
        'kind = "sdk"\nsdk = "openai-agents"\nagent = "x"\nversion = "0.20.0"\ncommand = ["node", "a.mjs"]\n',
        "agent is not a key of an sdk harness",
    ),
    "a command that is not node": (
        'kind = "sdk"\nsdk = "openai-agents"\nversion = "0.20.0"\ncommand = ["python3", "a.py"]\n',
        'command = ["node"',
    ),
    "a script outside the folder": (
        'kind = "sdk"\nsdk = "openai-agents"\nversion = "0.20.0"\ncommand = ["node", "../a.mjs"]\n',
        "inside the harness file's folder",
    ),
    "a missing script": (
        'kind = "sdk"\nsdk = "openai-agents"\nversion = "0.20.0"\ncommand = ["node", "gone.mjs"]\n',
        "is not a file",
    ),
    "sdk in another kind": ('kind = "program"\nsdk = "openai-agents"\ncommand = ["true"]\n', "sdk harnesses only"),
    "an unknown key": (
        'kind = "sdk"\nsdk = "openai-agents"\nversion = "0.20.0"\ncommand = ["node", "a.mjs"]\ntools = []\n',
        "unknown key 'tools'",
    ),
}


def test_sdk_bad_input__modal_sandbox_refused(hemra_env):
    result = hemra(hemra_env, "run", "-H", "sdk-openai", "-d", "hemra-offline", "--sandbox", "modal", cwd=EXAMPLES)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "an sdk harness runs in the host or docker sandbox" in lines[0], result.stderr
    assert runs(hemra_env) == []


@pytest.mark.parametrize("case", list(BAD))
def test_sdk_bad_input__one_line_exit_2_nothing_recorded(case, hemra_env, tmp_path):
    text, expected = BAD[case]
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "a.mjs").write_text("// the program\n")
    (tmp_path / "harnesses" / "bad.toml").write_text(text)
    result = hemra(hemra_env, "run", "-H", "bad", "-d", "hemra-offline", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.stderr
    assert runs(hemra_env) == []
