"""HEMRA's one error tree. Each class carries the gRPC status it travels as and a stable
ErrorInfo reason; the server-side interceptor (transport.py) sends both, and the client side
raises the same class again from the reason. A service may subclass these for its own use
(the planner's PlanError, the importer's ImportProblem): they travel as their shared class.

The gateway maps classes to HTTP statuses (gateway/errors.py) and the CLI to exit codes
(clients/cli/common.py), each in one table."""

import grpc


class HemraError(Exception):
    """Something went wrong that the service could not handle."""

    code = grpc.StatusCode.INTERNAL
    reason = "INTERNAL"

    def __init__(self, message: str | None = None, code: grpc.StatusCode | None = None):
        super().__init__(message or self.__doc__)
        if code is not None:  # an error received with a status no class of the tree names
            self.code = code


class NotFound(HemraError):
    """No such record."""

    code, reason = grpc.StatusCode.NOT_FOUND, "NOT_FOUND"


class InvalidArgument(HemraError):
    """The request is malformed."""

    code, reason = grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT"


class FailedPrecondition(HemraError):
    """The record is not in a state that allows this."""

    code, reason = grpc.StatusCode.FAILED_PRECONDITION, "FAILED_PRECONDITION"


class StoreUnwritable(FailedPrecondition):
    """The store cannot write: the file system holding it is full or read-only, or its database
    refuses writes. Nothing was written; asking again helps only once that has been mended."""

    reason = "STORE_UNWRITABLE"


class LeaseLost(HemraError):
    """The job's lease was lost: another worker holds it or it expired and was reclaimed."""

    code, reason = grpc.StatusCode.ABORTED, "LEASE_LOST"


class Unavailable(HemraError):
    """The service or its database cannot be reached just now; asking again later may work."""

    code, reason = grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE"


class Unauthenticated(HemraError):
    """The call carried no token, or the wrong one."""

    code, reason = grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED"


class PermissionDenied(HemraError):
    """The caller may not do this (e.g. a harness writing outside its sandbox's reach)."""

    code, reason = grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED"


class ResourceExhausted(HemraError):
    """More than one call may carry or hold."""

    code, reason = grpc.StatusCode.RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"


class DeadlineExceeded(HemraError):
    """The time for this is up."""

    code, reason = grpc.StatusCode.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"


#: The shared classes, the only ones that travel: a service's own subclass arrives as its parent.
TREE = (
    NotFound,
    InvalidArgument,
    FailedPrecondition,
    StoreUnwritable,
    LeaseLost,
    Unavailable,
    Unauthenticated,
    PermissionDenied,
    ResourceExhausted,
    DeadlineExceeded,
)
_BY_REASON = {cls.reason: cls for cls in TREE}
#: A status that came without a reason (from gRPC itself, or an interceptor): the class that
#: status stands for. ABORTED is not here: only a lost lease is sent with it, by reason; nor is a
#: store that cannot write (FAILED_PRECONDITION without its reason is the plain class).
_BY_CODE = {cls.code: cls for cls in TREE if cls not in (LeaseLost, StoreUnwritable)}


def shared_class(exc: HemraError) -> type[HemraError]:
    """The class of the tree `exc` travels as."""
    return next((cls for cls in type(exc).__mro__ if cls in TREE), HemraError)


def from_status(code: grpc.StatusCode, message: str, reason: str = "") -> HemraError:
    """The error a status stands for: by its reason when it has one of ours, else by its code."""
    cls = _BY_REASON.get(reason) or _BY_CODE.get(code)
    if cls is None:
        return HemraError(message, code)
    return cls(message)
