#!/bin/bash
# Verifier for hemra/text-stats: binary reward in /logs/verifier/reward.txt.
# Always writes a reward file and exits 0 (the exit code is ignored anyway).
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
if /usr/bin/python3 /tests/check.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
