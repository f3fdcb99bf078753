"""Types of the compiled snapshot graph loops (halvm_prof/_snapscan.c)."""

from array import array

_Buffer = bytes | bytearray | memoryview | array[int]

def dominators(
    first: _Buffer, targets: _Buffer, walked: int, n: int, roots: _Buffer, /
) -> tuple[bytes, bytes]: ...
def retained(
    idom: _Buffer, order: _Buffer, size_of: _Buffer, static: _Buffer, n: int, /
) -> bytes: ...
def walk_parents(
    first: _Buffer, targets: _Buffer, walked: int, n: int, roots: _Buffer, /
) -> bytes: ...
def fold_tree(
    order: _Buffer,
    idom: _Buffer,
    retained: _Buffer,
    label: _Buffer,
    source: _Buffer,
    own: _Buffer,
    static: _Buffer,
    thunky: _Buffer,
    labels: int,
    sources: int,
    n: int,
    /,
) -> tuple[
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    bytes,
    int,
    int,
    int,
    int,
]: ...
def lookup(keys: _Buffer, table: _Buffer, extra: int, fill: int, /) -> bytes: ...
def subtree_parts(
    order: _Buffer,
    idom: _Buffer,
    label: _Buffer,
    own: _Buffer,
    static: _Buffer,
    holders: _Buffer,
    labels: int,
    n: int,
    /,
) -> tuple[bytes, bytes]: ...
def path_signatures(
    parents: _Buffer, label: _Buffer, own: _Buffer, static: _Buffer, n: int, limit: int, /
) -> tuple[bytes, bytes, bytes, bytes, bytes, bytes, bytes]: ...
