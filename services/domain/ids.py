"""Record IDs that sort by creation time, and content digests."""

import secrets
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case

#: One letter per kind of record, so `hemra show <id>` knows what it was given.
PREFIXES = {"run": "r", "cell": "c", "trial": "t", "attempt": "a", "job": "j", "import": "i"}


#: Random characters after the time stamp: 40 bits, so the thousands of IDs a
#: run records in one millisecond do not collide (an earlier format had 30).
_RANDOM_CHARS = 8


class _Sequence:
    """The random part of IDs made in one millisecond by this process goes up by one from
    the first (as ULIDs do), so IDs made in order sort in order even within a millisecond."""

    def __init__(self):
        self.lock = threading.Lock()
        self.millis, self.bits = -1, 0

    def next(self, millis: int) -> int:
        with self.lock:
            if millis == self.millis:
                self.bits = (self.bits + 1) & _MASK
            else:
                self.millis, self.bits = millis, secrets.randbits(5 * _RANDOM_CHARS)
            return self.bits


_MASK = (1 << (5 * _RANDOM_CHARS)) - 1
_SEQUENCE = _Sequence()


#: Two base32 characters per 10 bits: imports make tens of thousands of IDs at once.
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]
#: 50 bits of milliseconds then the random bits, high to low, 10 bits at a time.
_SHIFTS = tuple(range(50 + 5 * _RANDOM_CHARS - 10, -10, -10))


def new_id(kind: str, now: float | None = None) -> str:
    """`<prefix>-<10 chars of milliseconds><8 random chars>`; sorts by time, and within one
    millisecond of one process by the order they were made."""
    millis = int((time.time() if now is None else now) * 1000)
    value = (millis & (1 << 50) - 1) << 5 * _RANDOM_CHARS | _SEQUENCE.next(millis)
    return PREFIXES[kind] + "-" + "".join([_PAIRS[value >> shift & 1023] for shift in _SHIFTS])


def kind_of(record_id: str) -> str | None:
    """The kind of record an ID names, or None when it is not an ID of ours."""
    if len(record_id) not in (18, 20) or record_id[1] != "-":
        return None
    for kind, prefix in PREFIXES.items():
        if record_id[0] == prefix and all(c in _ALPHABET for c in record_id[2:]):
            return kind
    return None
