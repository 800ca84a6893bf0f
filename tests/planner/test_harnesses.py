"""hemra.services.domain.harnesses: built-ins and harness files."""

import hashlib
import re
from pathlib import Path

import pytest

from hemra.services.domain import harnesses
from hemra.services.domain.planerrors import NotFound, PlanError


def write_harness(base: Path, name: str, text: str) -> Path:
    path = base / "harnesses" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["oracle", "nop"])
def test_resolve__builtin(tmp_path, name):
    harness = harnesses.resolve(name, tmp_path)
    assert harness.harness_name == name
    assert harness.kind == "builtin"
    assert harness.digest.startswith("sha256:") and len(harness.digest) == 71
    assert harness.command == []


def test_resolve__builtins_have_distinct_stable_digests(tmp_path):
    assert harnesses.resolve("oracle", tmp_path).digest == harnesses.resolve("oracle", tmp_path / "x").digest
    assert harnesses.resolve("oracle", tmp_path).digest != harnesses.resolve("nop", tmp_path).digest


def test_resolve__program_file_by_name(tmp_path):
    path = write_harness(
        tmp_path,
        "mine",
        'kind = "program"\ncommand = "python3 agent.py --fast"\n'
        'env = ["OPENAI_API_KEY"]\nmodel = "gpt-x"\nversion = "2"\n',
    )
    harness = harnesses.resolve("mine", tmp_path)
    assert harness.harness_name == "mine"
    assert harness.kind == "program"
    assert harness.command == ["python3", "agent.py", "--fast"]
    assert harness.env == ["OPENAI_API_KEY"]
    assert harness.model == "gpt-x"
    assert harness.agent_version == "2"
    assert harness.digest == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert harness.source_text == path.read_text()
    assert harness.source_path == str(path.resolve())


def test_resolve__digest_changes_with_bytes(tmp_path):
    write_harness(tmp_path, "mine", 'kind = "program"\ncommand = "python3 agent.py"\n')
    first = harnesses.resolve("mine", tmp_path).digest
    write_harness(tmp_path, "mine", 'kind = "program"\ncommand = "python3 agent.py"\n# comment\n')
    assert harnesses.resolve("mine", tmp_path).digest != first


def test_resolve__name_key_overrides_file_stem(tmp_path):
    write_harness(tmp_path, "file", 'name = "pretty"\nkind = "program"\ncommand = ["a", "b c"]\n')
    harness = harnesses.resolve("file", tmp_path)
    assert harness.harness_name == "pretty"
    assert harness.command == ["a", "b c"]


def test_resolve__relative_path_to_file(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "h.toml").write_text('kind = "program"\ncommand = "run"\n')
    assert harnesses.resolve("elsewhere/h.toml", tmp_path).harness_name == "h"


def test_resolve__file_shadows_builtin(tmp_path):
    write_harness(tmp_path, "oracle", 'kind = "program"\ncommand = "x"\n')
    assert harnesses.resolve("oracle", tmp_path).kind == "program"


def test_resolve__unknown_key(tmp_path):
    path = write_harness(tmp_path, "mine", 'kind = "program"\ncommand = "x"\ncolour = "blue"\n')
    with pytest.raises(PlanError) as info:
        harnesses.resolve("mine", tmp_path)
    assert str(path) in str(info.value)
    assert "'colour'" in str(info.value)


def test_resolve__env_as_table_refused(tmp_path):
    path = write_harness(tmp_path, "mine", 'kind = "program"\ncommand = "x"\n[env]\nAPI_KEY = "secret"\n')
    with pytest.raises(PlanError, match="values never go in harness files") as info:
        harnesses.resolve("mine", tmp_path)
    assert str(path) in str(info.value)
    assert "secret" not in str(info.value)


@pytest.mark.parametrize("env", ['["1BAD"]', '["A=B"]', '"API_KEY"', "[1]"])
def test_resolve__env_bad_names_refused(tmp_path, env):
    write_harness(tmp_path, "mine", f'kind = "program"\ncommand = "x"\nenv = {env}\n')
    with pytest.raises(PlanError, match="env must be a list of environment variable names"):
        harnesses.resolve("mine", tmp_path)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "pi"])
def test_resolve__cli_harness(tmp_path, agent):
    write_harness(
        tmp_path,
        agent,
        f'kind = "cli"\nagent = "{agent}"\nversion = "2.1.332"\nmodel = "m-1"\n'
        'env = ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]\n',
    )
    harness = harnesses.resolve(agent, tmp_path)
    assert (harness.kind, harness.agent, harness.agent_version, harness.model) == ("cli", agent, "2.1.332", "m-1")
    assert harness.env == ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]
    assert harness.command == []


