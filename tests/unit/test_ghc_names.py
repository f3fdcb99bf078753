"""GHC's z-encoding and the package/module/name inside symbols."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halvm_prof.formats.ghc_names import GhcName, is_generated_label, parse_symbol, zdecode

# GHC.Utils.Encoding's table, written out independently of the decoder's
_ENCODE = {
    "(": "ZL", ")": "ZR", "[": "ZM", "]": "ZN", ":": "ZC", "Z": "ZZ", "z": "zz", "&": "za",
    "|": "zb", "^": "zc", "$": "zd", "=": "ze", ">": "zg", "#": "zh", ".": "zi", "<": "zl",
    "-": "zm", "!": "zn", "+": "zp", "'": "zq", "\\": "zr", "/": "zs", "*": "zt", "_": "zu",
    "%": "zv",
}  # fmt: skip


def zencode(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ENCODE:
            out.append(_ENCODE[ch])
        elif ch.isascii() and ch.isalnum():
            out.append(ch)
        else:
            code = f"{ord(ch):x}"
            out.append(f"z{'0' if not code[0].isdigit() else ''}{code}U")
    return "".join(out)


@given(st.text(min_size=1, max_size=30))
def test_decoding_undoes_encoding(text: str) -> None:
    assert zdecode(zencode(text)) == text


@pytest.mark.parametrize(
    ("encoded", "decoded"),
    [
        ("zdwfib", "$wfib"),
        ("zpzp", "++"),
        ("Z3T", "(,,)"),
        ("Z0T", "()"),
        ("Z2H", "(#,#)"),
        ("zdfShowZLz2cUZR", "$fShow(,)"),
        ("DataziMapziInternal", "Data.Map.Internal"),
        ("z3bbU", "λ"),
    ],
)
def test_known_encodings(encoded: str, decoded: str) -> None:
    assert zdecode(encoded) == decoded


@pytest.mark.parametrize(
    ("symbol", "name"),
    [
        ("Main_zdwfib_info", GhcName("main", "Main", "$wfib")),
        ("base_GHCziBase_zpzp_info", GhcName("base", "GHC.Base", "++")),
        (
            "containerszm0zi6zi4zi1_DataziMapziInternal_balanceL_info",
            GhcName("containers-0.6.4.1", "Data.Map.Internal", "balanceL"),
        ),
        ("ghczmprim_GHCziTypes_Izh_con_info", GhcName("ghc-prim", "GHC.Types", "I#")),
        ("Main_main_closure", GhcName("main", "Main", "main")),
        ("stg_upd_frame_info", None),
        ("evacuate1", None),
        ("rts_lock", None),
        ("r490_info", None),
    ],
)
def test_symbols(symbol: str, name: GhcName | None) -> None:
    assert parse_symbol(symbol) == name


def test_generated_labels() -> None:
    assert all(is_generated_label(x) for x in ("c4e7", "_c3C1", "s4cD", "r48Z"))
    assert not any(is_generated_label(x) for x in ("collatz", "go", "main", "fib2"))
