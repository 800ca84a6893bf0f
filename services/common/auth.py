"""Service authentication: a token per role, checked on every call by an interceptor.

The roles are services/common/access.py's. Each has its own variable, read also from the file
`<variable>_FILE` names (a secret compose or Kubernetes mounts: never in a compose file or a
process listing):

- user, HEMRA_TOKEN: people's `hemra` commands through the gateway's front door, and the gateway;
- worker, HEMRA_WORKER_TOKEN: executors, scorers, `hemra worker`;
- admin, HEMRA_ADMIN_TOKEN: the planner and the importer, which record runs and restore exports.

A service holds the tokens of the roles in HOLDS: a server accepts exactly those, each as its
role, and its interceptor lets a call in only when that role may call the RPC (access.check);
as a client it sends the token of its role in SENDS. A variable may hold two tokens separated
by a comma while one is rotated: both are accepted, the first is sent.

One token for everything still works: when neither HEMRA_WORKER_TOKEN nor HEMRA_ADMIN_TOKEN is
set, HEMRA_TOKEN is every role (`hemra serve` on one machine; HEMRA_HOME/token when it is unset).
Callers present "authorization: Bearer <token>". The harness protocol (HarnessService) has
per-attempt tokens of its own (services/executor/protocol.py); health and reflection answer
probes, which carry none.
"""

import hmac
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import grpc

from hemra.services.common import access, errors
from hemra.services.common.access import ADMIN, USER, WORKER
from hemra.services.common.health import OPEN_PREFIXES

#: Each role's variable (and `<variable>_FILE`).
ROLE_ENV = {USER: "HEMRA_TOKEN", WORKER: "HEMRA_WORKER_TOKEN", ADMIN: "HEMRA_ADMIN_TOKEN"}
#: The user's variable, which is every role's when the deployment has one token.
DEFAULT_TOKEN_ENV = ROLE_ENV[USER]
EVERY_ROLE = (USER, WORKER, ADMIN)
#: The roles whose tokens each service holds: those it is called as, and the one it calls as.
HOLDS = {
    "store": (USER, WORKER, ADMIN),
    "planner": (USER, ADMIN),  # PlanRun from users, PinTasks from the importer; records runs
    "importer": (USER, ADMIN),  # ImportResults from users; restores runs, pins task folders
    "scorer": (USER, WORKER),  # JudgeRun from users, ScoreAttempt from executors
    "executor": (WORKER,),
    "gateway": (USER,),
}
#: The role each service calls the others as.
SENDS = {"planner": ADMIN, "importer": ADMIN, "scorer": WORKER, "executor": WORKER, "gateway": USER}
#: The harness protocol has tokens of its own; health and reflection answer probes, which carry none.
_EXEMPT_PREFIXES = ("/hemra.v1.HarnessService/", *OPEN_PREFIXES)


class TokenError(Exception):
    """No token could be found or made."""


def metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


