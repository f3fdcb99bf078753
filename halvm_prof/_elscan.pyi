"""Types of the compiled eventlog region walk (halvm_prof/_elscan.c)."""

def walk(
    buf: bytes, sizes: bytes, count: bytes, width: int, /
) -> tuple[list[tuple[int, int, int, int, int]], dict[tuple[int, int], int], int, int]: ...
