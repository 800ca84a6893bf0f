"""agent = "codex": `codex exec --json`.

Codex speaks the OpenAI Responses API. It ignores OPENAI_BASE_URL, so the
driver declares a model provider of its own on the command line: its base URL
is OPENAI_BASE_URL when the harness names it (else OpenAI's), and its key is
read by codex from the variable the harness names (OPENAI_API_KEY or
CODEX_API_KEY). Plugins and analytics, its only other traffic, are off; the
agent's own sandbox is bypassed because it already runs inside HEMRA's. MCP
servers the harness declares are given as `-c mcp_servers.<name>.*` settings.
"""

import json
import platform
from dataclasses import dataclass, field

from hemra.services.common import mcp
from hemra.services.executor.events import event
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.cli.base import AGENT_HOME, MAX_RETRIES, CliDriver, Stream

OPENAI_URL = "https://api.openai.com/v1"
#: The npm package's launcher is a node script that execs a static (musl) binary
#: from a per-platform package; running that binary directly needs no node in the image.
_NATIVE = {
    "x86_64": ("codex-linux-x64", "x86_64-unknown-linux-musl"),
    "aarch64": ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
}
#: Item types that are the agent acting (tool calls), as opposed to talking.
_TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search", "collab_tool_call")


@dataclass
class CodexStream(Stream):
    agent: str = "codex"
    _called: set = field(default_factory=set, repr=False)

    def translate(self, data: dict) -> list:
        kind = data.get("type")
        if kind == "thread.started":
            return [event("status", "thread", thread_id=data.get("thread_id", ""))]
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._item(data["item"], done=kind == "item.completed")
        if kind == "turn.completed":
            usage = data.get("usage") or {}
            return [
                event(
                    "usage",
                    "total",
                    input_tokens=usage.get("input_tokens", 0),
                    output_tokens=usage.get("output_tokens", 0),
                    cache_read_input_tokens=usage.get("cached_input_tokens", 0),
                    cache_creation_input_tokens=usage.get("cache_write_input_tokens", 0),
                    reasoning_output_tokens=usage.get("reasoning_output_tokens", 0),
                )
            ]
        if kind == "turn.failed":
            self.failure = f"codex turn failed: {(data.get('error') or {}).get('message', '')}"[:500]
            return [event("error", "turn.failed", message=self.failure)]
        if kind == "error":
            return [event("error", "codex", message=data.get("message", ""))]
        return []

    def _item(self, item: dict, done: bool) -> list:
        kind, item_id = item.get("type", ""), item.get("id", "")
        if kind in _TOOL_ITEMS:
            events = []
            if item_id not in self._called:
                self._called.add(item_id)
                events.append(event("tool_call", kind, id=item_id, arguments=_arguments(item)))
            if done:
                events.append(
                    event(
                        "tool_result",
                        kind,
                        id=item_id,
                        output=_output(item),
                        exit_code=item.get("exit_code"),
                        status=item.get("status", ""),
                        is_error=item.get("status") == "failed",
                    )
                )
            return events
        if not done:
            return []
        if kind == "agent_message":
            self.final_text = item.get("text", "")
            return [event("message", "assistant", role="assistant", text=self.final_text)]
        if kind == "reasoning":
            return [event("message", "thinking", role="thinking", text=item.get("text", ""))]
        if kind == "error":
            return [event("error", "codex", message=item.get("message", ""), fatal=False)]
        return [event("status", kind or "item", item=item)]


def _output(item: dict) -> str:
    """What a tool item returned: a command's output, an MCP tool's text content or error."""
    if item.get("type") != "mcp_tool_call":
        return item.get("aggregated_output", "")
    error = item.get("error")
    if error:
        return str(error.get("message", error) if isinstance(error, dict) else error)
    result = item.get("result") if isinstance(item.get("result"), dict) else {}
    return "\n".join(c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict))


def _arguments(item: dict) -> dict:
    if item.get("type") == "command_execution":
        return {"command": item.get("command", "")}
    hidden = ("id", "type", "status", "aggregated_output", "exit_code", "result", "error")
    return {k: v for k, v in item.items() if k not in hidden}


class CodexDriver(CliDriver):
    agent, package, binary = "codex", "@openai/codex", "codex"

    @property
    def executable(self) -> str:
        package, triple = _NATIVE.get(platform.machine(), _NATIVE["x86_64"])
        return f"{self.tool_root}/node_modules/@openai/{package}/vendor/{triple}/bin/codex"

    def base_urls(self, passed, model):
        if passed.get("OPENAI_BASE_URL"):
            return {"OPENAI_BASE_URL": passed["OPENAI_BASE_URL"]}
        return {"OpenAI's API": OPENAI_URL}

    def command(self, trial, passed):
        key = next(
            (name for name in ("OPENAI_API_KEY", "CODEX_API_KEY") if name in trial.harness.env), "OPENAI_API_KEY"
        )
        provider = {
            "name": "hemra",
            "base_url": passed.get("OPENAI_BASE_URL") or OPENAI_URL,
            "env_key": key,
            "wire_api": "responses",
            "request_max_retries": MAX_RETRIES,
            "stream_max_retries": MAX_RETRIES,
        }
        settings = [f"model_providers.hemra.{k}={json.dumps(v)}" for k, v in provider.items()]
        settings += ["model_provider=hemra", "features.plugins=false", "analytics.enabled=false"]
        settings += mcp.codex_settings(mcp_servers.servers(trial.harness))
        model = ["--model", trial.model] if trial.model else []
        return [
            self.executable,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--ephemeral",
            "--dangerously-bypass-approvals-and-sandbox",
            *model,
            *[arg for setting in settings for arg in ("-c", setting)],
            trial.task.instruction,
        ]

    def environment(self, trial, passed):
        # What the launcher would have set: codex then knows npm manages its updates.
        return {
            "CODEX_HOME": f"{AGENT_HOME}/.codex",
            "CODEX_MANAGED_BY_NPM": "1",
            "CODEX_MANAGED_PACKAGE_ROOT": f"{self.tool_root}/node_modules/@openai/codex",
        }

    def files(self, trial, passed):
        # CODEX_HOME must exist before codex starts.
        return [(f"{AGENT_HOME}/.codex/config.toml", b"# settings are given with -c on the command line\n", False)]

    def stream(self):
        return CodexStream()
