"""Tiny descriptive-statistics helpers."""


def mean(values):
    """Arithmetic mean of a non-empty sequence of numbers."""
    values = list(values)
    if not values:
        raise ValueError("mean() of empty data")
    return sum(values) / len(values)


def median(values):
    """Median of a non-empty sequence of numbers."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("median() of empty data")
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return ordered[mid]


def value_range(values):
    """Difference between the largest and the smallest value."""
    values = list(values)
    if not values:
        raise ValueError("value_range() of empty data")
    return max(values) - min(values)
