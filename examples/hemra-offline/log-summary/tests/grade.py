"""Grader for hemra/log-summary.

Writes /logs/verifier/reward.json with:
  reward    - fraction of the four fields that are correct
  format_ok - 1.0 if /app/summary.json is a JSON object with exactly the four keys
"""
import json

OUT = "/app/summary.json"
REWARD = "/logs/verifier/reward.json"
EXPECTED = {
    "total_requests": 10,
    "unique_ips": 5,
    "status_counts": {"200": 6, "201": 1, "304": 1, "404": 1, "500": 1},
    "top_path": "/api/items",
}


def grade():
    try:
        with open(OUT, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"cannot load {OUT}: {exc}")
        return 0.0, 0.0
    if not isinstance(data, dict):
        print("summary.json is not a JSON object")
        return 0.0, 0.0
    passed = 0
    for key, want in EXPECTED.items():
        got = data.get(key)
        ok = got == want and type(got) is type(want)
        print(f"{key}: {'ok' if ok else f'expected {want!r}, got {got!r}'}")
        passed += ok
    fmt = 1.0 if set(data) == set(EXPECTED) else 0.0
    print(f"format_ok: {fmt}")
    return round(passed / len(EXPECTED), 4), fmt


def main():
    reward, fmt = 0.0, 0.0
    try:
        reward, fmt = grade()
    finally:
        with open(REWARD, "w", encoding="utf-8") as fh:
            json.dump({"reward": reward, "format_ok": fmt}, fh)
            fh.write("\n")


if __name__ == "__main__":
    main()
