"""Checks /app/answer.txt for hemra/text-stats. Exit 0 on success, 1 otherwise."""
import sys

EXPECTED = {"lines": 6, "words": 47}


def main() -> int:
    try:
        with open("/app/answer.txt", encoding="utf-8") as fh:
            rows = [ln.strip() for ln in fh.read().splitlines() if ln.strip()]
    except OSError as exc:
        print(f"cannot read /app/answer.txt: {exc}")
        return 1
    got = {}
    for row in rows:
        key, sep, value = row.partition(":")
        if not sep:
            print(f"malformed line: {row!r}")
            return 1
        try:
            got[key.strip()] = int(value.strip())
        except ValueError:
            print(f"not an integer: {row!r}")
            return 1
    if got != EXPECTED:
        print(f"expected {EXPECTED}, got {got}")
        return 1
    print("answer is correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
