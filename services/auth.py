"""Service authentication: one deployment token, checked on every call by an interceptor.

Workers, the CLI and the services present it as "authorization: Bearer <token>".
The harness protocol (HarnessService) is exempt: it has per-attempt tokens of
its own (services/executor/protocol.py).
"""

import hmac
import os
import secrets
from pathlib import Path

import grpc

from services.common.health import OPEN_PREFIXES

#: The environment variable that holds the token, unless told otherwise.
DEFAULT_TOKEN_ENV = "HEMRA_TOKEN"
#: The harness protocol has tokens of its own; health and reflection answer probes, which carry none.
_EXEMPT_PREFIXES = ("/hemra.v1.HarnessService/", *OPEN_PREFIXES)


class TokenError(Exception):
    """No token could be found or made."""


def metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


class TokenInterceptor(grpc.aio.ServerInterceptor):
    def __init__(self, token: str):
        if not token:
            raise ValueError("an empty token would let anyone in")
        self._expected = f"Bearer {token}".encode()

    async def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method or ""
        if method.startswith(_EXEMPT_PREFIXES):
            return await continuation(handler_call_details)
        given = dict(handler_call_details.invocation_metadata or ()).get("authorization", "")
        if hmac.compare_digest(given.encode(), self._expected):
            return await continuation(handler_call_details)
        return _refuse(method)


def _refuse(method: str):
    async def deny(request, context):
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong HEMRA token")

    # Streaming RPCs do not exist in our contracts; every method is unary-unary.
    return grpc.unary_unary_rpc_method_handler(deny)


def token_from_env(name: str = DEFAULT_TOKEN_ENV) -> str:
    """The token in the variable `name`, else in the file `<name>_FILE` names (a secret
    mounted by compose or Kubernetes: it never sits in a compose file or a process listing)."""
    value = os.environ.get(name, "").strip()
    if not value and os.environ.get(f"{name}_FILE"):
        path = os.environ[f"{name}_FILE"]
        try:
            value = Path(path).read_text().strip()
        except OSError as exc:
            raise TokenError(f"{name}_FILE={path}: cannot read it: {exc.strerror or exc}") from None
        if not value:
            raise TokenError(f"{name}_FILE={path}: the file is empty; it must hold the deployment token")
    if not value:
        raise TokenError(f"environment variable {name} is not set: it must hold the deployment token")
    return value


def server_token(home: Path, name: str = DEFAULT_TOKEN_ENV) -> tuple[str, str]:
    """The token a server requires: the named variable, else HEMRA_HOME/token (made once, mode 0600).

    Returns the token and where it came from (for the start-up message; never the value).
    """
    value = os.environ.get(name, "").strip()
    if value:
        return value, f"environment variable {name}"
    path = home / "token"
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip(), str(path)
