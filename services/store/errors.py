"""The store's exceptions; the servicer maps each to one gRPC status code."""


class StoreError(Exception):
    """The store could not do what was asked."""

    reason = "STORE_ERROR"

    def __init__(self, message: str | None = None):
        super().__init__(message or self.__doc__)


class NotFound(StoreError):
    """No such record."""

    reason = "NOT_FOUND"


class InvalidArgument(StoreError):
    """The request is malformed."""

    reason = "INVALID_ARGUMENT"


class FailedPrecondition(StoreError):
    """The record is not in a state that allows this."""

    reason = "FAILED_PRECONDITION"


class LeaseLost(StoreError):
    """The job's lease was lost: another worker holds it or it expired and was reclaimed."""

    reason = "LEASE_LOST"


class Unavailable(StoreError):
    """The database cannot be reached just now; asking again later may work."""

    reason = "UNAVAILABLE"
