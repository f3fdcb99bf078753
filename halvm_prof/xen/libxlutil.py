"""Xen's own xl config parser (``libxlutil``, Debian package libxenmisc4.17), via ctypes.

Used as a referee: what it reads from a config is compared with what our reader reads. Without
the library everything else still works; :func:`available` says whether it is there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import tempfile
from dataclasses import dataclass
from functools import cache

_NAMES = ("libxlutil.so.4.17", "libxlutil.so")


@cache
def _load() -> tuple[ctypes.CDLL, ctypes.CDLL] | None:
    for name in _NAMES:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    libc.fopen.restype, libc.fopen.argtypes = vp, [cp, cp]
    libc.fclose.argtypes = [vp]
    lib.xlu_cfg_init.restype, lib.xlu_cfg_init.argtypes = vp, [vp, cp]
    lib.xlu_cfg_readdata.argtypes = [vp, cp, ctypes.c_int]
    lib.xlu_cfg_destroy.argtypes = [vp]
    lib.xlu_cfg_get_string.argtypes = [vp, cp, ctypes.POINTER(cp), ctypes.c_int]
    lib.xlu_cfg_get_long.argtypes = [vp, cp, ctypes.POINTER(ctypes.c_long), ctypes.c_int]
    lib.xlu_cfg_get_list.argtypes = [
        vp,
        cp,
        ctypes.POINTER(vp),
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
    ]
    lib.xlu_cfg_get_listitem.restype, lib.xlu_cfg_get_listitem.argtypes = cp, [vp, ctypes.c_int]
    return lib, libc


def available() -> bool:
    return _load() is not None


@dataclass(frozen=True, slots=True)
class XenReading:
    """What Xen's parser read, or its error message (then the values are empty)."""

    error: str | None
    strings: dict[str, str]
    numbers: dict[str, int]
    lists: dict[str, list[str]]


def parse_with_xen(
    text: str,
    name: str = "config",
    strings: tuple[str, ...] = ("name", "kernel", "extra"),
    numbers: tuple[str, ...] = ("memory", "vcpus"),
    lists: tuple[str, ...] = ("disk",),
) -> XenReading:
    """Parse ``text`` with libxlutil and read the given keys; needs :func:`available`."""
    loaded = _load()
    if loaded is None:
        raise RuntimeError("libxlutil is not installed")
    lib, libc = loaded
    with tempfile.NamedTemporaryFile("r", suffix=".log") as report:
        fp = libc.fopen(report.name.encode(), b"w")
        cfg = lib.xlu_cfg_init(fp, name.encode())
        try:
            data = text.encode()
            rc = lib.xlu_cfg_readdata(cfg, data, len(data))
            libc.fclose(fp)
            if rc != 0:
                message = report.read().strip() or os.strerror(rc)
                return XenReading(message, {}, {}, {})
            got_s: dict[str, str] = {}
            got_n: dict[str, int] = {}
            got_l: dict[str, list[str]] = {}
            for key in strings:
                s = ctypes.c_char_p()
                if lib.xlu_cfg_get_string(cfg, key.encode(), ctypes.byref(s), 1) == 0 and s.value:
                    got_s[key] = s.value.decode()
            for key in numbers:
                n = ctypes.c_long()
                if lib.xlu_cfg_get_long(cfg, key.encode(), ctypes.byref(n), 1) == 0:
                    got_n[key] = n.value
            for key in lists:
                lst, count = ctypes.c_void_p(), ctypes.c_int()
                if (
                    lib.xlu_cfg_get_list(
                        cfg, key.encode(), ctypes.byref(lst), ctypes.byref(count), 1
                    )
                    == 0
                ):
                    got_l[key] = [
                        (lib.xlu_cfg_get_listitem(lst, i) or b"").decode()
                        for i in range(count.value)
                    ]
            return XenReading(None, got_s, got_n, got_l)
        finally:
            lib.xlu_cfg_destroy(cfg)
