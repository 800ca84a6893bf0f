import unittest

import stats_utils


class MeanTests(unittest.TestCase):
    def test_mean(self):
        self.assertAlmostEqual(stats_utils.mean([1, 2, 3, 4]), 2.5)

    def test_mean_empty(self):
        with self.assertRaises(ValueError):
            stats_utils.mean([])


class MedianTests(unittest.TestCase):
    def test_odd_length(self):
        self.assertEqual(stats_utils.median([7, 1, 3]), 3)

    def test_even_length(self):
        self.assertEqual(stats_utils.median([4, 1, 3, 2]), 2.5)

    def test_even_length_unsorted_pair(self):
        self.assertEqual(stats_utils.median([10, 2]), 6)

    def test_empty(self):
        with self.assertRaises(ValueError):
            stats_utils.median([])


class RangeTests(unittest.TestCase):
    def test_range(self):
        self.assertEqual(stats_utils.value_range([5, -2, 9]), 11)


if __name__ == "__main__":
    unittest.main()
