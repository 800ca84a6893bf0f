"""agent = "pi": `pi -p --mode json` (@mariozechner/pi-coding-agent).

With OPENAI_BASE_URL named in the harness's env, pi gets a provider of its own
in ~/.pi/agent/models.json speaking Chat Completions there (key: OPENAI_API_KEY);
with ANTHROPIC_BASE_URL, one speaking Anthropic Messages (key:
ANTHROPIC_API_KEY). Otherwise a model "provider/model" picks one of pi's
built-in providers. Retries are capped in settings.json. pi exits 0 even when
the model API failed, so the last assistant message's stopReason decides.
"""

import json
from dataclasses import dataclass

from hemra.services.executor.events import event
from hemra.services.executor.harnesses.cli.base import AGENT_HOME, MAX_RETRIES, CliDriver, Stream

PROVIDER = "hemra"
#: Where pi's built-in providers send a "provider/model" (those relayed from network-less sandboxes).
BUILTIN_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}


@dataclass
class PiStream(Stream):
    agent: str = "pi"

    def translate(self, data: dict) -> list:
        kind = data.get("type")
        if kind == "session":
            return [event("status", "session", session_id=data.get("id", ""), format=data.get("version"))]
        if kind == "message_end":
            return self._message(data["message"])
        if kind == "tool_execution_end":
            result = data.get("result") or {}
            content = result.get("content") if isinstance(result, dict) else None
            output = "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
            return [
                event(
                    "tool_result",
                    data.get("toolName", ""),
                    id=data.get("toolCallId", ""),
                    output=output,
                    is_error=bool(data.get("isError")),
                )
            ]
        if kind == "auto_retry_start":
            return [
                event(
                    "error",
                    "auto_retry",
                    message=data.get("errorMessage", ""),
                    retrying=True,
                    attempt=data.get("attempt"),
                    max_attempts=data.get("maxAttempts"),
                )
            ]
        return []

    def _message(self, message: dict) -> list:
        role = message.get("role")
        if role == "user":
            return [event("message", "user", role="user", text=_texts(message.get("content")))]
        if role != "assistant":
            return []  # tool results come once, from tool_execution_end
        events = []
        for block in message.get("content") or []:
            if block.get("type") == "text":
                self.final_text = block.get("text", "")
                events.append(event("message", "assistant", role="assistant", text=self.final_text))
            elif block.get("type") == "thinking":
                events.append(event("message", "thinking", role="thinking", text=block.get("thinking", "")))
            elif block.get("type") == "toolCall":
                events.append(
                    event(
                        "tool_call",
                        block.get("name", ""),
                        id=block.get("id", ""),
                        arguments=block.get("arguments") or {},
                    )
                )
        usage = message.get("usage") or {}
        if usage:
            cost = (usage.get("cost") or {}).get("total", 0)
            events.append(
                event(
                    "usage",
                    message.get("model", ""),
                    input_tokens=usage.get("input", 0),
                    output_tokens=usage.get("output", 0),
                    cache_read_input_tokens=usage.get("cacheRead", 0),
                    cache_creation_input_tokens=usage.get("cacheWrite", 0),
                    **({"cost_usd": cost} if cost else {}),
                )
            )
        # The last assistant message decides: an error, then a successful retry, is a success.
        if message.get("stopReason") in ("error", "aborted"):
            self.failure = f"pi stopped with {message['stopReason']}: {message.get('errorMessage', '')}"[:500]
            events.append(event("error", "assistant", message=self.failure))
        else:
            self.failure = ""
        return events


def _texts(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text")


class PiDriver(CliDriver):
    agent, package, binary = "pi", "@mariozechner/pi-coding-agent", "pi"
    needs_node = True

    def _provider(self, passed) -> dict | None:
        if "OPENAI_BASE_URL" in passed:
            return {"baseUrl": passed["OPENAI_BASE_URL"], "api": "openai-completions", "apiKey": "OPENAI_API_KEY"}
        if "ANTHROPIC_BASE_URL" in passed:
            return {"baseUrl": passed["ANTHROPIC_BASE_URL"], "api": "anthropic-messages", "apiKey": "ANTHROPIC_API_KEY"}
        return None

    def base_urls(self, passed, model):
        provider = self._provider(passed)
        if provider:
            name = "OPENAI_BASE_URL" if provider["api"] == "openai-completions" else "ANTHROPIC_BASE_URL"
            return {name: provider["baseUrl"]}
        builtin = model.split("/", 1)[0] if "/" in model else ""
        return {f"pi's {builtin} provider": BUILTIN_URLS[builtin]} if builtin in BUILTIN_URLS else {}

    def command(self, trial, passed):
        if self._provider(passed):
            model = ["--provider", PROVIDER, "--model", trial.model or "default"]
        elif "/" in trial.model:
            provider, name = trial.model.split("/", 1)
            model = ["--provider", provider, "--model", name]
        else:
            model = ["--model", trial.model] if trial.model else []
        return [self.executable, "-p", "--mode", "json", "--no-session", *model, trial.task.instruction]

    def environment(self, trial, passed):
        return {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}

    def files(self, trial, passed):
        settings = {
            "retry": {"enabled": False, "provider": {"maxRetries": MAX_RETRIES}},
            "enableInstallTelemetry": False,
        }
        files = [(f"{AGENT_HOME}/.pi/agent/settings.json", json.dumps(settings).encode(), False)]
        provider = self._provider(passed)
        if provider:
            models = {"providers": {PROVIDER: {**provider, "models": [{"id": trial.model or "default"}]}}}
            files.append((f"{AGENT_HOME}/.pi/agent/models.json", json.dumps(models).encode(), False))
        return files

    def stream(self):
        return PiStream()
