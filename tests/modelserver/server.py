"""The scripted model server: HTTP on loopback, one thread per connection.

    POST /v1/messages           Anthropic Messages
    POST /v1/responses          OpenAI Responses
    POST /v1/chat/completions   OpenAI Chat Completions

Paths match without their query string (Claude Code adds ?beta=true). Every
request is recorded (method, path, headers, decoded body) for assertions.
"""

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from tests.modelserver import apis, judge
from tests.modelserver.script import Script, Turn

ROUTES = {
    "/v1/messages": apis.answer_anthropic,
    "/v1/responses": apis.answer_responses,
    "/v1/chat/completions": apis.answer_chat,
}


class _Server(ThreadingHTTPServer):
    # Clients open many connections at once (a judge's concurrency): the default backlog of 5
    # refuses some of them.
    request_queue_size = 256


@dataclass
class Request:
    method: str
    path: str
    headers: dict  # names lower-cased
    body: object


class ModelServer:
    """Start with `with ModelServer(script) as server:`; `server.url` is http://127.0.0.1:PORT."""

    def __init__(self, script: Script | None = None, port: int = 0):
        self.script = script or Script()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        #: Judge requests seen per conversation (tests/modelserver/judge.py).
        self._conversations: Counter = Counter()
        self._httpd = _Server(("127.0.0.1", port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ModelServer":
        # A short poll so that stop() returns at once.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="modelserver", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def judge_turn(self, path: str, body: dict) -> tuple[judge.JudgeTurn, str, str]:
        """The judge turn for this request (and its system prompt and first user message)."""
        system, user = judge.prompts_of(path, body)
        with self._lock:
            key = judge.conversation(system, user)
            index = self._conversations[key]
            self._conversations[key] += 1
        turns = self.script.judge
        return turns[min(index, len(turns) - 1)], system, user

    def model_requests(self) -> list[Request]:
        """The POSTs to the model APIs, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path in ROUTES]


def _handler(server: ModelServer):
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1: clients keep connections alive; SSE goes out chunked.
        protocol_version = "HTTP/1.1"
        # Headers and body go out as separate writes: without this, Nagle's algorithm holds the
        # body until the client's delayed ACK, adding ~40 ms to every answer.
        disable_nagle_algorithm = True

        def log_message(self, *args):  # quiet: the recorded requests are the log
            pass

        def do_POST(self):
            path = urlsplit(self.path).path
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = raw.decode(errors="replace")
            server.record(Request("POST", path, _headers(self), body))
            answer = ROUTES.get(path)
            if answer is None or not isinstance(body, dict):
                return self._json(404 if answer is None else 400, {"error": {"message": f"no route {path}"}})
            if server.script.judge and not body.get("tools"):
                return self._judge(path, body, answer)
            reply = answer(body, server.script)
            if reply.body is not None:
                return self._json(reply.status, reply.body)
            self._sse(reply.frames)

        def _judge(self, path: str, body: dict, answer) -> None:
            turn, system, user = server.judge_turn(path, body)
            if turn.delay:
                time.sleep(turn.delay)
            if turn.kind == "error":
                headers = {} if turn.retry_after is None else {"Retry-After": f"{turn.retry_after:g}"}
                return self._json(turn.status, {"error": {"message": "scripted judge error"}}, headers)
            if turn.kind == "refuse":
                forced = Turn(refuse=True)
            else:
                forced = Turn(text=turn.text if turn.kind == "text" else judge.grade(system, user))
            reply = answer(body, server.script, forced)
            if reply.body is not None:
                return self._json(reply.status, reply.body)
            self._sse(reply.frames)

        def do_GET(self):
            server.record(Request(self.command, urlsplit(self.path).path, _headers(self), None))
            self._json(404, {"error": {"message": "not found"}})

        do_HEAD = do_GET

        def _json(self, status: int, body: dict, headers: dict | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_scripted")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _sse(self, frames) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("request-id", "req_scripted")
            self.end_headers()
            for name, data in frames:
                payload = data if isinstance(data, str) else json.dumps(data)
                frame = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
                self._chunk(frame.encode())
            self._chunk(b"")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    return Handler


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    """Header names lower-cased, as HTTP treats them."""
    return {name.lower(): value for name, value in handler.headers.items()}
