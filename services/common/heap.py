"""A process's start-up heap frozen for good (the gateway's), out of the collector's way."""

import gc

_frozen_for_good = False


def freeze_for_good() -> None:
    """Move every object alive now out of the collector's generations for the process's life
    (modules, services, an app): hemra.services.bulk.gc_paused then leaves them there."""
    global _frozen_for_good
    gc.freeze()
    _frozen_for_good = True


def frozen_for_good() -> bool:
    """Whether freeze_for_good ran. A flag: gc.get_freeze_count() walks every frozen object
    (some ms on the gateway's heap)."""
    return _frozen_for_good
