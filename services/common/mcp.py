"""MCP servers a harness file declares (`[[mcp_server]]`), and how each agent is handed them.

One declaration feeds every driver: Claude Code gets a `--mcp-config` file (with
`--strict-mcp-config`), Codex `-c mcp_servers.<name>.*` settings, an ACP agent
the `mcpServers` of `session/new`, a program harness HEMRA_MCP_SERVERS. Values
never appear in a harness file: a stdio server's `env` names variables, and a
header may only reference them (`"Bearer ${TOKEN}"`); each agent reads them
from its own environment, where the executor passes them like the harness's
`env`. The planner parses and checks the declaration; the executor parses the
same text again (it travels in the harness's source_text).
"""

import json
import re
import tomllib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

TRANSPORTS = ("stdio", "streamable-http", "sse")
KEYS = ("name", "transport", "command", "args", "env", "url", "headers", "package", "version")
#: Where the executor mounts the npm packages it installed (agents, MCP servers) inside the sandbox.
TOOLS_MOUNT = "/opt/hemra/tools"
#: The environment variable a program harness reads the declared servers from (JSON).
PROGRAM_VARIABLE = "HEMRA_MCP_SERVERS"
#: A server's name becomes part of tool names (mcp__<name>__<tool>) and config keys.
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A header value: an optional auth scheme word, then one variable reference, nothing literal.
_HEADER = re.compile(r"^(?:(?P<scheme>[A-Za-z]+) )?\$\{(?P<variable>[A-Za-z_][A-Za-z0-9_]*)\}$")
_URL = re.compile(r"^https?://[^\s]+$")
#: An npm package name, scoped or not, and an exact version (a pin means one build).
_PACKAGE = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
_PINNED = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
_BIN = re.compile(r"^[A-Za-z0-9@._-][A-Za-z0-9@._+-]*$")


class BadDeclaration(ValueError):
    """A [[mcp_server]] table HEMRA cannot take (the message names what is wrong)."""


@dataclass(frozen=True)
class McpServer:
    name: str
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    #: Names of variables a stdio server is given from the agent's environment.
    env: tuple[str, ...] = ()
    url: str = ""
    #: (header, value) with each value a variable reference, e.g. ("Authorization", "Bearer ${TOKEN}").
    headers: tuple[tuple[str, str], ...] = field(default=())
    #: A stdio server from npm: the package, its exact version; `command` names its bin.
    package: str = ""
    version: str = ""

    @property
    def tool_root(self) -> str:
        """Where the executor mounts the installed package inside the sandbox."""
        return f"{TOOLS_MOUNT}/{tool_folder(self.package)}"

    def argv(self) -> list[str]:
        """The server's command line inside the sandbox: an npm server's bin run by the node
        HEMRA brings along with it (task images rarely have one)."""
        if self.package:
            return [f"{self.tool_root}/node/bin/node", f"{self.tool_root}/node_modules/.bin/{self.command}", *self.args]
        return [self.command, *self.args]

    def variables(self) -> list[str]:
        """The variables this server reads, in order."""
        return [*self.env, *(_HEADER.match(value)["variable"] for _, value in self.headers)]


def parse(tables) -> list[McpServer]:
    """The servers of a harness file's `mcp_server` value (a list of tables).

    Raises:
        BadDeclaration: naming the table and key that is wrong (never a header's value).
    """
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise BadDeclaration("mcp_server must be tables: [[mcp_server]]")
    servers = [_server(i, table) for i, table in enumerate(tables)]
    seen: set[str] = set()
    for server in servers:
        if server.name in seen:
            raise BadDeclaration(f"two [[mcp_server]] tables are named {server.name!r}")
        seen.add(server.name)
    return servers


def declared(source_text: str) -> list[McpServer]:
    """The servers a harness file's text declares (checked when it was resolved)."""
    data = tomllib.loads(source_text or "")
    return parse(data["mcp_server"]) if "mcp_server" in data else []


def variables(servers: list[McpServer]) -> list[str]:
    """Every variable the servers read, each once."""
    return list(dict.fromkeys(name for server in servers for name in server.variables()))


