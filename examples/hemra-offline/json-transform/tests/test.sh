#!/bin/bash
# Verifier for hemra/json-transform: multi-key reward in /logs/verifier/reward.json.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
/usr/bin/python3 /tests/grade.py
if [ ! -s /logs/verifier/reward.json ]; then
  echo '{"reward": 0.0, "format_ok": 0.0}' > /logs/verifier/reward.json
fi
exit 0
