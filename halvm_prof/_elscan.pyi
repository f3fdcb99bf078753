"""Types of the compiled eventlog walk (halvm_prof/_elscan.c)."""

from collections.abc import Callable
from typing import Any

def walk(
    buf: bytes,
    sizes: bytes,
    layouts: bytes,
    want: bytes | None,
    width: int,
    base: int,
    state: tuple[int, int, int, int, int, int],
    final: bool,
    decode: tuple[tuple[bytes | None, ...], Callable[..., Any], int, int] | None = None,
    /,
) -> tuple[
    list[Any],
    dict[tuple[int, int], int],
    int,
    int,
    list[tuple[int, int, int, int, int]],
    tuple[int, int, int, int, int, int],
    int,
    tuple[int, int, int] | None,
]: ...
