"""Results to JSON: every result type is a frozen dataclass whose ``to_json`` is :func:`plain`."""

from __future__ import annotations

import dataclasses
from typing import Any


def plain(obj: Any) -> Any:
    """``obj`` as JSON-able builtins: dataclasses become dicts (field order), tuples lists.

    Results are flat (a call tree is a list of nodes naming their parents), so the depth of this
    recursion is that of the type, never that of the data.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    return obj
