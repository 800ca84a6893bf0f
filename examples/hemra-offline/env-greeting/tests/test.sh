#!/bin/bash
# Verifier for hemra/env-greeting: binary reward in /logs/verifier/reward.txt.
# GREETING_NAME is set by the image (Dockerfile ENV); without it nothing can pass.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
if [ -z "${GREETING_NAME:-}" ]; then
  echo "GREETING_NAME is not set in the verifier environment"
  echo 0 > /logs/verifier/reward.txt
  exit 0
fi
expected="Hello, ${GREETING_NAME}!"
if [ -f /app/greeting.txt ] && [ "$(cat /app/greeting.txt)" = "$expected" ] \
   && [ "$(wc -l < /app/greeting.txt)" -eq 1 ]; then
  echo "greeting matches: $expected"
  echo 1 > /logs/verifier/reward.txt
else
  echo "expected '$expected' in /app/greeting.txt"
  echo 0 > /logs/verifier/reward.txt
fi
exit 0
