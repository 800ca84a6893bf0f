"""A harbor harness's [options] table: Harbor's agent kwargs, read by the planner (to refuse a
bad one at resolve) and by the executor (to pass them as `harbor run --ak key=value`)."""

import re

OPTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class BadOption(ValueError):
    """The table or one of its entries is not what Harbor's --ak takes (the message says which)."""


def agent_kwargs(data: dict) -> list[str]:
    """The [options] table of a harness file's keys as `key=value` strings, in file order."""
    table = data.get("options", {})
    if not isinstance(table, dict):
        raise BadOption("options must be a table of Harbor agent kwargs (key = value)")
    found = []
    for key, value in table.items():
        if not OPTION.match(key):
            raise BadOption(f"options key {key!r} must be a name (letters, digits, _)")
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, (str, int, float)):
            raise BadOption(f"options.{key} must be a string, number or boolean")
        found.append(f"{key}={value}")
    return found
