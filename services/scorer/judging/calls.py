"""A judge's model calls: Anthropic Messages, OpenAI Responses and Chat Completions, streaming or
not, with bounded retries on 429, 5xx and timeouts, every request and response kept as bytes.

One `ask` is one question to the model; it may take several HTTP requests (transport
retries), and each one becomes a `Call` whatever happened to it, so the attempt page can
show exactly what was sent and what came back.
"""

import asyncio
import email.utils
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import httpx

from hemra.services.common.judges import Judge, missing_variable

#: The most of one response read; a larger one is cut there and is a failed call.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: Retry-After is honoured up to this many seconds (a longer wait is this long).
MAX_RETRY_AFTER_SECS = 60.0
MAX_BACKOFF_SECS = 30.0
DEFAULT_BASE_URL = {
    "anthropic-messages": "https://api.anthropic.com",
    "openai-responses": "https://api.openai.com/v1",
    "openai-chat": "https://api.openai.com/v1",
}
PATH = {"anthropic-messages": "/v1/messages", "openai-responses": "/responses", "openai-chat": "/chat/completions"}
RETRIED_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


@dataclass
class Call:
    """One HTTP request and what came of it."""

    request: bytes
    response: bytes = b""
    status: int = 0
    outcome: str = "ok"  # ok, http_error, transport_error, timeout (the judge adds unparseable, refused)
    error: str = ""
    served_model: str = ""
    latency_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class Answer:
    """What the model said, once a request succeeded (text is "" when it said nothing)."""

    text: str
    served_model: str
    refused: bool = False
    calls: list[Call] = field(default_factory=list)


class CallFailed(Exception):
    """No answer after the retries: the last call says why."""

    def __init__(self, message: str, calls: list[Call]):
        super().__init__(message)
        self.calls = calls


class ModelClient:
    """Asks one judge's model; shared by every attempt the judge scores."""

    def __init__(self, judge: Judge, env: Mapping[str, str], http: httpx.AsyncClient, sleep=asyncio.sleep):
        self.judge = judge
        self.http = http
        self._slots = asyncio.Semaphore(judge.concurrency)
        self._sleep = sleep
        base = env.get(judge.base_url_env, "") if judge.base_url_env else ""
        self.url = (base or DEFAULT_BASE_URL[judge.api]).rstrip("/") + PATH[judge.api]
        self.key = env.get(judge.api_key_env, "") if judge.api_key_env else ""
        self.missing = missing_variable(judge, env)

    async def ask(self, system: str, messages: list[tuple[str, str]]) -> Answer:
        """The model's answer to `messages` ((role, text), user first); CallFailed after the
        transport retries, or at once on an error a retry cannot mend (a 400, a 401)."""
        if self.missing:
            raise CallFailed(self.missing, [])
        body = json.dumps(self.body(system, messages), ensure_ascii=False).encode()
        calls: list[Call] = []
        for retry in range(self.judge.transport_retries + 1):
            call, wait = await self._once(body)
            calls.append(call)
            if call.outcome == "ok":
                try:
                    answer = parse_reply(self.judge.api, call.response, self.judge.stream)
                except ReplyError as exc:  # a cut stream, a proxy's page: worth another try
                    call.outcome, call.error, wait = "transport_error", str(exc), 0
                else:
                    call.served_model = answer.served_model
                    call.input_tokens, call.output_tokens = _usage(self.judge.api, call.response, self.judge.stream)
                    answer.calls = calls
                    return answer
            if wait is None or retry == self.judge.transport_retries:
                break
            await self._sleep(wait if wait > 0 else min(MAX_BACKOFF_SECS, self.judge.backoff_secs * 2**retry))
        raise CallFailed(calls[-1].error, calls)

    def body(self, system: str, messages: list[tuple[str, str]]) -> dict:
        judge = self.judge
        sampling = {k: v for k, v in judge.sampling().items() if k not in ("max_tokens", "reasoning_effort")}
        if judge.api == "anthropic-messages":
            body = {
                "model": judge.model,
                "max_tokens": judge.max_tokens,
                "system": system,
                "messages": [{"role": r, "content": t} for r, t in messages],
                **sampling,
            }
        elif judge.api == "openai-chat":
            body = {
                "model": judge.model,
                "max_completion_tokens": judge.max_tokens,
                "messages": [{"role": "system", "content": system}] + [{"role": r, "content": t} for r, t in messages],
                **sampling,
            }
            if judge.reasoning_effort:
                body["reasoning_effort"] = judge.reasoning_effort
            if judge.stream:
                body["stream_options"] = {"include_usage": True}
        else:
            body = {
                "model": judge.model,
                "instructions": system,
                "input": [{"role": r, "content": t} for r, t in messages],
                "max_output_tokens": judge.max_tokens,
                "store": False,
                **sampling,
            }
            if judge.reasoning_effort:
                body["reasoning"] = {"effort": judge.reasoning_effort}
        if judge.stream:
            body["stream"] = True
        return body

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self.judge.api == "anthropic-messages":
            headers["anthropic-version"] = "2023-06-01"
            if self.key:
                headers["x-api-key"] = self.key
        elif self.key:
            headers["authorization"] = f"Bearer {self.key}"
        if self.judge.stream:
            headers["accept"] = "text/event-stream"
        return headers

    async def _once(self, body: bytes) -> tuple[Call, float | None]:
        """One request: the Call, and how long to wait before the next (None: do not retry;
        0: the usual backoff)."""
        call = Call(request=body)
        async with self._slots:  # held for the request only: a backoff leaves the slot to others
            return self._classify(call, *await self._send(call, body))

    async def _send(self, call: Call, body: bytes) -> tuple[float, str]:
        started = time.monotonic()
        retry_after = ""
        try:
            async with asyncio.timeout(self.judge.timeout_secs):
                async with self.http.stream("POST", self.url, content=body, headers=self.headers()) as response:
                    call.status = response.status_code
                    call.response = await _read(response)
                    retry_after = response.headers.get("retry-after", "")
        except TimeoutError:
            call.outcome, call.error = "timeout", f"no answer within {self.judge.timeout_secs:g} s"
        except httpx.HTTPError as exc:
            call.outcome, call.error = "transport_error", f"{type(exc).__name__}: {exc}"
        return started, retry_after

    def _classify(self, call: Call, started: float, retry_after: str) -> tuple[Call, float | None]:
        _timed(call, started)
        if call.outcome != "ok":
            return call, 0
        if 200 <= call.status < 300:
            return call, None
        call.outcome = "http_error"
        call.error = f"HTTP {call.status}: {_error_message(call.response)}"
        return call, (_retry_after(retry_after) if call.status in RETRIED_STATUS else None)


