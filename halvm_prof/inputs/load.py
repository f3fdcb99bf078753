"""Read a whole profile into memory, whatever its kind (small inputs: tests, exports).

Commands open a :class:`~halvm_prof.inputs.source.Source` and stream what they need; this is
the convenience for callers that want the model object itself.
"""

from __future__ import annotations

import os
from typing import IO

from halvm_prof.inputs.source import open_source
from halvm_prof.model import CostCentreProfile, HeapProfile


def load_profile(
    target: str | os.PathLike[str] | IO[bytes],
) -> HeapProfile | CostCentreProfile:
    """Read a ``.hp``, text or JSON ``.prof``, an eventlog with heap samples, or the profile a
    disk image holds."""
    with open_source(target) as source:
        content = source.content
        if content.kind in ("prof", "prof-json"):
            return content.cost_centres()
        return content.heap_profile()
