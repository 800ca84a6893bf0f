"""[[mcp_server]] end to end: a small stdio MCP server written here, declared once in a harness
file and handed to the real Claude Code and Codex (from npm) and the real Claude ACP adapter,
each against the scripted model server, which calls the server's tool; a server that does not
start; and the harness files refused before anything is recorded.

The server is a Python script kept beside the harness file (mounted read-only at
/opt/hemra/harness inside the sandbox), speaking MCP's JSON-RPC over stdio; its
one tool, lookup, answers with a word it reads from the variable its declaration
names, so the event log shows that the call reached it and that the variable did.
"""

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e import test_acp
from tests.e2e.helpers import hemra, runs, show
from tests.e2e.test_acp import adapter_tools  # noqa: F401  (fixture)
from tests.e2e.test_cli_agents import ENV, KEY, MODEL, PINNED, SOLVE, _of, _run, agent_clis, model_server  # noqa: F401
from tests.modelserver import parse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

WORD = "sesame-42"
SERVER = r"""
import json, os, sys

TOOL = {
    "name": "lookup",
    "description": "The word kept for a key.",
    "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
}


def answer(message):
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hemra-test-notes", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call" and params.get("name") == "lookup":
        key = (params.get("arguments") or {}).get("key", "")
        text = f"the word for {key} is {os.environ.get('NOTES_WORD', '(unset)')}"
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "ping":
        return {}
    return None


print("notes server up", file=sys.stderr, flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue  # notifications
    result = answer(message)
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": f"no method {message.get('method')}"}
    else:
        reply["result"] = result
    print(json.dumps(reply), flush=True)
"""
#: The same server in bash, for task images without python3 (the Docker sandbox's).
BASH_SERVER = r"""#!/bin/bash
# The notes server in bash, for task images without python3: each request is one JSON line.
echo "notes server (bash) up" >&2
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id" *: *\([0-9][0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
    *'"method"'*:*'"initialize"'*)
      version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion" *: *"\([^"]*\)".*/\1/p')
      result='{"protocolVersion":"'"${version:-2025-06-18}"'","capabilities":{"tools":{}},"serverInfo":{"name":"hemra-test-notes","version":"1.0"}}';;
    *'"method"'*:*'"tools/list"'*)
      result='{"tools":[{"name":"lookup","description":"The word kept for a key.","inputSchema":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}}]}';;
    *'"method"'*:*'"tools/call"'*)
      key=$(printf '%s' "$line" | sed -n 's/.*"key" *: *"\([^"]*\)".*/\1/p')
      result='{"content":[{"type":"text","text":"the word for '"$key"' is '"${NOTES_WORD:-(unset)}"'"}],"isError":false}';;
    *'"method"'*:*'"ping"'*) result='{}';;
    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}\n' "$id"; continue;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$result"
done
"""
BROKEN = 'import sys\nprint("notes: cannot open /var/notes.db", file=sys.stderr)\nsys.exit(3)\n'
DECLARATION = (
    '[[mcp_server]]\nname = "notes"\ntransport = "stdio"\ncommand = "python3"\n'
    'args = ["/opt/hemra/harness/server.py"]\nenv = ["NOTES_WORD"]\n'
)
#: Claude Code defers MCP tools behind its ToolSearch tool, which a scripted model does not use:
#: the harness switches that off (a variable it names), so the tool is offered like any other.
TOOL_SEARCH = ("ENABLE_TOOL_SEARCH",)
#: Codex hides MCP tools behind tool_search for the models of its catalog; for another model it
#: offers them directly, as a namespace mcp__<server> (the scripted model calls into it).
CODEX_MODEL = "scripted-model"
SCRIPT = [{"tool": "lookup", "arguments": {"key": "door"}}, {"shell": SOLVE}, {"text": "Looked it up; reversed."}]


