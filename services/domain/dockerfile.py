"""Read a task's environment/Dockerfile into what a sandbox must set up.

The host sandbox can honour WORKDIR, ENV, ARG and COPY/ADD of local files (the
host's own userland stands in for FROM). Anything else that changes the
filesystem or the user (RUN, USER, COPY --from, ADD of a URL or an archive,
multi-stage builds) needs a container sandbox, and is listed by line.
"""

import json
import re
import shlex
from dataclasses import dataclass, field

#: Instructions that only describe the image; a sandbox may ignore them.
_METADATA = {"LABEL", "EXPOSE", "CMD", "ENTRYPOINT", "SHELL", "STOPSIGNAL", "HEALTHCHECK", "VOLUME", "MAINTAINER"}
#: Host folders the host sandbox shares read-only.
_SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/dev", "/sys")
_VAR = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


@dataclass
class Copy:
    source: str
    destination: str
    line: int


@dataclass
class EnvironmentPlan:
    base_image: str = ""
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    copies: list[Copy] = field(default_factory=list)
    #: "line N: <instruction>: why" for each step the host cannot honour.
    host_unsupported: list[str] = field(default_factory=list)
    #: The line of the WORKDIR that set `workdir` (0: not set by the Dockerfile).
    workdir_line: int = 0
    #: task.toml [environment] base_commit: the repository at `workdir` is detached at it
    #: before HEMRA strips its history ("": every repository at its own HEAD).
    base_commit: str = ""
    #: task.toml [environment] keep_history: the task says its tests need the history.
    keep_history: bool = False


class DockerfileError(ValueError):
    """The Dockerfile cannot be read."""


def instructions(text: str) -> list[tuple[int, str, str]]:
    """(first line number, INSTRUCTION, arguments), joining continuation lines."""
    result, buffer, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        keyword, _, args = buffer.partition(" ")
        result.append((start, keyword.upper(), args.strip()))
        buffer = ""
    if buffer:
        keyword, _, args = buffer.partition(" ")
        result.append((start, keyword.upper(), args.strip()))
    return result


def parse(text: str, workdir_default: str = "/") -> EnvironmentPlan:
    plan = EnvironmentPlan(workdir=workdir_default)
    args: dict[str, str] = {}
    stages = 0
    for line, keyword, rest in instructions(text):
        expand = lambda s: _substitute(s, {**args, **plan.env})  # noqa: E731
        if keyword == "FROM":
            stages += 1
            plan.base_image = plan.base_image or rest.split()[0] if rest else plan.base_image
            if stages > 1:
                plan.host_unsupported.append(f"line {line}: FROM {rest}: multi-stage builds need a container")
        elif keyword == "ARG":
            name, has_default, default = rest.partition("=")
            if has_default:
                args[name.strip()] = " ".join(_words(default.strip(), line)) if default.strip() else ""
            else:
                args.pop(name.strip(), None)  # declared without a default: unset
        elif keyword == "ENV":
            plan.env.update({k: expand(v) for k, v in _env_pairs(rest, line).items()})
        elif keyword == "WORKDIR":
            plan.workdir = _absolute(expand(rest.strip('"')), plan.workdir)
            plan.workdir_line = line
        elif keyword in ("COPY", "ADD"):
            _copy(plan, keyword, expand(rest), line)
        elif keyword == "USER":
            if expand(rest).split(":")[0] not in ("root", "0"):
                plan.host_unsupported.append(f"line {line}: USER {rest}: the host sandbox runs as one user")
        elif keyword == "RUN":
            plan.host_unsupported.append(f"line {line}: RUN {_short(rest)}: the host cannot run build steps")
        elif keyword not in _METADATA:
            plan.host_unsupported.append(f"line {line}: {keyword}: not supported on the host")
    return plan


def host_workdir_problem(workdir: str) -> str:
    """Why the host sandbox cannot make `workdir` the workspace ("" when it can): the host's own
    system folders are shared read-only, and a folder made over one of them hides the host's."""
    top = "/" + _absolute(workdir or "/", "/").strip("/").split("/")[0]
    if top in _SYSTEM_DIRS:
        return f"{top} is a host system folder the host sandbox shares read-only; the workspace must be elsewhere"
    return ""


def _copy(plan: EnvironmentPlan, keyword: str, rest: str, line: int) -> None:
    words = _words(rest, line)
    flags = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    if any(f.startswith("--from") for f in flags):
        plan.host_unsupported.append(f"line {line}: {keyword} {rest}: copies from another image")
        return
    if len(paths) < 2:
        raise DockerfileError(f"line {line}: {keyword} needs a source and a destination")
    *sources, destination = paths
    destination = _absolute(destination, plan.workdir, keep_slash=True)
    for source in sources:
        if keyword == "ADD" and (re.match(r"^[a-z]+://", source) or re.search(r"\.(tar|tgz|gz|bz2|xz)$", source)):
            plan.host_unsupported.append(f"line {line}: ADD {source}: URLs and archives need a container")
            continue
        if source.startswith("/") or ".." in source.split("/"):
            raise DockerfileError(f"line {line}: {keyword} source {source!r} is outside the build context")
        top = "/" + destination.strip("/").split("/")[0]
        if top in _SYSTEM_DIRS or destination.strip("/") == "":
            plan.host_unsupported.append(
                f"line {line}: {keyword} into {destination}: host system folders are read-only"
            )
            continue
        target = destination
        if len(sources) > 1 and not target.endswith("/"):
            raise DockerfileError(f"line {line}: {keyword} of several sources needs a destination ending in /")
        plan.copies.append(Copy(source, target, line))


def _words(rest: str, line: int) -> list[str]:
    """Shell-like words, or flags followed by the JSON array form (`--chown=1 ["a", "/b/"]`)."""
    flags = []
    remaining = rest
    while remaining.startswith("--"):
        flag, _, remaining = remaining.partition(" ")
        flags.append(flag)
        remaining = remaining.lstrip()
    if remaining.startswith("["):
        try:
            words = json.loads(remaining)
        except ValueError as exc:
            raise DockerfileError(f"line {line}: malformed JSON form: {exc}") from None
        if not isinstance(words, list):
            raise DockerfileError(f"line {line}: malformed JSON form")
        return flags + [str(w) for w in words]
    try:
        return shlex.split(rest)
    except ValueError as exc:
        raise DockerfileError(f"line {line}: {exc}") from None


def _env_pairs(rest: str, line: int) -> dict[str, str]:
    words = _words(rest, line)
    if words and "=" not in words[0]:
        # The old `ENV KEY value words` form: the rest of the line, quotes removed.
        return {words[0]: " ".join(_words(rest.partition(" ")[2].strip(), line))}
    pairs = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise DockerfileError(f"line {line}: ENV {word!r} has no value")
        pairs[key] = value
    return pairs


def _substitute(value: str, variables: dict[str, str]) -> str:
    def repl(match):
        name = match.group(1) or match.group(3)
        return variables.get(name, match.group(2) or "")

    return _VAR.sub(repl, value)


def _absolute(path: str, workdir: str, keep_slash: bool = False) -> str:
    joined = path if path.startswith("/") else workdir.rstrip("/") + "/" + path
    parts = []
    for part in joined.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            parts and parts.pop()
        else:
            parts.append(part)
    result = "/" + "/".join(parts)
    return result + "/" if keep_slash and path.endswith("/") and result != "/" else result


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
