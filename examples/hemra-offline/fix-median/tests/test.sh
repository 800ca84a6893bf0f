#!/bin/bash
# Verifier for hemra/fix-median: runs the unittest suite against /app/stats_utils.py.
# Binary reward in /logs/verifier/reward.txt.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
cd /app || { echo 0 > /logs/verifier/reward.txt; exit 0; }
if PYTHONPATH=/app PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest discover -s /tests -t /tests -p 'test_*.py' -v; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
