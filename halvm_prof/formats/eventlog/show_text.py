"""``ghc-events show``'s words: Haskell's ``show`` of strings and lists, stop statuses,
capset types, heap profile breakdowns and message tags.
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Sequence

from halvm_prof.formats.eventlog.event_types import (
    Args,
)

ASCII_NAMES = [
    "NUL",
    "SOH",
    "STX",
    "ETX",
    "EOT",
    "ENQ",
    "ACK",
    "a",
    "b",
    "t",
    "n",
    "v",
    "f",
    "r",
    "SO",
    "SI",
    "DLE",
    "DC1",
    "DC2",
    "DC3",
    "DC4",
    "NAK",
    "SYN",
    "ETB",
    "CAN",
    "EM",
    "SUB",
    "ESC",
    "FS",
    "GS",
    "RS",
    "US",
]


def haskell_show_string(s: str) -> str:
    """``show`` of a Haskell String: quotes, and GHC's escapes (``\\n``, ``\\DEL``, ``\\233``)."""
    out = ['"']
    n = len(s)
    for i, ch in enumerate(s):
        o = ord(ch)
        nxt = s[i + 1] if i + 1 < n else ""
        if ch == '"':
            out.append('\\"')
        elif o > 0x7F:
            out.append(f"\\{o}")
            if nxt.isdigit() and nxt.isascii():
                out.append("\\&")
        elif o == 0x7F:
            out.append("\\DEL")
        elif ch == "\\":
            out.append("\\\\")
        elif o >= 0x20:
            out.append(ch)
        elif o == 0x0E:
            out.append("\\SO")
            if nxt == "H":
                out.append("\\&")
        else:
            out.append("\\" + ASCII_NAMES[o])
    out.append('"')
    return "".join(out)


def haskell_show_list(items: Sequence[str]) -> str:
    """``show`` of a Haskell [String]: ``["a","b"]``."""
    return "[" + ",".join(haskell_show_string(i) for i in items) + "]"


def is_print(ch: str) -> bool:
    # Haskell's isPrint: every category but controls, formats, separators other than spaces,
    # surrogates, private use and unassigned code points.
    return ch.isprintable() or unicodedata.category(ch) == "Zs"


def dot_per_byte(err: UnicodeError) -> tuple[str, int]:
    # text's decodeUtf8With calls its handler once per invalid byte; Python would replace a
    # whole invalid sequence at once.
    assert isinstance(err, UnicodeDecodeError)
    return ".", err.start + 1


codecs.register_error("halvm_prof_dot_per_byte", dot_per_byte)


def printable_text(raw: bytes) -> str:
    """A binary message as ghc-events shows it: UTF-8, each bad byte and unprintable char a dot."""
    text = raw.decode("utf-8", "halvm_prof_dot_per_byte")
    if text.isprintable():
        return text
    return "".join(ch if is_print(ch) else "." for ch in text)


STOP_STATUS = {
    0: "No stop thread status",
    1: "heap overflow",
    3: "thread yielding",
    5: "thread finished",
    6: "making a foreign call",
    7: "blocked on an MVar",
    9: "blocked on I/O read",
    10: "blocked on I/O write",
    11: "blocked on threadDelay",
    12: "blocked in STM retry",
    13: "blocked on asyncDoProc",
    18: "blocked in throwTo",
    19: "No stop thread status",
    20: "blocked reading an MVar",
}


def stop_status_text(status: int, info: int) -> str:
    """The text of a thread stop status, as ghc-events' ``showThreadStopStatus``."""
    if status == 2:
        return f"stack overflow, size {info}"
    if status == 8:
        return f"blocked on black hole owned by thread {info}"
    # ghc-events dies on other codes; showing the number keeps the rest of the log readable.
    return STOP_STATUS.get(status, f"unknown stop status {status}")


CAPSET_TYPES = {1: "CapsetCustom", 2: "CapsetOsProcess", 3: "CapsetClockDomain"}
HEAP_PROF_BREAKDOWN = {
    1: "cost centre",
    2: "module",
    3: "closure description",
    4: "type description",
    5: "retainer",
    6: "biography",
    7: "closure type",
    8: "info table",
    9: "era",
}
MESSAGE_TAGS = [
    "Ready",
    "NewPE",
    "PETIDS",
    "Finish",
    "FailPE",
    "RFork",
    "Connect",
    "DataMes",
    "Head",
    "Constr",
    "Part",
    "Terminate",
    "Packet",
]


def msg_tag(tag: int) -> str:
    i = tag - 0x50
    return MESSAGE_TAGS[i] if 0 <= i < len(MESSAGE_TAGS) else f"MessageTag{tag}"


def heap_prof_begin_text(a: Args) -> str:
    text = (
        f"start heap profiling {a[0]} at sampling period {a[1]} broken down by "
        f"{HEAP_PROF_BREAKDOWN.get(a[2], f'breakdown {a[2]}')}"
    )
    filters = "".join(f + ", " for f in a[3:10] if f)
    # ghc-events leaves a ", " after the last filter.
    return text + (" filtered by " + filters if filters else "")


def stack(ids: Sequence[int]) -> str:
    return ", ".join(map(str, ids))


def gc_stats_text(a: Args) -> str:
    text = (
        f"GC stats for heap capset {a[0]}: generation {a[1]}, {a[2]} bytes copied, "
        f"{a[3]} bytes slop, {a[4]} bytes fragmentation, {a[5]} par threads, "
        f"{a[6]} bytes max par copied, {a[7]} bytes total par copied"
    )
    if len(a) > 8:
        text += f", {a[8]} bytes balanced par copied"
    return text


def ipe_text(a: Args) -> str:
    digits = ""
    for ch in a[2]:
        if not ("0" <= ch <= "9"):
            break
        digits += ch
    desc = int(digits) if digits else a[2]
    return f"Info Table: {a[0]:x}:{desc}:{a[1]} - {a[6]}"
