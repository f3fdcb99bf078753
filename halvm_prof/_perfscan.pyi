"""Types of the compiled perf.data loops (halvm_prof/_perfscan.c)."""

def run_length(buf: bytes | memoryview, pos: int, size: int, most: int, /) -> int: ...
def tally(
    buf: bytes | memoryview,
    step: int,
    ip_word: int,
    pid_word: int,
    period_word: int,
    groups: dict[tuple[int, int], list[object]],
    /,
) -> None: ...
def chain_run(buf: bytes | memoryview, pos: int, chain_word: int, /) -> int: ...
def tally_chains(
    buf: bytes | memoryview,
    ip_word: int,
    pid_word: int,
    period_word: int,
    chain_word: int,
    pending: dict[tuple[int, int, int], dict[bytes, int]],
    periods: dict[int, int],
    /,
) -> int: ...
