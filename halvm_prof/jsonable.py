"""Results to JSON: every result type is a frozen dataclass whose ``to_json`` is :func:`plain`."""

from __future__ import annotations

import dataclasses
from typing import Any

_SCALARS = frozenset({int, float, str, bool, type(None)})
#: Field names per dataclass type: ``dataclasses.fields`` builds a tuple at every call.
_FIELDS: dict[type, tuple[str, ...]] = {}


def plain(obj: Any) -> Any:
    """``obj`` as JSON-able builtins: dataclasses become dicts (field order; a field declared
    with ``metadata={"json": False}`` left out), tuples lists.

    Results are flat (a call tree is a list of nodes naming their parents), so the depth of this
    recursion is that of the type, never that of the data. Scalars are taken as they are without
    a call: a -hi report's section holds a million of them.
    """
    kind = type(obj)
    if kind in _SCALARS:
        return obj
    if kind is tuple or kind is list:
        return [x if type(x) in _SCALARS else plain(x) for x in obj]
    if kind is dict:
        return {k: v if type(v) in _SCALARS else plain(v) for k, v in obj.items()}
    names = _FIELDS.get(kind)
    if names is None:
        if not (dataclasses.is_dataclass(obj) and not isinstance(obj, type)):
            if isinstance(obj, (list, tuple)):
                return [plain(x) for x in obj]
            if isinstance(obj, dict):
                return {k: plain(v) for k, v in obj.items()}
            return obj
        names = _FIELDS[kind] = tuple(
            f.name for f in dataclasses.fields(obj) if f.metadata.get("json", True)
        )
    out = {}
    for name in names:
        v = getattr(obj, name)
        out[name] = v if type(v) in _SCALARS else plain(v)
    return out
