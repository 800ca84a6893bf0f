import unittest

from inventory import Inventory


class InventoryTests(unittest.TestCase):
    def setUp(self):
        self.inv = Inventory()
        self.inv.add("bolt", 10)

    def test_add_and_count(self):
        self.inv.add("bolt", 5)
        self.assertEqual(self.inv.count("bolt"), 15)

    def test_unknown_item_counts_zero(self):
        self.assertEqual(self.inv.count("washer"), 0)

    def test_add_rejects_non_positive(self):
        with self.assertRaises(ValueError):
            self.inv.add("nut", 0)

    def test_remove(self):
        self.inv.remove("bolt", 4)
        self.assertEqual(self.inv.count("bolt"), 6)

    def test_over_remove_raises(self):
        with self.assertRaises(ValueError):
            self.inv.remove("bolt", 11)

    def test_over_remove_keeps_stock(self):
        try:
            self.inv.remove("bolt", 11)
        except ValueError:
            pass
        self.assertEqual(self.inv.count("bolt"), 10)

    def test_total(self):
        self.inv.add("nut", 3)
        self.assertEqual(self.inv.total(), 13)


if __name__ == "__main__":
    unittest.main()
