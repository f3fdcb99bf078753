"""The entrance: every input opened once as a typed source (:mod:`.source`), followers of growing
inputs (:mod:`.follow`), band statistics read in one pass (:mod:`.heap_stats`, :mod:`.heap_scan`).

This floor sits above the grammars (``formats``), the disk layout, the timeline and perf, and below
``analysis``, ``render``, ``live`` and ``history``, which take sources from it.
"""
