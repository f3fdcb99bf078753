"""Types of the compiled snapshot graph loops (halvm_prof/_snapscan.c)."""

from collections.abc import Buffer

def dominators(
    first: Buffer, targets: Buffer, walked: int, n: int, roots: Buffer, /
) -> tuple[bytes, bytes]: ...
def retained(idom: Buffer, order: Buffer, size_of: Buffer, static: Buffer, n: int, /) -> bytes: ...
def walk_parents(
    first: Buffer, targets: Buffer, walked: int, n: int, roots: Buffer, /
) -> bytes: ...
