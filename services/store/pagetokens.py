"""Page tokens: one format for every list the store pages (runs, attempts, events, tasks),
opaque to callers and read back only as what the store itself wrote.

A token is URL-safe base64 (unpadded) of `p1 <list> <position...>` joined by the unit
separator: `p1` versions the format (a later one can be told apart and refused with a clear
message), the list's name keeps a token of one list from paging another, and the position is
the keyset the next page starts after. Callers are hostile (they may send any string), so
reading one checks it is a position the store could have written: a number is finite and not
negative, an ID is one of ours. Anything else is InvalidArgument naming the token (HTTP 400,
gRPC INVALID_ARGUMENT), never a page that differs between SQLite and PostgreSQL (NaN sorts last
on one and compares as NULL on the other) or an error deeper down.
"""

import base64
import math

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain.ids import kind_of

VERSION = "p1"
_SEP = "\x1f"
#: Longer than any token the store writes (a task's name is the longest position).
MAX_TOKEN_CHARS = 1024
#: The characters repr() writes a finite float with.
_REPR_CHARS = set("0123456789.e+-")


def encode(kind: str, *position: str) -> str:
    """The token of `position` in the list named `kind`."""
    return base64.urlsafe_b64encode(_SEP.join((VERSION, kind, *position)).encode()).decode().rstrip("=")


def decode(token: str, kind: str, count: int) -> list[str]:
    """The `count` parts of the position a token of list `kind` holds; InvalidArgument when it
    is not one of ours, of this version and this list."""
    if len(token) > MAX_TOKEN_CHARS:
        raise malformed(token)
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except ValueError:
        raise malformed(token) from None
    parts = text.split(_SEP)
    if parts[:2] != [VERSION, kind] or len(parts) != 2 + count:
        raise malformed(token)
    return parts[2:]


def malformed(token: str) -> InvalidArgument:
    return InvalidArgument(f"malformed page token {token[:40]!r}")


def runs_token(create_time: float, run_id: str) -> str:
    """Where the next page of runs starts: after this run (newest first)."""
    return encode("runs", repr(create_time), run_id)


def after_run(token: str) -> tuple[float, str]:
    """(create_time, ID) of the last run a runs page token says was listed."""
    stamp, run_id = decode(token, "runs", 2)
    try:
        when = float(stamp)
    except ValueError:
        raise malformed(token) from None
    # float() also reads "nan", "inf", "-1", " 1" and "1_0": no time the store recorded.
    if not math.isfinite(when) or when < 0 or not set(stamp) <= _REPR_CHARS:
        raise malformed(token)
    if kind_of(run_id) not in ("run", "import"):
        raise malformed(token)
    return when, run_id


def attempts_token(attempt_id: str) -> str:
    """Where the next page of a run's attempts starts: after this attempt (ID order)."""
    return encode("attempts", attempt_id)


def after_attempt(token: str) -> str:
    """The ID of the last attempt an attempts page token says was listed."""
    (attempt_id,) = decode(token, "attempts", 1)
    if kind_of(attempt_id) != "attempt":
        raise malformed(token)
    return attempt_id


def events_token(seq: int) -> str:
    """Where the next page of an attempt's events starts: after event `seq`."""
    return encode("events", str(seq))


def after_event(token: str) -> int:
    """The sequence number an events page token goes on after."""
    (seq,) = decode(token, "events", 1)
    if not (seq.isascii() and seq.isdigit()) or len(seq) > 30:
        raise malformed(token)
    return int(seq)


def tasks_token(task_name: str, digest: str) -> str:
    """Where the next page of a dataset's tasks starts: after this task (name, then digest)."""
    return encode("tasks", task_name, digest)


def after_task(token: str) -> tuple[str, str]:
    """(task name, digest) of the last task a tasks page token says was listed."""
    name, digest = decode(token, "tasks", 2)
    return name, digest
