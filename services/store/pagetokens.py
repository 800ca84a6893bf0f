"""Page tokens: opaque to callers, and read back only as what the store itself wrote.

A token is URL-safe base64 (unpadded) of a keyset position. Callers are hostile (they may
send any string), so reading one checks it is a position the store could have written: a
number is finite and not negative, an ID is one of ours. Anything else is InvalidArgument
naming the token, never a page that differs between SQLite and PostgreSQL (NaN sorts last on
one and compares as NULL on the other) or an error deeper down.
"""

import base64
import math

from services.common.errors import InvalidArgument
from services.domain.ids import kind_of

#: Longer than any token the store writes (a time and an ID).
MAX_TOKEN_CHARS = 100
#: The characters repr() writes a finite float with.
_REPR_CHARS = set("0123456789.e+-")


def encode(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(token: str) -> str:
    """The text a token holds; InvalidArgument when it is not one of ours."""
    if len(token) > MAX_TOKEN_CHARS:
        raise malformed(token)
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except ValueError:
        raise malformed(token) from None


def malformed(token: str) -> InvalidArgument:
    return InvalidArgument(f"malformed page token {token[:40]!r}")


def runs_token(create_time: float, run_id: str) -> str:
    """Where the next page of runs starts: after this run (newest first)."""
    return encode(f"{create_time!r}/{run_id}")


def after_run(token: str) -> tuple[float, str]:
    """(create_time, ID) of the last run a runs page token says was listed."""
    stamp, _, run_id = decode(token).partition("/")
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
