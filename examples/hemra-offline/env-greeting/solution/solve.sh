#!/bin/bash
# Reference solution for hemra/env-greeting: GREETING_NAME comes from the image ENV.
set -euo pipefail
printf 'Hello, %s!\n' "${GREETING_NAME:?GREETING_NAME is not set}" > /app/greeting.txt
