"""Types of the compiled eventlog walk (halvm_prof/_elscan.c)."""

def walk(
    buf: bytes,
    sizes: bytes,
    layouts: bytes,
    want: bytes | None,
    width: int,
    base: int,
    state: tuple[int, int, int, int, int, int],
    final: bool,
    /,
) -> tuple[
    list[tuple[int, int, int, int, int, int]],
    dict[tuple[int, int], int],
    int,
    int,
    list[tuple[int, int, int, int, int]],
    tuple[int, int, int, int, int, int],
    int,
    tuple[int, int, int] | None,
]: ...
