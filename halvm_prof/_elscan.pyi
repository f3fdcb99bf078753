"""Types of the compiled eventlog region walk (halvm_prof/_elscan.c)."""

def walk(
    buf: bytes, sizes: bytes, count: bytes, width: int, /
) -> tuple[list[tuple[int, int, int, int, int]], dict[tuple[int, int], int], int, int]: ...
def regions(
    buf: bytes,
    sizes: bytes,
    base: int,
    state: tuple[int, int, int, int, int, int],
    /,
) -> tuple[
    list[tuple[int, int, int, int, int]],
    tuple[int, int, int, int, int, int],
    int,
    tuple[int, int, int] | None,
]: ...
