"""GHC's symbol names: z-decoding, and the package, module and name inside a symbol.

The one z-decoder of the package: every name shown that came from a symbol (perf's frames, a
``-hi`` band named by a binary's symbols, its ``--group-by`` keys, pprof's functions) is
decoded here, so no output shows ``ghczmprim_GHCziTypes_ZC_con_info``.

GHC names a top-level closure's code ``<unit>_<Module>_<name>_<suffix>`` with each part
z-encoded (``_`` itself is ``zu``, so ``_`` only separates parts); the main unit's symbols have no
unit part (``Main_zdwfib_info`` is ``Main.$wfib`` of package ``main``). See GHC's
``GHC.Utils.Encoding`` for the encoding.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

_LOWER = {
    "a": "&",
    "b": "|",
    "c": "^",
    "d": "$",
    "e": "=",
    "g": ">",
    "h": "#",
    "i": ".",
    "l": "<",
    "m": "-",
    "n": "!",
    "p": "+",
    "q": "'",
    "r": "\\",
    "s": "/",
    "t": "*",
    "u": "_",
    "v": "%",
    "z": "z",
}
_UPPER = {"L": "(", "R": ")", "M": "[", "N": "]", "C": ":", "Z": "Z"}
_HEX_CODE = re.compile(r"[0-9][0-9a-fA-F]*U")
_ARITY = re.compile(r"[0-9]+[TH]")

#: Suffixes GHC appends to a closure's name, longest first.
SUFFIXES = (
    "_con_info",
    "_con_entry",
    "_closure",
    "_entry",
    "_bytes",
    "_info",
    "_slow",
    "_fast",
    "_ret",
    "_srt",
    "_str",
)


def zdecode(text: str) -> str:
    """Undo GHC's z-encoding (``zdwfib`` -> ``$wfib``); text that is not valid stays as it is."""
    if "z" not in text and "Z" not in text:
        return text
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if (ch != "z" and ch != "Z") or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        table = _LOWER if ch == "z" else _UPPER
        if nxt in table:
            out.append(table[nxt])
            i += 2
            continue
        m = (_HEX_CODE if ch == "z" else _ARITY).match(text, i + 1)
        if m is not None:
            code = m.group()
            if ch == "z":
                out.append(chr(int(code[:-1], 16)))
            else:
                arity = int(code[:-1])
                if code[-1] == "T":
                    out.append("(" + "," * max(0, arity - 1) + ")")
                else:
                    out.append("(# #)" if arity <= 1 else "(#" + "," * (arity - 1) + "#)")
            i = m.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class GhcName(NamedTuple):
    """A Haskell symbol split up: ``package`` (``main`` for the program), ``module``, ``name``."""

    package: str
    module: str
    name: str

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}"


def split_suffix(symbol: str) -> tuple[str, str]:
    """A symbol's stem and the suffix GHC appended (``""`` when it has none of them)."""
    for suffix in SUFFIXES:
        if symbol.endswith(suffix) and len(symbol) > len(suffix):
            return symbol[: -len(suffix)], suffix
    return symbol, ""


def _is_module(part: str) -> bool:
    return bool(part) and part[0].isupper()


@lru_cache(maxsize=65536)
def parse_symbol(symbol: str) -> GhcName | None:
    """The Haskell name inside an ELF symbol, or None for a C (RTS, libc) symbol.

    ``base_GHCziBase_zpzp_info`` -> base, GHC.Base, ``++``; ``Main_zdwfib_info`` -> main, Main,
    ``$wfib``. A symbol needs a known suffix and an upper-case module part to count as Haskell,
    so ``stg_upd_frame_info`` or ``rts_lock`` stay C names.
    """
    stem, suffix = split_suffix(symbol)
    if not suffix:
        return None
    parts = stem.split("_")
    if len(parts) >= 3 and parts[0][:1].islower() and _is_module(parts[1]):
        package, module, name = parts[0], parts[1], "_".join(parts[2:])
    elif len(parts) >= 2 and _is_module(parts[0]):
        # ZCMain_main is the program's entry :Main.main
        package, module, name = "main", parts[0], "_".join(parts[1:])
    else:
        return None
    if not name:
        return None
    return GhcName(zdecode(package), zdecode(module), zdecode(name))


#: A GHC-generated label (``c4e7``, ``_c3C1``, ``s4cD``; from GHC 9.4 on also ``L`` and a
#: decimal unique, ``L7133701809754879072``, as DWARF names some procedures): not a name a
#: user wrote.
_LABEL = re.compile(r"^(_?[a-z][0-9][0-9a-zA-Z]{2,}|L[0-9]{6,})$")


def is_generated_label(name: str) -> bool:
    """True for GHC's block and local-binder labels, which mean nothing to a user."""
    return bool(_LABEL.match(name))
