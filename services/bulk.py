"""Work on 100,000s of small objects at once (imports, big reports and compares)."""

import contextlib
import gc

from hemra.services.common.heap import frozen_for_good


@contextlib.contextmanager
def gc_paused():
    """Let the cyclic garbage collector wait while many objects are built that stay alive.

    Each automatic collection walks every live object again: for a 10,000-trial import or
    a 100,000-trial compare, a third of the time. These objects hold no reference cycles;
    memory is still freed by reference counting, and collection resumes afterwards.

    What was built is then counted old (gc.freeze() moves every tracked object out of the
    generations, gc.unfreeze() puts them all in the oldest one, neither walking them): the
    young collections that follow would otherwise walk all of it twice (0.1 to 0.15 s after
    a 100,000-trial compare) before it got there. Garbage with cycles among it is still
    collected, by the next full collection. Not in a process that froze objects for good
    (the gateway's start-up heap): unfreezing would give them back to the full collections.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # The flag first: gc.get_freeze_count() walks every frozen object, some ms on the
        # gateway's heap, paid by every report and compare of `hemra serve` (under the GIL).
        if not frozen_for_good() and not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()
