"""The entrance: every input opened once as a typed source (:mod:`.source`), followers of growing
inputs (:mod:`.follow`), the plan of one pass (:mod:`.plan`).

This floor sits above the grammars (``formats``), the disk layout, the timeline and perf, and below
``analysis``, ``render``, ``live`` and ``history``, which take sources from it.
"""
