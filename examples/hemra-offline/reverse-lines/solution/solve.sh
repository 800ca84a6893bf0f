#!/bin/bash
# Reference solution for hemra/reverse-lines.
set -euo pipefail
tac /app/data/steps.txt > /app/reversed.txt
