"""Summarise /app/logs/access.log into /app/summary.json."""
import collections
import json

ips, statuses, paths, total = set(), collections.Counter(), collections.Counter(), 0
with open("/app/logs/access.log") as fh:
    for line in fh:
        if not line.strip():
            continue
        total += 1
        ips.add(line.split()[0])
        request = line.split('"')[1]
        paths[request.split()[1]] += 1
        statuses[line.split('"')[2].split()[0]] += 1
summary = {
    "total_requests": total,
    "unique_ips": len(ips),
    "status_counts": dict(sorted(statuses.items())),
    "top_path": paths.most_common(1)[0][0],
}
with open("/app/summary.json", "w") as fh:
    json.dump(summary, fh, indent=2)
    fh.write("\n")
