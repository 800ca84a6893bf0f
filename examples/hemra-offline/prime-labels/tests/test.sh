#!/bin/bash
# Verifier for hemra/prime-labels: reward.json with "accuracy" and "coverage"
# (no "reward" key).
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
/usr/bin/python3 /tests/grade.py
if [ ! -s /logs/verifier/reward.json ]; then
  echo '{"accuracy": 0.0, "coverage": 0.0}' > /logs/verifier/reward.json
fi
exit 0
