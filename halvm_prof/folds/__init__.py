"""Folds below analysis, no I/O: band statistics of heap censuses and the streaming scan of a
``.hp``, ticky counters, time-profile samples, census picking and heap groupings. The entrance
(``inputs``) runs them in its passes; analysis takes their results."""
