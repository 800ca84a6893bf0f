"""Sum the amount column of /app/data/orders.csv (quoted commas need a real CSV reader)."""
import csv
from decimal import Decimal

with open("/app/data/orders.csv", newline="") as fh:
    total = sum(Decimal(row["amount"]) for row in csv.DictReader(fh))
with open("/app/total.txt", "w") as out:
    out.write(f"{total:.2f}\n")
