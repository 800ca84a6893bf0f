"""Headers every response carries: a strict Content-Security-Policy and friends."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
#: Longer request targets are refused (414) before routing.
MAX_TARGET = 4096
#: Host names a loopback gateway answers to (DNS rebinding protection).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


class SecurityHeaders:
    """ASGI middleware: adds HEADERS to every HTTP response, refuses oversized targets and
    foreign Host headers (so a web page cannot reach the API through DNS rebinding)."""

    def __init__(self, app, allowed_hosts: tuple[str, ...] | None):
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if target > MAX_TARGET:
            return await _plain(send, 414, b"request target too long")
        if self.allowed_hosts is not None and _host(scope) not in self.allowed_hosts:
            return await _plain(send, 421, b"unknown host; hemra serve answers loopback names only")

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                names = {name for name, _ in HEADERS}
                kept = [(n, v) for n, v in message.get("headers", []) if n.lower() not in names]
                message["headers"] = kept + HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _host(scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"host":
            host = value.decode("latin-1").lower()
            if host.startswith("["):
                return host.split("]")[0] + "]"
            return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return ""


async def _plain(send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
            + HEADERS,
        }
    )
    await send({"type": "http.response.body", "body": body})
