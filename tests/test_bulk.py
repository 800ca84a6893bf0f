"""services/bulk.gc_paused: no collection while objects are built; what was built is counted old
(no young collection walks it); garbage with cycles is still collected; objects a process froze
for good (the gateway's start-up heap) stay frozen. Each test runs in a fresh interpreter: the
collector's state is the whole process's."""

import subprocess
import sys
import textwrap

import pytest


def run(code: str) -> str:
    found = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, check=False
    )
    assert found.returncode == 0, found.stderr
    return found.stdout.strip()


def test_built_objects__end_in_the_oldest_generation_and_nothing_collected_meanwhile():
    said = run(
        """
        import gc
        from hemra.services.bulk import gc_paused

        class Kept:
            __slots__ = ("n",)

        collections = []
        gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
        with gc_paused():
            kept = [Kept() for _ in range(50_000)]
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() == 0
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        print(collections, all(id(o) in oldest for o in kept[:: 1000]), gc.get_count()[0] < 1000)
        """
    )
    assert said == "[] True True"


def test_cycles_built_meanwhile__collected_by_a_full_collection():
    said = run(
        """
        import gc, weakref
        from hemra.services.bulk import gc_paused

        class Node:
            pass

        with gc_paused():
            a, b = Node(), Node()
            a.other, b.other = b, a
            gone = weakref.ref(a)
            del a, b
        print(gone() is not None, end=" ")
        gc.collect()
        print(gone() is None)
        """
    )
    assert said == "True True"


@pytest.mark.parametrize("disabled_before", [False, True])
def test_a_frozen_heap__stays_frozen_and_the_collector_as_it_was(disabled_before):
    said = run(
        f"""
        import gc
        from hemra.services.bulk import gc_paused

        held = [object() for _ in range(1000)]
        gc.freeze()
        frozen = gc.get_freeze_count()
        if {disabled_before}:
            gc.disable()
        with gc_paused():
            more = [[] for _ in range(1000)]
        print(gc.get_freeze_count() == frozen, gc.isenabled())
        """
    )
    assert said == f"True {not disabled_before}"
