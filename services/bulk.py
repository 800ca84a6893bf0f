"""Work on 100,000s of small objects at once (imports, big reports and compares)."""

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Let the cyclic garbage collector wait while many objects are built that stay alive.

    Each automatic collection walks every live object again: for a 10,000-trial import or
    a 100,000-trial compare, a third of the time. These objects hold no reference cycles;
    memory is still freed by reference counting, and collection resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
