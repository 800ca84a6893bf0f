"""A quick check of the fixed module before finishing."""
import sys

sys.path.insert(0, "/app")
from inventory import Inventory  # noqa: E402

inv = Inventory()
inv.add("apple", 3)
inv.add("pear", 2)
try:
    inv.remove("apple", 5)
except ValueError:
    pass
else:
    raise SystemExit("over-removal did not raise")
inv.remove("apple", 1)
assert (inv.count("apple"), inv.count("kiwi"), inv.total()) == (2, 0, 4)
print("inventory ok")