def _workspace(tmp_path: Path, agent: str, server: str = SERVER, bash: bool = False) -> Path:
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "server.py").write_text(server)
    (tmp_path / "harnesses" / "server.sh").write_text(BASH_SERVER)
    env = ", ".join(f'"{name}"' for name in ENV[agent] + (TOOL_SEARCH if agent == "claude-code" else ()))
    model = CODEX_MODEL if agent == "codex" else MODEL
    (tmp_path / "harnesses" / f"{agent}.toml").write_text(
        f'kind = "cli"\nagent = "{agent}"\nversion = "{PINNED[agent]}"\nmodel = "{model}"\nenv = [{env}]\n\n'
        + (DECLARATION.replace('"python3"', '"bash"').replace("server.py", "server.sh") if bash else DECLARATION)
    )
    return tmp_path


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_mcp_server__cli_agent_calls_its_tool(agent, agent_clis, model_server, hemra_env, tmp_path):  # noqa: F811
    model_server.script = parse(SCRIPT)
    attempt = _run(
        dict(hemra_env, NOTES_WORD=WORD, ENABLE_TOOL_SEARCH="false"),
        agent_clis,
        model_server,
        _workspace(tmp_path, agent),
        agent,
        "mcp",
    )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    [started] = _of(attempt, "status", "mcp_server")
    assert started["server"] == "notes" and started["info"]["name"] == "hemra-test-notes"
    [call] = _lookups(attempt["events"])
    # Claude Code names it mcp__notes__lookup; Codex records an mcp_tool_call item naming server and tool.
    assert call["arguments"].get("key", (call["arguments"].get("arguments") or {}).get("key")) == "door"
    [result] = [r for r in _of(attempt, "tool_result") if r["id"] == call["id"]]
    assert result["output"] == f"the word for door is {WORD}" and result["is_error"] is False
    # The model saw the tool under the agent's own MCP name, and then its result.
    offered = json.dumps(model_server.model_requests()[0].body.get("tools"))
    assert "mcp__notes__lookup" in offered or '"lookup"' in offered
    assert f"the word for door is {WORD}" in json.dumps(model_server.model_requests()[1].body)
    if agent == "claude-code":
        [init] = _of(attempt, "status", "init")
        assert [(s["name"], s["status"]) for s in init["mcp_servers"]] == [("notes", "connected")]


@pytest.mark.usefixtures("docker_engine")
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_mcp_server__runs_inside_a_docker_sandbox_without_network(agent, agent_clis, model_server, hemra_env, tmp_path):  # noqa: F811
    model_server.script = parse(SCRIPT)
    attempt = _run(
        dict(hemra_env, NOTES_WORD=WORD, ENABLE_TOOL_SEARCH="false"),
        agent_clis,
        model_server,
        _workspace(tmp_path, agent, bash=True),
        agent,
        f"docker-mcp-{agent}",
        flags=("--sandbox", "docker", "--require", "network_block"),
    )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    assert _of(attempt, "status", "sandbox_ready")[0]["sandbox"] == "docker"
    [call] = _lookups(attempt["events"])
    [result] = [r for r in _of(attempt, "tool_result") if r["id"] == call["id"]]
    assert result["output"] == f"the word for door is {WORD}" and result["is_error"] is False


def _lookups(events: list[dict]) -> list[dict]:
    """The tool_call events that called the notes server's lookup tool."""
    return [
        e.get("data", e.get("payload"))
        for e in events
        if e["type"] == "tool_call"
        and ("lookup" in e["name"] or "lookup" in json.dumps(e.get("data", e.get("payload"))))
    ]


