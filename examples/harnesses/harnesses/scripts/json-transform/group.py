"""Group /app/data/employees.json by department into /app/out/departments.json."""
import json

with open("/app/data/employees.json") as fh:
    people = json.load(fh)
out = {}
for p in people:
    d = out.setdefault(p["dept"], {"count": 0, "total_salary": 0, "members": []})
    d["count"] += 1
    d["total_salary"] += p["salary"]
    d["members"].append(p["name"])
for d in out.values():
    d["members"].sort()
with open("/app/out/departments.json", "w") as fh:
    json.dump(out, fh, indent=2, sort_keys=True)
    fh.write("\n")
