"""The error of a task environment."""


class SandboxError(Exception):
    """The sandbox itself failed (an infrastructure failure, never the harness's)."""
