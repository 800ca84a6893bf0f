"""The scripted model server: HTTP on loopback, one thread per connection.

    POST /v1/messages           Anthropic Messages
    POST /v1/responses          OpenAI Responses
    POST /v1/chat/completions   OpenAI Chat Completions

Paths match without their query string (Claude Code adds ?beta=true). Every
request is recorded (method, path, headers, decoded body) for assertions.
"""

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from tests.modelserver import apis
from tests.modelserver.script import Script

ROUTES = {
    "/v1/messages": apis.answer_anthropic,
    "/v1/responses": apis.answer_responses,
    "/v1/chat/completions": apis.answer_chat,
}


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
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
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

    def model_requests(self) -> list[Request]:
        """The POSTs to the model APIs, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path in ROUTES]


def _handler(server: ModelServer):
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1: clients keep connections alive; SSE goes out chunked.
        protocol_version = "HTTP/1.1"

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
            reply = answer(body, server.script)
            if reply.body is not None:
                return self._json(reply.status, reply.body)
            self._sse(reply.frames)

        def do_GET(self):
            server.record(Request(self.command, urlsplit(self.path).path, _headers(self), None))
            self._json(404, {"error": {"message": "not found"}})

        do_HEAD = do_GET

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
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