def _server(index: int, table: dict) -> McpServer:
    where = f"[[mcp_server]] {index + 1}"
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise BadDeclaration(f"unknown key {unknown[0]!r} in {where} (known: {', '.join(KEYS)})")
    name = table.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise BadDeclaration(f"{where}: name must be 1-64 letters, digits, '_' or '-' (got {name!r})")
    where = f"[[mcp_server]] {name!r}"
    transport = table.get("transport", "stdio" if "command" in table else None)
    if transport not in TRANSPORTS:
        raise BadDeclaration(f"{where}: transport must be one of {', '.join(TRANSPORTS)} (got {transport!r})")
    if transport == "stdio":
        return _stdio(where, name, table)
    return _remote(where, name, transport, table)


def tool_folder(package: str) -> str:
    """A folder name for an npm package: @scope/name -> scope+name."""
    return package.lstrip("@").replace("/", "+")


def _stdio(where: str, name: str, table: dict) -> McpServer:
    for key in ("url", "headers"):
        if key in table:
            raise BadDeclaration(f"{where}: {key} is for streamable-http and sse servers, not stdio")
    command, args = table.get("command"), table.get("args", [])
    if not isinstance(command, str) or not command:
        raise BadDeclaration(f"{where}: a stdio server needs command, a string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise BadDeclaration(f"{where}: args must be a list of strings")
    env = table.get("env", [])
    if isinstance(env, dict):
        raise BadDeclaration(f"{where}: env lists variable names only; values never go in harness files")
    if not isinstance(env, list) or not all(isinstance(v, str) and _VARIABLE.match(v) for v in env):
        raise BadDeclaration(f"{where}: env must be a list of environment variable names")
    _not_own(where, env)
    package, version = _package(where, table, command)
    return McpServer(
        name,
        "stdio",
        command=command,
        args=tuple(args),
        env=tuple(dict.fromkeys(env)),
        package=package,
        version=version,
    )


def _package(where: str, table: dict, command: str) -> tuple[str, str]:
    """(package, version) of a server from npm, ("", "") for one the sandbox has."""
    if "package" not in table:
        if "version" in table:
            raise BadDeclaration(f"{where}: version pins a package; it needs package")
        return "", ""
    package, version = table["package"], table.get("version")
    if not isinstance(package, str) or not _PACKAGE.match(package):
        raise BadDeclaration(f"{where}: package must be an npm package name (got {package!r})")
    if not isinstance(version, str) or not _PINNED.match(version):
        raise BadDeclaration(f"{where}: a package needs version, an exact npm version like 2026.8.31 (got {version!r})")
    if not _BIN.match(command):
        raise BadDeclaration(f"{where}: with package, command names one of its bins (got {command!r})")
    return package, version


def _remote(where: str, name: str, transport: str, table: dict) -> McpServer:
    for key in ("command", "args", "env", "package", "version"):
        if key in table:
            raise BadDeclaration(f"{where}: {key} is for stdio servers, not {transport}")
    url, headers = table.get("url"), table.get("headers", {})
    if not isinstance(url, str) or not _URL.match(url):
        raise BadDeclaration(f"{where}: a {transport} server needs url, an http:// or https:// address")
    if "@" in urlsplit(url).netloc:  # user:password@host: a literal credential
        raise BadDeclaration(
            f'{where}: url may not hold credentials; use headers = {{ Authorization = "Bearer ${{TOKEN}}" }}'
        )
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise BadDeclaration(f"{where}: headers must be a table of strings")
    for header, value in headers.items():
        found = _HEADER.match(value)
        if not found:  # the value is never repeated: it may be the very secret refused
            raise BadDeclaration(
                f"{where}: header {header!r} holds a literal value; a header may only reference "
                'a variable, like "${TOKEN}" or "Bearer ${TOKEN}"'
            )
        _not_own(where, [found["variable"]])
    return McpServer(name, transport, url=url, headers=tuple(headers.items()))


def _not_own(where: str, names: list[str]) -> None:
    for name in names:
        if name.startswith("HEMRA_"):
            raise BadDeclaration(f"{where}: {name} is one of HEMRA's own variables, never a server's")


# -- What each agent is handed ----------------------------------------------------------------------


def claude_config(servers: list[McpServer]) -> dict:
    """Claude Code's --mcp-config JSON: variables stay `${NAME}`, which Claude Code expands from
    its own environment when it starts a server."""
    config = {}
    for s in servers:
        if s.transport == "stdio":
            command, *args = s.argv()
            config[s.name] = {
                "type": "stdio",
                "command": command,
                "args": args,
                "env": {name: "${" + name + "}" for name in s.env},
            }
        else:
            kind = "http" if s.transport == "streamable-http" else "sse"
            config[s.name] = {"type": kind, "url": s.url, "headers": dict(s.headers)}
    return {"mcpServers": config}


#: How long Codex waits for each MCP server to start. Its own default (10 s) is shorter than an
#: npm server takes in a container on a loaded machine, and Codex then goes on without the
#: server's tools: the model's calls to them fail as "unsupported call".
CODEX_STARTUP_SECS = 120


def codex_settings(servers: list[McpServer]) -> list[str]:
    """Codex's `-c key=value` settings (values TOML). A stdio server is given its variables with
    env_vars (Codex copies them from its own environment); a header with bearer_token_env_var
    or env_http_headers, which name the variable holding the header's value."""
    settings = []
    for s in servers:
        prefix = f"mcp_servers.{s.name}"
        settings.append(f"{prefix}.startup_timeout_sec={CODEX_STARTUP_SECS}")
        if s.transport == "stdio":
            command, *args = s.argv()
            settings += [f"{prefix}.command={json.dumps(command)}", f"{prefix}.args={json.dumps(args)}"]
            if s.env:
                settings.append(f"{prefix}.env_vars={json.dumps(list(s.env))}")
            continue
        settings.append(f"{prefix}.url={json.dumps(s.url)}")
        plain = {}
        for header, value in s.headers:
            found = _HEADER.match(value)
            if header.lower() == "authorization" and found["scheme"] == "Bearer":
                settings.append(f"{prefix}.bearer_token_env_var={json.dumps(found['variable'])}")
            else:
                plain[header] = found["variable"]
        if plain:
            inline = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in plain.items())
            settings.append(f"{prefix}.env_http_headers={{ {inline} }}")
    return settings


