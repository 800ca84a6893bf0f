#!/bin/bash
# Reference solution for hemra/edit-config (plain sed edits, comments preserved).
set -euo pipefail
f=/app/config/service.ini
sed -i \
  -e 's/^port = 8080$/port = 9090/' \
  -e 's/^level = DEBUG$/level = WARNING/' \
  -e 's/^beta_ui = true$/beta_ui = false/' \
  "$f"
printf 'cache = enabled\n' >> "$f"   # [features] is the last section
