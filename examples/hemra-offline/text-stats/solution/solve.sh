#!/bin/bash
# Reference solution for hemra/text-stats.
set -euo pipefail
f=/app/data/notes.txt
printf 'lines: %s\nwords: %s\n' "$(wc -l < "$f" | tr -d ' ')" "$(wc -w < "$f" | tr -d ' ')" > /app/answer.txt
