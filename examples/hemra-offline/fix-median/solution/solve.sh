#!/bin/bash
# Reference solution for hemra/fix-median: for an even count the median is the
# mean of the two middle values. Replace the final (buggy) return of median().
set -euo pipefail
sed -i 's/^    return ordered\[mid\]$/    return (ordered[mid - 1] + ordered[mid]) \/ 2/' /app/stats_utils.py
# The odd-length branch is indented one level deeper and is left untouched.
grep -q 'return (ordered\[mid - 1\] + ordered\[mid\]) / 2' /app/stats_utils.py