def test_resolve__cli_harness_unpinned_is_allowed(tmp_path):
    write_harness(tmp_path, "pi", 'kind = "cli"\nagent = "pi"\n')
    assert harnesses.resolve("pi", tmp_path).agent_version == ""


@pytest.mark.parametrize("agent", ['"gemini"', '""', None, "3"])
def test_resolve__cli_unknown_agent(tmp_path, agent):
    path = write_harness(tmp_path, "x", 'kind = "cli"\n' + (f"agent = {agent}\n" if agent else ""))
    with pytest.raises(PlanError) as info:
        harnesses.resolve("x", tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}: agent must be one of claude-code, codex, pi") and "\n" not in message


@pytest.mark.parametrize("version", ['"^2.1.0"', '"latest"', '"2.1"', "2"])
def test_resolve__cli_version_must_be_exact(tmp_path, version):
    path = write_harness(tmp_path, "x", f'kind = "cli"\nagent = "codex"\nversion = {version}\n')
    with pytest.raises(PlanError, match="version must be") as info:
        harnesses.resolve("x", tmp_path)
    assert str(path) in str(info.value)


def test_resolve__cli_with_command_refused(tmp_path):
    write_harness(tmp_path, "x", 'kind = "cli"\nagent = "codex"\ncommand = "codex exec"\n')
    with pytest.raises(PlanError, match="command is for program harnesses"):
        harnesses.resolve("x", tmp_path)


@pytest.mark.parametrize("kind", ['"robot"', None])
def test_resolve__unknown_or_missing_kind(tmp_path, kind):
    text = (f"kind = {kind}\n" if kind else "") + 'command = "x"\n'
    write_harness(tmp_path, "mine", text)
    with pytest.raises(PlanError, match="kind must be one of"):
        harnesses.resolve("mine", tmp_path)


def test_resolve__missing_harness_not_found(tmp_path):
    with pytest.raises(NotFound) as info:
        harnesses.resolve("ghost", tmp_path)
    assert "'ghost'" in str(info.value)
    assert str(tmp_path / "harnesses" / "ghost.toml") in str(info.value)


def test_resolve__missing_harness_path_not_found(tmp_path):
    with pytest.raises(NotFound):
        harnesses.resolve("nowhere/ghost.toml", tmp_path)


