"""agent = "claude-code": `claude -p --output-format stream-json --verbose`.

It reaches its model through ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY (named in
the harness's env). Nonessential traffic (telemetry, feature flags, update
checks) is switched off; IS_SANDBOX lets it skip permissions as root, which is
safe only because it runs inside the attempt's sandbox. MCP servers the harness
declares are written to a config file in its HOME and given with --mcp-config
and --strict-mcp-config, so no other MCP configuration is read.
"""

import json
from dataclasses import dataclass, field

from hemra.services.common import mcp
from hemra.services.executor.events import event
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.cli.base import AGENT_HOME, MAX_RETRIES, CliDriver, Stream

ANTHROPIC_URL = "https://api.anthropic.com"
MCP_CONFIG = f"{AGENT_HOME}/hemra-mcp.json"


@dataclass
class ClaudeStream(Stream):
    agent: str = "claude-code"
    _tools: dict = field(default_factory=dict, repr=False)

    def translate(self, data: dict) -> list:
        kind = data.get("type")
        if kind == "system":
            return self._system(data)
        if kind == "assistant":
            return [e for block in data["message"].get("content") or [] for e in self._assistant(block)]
        if kind == "user":
            blocks = (data.get("message") or {}).get("content")
            return (
                [self._tool_result(b, data) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
                if isinstance(blocks, list)
                else []
            )
        if kind == "result":
            return self._result(data)
        return []

    def _system(self, data: dict) -> list:
        if data.get("subtype") == "init":
            self.version = str(data.get("claude_code_version") or "")
            return [
                event(
                    "status",
                    "init",
                    version=self.version,
                    model=data.get("model", ""),
                    session_id=data.get("session_id", ""),
                    permission_mode=data.get("permissionMode", ""),
                    tools=data.get("tools") or [],
                    mcp_servers=data.get("mcp_servers") or [],
                ),
                *[
                    event(
                        "error",
                        "mcp_server",
                        server=s.get("name", ""),
                        message=f"claude reports MCP server {s.get('name')!r} {s.get('status')}",
                    )
                    for s in data.get("mcp_servers") or []
                    if isinstance(s, dict) and s.get("status") not in ("connected", None)
                ],
            ]
        if data.get("subtype") == "api_retry":
            return [
                event(
                    "error",
                    "api_retry",
                    message=f"model API error {data.get('error_status')} "
                    f"({data.get('error', '')}); retry {data.get('attempt')} of {data.get('max_retries')}",
                    retrying=True,
                )
            ]
        return []

    def _assistant(self, block: dict) -> list:
        if block.get("type") == "text":
            self.final_text = block.get("text", "")
            return [event("message", "assistant", role="assistant", text=self.final_text)]
        if block.get("type") == "thinking":
            return [event("message", "thinking", role="thinking", text=block.get("thinking", ""))]
        if block.get("type") == "tool_use":
            self._tools[block.get("id")] = block.get("name", "")
            return [
                event("tool_call", block.get("name", ""), id=block.get("id", ""), arguments=block.get("input") or {})
            ]
        return []

    def _tool_result(self, block: dict, line: dict) -> object:
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
        extra = line.get("tool_use_result") if isinstance(line.get("tool_use_result"), dict) else {}
        return event(
            "tool_result",
            self._tools.get(block.get("tool_use_id"), ""),
            id=block.get("tool_use_id", ""),
            output=content or "",
            is_error=bool(block.get("is_error")),
            **{k: extra[k] for k in ("stdout", "stderr", "interrupted") if k in extra},
        )

    def _result(self, data: dict) -> list:
        usage = data.get("usage") or {}
        events = [
            event(
                "usage",
                "total",
                (data.get("duration_ms") or 0) / 1000,
                input_tokens=usage.get("input_tokens", 0),
                output_tokens=usage.get("output_tokens", 0),
                cache_read_input_tokens=usage.get("cache_read_input_tokens", 0),
                cache_creation_input_tokens=usage.get("cache_creation_input_tokens", 0),
                cost_usd=data.get("total_cost_usd", 0),
                models={
                    m: {
                        "input_tokens": u.get("inputTokens", 0),
                        "output_tokens": u.get("outputTokens", 0),
                        "cost_usd": u.get("costUSD", 0),
                    }
                    for m, u in (data.get("modelUsage") or {}).items()
                },
            )
        ]
        events.append(
            event(
                "status",
                "result",
                subtype=data.get("subtype", ""),
                is_error=bool(data.get("is_error")),
                stop_reason=data.get("stop_reason"),
                terminal_reason=data.get("terminal_reason", ""),
                num_turns=data.get("num_turns", 0),
                result=data.get("result", ""),
                permission_denials=data.get("permission_denials") or [],
            )
        )
        if data.get("is_error"):
            status = data.get("api_error_status")
            self.failure = (
                f"claude ended with an error ({data.get('terminal_reason') or data.get('subtype')}"
                f"{f', model API status {status}' if status else ''}): {str(data.get('result', ''))[:300]}"
            )
            events.append(event("error", "result", message=self.failure))
        return events


class ClaudeCodeDriver(CliDriver):
    agent, package, binary = "claude-code", "@anthropic-ai/claude-code", "claude"

    def base_urls(self, passed, model):
        if "ANTHROPIC_BASE_URL" in passed:
            return {"ANTHROPIC_BASE_URL": passed["ANTHROPIC_BASE_URL"]}
        return {"Anthropic's API": ANTHROPIC_URL}

    def command(self, trial, passed):
        model = ["--model", trial.model] if trial.model else []
        return [
            self.executable,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
            "--no-session-persistence",
            *(["--mcp-config", MCP_CONFIG, "--strict-mcp-config"] if mcp_servers.servers(trial.harness) else []),
            *model,
            trial.task.instruction,
        ]

    def environment(self, trial, passed):
        return {
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(MAX_RETRIES),
        }

    def files(self, trial, passed):
        declared = mcp_servers.servers(trial.harness)
        if not declared:
            return []
        return [(MCP_CONFIG, json.dumps(mcp.claude_config(declared), indent=2).encode(), False)]

    def stream(self):
        return ClaudeStream()