def _timed(call: Call, started: float) -> Call:
    call.latency_ms = int((time.monotonic() - started) * 1000)
    return call


async def _read(response: httpx.Response) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_raw():
        data += chunk
        if len(data) > MAX_RESPONSE_BYTES:
            raise httpx.DecodingError(f"the response is larger than {MAX_RESPONSE_BYTES} bytes")
    return bytes(data)


def _retry_after(value: str) -> float:
    """Seconds a Retry-After header asks for (0 when absent or unreadable: the usual backoff)."""
    value = value.strip()
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if value else None
        seconds = when.timestamp() - time.time() if when else 0.0
    return max(0.0, min(MAX_RETRY_AFTER_SECS, seconds))


def _error_message(data: bytes) -> str:
    try:
        error = json.loads(data).get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return str(message)[:300] if message else data[:300].decode(errors="replace")
    except (ValueError, AttributeError):
        return data[:300].decode(errors="replace")


# -- reading replies ---------------------------------------------------------------------------


class ReplyError(ValueError):
    """A 2xx reply that is not the API's shape."""


def parse_reply(api: str, data: bytes, stream: bool) -> Answer:
    try:
        if not stream:
            return _READERS[api](json.loads(data))
        frames = sse_data(data)
        return _STREAM_READERS[api](frames)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ReplyError(f"the reply is not an {api} response: {exc}") from None


def sse_data(data: bytes) -> list:
    """The decoded `data:` payloads of a server-sent event stream ("[DONE]" left out)."""
    found = []
    for block in data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n\n"):
        lines = [line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        payload = "\n".join(lines)
        if payload and payload != "[DONE]":
            found.append(json.loads(payload))
    return found


def _anthropic(message: dict) -> Answer:
    text = "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
    return Answer(text, message.get("model", ""), refused=message.get("stop_reason") == "refusal")


def _anthropic_stream(frames: list) -> Answer:
    model, parts, stop = "", [], ""
    for frame in frames:
        kind = frame.get("type")
        if kind == "message_start":
            model = frame["message"].get("model", "")
        elif kind == "content_block_delta" and frame["delta"].get("type") == "text_delta":
            parts.append(frame["delta"]["text"])
        elif kind == "message_delta":
            stop = frame["delta"].get("stop_reason") or stop
        elif kind == "error":
            raise ValueError(f"the stream ended in an error: {frame.get('error')}")
    return Answer("".join(parts), model, refused=stop == "refusal")


def _chat(completion: dict) -> Answer:
    choice = completion["choices"][0]
    message = choice["message"]
    refused = bool(message.get("refusal")) or choice.get("finish_reason") == "content_filter"
    return Answer(message.get("content") or "", completion.get("model", ""), refused=refused)


def _chat_stream(frames: list) -> Answer:
    model, parts, refused = "", [], False
    for frame in frames:
        model = frame.get("model") or model
        for choice in frame.get("choices") or []:
            delta = choice.get("delta") or {}
            parts.append(delta.get("content") or "")
            refused = refused or bool(delta.get("refusal")) or choice.get("finish_reason") == "content_filter"
    return Answer("".join(parts), model, refused=refused)


def _responses(response: dict) -> Answer:
    parts, refused = [], False
    for item in response.get("output") or []:
        for content in item.get("content") or [] if item.get("type") == "message" else []:
            if content.get("type") == "output_text":
                parts.append(content.get("text", ""))
            elif content.get("type") == "refusal":
                refused = True
    return Answer("".join(parts), response.get("model", ""), refused=refused)


def _responses_stream(frames: list) -> Answer:
    for frame in frames:
        if frame.get("type") in ("response.completed", "response.incomplete"):
            return _responses(frame["response"])
        if frame.get("type") in ("error", "response.failed"):
            raise ValueError(f"the stream ended in an error: {frame.get('error') or frame.get('response')}")
    raise ValueError("the stream ended before response.completed")


_READERS = {"anthropic-messages": _anthropic, "openai-chat": _chat, "openai-responses": _responses}
_STREAM_READERS = {
    "anthropic-messages": _anthropic_stream,
    "openai-chat": _chat_stream,
    "openai-responses": _responses_stream,
}


def _usage(api: str, data: bytes, stream: bool) -> tuple[int, int]:
    """(input, output) tokens a reply reports; 0 where it does not."""
    try:
        frames = sse_data(data) if stream else [json.loads(data)]
    except ValueError:
        return 0, 0
    inp = out = 0
    for frame in frames:
        usage = frame.get("usage") or (frame.get("message") or frame.get("response") or {}).get("usage") or {}
        if isinstance(usage, dict):
            inp = usage.get("input_tokens") or usage.get("prompt_tokens") or inp
            out = usage.get("output_tokens") or usage.get("completion_tokens") or out
    return int(inp), int(out)