def test_resolve__program_without_command(tmp_path):
    path = write_harness(tmp_path, "mine", 'kind = "program"\n')
    with pytest.raises(PlanError, match="needs command") as info:
        harnesses.resolve("mine", tmp_path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("command", ["[]", "3", '["ok", 2]'])
def test_resolve__bad_command(tmp_path, command):
    write_harness(tmp_path, "mine", f'kind = "program"\ncommand = {command}\n')
    with pytest.raises(PlanError, match="command must be a string or a list of strings"):
        harnesses.resolve("mine", tmp_path)


def test_resolve__malformed_toml(tmp_path):
    path = write_harness(tmp_path, "mine", 'kind = "program\n')
    with pytest.raises(PlanError, match="malformed TOML") as info:
        harnesses.resolve("mine", tmp_path)
    assert str(path) in str(info.value)


# -- [[mcp_server]] ------------------------------------------------------------------------------

MCP = (
    '[[mcp_server]]\nname = "files"\ncommand = "python3"\nargs = ["-m", "files_server"]\nenv = ["ROOT"]\n'
    '[[mcp_server]]\nname = "web"\ntransport = "streamable-http"\nurl = "http://127.0.0.1:8931/mcp"\n'
    'headers = { Authorization = "Bearer ${WEB_TOKEN}", X-Tenant = "${TENANT}" }\n'
)


def test_mcp_server__rendered_configs_are_part_of_the_digest(tmp_path):
    from hemra.services.common import mcp

    path = write_harness(tmp_path, "cc", f'kind = "cli"\nagent = "claude-code"\nenv = ["ANTHROPIC_API_KEY"]\n{MCP}')
    harness = harnesses.resolve("cc", tmp_path)
    text = path.read_text()
    rendered = mcp.rendered(mcp.declared(text), "cli", "claude-code")
    assert harness.digest == "sha256:" + hashlib.sha256((text + "\0" + rendered).encode()).hexdigest()
    # The servers' variables are passed to the agent like the harness's own.
    assert harness.env == ["ANTHROPIC_API_KEY", "ROOT", "WEB_TOKEN", "TENANT"]
    write_harness(tmp_path, "cc", text.replace('"files_server"', '"other_server"'))
    assert harnesses.resolve("cc", tmp_path).digest != harness.digest


def test_mcp_server__each_agent_is_handed_them_its_own_way():
    from hemra.services.common import mcp

    servers = mcp.parse(__import__("tomllib").loads(MCP)["mcp_server"])
    assert mcp.claude_config(servers) == {
        "mcpServers": {
            "files": {
                "type": "stdio",
                "command": "python3",
                "args": ["-m", "files_server"],
                "env": {"ROOT": "${ROOT}"},
            },
            "web": {
                "type": "http",
                "url": "http://127.0.0.1:8931/mcp",
                "headers": {"Authorization": "Bearer ${WEB_TOKEN}", "X-Tenant": "${TENANT}"},
            },
        }
    }
    assert mcp.codex_settings(servers) == [
        "mcp_servers.files.startup_timeout_sec=120",
        'mcp_servers.files.command="python3"',
        'mcp_servers.files.args=["-m", "files_server"]',
        'mcp_servers.files.env_vars=["ROOT"]',
        "mcp_servers.web.startup_timeout_sec=120",
        'mcp_servers.web.url="http://127.0.0.1:8931/mcp"',
        'mcp_servers.web.bearer_token_env_var="WEB_TOKEN"',
        'mcp_servers.web.env_http_headers={ "X-Tenant" = "TENANT" }',
    ]
    values = {"ROOT": "/app", "WEB_TOKEN": "t0k3n", "TENANT": "acme"}
    assert mcp.acp_servers(servers, values) == [
        {
            "name": "files",
            "command": "python3",
            "args": ["-m", "files_server"],
            "env": [{"name": "ROOT", "value": "/app"}],
        },
        {
            "type": "http",
            "name": "web",
            "url": "http://127.0.0.1:8931/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer t0k3n"}, {"name": "X-Tenant", "value": "acme"}],
        },
    ]


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('name = "x"\ncommand = "y"\ncwd = "/"\n', "unknown key 'cwd' in [[mcp_server]] 1"),
        ('name = "x y"\ncommand = "y"\n', "name must be"),
        (
            'name = "x"\ntransport = "websocket"\nurl = "ws://h"\n',
            "transport must be one of stdio, streamable-http, sse",
        ),
        ('name = "x"\ncommand = "y"\nenv = { ROOT = "/app" }\n', "env lists variable names only"),
        ('name = "x"\ncommand = "y"\nenv = ["HEMRA_HARNESS_TOKEN"]\n', "one of HEMRA's own variables"),
        ('name = "x"\ncommand = "y"\nurl = "http://h"\n', "url is for streamable-http and sse servers"),
        ('name = "x"\ntransport = "sse"\nurl = "file:///etc"\n', "needs url, an http:// or https:// address"),
        ('name = "x"\ntransport = "sse"\nurl = "https://me:pw@h/sse"\n', "url may not hold credentials"),
        ('name = "x"\ncommand = "y"\npackage = "@s/fs"\n', "a package needs version, an exact npm version"),
        ('name = "x"\ncommand = "y"\npackage = "@s/fs"\nversion = "^1.0.0"\n', "an exact npm version"),
        ('name = "x"\ncommand = "../y"\npackage = "@s/fs"\nversion = "1.0.0"\n', "command names one of its bins"),
        ('name = "x"\ncommand = "y"\nversion = "1.0.0"\n', "version pins a package; it needs package"),
        (
            'name = "x"\ntransport = "sse"\nurl = "http://h"\nheaders = { Key = "abc${K}" }\n',
            "header 'Key' holds a literal",
        ),
    ],
)
def test_mcp_server__bad_tables_are_refused(tmp_path, table, problem):
    write_harness(tmp_path, "bad", f'kind = "program"\ncommand = "true"\n[[mcp_server]]\n{table}')
    with pytest.raises(PlanError, match=re.escape(problem)):
        harnesses.resolve("bad", tmp_path)


def test_mcp_server__two_of_one_name_are_refused(tmp_path):
    write_harness(
        tmp_path, "bad", 'kind = "program"\ncommand = "true"\n' + '[[mcp_server]]\nname = "x"\ncommand = "y"\n' * 2
    )
    with pytest.raises(PlanError, match="two \\[\\[mcp_server\\]\\] tables are named 'x'"):
        harnesses.resolve("bad", tmp_path)


