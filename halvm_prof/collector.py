"""Fewer runs of Python's cycle collector during a pass that makes millions of objects."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Run the cycle collector a hundred times less often inside the block.

    It runs after every 700 net container allocations and, every so often, walks every object
    kept: a reading pass makes millions of short-lived containers (eventlog events, ``-pj``
    JSON events) while keeping records with no cycles among them, so the collector was a third
    of a GC-heavy eventlog's time and two fifths of a million-node ``-pj`` report's.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 100_000), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def keep_what_is_loaded() -> None:
    """Leave what the process holds now (its modules, classes, the state read so far) out of
    every later run of the cycle collector: a server's full collections then walk only what it
    made since, instead of some hundred thousand objects that stay (a full collection of the
    live server took 60 ms of CPU, a stall of every answer). Called once, when start-up and the
    first read are done, once per process: what it freezes is never freed by the collector,
    only by reference counting, so garbage is collected first and nothing is frozen twice."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()
