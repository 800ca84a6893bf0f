#!/bin/bash
# Reference solution for hemra/csv-column-sum (csv module handles quoted commas).
set -euo pipefail
/usr/bin/python3 - <<'PY'
import csv
from decimal import Decimal
with open("/app/data/orders.csv", newline="") as fh:
    total = sum(Decimal(row["amount"]) for row in csv.DictReader(fh))
with open("/app/total.txt", "w") as out:
    out.write(f"{total:.2f}\n")
PY