@dataclass(frozen=True)
class Credentials:
    """The tokens a process holds: the roles of each (a server accepts exactly these tokens)
    and the one it sends as each role (the first of that role's tokens)."""

    roles: Mapping[str, frozenset[str]]
    sent: Mapping[str, str]
    #: Where they came from, for a start-up line (never a value).
    source: str = ""

    def __post_init__(self):
        if not self.roles or "" in self.roles:
            raise ValueError("no token, or an empty one: a server would let anyone in")

    @classmethod
    def single(cls, token: str, source: str = "") -> "Credentials":
        """One token for every role: the embedded default, a deployment with one token."""
        return cls({token: frozenset(EVERY_ROLE)}, dict.fromkeys(EVERY_ROLE, token), source)

    @classmethod
    def of_role(cls, role: str, tokens: list[str], source: str = "") -> "Credentials":
        """`tokens` (the first is sent) as `role` alone."""
        return cls(dict.fromkeys(tokens, frozenset({role})), {role: tokens[0]} if tokens else {}, source)

    @property
    def shared(self) -> bool:
        """Whether one token stands for more than one role."""
        return any(len(roles) > 1 for roles in self.roles.values())

    def token(self, role: str) -> str:
        """The token to send as `role`."""
        if role not in self.sent:
            raise TokenError(f"no {role} token: set {ROLE_ENV[role]} (or {ROLE_ENV[role]}_FILE)")
        return self.sent[role]

    def only(self, role: str) -> "Credentials":
        """The tokens of `role`, as that role alone (the front door: whoever calls it is a user)."""
        return Credentials.of_role(role, [t for t, roles in self.roles.items() if role in roles], self.source)

    def roles_of(self, authorization: str) -> frozenset[str]:
        """The roles of a caller whose "authorization" metadata is `authorization`; none for no
        token or a wrong one. Compared with every token held, in constant time each."""
        given = authorization.encode()
        found = frozenset()
        for token, roles in self.roles.items():
            if hmac.compare_digest(given, f"Bearer {token}".encode()):
                found = roles
        return found


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Lets a call in when its token is one the server holds and that token's role may call the
    RPC (services/common/access.py): else UNAUTHENTICATED (no token, or a wrong one) or
    PERMISSION_DENIED (one line: the RPC and whom it is for)."""

    def __init__(self, credentials: Credentials):
        self._credentials = credentials

    async def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method or ""
        if method.startswith(_EXEMPT_PREFIXES):
            return await continuation(handler_call_details)
        given = dict(handler_call_details.invocation_metadata or ()).get("authorization", "")
        roles = self._credentials.roles_of(given if isinstance(given, str) else "")
        if not roles:
            return _refuse(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong HEMRA token")
        try:
            access.check(method, roles)
        except errors.PermissionDenied as exc:
            return _refuse(grpc.StatusCode.PERMISSION_DENIED, str(exc))
        return await continuation(handler_call_details)


def _refuse(code: grpc.StatusCode, message: str):
    async def deny(request, context):
        await context.abort(code, message)

    # Streaming RPCs do not exist in our contracts; every method is unary-unary.
    return grpc.unary_unary_rpc_method_handler(deny)


# --- tokens from the environment ---------------------------------------------------------------
def _split(value: str) -> list[str]:
    """The tokens of a variable or file: one, or two separated by a comma (or a line break)."""
    return [token for token in re.split(r"[,\s]+", value) if token]


def _is_set(name: str) -> bool:
    return bool(os.environ.get(name, "").strip() or os.environ.get(f"{name}_FILE", "").strip())


def tokens_from_env(name: str) -> list[str]:
    """The tokens in the variable `name`, else in the file `<name>_FILE` names; [] when neither
    is set. TokenError (one line) for a file that cannot be read or holds none."""
    tokens = _split(os.environ.get(name, ""))
    path = os.environ.get(f"{name}_FILE", "").strip()
    if not tokens and path:
        try:
            tokens = _split(Path(path).read_text())
        except OSError as exc:
            raise TokenError(f"{name}_FILE={path}: cannot read it: {exc.strerror or exc}") from None
        if not tokens:
            raise TokenError(f"{name}_FILE={path}: the file is empty; it must hold the token")
    return tokens


def token_from_env(name: str = DEFAULT_TOKEN_ENV) -> str:
    """The token to send from the variable `name` (or `<name>_FILE`): its first."""
    tokens = tokens_from_env(name)
    if not tokens:
        raise TokenError(f"environment variable {name} is not set: it must hold the deployment token")
    return tokens[0]


def credentials_from_env(holds: Iterable[str], user_env: str = DEFAULT_TOKEN_ENV) -> Credentials:
    """The tokens of the roles `holds` names, each from its variable (`user_env` for the user's).

    A deployment with one token sets neither HEMRA_WORKER_TOKEN nor HEMRA_ADMIN_TOKEN: then the
    user's variable is every role held. Otherwise each role held needs its own variable, and no
    token may be two roles'. TokenError (one line, naming the variable) when one is missing."""
    names = {**ROLE_ENV, USER: user_env}
    holds = tuple(dict.fromkeys(holds))
    if not any(_is_set(ROLE_ENV[role]) for role in (WORKER, ADMIN)):
        tokens = tokens_from_env(user_env)
        if not tokens:
            raise TokenError(f"environment variable {user_env} is not set: it must hold the deployment token")
        roles = frozenset(holds)
        return Credentials(dict.fromkeys(tokens, roles), dict.fromkeys(holds, tokens[0]), f"token from {user_env}")
    held: dict[str, frozenset[str]] = {}
    sent: dict[str, str] = {}
    for role in holds:
        tokens = tokens_from_env(names[role])
        if not tokens:
            raise TokenError(
                f"environment variable {names[role]} is not set: it must hold the {role} token "
                f"(each role has its own once HEMRA_WORKER_TOKEN or HEMRA_ADMIN_TOKEN is set)"
            )
        for token in tokens:
            other = next((r for r in held.get(token, ()) if r != role), None)
            if other:
                raise TokenError(f"{names[role]} and {names[other]} hold the same token: each role needs its own")
            held[token] = frozenset({role})
        sent[role] = tokens[0]
    return Credentials(held, sent, "tokens from " + ", ".join(names[role] for role in holds))


def serve_credentials(home: Path, user_env: str = DEFAULT_TOKEN_ENV) -> Credentials:
    """What `hemra serve` holds: every role's tokens from the environment when any is set, else
    one token for every role from HEMRA_HOME/token (made once, mode 0600)."""
    if any(_is_set(name) for name in (user_env, ROLE_ENV[WORKER], ROLE_ENV[ADMIN])):
        return credentials_from_env(EVERY_ROLE, user_env)
    path = home / "token"
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
    return Credentials.single(path.read_text().strip(), f"token from {path}")


def worker_tokens(name: str = "") -> tuple[list[str], str]:
    """What `hemra worker` presents to the store, and the variable it came from: `name` when
    given, else HEMRA_WORKER_TOKEN, else HEMRA_TOKEN (a deployment with one token)."""
    for candidate in (name,) if name else (ROLE_ENV[WORKER], ROLE_ENV[USER]):
        tokens = tokens_from_env(candidate)
        if tokens:
            return tokens, candidate
    if name:
        raise TokenError(f"environment variable {name} is not set: it must hold the worker token")
    raise TokenError(
        f"environment variable {ROLE_ENV[WORKER]} is not set: it must hold the worker token "
        f"(or {ROLE_ENV[USER]}, for a deployment with one token; {ROLE_ENV[USER]} is not set either)"
    )