def codex_refusal(servers: list[McpServer]) -> str:
    """Why Codex cannot take these servers ("" when it can)."""
    for s in servers:
        if s.transport == "sse":
            return f"[[mcp_server]] {s.name!r}: codex takes stdio and streamable-http servers, not sse"
        for header, value in s.headers:
            found = _HEADER.match(value)
            bearer = header.lower() == "authorization" and found["scheme"] == "Bearer"
            if found["scheme"] and not bearer:
                return (
                    f"[[mcp_server]] {s.name!r}: codex takes a header as one variable "
                    f'("${{NAME}}") or Authorization as "Bearer ${{NAME}}"; {header!r} is neither'
                )
    return ""


def acp_servers(servers: list[McpServer], values: dict[str, str]) -> list[dict]:
    """`session/new` mcpServers: ACP carries values, so the variables are filled in from
    `values` (unset ones are empty). The driver hides them again in what it records."""

    def filled(value: str) -> str:
        return re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), ""), value)

    declared = []
    for s in servers:
        if s.transport == "stdio":
            env = [{"name": name, "value": values.get(name, "")} for name in s.env]
            command, *args = s.argv()
            declared.append({"name": s.name, "command": command, "args": args, "env": env})
        else:
            kind = "http" if s.transport == "streamable-http" else "sse"
            headers = [{"name": h, "value": filled(v)} for h, v in s.headers]
            declared.append({"type": kind, "name": s.name, "url": s.url, "headers": headers})
    return declared


def program_declaration(servers: list[McpServer]) -> list[dict]:
    """HEMRA_MCP_SERVERS for a program harness: the declaration as written, variables unexpanded."""
    return [
        {
            k: v
            for k, v in (
                ("name", s.name),
                ("transport", s.transport),
                ("command", s.argv()[0] if s.command else ""),
                ("args", s.argv()[1:]),
                ("env", list(s.env)),
                ("url", s.url),
                ("headers", dict(s.headers)),
            )
            if v or k in ("name", "transport")
        }
        for s in servers
    ]


def rendered(servers: list[McpServer], kind: str, agent: str) -> str:
    """What the harness's driver hands its agent, as canonical text for the harness digest
    (ACP's is shown with its variables unfilled)."""
    if kind == "cli" and agent == "claude-code":
        given = claude_config(servers)
    elif kind == "cli" and agent == "codex":
        given = codex_settings(servers)
    elif kind == "acp":
        given = acp_servers(servers, {name: "${" + name + "}" for name in variables(servers)})
    else:
        given = program_declaration(servers)
    return json.dumps({"kind": kind, "agent": agent, "mcp": given}, sort_keys=True, separators=(",", ":"))
