"""The planner's exceptions: a problem in resolve, named in one line."""


class PlanError(Exception):
    """The run cannot be planned (a bad file, key or reference)."""


class NotFound(PlanError):
    """A dataset, harness or run file does not exist."""
