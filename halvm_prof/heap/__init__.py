"""Folds over heap censuses (no I/O): band statistics and the streaming scan of a ``.hp``."""
