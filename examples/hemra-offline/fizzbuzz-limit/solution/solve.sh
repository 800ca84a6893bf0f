#!/bin/bash
# Reference solution for hemra/fizzbuzz-limit.
set -euo pipefail
for i in $(seq 1 30); do
  if (( i % 15 == 0 )); then echo FizzBuzz
  elif (( i % 3 == 0 )); then echo Fizz
  elif (( i % 5 == 0 )); then echo Buzz
  else echo "$i"
  fi
done > /app/fizzbuzz.txt
