"""The entrance: every input opened once as a typed source (:mod:`.source`), followers of growing
inputs (:mod:`.follow`), the plan of one pass (:mod:`.plan`) and what each command reads of its
inputs (:mod:`.passes`, :mod:`.perf_passes`), handed up as the folds' results.

This floor sits above the grammars (``formats``), the disk layout, the timeline, the folds and
perf, and below ``analysis`` (which takes the results, never a source), ``render``, ``live`` and
``history``.
"""
