"""Record IDs that sort by creation time, and content digests."""

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case

#: One letter per kind of record, so `hemra show <id>` knows what it was given.
PREFIXES = {"run": "r", "cell": "c", "trial": "t", "attempt": "a", "job": "j", "import": "i"}


#: Random characters after the time stamp: 40 bits, so the thousands of IDs a
#: run records in one millisecond do not collide (an earlier format had 30).
_RANDOM_CHARS = 8


def new_id(kind: str, now: float | None = None) -> str:
    """`<prefix>-<10 chars of milliseconds><8 random chars>`; sorts by time."""
    millis = int((time.time() if now is None else now) * 1000)
    stamp = "".join(_ALPHABET[(millis >> shift) & 31] for shift in range(45, -5, -5))
    bits = secrets.randbits(5 * _RANDOM_CHARS)  # one call: imports make IDs by the 10,000
    rand = "".join(_ALPHABET[(bits >> (5 * i)) & 31] for i in range(_RANDOM_CHARS))
    return f"{PREFIXES[kind]}-{stamp}{rand}"


def kind_of(record_id: str) -> str | None:
    """The kind of record an ID names, or None when it is not an ID of ours."""
    if len(record_id) not in (18, 20) or record_id[1] != "-":
        return None
    for kind, prefix in PREFIXES.items():
        if record_id[0] == prefix and all(c in _ALPHABET for c in record_id[2:]):
            return kind
    return None