def test_mcp_server__from_npm_runs_its_bin_with_the_node_hemra_brings():
    from hemra.services.common import mcp

    [server] = mcp.parse(
        [{"name": "fs", "package": "@modelcontextprotocol/server-filesystem", "version": "2026.8.31",
          "command": "mcp-server-filesystem", "args": ["/app"]}]
    )  # fmt: skip
    root = "/opt/hemra/tools/modelcontextprotocol+server-filesystem"
    assert server.argv() == [f"{root}/node/bin/node", f"{root}/node_modules/.bin/mcp-server-filesystem", "/app"]
    assert mcp.codex_settings([server])[:3] == [
        "mcp_servers.fs.startup_timeout_sec=120",
        f'mcp_servers.fs.command="{root}/node/bin/node"',
        f'mcp_servers.fs.args=["{root}/node_modules/.bin/mcp-server-filesystem", "/app"]',
    ]


def test_resolve__sdk_harness_records_sdk_and_pinned_version(tmp_path):
    write_harness(
        tmp_path,
        "mine",
        'kind = "sdk"\nsdk = "claude-agent-sdk"\nversion = "0.3.337"\ncommand = ["node", "agent.mjs"]\n'
        'env = ["ANTHROPIC_API_KEY"]\n',
    )
    (tmp_path / "harnesses" / "agent.mjs").write_text("// one\n")
    harness = harnesses.resolve("mine", tmp_path)
    assert (harness.kind, harness.agent, harness.agent_version) == ("sdk", "claude-agent-sdk", "0.3.337")
    assert harness.command == ["node", "agent.mjs"] and harness.env == ["ANTHROPIC_API_KEY"]
    # The script is the harness: changing it changes the digest, as changing the file does.
    (tmp_path / "harnesses" / "agent.mjs").write_text("// two\n")
    assert harnesses.resolve("mine", tmp_path).digest != harness.digest


CU = 'kind = "computer-use"\nmodel = "m-1"\nenv = ["ANTHROPIC_API_KEY"]\n'


def test_resolve__computer_use_harness_with_defaults(tmp_path):
    harness = harnesses.resolve(str(write_harness(tmp_path, "cu", CU)), tmp_path)
    assert (harness.kind, harness.model, harness.env, harness.command) == (
        "computer-use",
        "m-1",
        ["ANTHROPIC_API_KEY"],
        [],
    )
    from hemra.services.common import computer_use

    assert computer_use.settings({}) == computer_use.Computer("anthropic", (1280, 800), (1280, 800), (), 50)
    both = computer_use.settings({"computer": {"screen": [1920, 1080], "start": "xterm", "api": "openai"}})
    assert (both.model_screen, both.start, both.api) == ((1920, 1080), ("xterm",), "openai")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('agent = "claude-code"\n', "agent is not a key of a computer-use harness"),
        ('command = "python3 x.py"\n', "command is not a key of a computer-use harness"),
        ('[computer]\napi = "gemini"\n', "computer.api must be one of anthropic, openai (got 'gemini')"),
        ("[computer]\nscreen = [1280]\n", "computer.screen must be [width, height] in pixels, each 200 to 4096"),
        ("[computer]\nmodel_screen = [100, 100]\n", "computer.model_screen must be [width, height]"),
        ("[computer]\nmax_turns = 0\n", "computer.max_turns must be a whole number from 1 to 500"),
        ("[computer]\nstart = [1]\n", "computer.start must be a list of shell commands"),
        ("[computer]\nscren = [1280, 800]\n", "unknown key computer.scren"),
        ("computer = 3\n", "computer must be a table"),
    ],
)
def test_resolve__bad_computer_use_harness_refused(tmp_path, extra, message):
    path = write_harness(tmp_path, "cu", CU + extra)
    with pytest.raises(PlanError, match=re.escape(message)) as info:
        harnesses.resolve("cu", tmp_path)
    assert str(info.value).startswith(f"{path}: ")


def test_resolve__computer_table_refused_for_other_kinds(tmp_path):
    write_harness(tmp_path, "p", 'kind = "program"\ncommand = "x"\n[computer]\napi = "openai"\n')
    with pytest.raises(PlanError, match="computer is a key of computer-use harnesses only"):
        harnesses.resolve("p", tmp_path)
