#!/bin/bash
# Verifier for hemra/csv-column-sum: binary reward in /logs/verifier/reward.txt.
# Expected total: 19.99 + 250.00 + 7.45 + 120.10 + 0.99 + 64.20 + 1000.00 = 1462.73
EXPECTED="1462.73"
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
got=""
[ -f /app/total.txt ] && got="$(tr -d '[:space:]' < /app/total.txt)"
if [ "$got" = "$EXPECTED" ]; then
  echo "total is correct: $got"
  echo 1 > /logs/verifier/reward.txt
else
  echo "expected $EXPECTED, got '${got}'"
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
