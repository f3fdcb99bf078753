"""Types of the compiled eventlog walk (halvm_prof/_elscan.c)."""

from collections.abc import Callable, Sequence
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
def page_rows(
    kind: int, records: Sequence[Any], index: dict[int, int], until: int | None, /
) -> str | None: ...

class Fold:
    """The timeline's fold compiled (halvm_prof/timeline/build.py's twin)."""

    def __init__(
        self,
        tables: tuple[bytes, bytes],
        formats: tuple[bytes | None, ...],
        how: bytes,
        act: bytes,
        bare: bytes,
        spark: bytes,
        heap: bytes,
        classes: tuple[Any, Any, Any, Any],
        callbacks: tuple[
            Callable[[list[Any], bytes, int | None, int], None], Callable[[Any], None], list[Any]
        ],
        budget: tuple[int, int, int, int, bool, bool, bool, int, int],
        /,
    ) -> None: ...
    def region(
        self, buf: bytes, ridx: int, cap: int, offset: int, min_time: int, last: bool, limit: int, /
    ) -> None: ...
    def state(self) -> dict[str, Any]: ...
