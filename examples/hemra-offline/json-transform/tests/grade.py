"""Grader for hemra/json-transform.

Writes /logs/verifier/reward.json with two keys:
  reward    - fraction of checks passed (one per department + one for the key set)
  format_ok - 1.0 if the file is a JSON object whose values all have exactly the
              keys count/total_salary/members with the right types, else 0.0
"""
import json

OUT = "/app/out/departments.json"
REWARD = "/logs/verifier/reward.json"
EXPECTED = {
    "engineering": {"count": 3, "total_salary": 16200, "members": ["Aiko", "Chidi", "Mira"]},
    "research": {"count": 1, "total_salary": 7000, "members": ["Zara"]},
    "sales": {"count": 2, "total_salary": 6450, "members": ["Bruno", "Tomas"]},
    "support": {"count": 1, "total_salary": 2800, "members": ["Lena"]},
}


def shape_ok(data) -> bool:
    if not isinstance(data, dict) or not data:
        return False
    for value in data.values():
        if not isinstance(value, dict) or set(value) != {"count", "total_salary", "members"}:
            return False
        if not isinstance(value["count"], int) or not isinstance(value["total_salary"], int):
            return False
        if not isinstance(value["members"], list) or not all(isinstance(m, str) for m in value["members"]):
            return False
    return True


def grade():
    try:
        with open(OUT, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"cannot load {OUT}: {exc}")
        return 0.0, 0.0
    checks = []
    for dept, want in EXPECTED.items():
        ok = isinstance(data, dict) and data.get(dept) == want
        print(f"department {dept}: {'ok' if ok else 'wrong'}")
        checks.append(ok)
    keys_ok = isinstance(data, dict) and set(data) == set(EXPECTED)
    print(f"department set: {'ok' if keys_ok else 'wrong'}")
    checks.append(keys_ok)
    fmt = 1.0 if shape_ok(data) else 0.0
    print(f"format_ok: {fmt}")
    return round(sum(checks) / len(checks), 4), fmt


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
