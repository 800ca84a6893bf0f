#!/bin/bash
# Verifier for hemra/fix-inventory: reward.json {"reward": passed/total, "all_passed": 0|1}.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
cd /app && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 /tests/run_tests.py
if [ ! -s /logs/verifier/reward.json ]; then
  echo '{"reward": 0.0, "all_passed": 0.0}' > /logs/verifier/reward.json
fi
exit 0
