"""The one switch between an optional compiled module (``halvm_prof/_*.c``) and its Python twin.

Each compiled module (``_hpscan``, ``_elscan``, ``_perfscan``) is built at install when a C
compiler is there; without it, or with ``HALVM_PROF_PURE=1`` in the environment, the Python code
does the same work. Every caller asks :func:`load`, so the rule lives here only.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

#: The environment variable that asks for the Python code even where the compiled one is built.
PURE = "HALVM_PROF_PURE"


def pure() -> bool:
    """Whether ``HALVM_PROF_PURE`` asks for the Python code. Read at each call, not at import:
    the tests and benchmarks switch it within one process to hold both twins to one result."""
    return bool(os.environ.get(PURE))


@functools.cache
def built(name: str) -> ModuleType | None:
    """The compiled module ``halvm_prof.<name>`` if it was built, whatever ``HALVM_PROF_PURE``
    says (the tests that compare it with its Python twin); None if it was not."""
    try:
        return importlib.import_module(f"halvm_prof.{name}")
    except ImportError:  # installed without a C compiler
        return None


def load(name: str) -> ModuleType | None:
    """The compiled module ``halvm_prof.<name>`` to use: None when it was not built or
    ``HALVM_PROF_PURE=1`` switches it off, and the caller runs its Python twin."""
    return None if pure() else built(name)
