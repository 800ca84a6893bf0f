#!/bin/bash
# Verifier for hemra/edit-config: binary reward in /logs/verifier/reward.txt.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
if /usr/bin/python3 /tests/check_config.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
