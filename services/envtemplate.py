"""`${VAR}` and `${VAR:-default}` in task env tables ([verifier] env, [solution] env): Harbor's
templating, resolved from the environment of whatever runs the step. Only names reach files
and the store.

A task is not trusted with the environment it runs in: a template reads only the variables the
user named for the run (`--verifier-env NAME`, a run file's `[verifier] env`), never one of
HEMRA's own (`HEMRA_*`, even named). The planner refuses a task asking for another
(`unnamed`); the step itself reads nothing else either (`resolve`).
"""

import os
import re

_TEMPLATE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")
#: HEMRA's own variables (its token, its store's address and password file...): never a task's.
OWN_PREFIX = "HEMRA_"


def own(name: str) -> bool:
    return name.startswith(OWN_PREFIX)


def names(values: dict[str, str]) -> list[str]:
    """The variables the templates of `values` read, in order, each once."""
    return list(dict.fromkeys(m.group(1) for value in values.values() for m in _TEMPLATE.finditer(value)))


def unnamed(values: dict[str, str], allowed) -> list[tuple[str, str]]:
    """(key, variable) for each template of `values` reading a variable not in `allowed`, or one
    of HEMRA's own."""
    allowed = set(allowed)
    return [
        (key, m.group(1))
        for key, value in values.items()
        for m in _TEMPLATE.finditer(value)
        if m.group(1) not in allowed or own(m.group(1))
    ]


def resolve(values: dict[str, str], allowed=(), environ: dict[str, str] | None = None) -> dict[str, str]:
    """`values` with each template replaced: by the variable's value when `allowed` names it
    (and it is not HEMRA's own), else as if it were unset (its default, or "")."""
    found = readable(allowed, environ)
    return {
        key: _TEMPLATE.sub(lambda m: found.get(m.group(1), m.group(2) or ""), value) for key, value in values.items()
    }


def readable(names, environ: dict[str, str] | None = None) -> dict[str, str]:
    """What a task's step may read of the named variables: those set, HEMRA's own never."""
    return {name: value for name, value in pass_through(names, environ).items() if not own(name)}


def pass_through(names, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The named variables that are set, read from our own environment."""
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in names if name in environ}
