#!/bin/bash
# Verifier for hemra/fizzbuzz-limit: binary reward in /logs/verifier/reward.txt.
# FIZZBUZZ_LIMIT comes from [verifier].env in task.toml; without it the check
# cannot run and the reward is 0.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.json /logs/verifier/reward.txt
limit="${FIZZBUZZ_LIMIT:-}"
if ! [[ "$limit" =~ ^[1-9][0-9]*$ ]]; then
  echo "FIZZBUZZ_LIMIT is missing or not a positive integer: '$limit'"
  echo 0 > /logs/verifier/reward.txt
  exit 0
fi
expected="$(mktemp)"
for ((i = 1; i <= limit; i++)); do
  if (( i % 15 == 0 )); then echo FizzBuzz
  elif (( i % 3 == 0 )); then echo Fizz
  elif (( i % 5 == 0 )); then echo Buzz
  else echo "$i"
  fi
done > "$expected"
if [ -f /app/fizzbuzz.txt ] && cmp -s "$expected" /app/fizzbuzz.txt; then
  echo "fizzbuzz.txt is correct for 1..$limit"
  echo 1 > /logs/verifier/reward.txt
else
  echo "fizzbuzz.txt missing or wrong for 1..$limit"
  echo 0 > /logs/verifier/reward.txt
fi
rm -f "$expected"
exit 0
