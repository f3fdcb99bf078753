"""halvm-prof: get GHC profiles out of HaLVM unikernels and make them understandable.

The package tree follows the pipeline: ``disk`` (raw Xen disk images) and ``formats``
(.hp, .prof, eventlog readers) feed ``model`` dataclasses, which ``analysis`` summarises and
``render`` turns into tables, HTML and exports; ``xen`` writes and checks xl configs; ``cli``
holds the thin click commands.
"""

from __future__ import annotations

__version__ = "0.1.0"
