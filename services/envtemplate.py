"""`${VAR}` and `${VAR:-default}` in task env tables, resolved from the environment of
whatever runs the step (Harbor's rule). Only names reach files and the store."""

import os
import re

_TEMPLATE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def resolve(values: dict[str, str], environ: dict[str, str] | None = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {
        key: _TEMPLATE.sub(lambda m: environ.get(m.group(1), m.group(2) or ""), value) for key, value in values.items()
    }


def pass_through(names, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The named variables that are set, read from our own environment."""
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in names if name in environ}
