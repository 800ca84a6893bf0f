"""The planner's exceptions: a problem in resolve, named in one line. They belong to the
shared tree (services/common/errors.py) and travel as InvalidArgument and NotFound."""

from hemra.services.common import errors


class PlanError(errors.InvalidArgument):
    """The run cannot be planned (a bad file, key or reference)."""


class NotFound(errors.NotFound, PlanError):
    """A dataset, harness or run file does not exist."""
