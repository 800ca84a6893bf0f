"""Record IDs sort by creation time, within one millisecond too."""

from hemra.services.domain.ids import kind_of, new_id


def test_new_id__made_in_one_millisecond_sort_in_the_order_made():
    ids = [new_id("cell", 1_800_000_000.0) for _ in range(5000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert {kind_of(i) for i in ids} == {"cell"}


def test_new_id__later_milliseconds_sort_later():
    assert new_id("run", 1_800_000_000.0) < new_id("run", 1_800_000_000.002) < new_id("run", 1_800_000_001.0)