def test_mcp_server__acp_agent_calls_its_tool(adapter_tools, hemra_env, tmp_path):  # noqa: F811
    workspace = tmp_path
    (workspace / "harnesses").mkdir()
    (workspace / "harnesses" / "server.py").write_text(SERVER)
    (workspace / "harnesses" / "claude-acp.toml").write_text(
        f'kind = "acp"\nagent = "{test_acp.ADAPTER}"\nversion = "{test_acp.ADAPTER_VERSION}"\n'
        'env = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", '
        '"ENABLE_TOOL_SEARCH"]\n\n' + DECLARATION
    )
    attempt = test_acp._run_isolated(
        dict(hemra_env, NOTES_WORD=WORD, ENABLE_TOOL_SEARCH="false"), adapter_tools, workspace, SCRIPT, "acp-mcp"
    )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    [started] = test_acp._of(attempt, "status", "mcp_server")
    assert started["server"] == "notes"
    # The adapter reports an MCP tool's call as kind "other", titled with Claude Code's name for it.
    [call] = _lookups(attempt["events"])
    assert call["title"] == "mcp__notes__lookup" and call["arguments"] == {"key": "door"}
    [result] = [r for r in test_acp._of(attempt, "tool_result") if r["id"] == call["id"]]
    assert result["output"] == f"the word for door is {WORD}" and result["is_error"] is False


def test_mcp_server__that_does_not_start_is_an_infrastructure_failure(
    agent_clis,  # noqa: F811
    model_server,  # noqa: F811
    hemra_env,
    tmp_path,
):
    model_server.script = parse(SCRIPT)
    workspace = _workspace(tmp_path, "claude-code", server=BROKEN)
    env = dict(
        hemra_env,
        HEMRA_TOOLS_DIR=str(agent_clis),
        ANTHROPIC_API_KEY=KEY,
        ANTHROPIC_BASE_URL=model_server.url,
    )
    result = hemra(
        env, "run", "-H", "claude-code", "-d", "hemra-offline", "-t", "hemra/reverse-lines", "--label", "broken",
        cwd=workspace, timeout=900,
    )  # fmt: skip
    assert result.returncode != 0
    [attempt] = show(env, "broken")["attempts"]
    assert attempt["outcome"] == "OUTCOME_INFRA_FAILED", attempt
    assert "MCP server 'notes' did not start" in attempt["error"]
    assert "cannot open /var/notes.db" in attempt["error"]
    events = show(env, attempt["id"], "--events")["events"]
    stderr = [e for e in events if e["type"] == "output" and e["name"] == "mcp:notes"]
    assert any("cannot open /var/notes.db" in json.dumps(e) for e in stderr)
    assert "/logs/agent/mcp-notes-stderr.txt" in {a["path"] for a in attempt["artifacts"]}
    assert model_server.model_requests() == []  # the agent never started


