"""A minimal in-memory stock tracker."""


class Inventory:
    def __init__(self):
        self._stock = {}

    def add(self, item, qty):
        if not isinstance(qty, int) or qty <= 0:
            raise ValueError("qty must be a positive integer")
        self._stock[item] = self._stock.get(item, 0) + qty

    def remove(self, item, qty):
        if not isinstance(qty, int) or qty <= 0:
            raise ValueError("qty must be a positive integer")
        current = self._stock.get(item, 0)
        if qty > current:
            raise ValueError(f"cannot remove {qty} of {item!r}: only {current} in stock")
        self._stock[item] = current - qty

    def count(self, item):
        return self._stock.get(item, 0)

    def total(self):
        return sum(self._stock.values())
