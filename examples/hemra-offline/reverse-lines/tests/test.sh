#!/bin/bash
# Verifier for hemra/reverse-lines: binary reward in /logs/verifier/reward.txt.
# The expected output ships with the tests, so editing the input does not help.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
if [ -f /app/reversed.txt ] && cmp -s /app/reversed.txt /tests/expected.txt; then
  echo "reversed.txt matches"
  echo 1 > /logs/verifier/reward.txt
else
  echo "reversed.txt missing or different"
  [ -f /app/reversed.txt ] && diff /tests/expected.txt /app/reversed.txt
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