REFUSED = {
    "unknown key": (
        'kind = "program"\ncommand = "true"\n[[mcp_server]]\nname = "x"\ncommand = "y"\ncwd = "/"\n',
        ["unknown key 'cwd' in [[mcp_server]] 1"],
    ),
    "literal secret in a header": (
        'kind = "program"\ncommand = "true"\n[[mcp_server]]\nname = "web"\ntransport = "streamable-http"\n'
        'url = "http://127.0.0.1:9/mcp"\nheaders = { Authorization = "Bearer sk-live-abcdef123456" }\n',
        ["header 'Authorization' holds a literal value"],
    ),
    "an agent that cannot take MCP": (
        'kind = "cli"\nagent = "pi"\nversion = "0.73.1"\n[[mcp_server]]\nname = "x"\ncommand = "y"\n',
        ["pi takes no MCP servers"],
    ),
    "the old mcp_servers key": (
        'kind = "program"\ncommand = "true"\nmcp_servers = []\n',
        ["mcp_servers is not a key", "[[mcp_server]]"],
    ),
    "sse for codex": (
        'kind = "cli"\nagent = "codex"\n[[mcp_server]]\nname = "web"\ntransport = "sse"\nurl = "http://127.0.0.1:9/sse"\n',
        ["codex takes stdio and streamable-http servers, not sse"],
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_mcp_server__bad_declaration_is_refused_before_recording(case, hemra_env, tmp_path):
    text, expected = REFUSED[case]
    (tmp_path / "bad.toml").write_text(text)
    result = hemra(hemra_env, "run", "-H", str(tmp_path / "bad.toml"), "-d", "hemra-offline", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bad.toml" in lines[0], result.stderr
    for fragment in expected:
        assert fragment in lines[0]
    assert "sk-live-abcdef123456" not in result.stderr + result.stdout
    assert runs(hemra_env) == []


def test_mcp_server__program_harness_gets_the_declaration(hemra_env, tmp_path):
    """A program harness reads its servers from HEMRA_MCP_SERVERS, variables unexpanded."""
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "server.py").write_text(SERVER)
    (tmp_path / "harnesses" / "echo.toml").write_text(
        'kind = "program"\ncommand = ["python3", "-c", "import json, os; '
        "print(json.dumps({'type': 'status', 'name': 'mcp', 'servers': json.loads(os.environ['HEMRA_MCP_SERVERS'])}))\"]\n"
        + DECLARATION
        + '[[mcp_server]]\nname = "web"\ntransport = "streamable-http"\nurl = "http://127.0.0.1:9/mcp"\n'
        'headers = { Authorization = "Bearer ${WEB_TOKEN}" }\n'
    )
    env = dict(hemra_env, NOTES_WORD=WORD, WEB_TOKEN="tok-0123456789")
    result = hemra(
        env, "run", "-H", "echo", "-d", "hemra-offline", "-t", "hemra/reverse-lines", "--label", "p", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    [attempt] = show(env, "p")["attempts"]
    events = show(env, attempt["id"], "--events")["events"]
    [said] = [e["payload"] for e in events if e["type"] == "status" and e["name"] == "mcp"]
    assert said["servers"] == [
        {
            "name": "notes",
            "transport": "stdio",
            "command": "python3",
            "args": ["/opt/hemra/harness/server.py"],
            "env": ["NOTES_WORD"],
        },
        {
            "name": "web",
            "transport": "streamable-http",
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${WEB_TOKEN}"},
        },
    ]
    assert [e["payload"]["server"] for e in events if e["name"] == "mcp_server"] == ["notes"]  # checked to start
    assert "tok-0123456789" not in json.dumps(events)


#: A server from npm, installed by HEMRA like the agent CLIs and run by the node it brings along.
FILESYSTEM = (
    '[[mcp_server]]\nname = "fs"\npackage = "@modelcontextprotocol/server-filesystem"\nversion = "2026.8.31"\n'
    'command = "mcp-server-filesystem"\nargs = ["/app"]\n'
)


@pytest.mark.usefixtures("docker_engine")
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_mcp_server__from_npm_solves_the_task_inside_docker(agent, agent_clis, model_server, hemra_env, tmp_path):  # noqa: F811
    """The model's only action is the npm filesystem server's write_file: the task passes only if
    that server ran inside the sandbox (no network) and wrote there."""
    expected = (REPO / "examples" / "hemra-offline" / "reverse-lines" / "tests" / "expected.txt").read_text()
    model_server.script = parse(
        [{"tool": "write_file", "arguments": {"path": "/app/reversed.txt", "content": expected}}, {"text": "Written."}]
    )
    workspace = _workspace(tmp_path, agent)
    harness = workspace / "harnesses" / f"{agent}.toml"
    harness.write_text(harness.read_text().replace(DECLARATION, FILESYSTEM))
    attempt = _run(
        dict(hemra_env, ENABLE_TOOL_SEARCH="false"),
        agent_clis,
        model_server,
        workspace,
        agent,
        f"npm-mcp-{agent}",
        flags=("--sandbox", "docker", "--require", "network_block"),
    )

    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt.get("error")
    assert attempt["score"]["rewards"] == {"reward": 1.0}
    [started] = _of(attempt, "status", "mcp_server")
    assert started["server"] == "fs" and started["info"]["name"]
    calls = [e for e in attempt["events"] if e["type"] == "tool_call"]
    assert len(calls) == 1 and "write_file" in json.dumps([calls[0]["name"], calls[0]["data"]])
    [result] = _of(attempt, "tool_result")
    assert result["id"] == calls[0]["data"]["id"] and result["is_error"] is False
    assert (agent_clis / "modelcontextprotocol+server-filesystem@2026.8.31" / "node" / "bin" / "node").is_file()
