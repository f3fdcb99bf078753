"""Xen's own xl config parser (``libxlutil``, Debian package libxenmisc4.17 or 4.20), via ctypes.

Used as a referee: what Xen reads from a config, and from each disk spec, is compared with what
our reader (:mod:`halvm_prof.xen.xlcfg`) reads. No hypervisor and no compiler are needed. Without
the library everything else still works; :func:`available` says whether it is there.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import faulthandler
import glob
import os
import pickle
import re
import resource
import select
import signal
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

from halvm_prof.xen.xlcfg import Value

# libxl_disk_format in libxl_types.idl (Xen 4.17; the same in 4.20).
_FORMATS = {0: "unknown", 1: "qcow", 2: "qcow2", 3: "vhd", 4: "raw", 5: "empty", 6: "qed"}
_XLU_STRING = 0
T = TypeVar("T")


class _Disk(ctypes.Structure):
    """The leading fields of ``libxl_device_disk`` (Xen 4.17 to 4.20: the same), padded well past
    its real size."""

    _fields_ = (
        ("backend_domid", ctypes.c_uint32),
        ("backend_domname", ctypes.c_char_p),
        ("pdev_path", ctypes.c_char_p),
        ("vdev", ctypes.c_char_p),
        ("backend", ctypes.c_int),
        ("format", ctypes.c_int),
        ("script", ctypes.c_char_p),
        ("removable", ctypes.c_int),
        ("readwrite", ctypes.c_int),
        ("is_cdrom", ctypes.c_int),
        ("_rest", ctypes.c_uint8 * 1024),
    )


def _library_dirs() -> list[str]:
    """Where the dynamic linker looks for Xen's libraries (``LD_LIBRARY_PATH`` first)."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    extra = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    usual = ["/usr/local/lib", "/usr/lib", "/lib"]
    arch = [f"{d}/{multiarch}" for d in usual if multiarch]
    return [*extra, *arch, "/usr/lib64", *usual]


def _versions(stem: str) -> dict[tuple[int, int], str]:
    """Each ``STEM.so.MAJOR.MINOR`` (the soname Xen gives a release) found, by version."""
    found: dict[tuple[int, int], str] = {}
    for folder in _library_dirs():
        for path in glob.glob(os.path.join(glob.escape(folder), f"{stem}.so.*")):
            m = re.fullmatch(rf"{re.escape(stem)}\.so\.(\d+)\.(\d+)", os.path.basename(path))
            if m:
                found.setdefault((int(m[1]), int(m[2])), path)
    return found


def _open(path: str) -> ctypes.CDLL | None:
    with contextlib.suppress(OSError):
        return ctypes.CDLL(path)
    return None


@dataclass(frozen=True, slots=True)
class _Libs:
    xlu: ctypes.CDLL
    libc: ctypes.CDLL
    xl: ctypes.CDLL | None
    #: Xen's release the libraries belong to (from their soname), None for a bare ``.so``.
    version: tuple[int, int] | None


def _open_xen() -> tuple[ctypes.CDLL, ctypes.CDLL | None, tuple[int, int] | None] | None:
    """The newest libxlutil that loads, with libxenlight of the same release."""
    lights = _versions("libxenlight")
    for version, path in sorted(_versions("libxlutil").items(), reverse=True):
        lib = _open(path)
        if lib is not None:
            light = lights.get(version)
            return lib, None if light is None else _open(light), version
    # A build of Xen's own (make install) may leave only the unversioned development link.
    lib = _open("libxlutil.so")
    return None if lib is None else (lib, _open("libxenlight.so"), None)


@cache
def _load() -> _Libs | None:
    opened = _open_xen()
    if opened is None:
        return None
    lib, xl, version = opened
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    libc.fopen.restype, libc.fopen.argtypes = vp, [cp, cp]
    libc.fclose.argtypes = [vp]
    libc.fflush.argtypes = [vp]
    lib.xlu_cfg_init.restype, lib.xlu_cfg_init.argtypes = vp, [vp, cp]
    lib.xlu_cfg_readdata.argtypes = [vp, cp, ci]
    lib.xlu_cfg_destroy.argtypes = [vp]
    lib.xlu_cfg_get_string.argtypes = [vp, cp, ctypes.POINTER(cp), ci]
    lib.xlu_cfg_get_long.argtypes = [vp, cp, ctypes.POINTER(ctypes.c_long), ci]
    lib.xlu_cfg_get_list.argtypes = [vp, cp, ctypes.POINTER(vp), ctypes.POINTER(ci), ci]
    lib.xlu_cfg_get_listitem2.restype, lib.xlu_cfg_get_listitem2.argtypes = vp, [vp, ci]
    lib.xlu_cfg_value_type.restype, lib.xlu_cfg_value_type.argtypes = ci, [vp]
    lib.xlu_cfg_value_get_string.argtypes = [vp, vp, ctypes.POINTER(cp), ci]
    lib.xlu_cfg_value_get_list.argtypes = [vp, vp, ctypes.POINTER(vp), ci]
    lib.xlu_disk_parse.argtypes = [vp, ci, ctypes.POINTER(cp), ctypes.POINTER(_Disk)]
    if xl is not None:
        xl.libxl_device_disk_init.argtypes = [ctypes.POINTER(_Disk)]
        xl.libxl_device_disk_dispose.argtypes = [ctypes.POINTER(_Disk)]
    return _Libs(lib, libc, xl, version)


def available() -> bool:
    """True when Xen's libxlutil can be loaded."""
    return _load() is not None


def version() -> tuple[int, int] | None:
    """Xen's release of the loaded libxlutil, e.g. (4, 17); None when unknown or absent."""
    libs = _load()
    return None if libs is None else libs.version


def disks_available() -> bool:
    """True when Xen's disk spec parser can be used too (it needs libxenlight)."""
    libs = _load()
    return libs is not None and libs.xl is not None


def _libs() -> _Libs:
    libs = _load()
    if libs is None:
        raise RuntimeError("Xen's libxlutil is not installed (Debian package libxenmisc4.*)")
    return libs


@contextlib.contextmanager
def _report(libs: _Libs) -> Iterator[tuple[int, Callable[[], str]]]:
    """A C ``FILE*`` for libxlutil's messages, and a function that reads what it wrote."""
    fd, name = tempfile.mkstemp(prefix="halvm-xlu-", suffix=".log")
    try:
        fp = libs.libc.fopen(name.encode(), b"w")
    finally:
        # Gone from the folder at once: the child this runs in may end by the lexer's exit()
        # or be killed at its time limit, past any cleanup; the two handles still reach it.
        os.unlink(name)
    if not fp:
        os.close(fd)
        raise OSError(f"cannot open {name} for libxlutil's messages")

    def read() -> str:
        libs.libc.fflush(fp)
        return os.pread(fd, _MAX_REPORT, 0).decode("utf-8", errors="replace").strip()

    try:
        yield fp, read
    finally:
        libs.libc.fclose(fp)
        os.close(fd)


#: What is read of Xen's messages (a few lines; a config's worth of them at the most).
_MAX_REPORT = 1 << 20


#: Xen's parser is quadratic or worse on large input (80 KB of binary: 23 s) and corrupts its
#: heap on a 30 KB disk spec, so it is given only what a real config or disk spec can be, and
#: only this long. A real config is a few hundred bytes and parses in milliseconds.
MAX_XEN_CONFIG = 64 << 10
MAX_XEN_DISK_SPEC = 4 << 10
TIME_LIMIT = 2.0
#: Address space the child may add (glibc's malloc fails rather than the machine swapping).
_CHILD_MEMORY = 256 << 20


#: The child's exit status when Python failed in it (not a verdict of Xen's).
_CHILD_ERROR = 70


def _limit_child() -> None:
    """In the forked child: keep the library's messages out of our stderr, bound its memory."""
    # Python's own crash report (faulthandler, as pytest or -X faulthandler enable it) too.
    faulthandler.disable()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    # glibc writes "malloc(): corrupted ..." to /dev/tty unless this is set.
    os.environ["LIBC_FATAL_STDERR_"] = "1"
    # An abort on a corrupted heap must not write a core of this process (as large as the
    # caller) into the current folder, nor spend the time limit writing it.
    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = used + _CHILD_MEMORY
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _isolated(work: Callable[[], T], rejected: Callable[[str], T], failed: Callable[[str], T]) -> T:
    """Run ``work`` in a forked child with a time and memory limit.

    Xen's lexers may call exit() (flex "scanner jammed"): that is xl's verdict too, given to
    ``rejected``. An abort on a corrupted heap, a Python error, or running past the time limit
    is no verdict: ``failed`` is given one line saying what happened. Nothing reaches stderr.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        status = 0
        try:
            os.close(read_fd)
            _limit_child()
            with os.fdopen(write_fd, "wb") as out:
                pickle.dump(work(), out)
        except BaseException:
            status = _CHILD_ERROR
        finally:
            os._exit(status)
    os.close(write_fd)
    deadline = time.monotonic() + TIME_LIMIT
    chunks: list[bytes] = []
    timed_out = False
    with os.fdopen(read_fd, "rb", buffering=0) as inp:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([inp], [], [], left)[0]:
                timed_out = True
                break
            chunk = inp.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    if timed_out:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    code = os.waitstatus_to_exitcode(status)
    if timed_out:
        return failed(f"Xen's parser did not finish within {TIME_LIMIT:g} s and was stopped")
    if code == 0 and data:
        result: T = pickle.loads(data)
        return result
    if code < 0:
        return failed(f"Xen's parser crashed (killed by signal {-code})")
    if code == _CHILD_ERROR:
        return failed("Xen's parser could not be run to the end (out of memory?)")
    return rejected(f"Xen's parser ended the program (exit status {code})")


@dataclass(frozen=True, slots=True)
class XenReading:
    """What Xen's parser read: each asked-for key's value, and which of them xl reads as numbers.

    ``error`` is Xen's own message when it rejects the config (then nothing was read).
    ``longs`` holds, for every single-value key, what ``xlu_cfg_get_long`` gives, or None where
    xl would not accept it as a number.
    """

    error: str | None
    values: dict[str, Value] = field(default_factory=dict)
    longs: dict[str, int | None] = field(default_factory=dict)
    #: Why Xen's parser gave no answer (it crashed, ran out of time, or the input is too large
    #: to give it); ``error`` is then None and nothing was read.
    failed: str | None = None


def _value(libs: _Libs, cfg: int, value: int) -> Value:
    lib = libs.xlu
    if lib.xlu_cfg_value_type(value) == _XLU_STRING:
        s = ctypes.c_char_p()
        lib.xlu_cfg_value_get_string(cfg, value, ctypes.byref(s), 1)
        return _text(s.value)
    lst = ctypes.c_void_p()
    lib.xlu_cfg_value_get_list(cfg, value, ctypes.byref(lst), 1)
    items: list[Value] = []
    while item := lib.xlu_cfg_get_listitem2(lst, len(items)):
        items.append(_value(libs, cfg, item))
    return items


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode("utf-8", "surrogateescape")  # as our reader decodes


def parse_with_xen(data: bytes | str, keys: Iterable[str], name: str = "config") -> XenReading:
    """Parse a config with libxlutil and read ``keys`` (absent keys are left out)."""
    wanted = sorted(set(keys))
    size = len(data.encode() if isinstance(data, str) else data)
    if size > MAX_XEN_CONFIG:
        return XenReading(
            None,
            failed=f"Xen's parser was not asked: the config is {size} bytes, over "
            f"{MAX_XEN_CONFIG >> 10} KiB (it takes minutes on such input)",
        )
    return _isolated(
        lambda: _parse(data, wanted, name), XenReading, lambda why: XenReading(None, failed=why)
    )


def _parse(data: bytes | str, keys: list[str], name: str) -> XenReading:
    libs = _libs()
    lib = libs.xlu
    raw = data.encode() if isinstance(data, str) else data
    with _report(libs) as (fp, read_report):
        cfg = lib.xlu_cfg_init(fp, os.fsencode(name))
        if not cfg:
            raise MemoryError("xlu_cfg_init failed")
        try:
            if lib.xlu_cfg_readdata(cfg, raw, len(raw)) != 0:
                return XenReading(read_report() or "Xen's parser rejects the config")
            values: dict[str, Value] = {}
            longs: dict[str, int | None] = {}
            for key in keys:
                k = key.encode()
                s = ctypes.c_char_p()
                lst = ctypes.c_void_p()
                count = ctypes.c_int()
                if lib.xlu_cfg_get_string(cfg, k, ctypes.byref(s), 1) == 0:
                    values[key] = _text(s.value)
                    n = ctypes.c_long()
                    ok = lib.xlu_cfg_get_long(cfg, k, ctypes.byref(n), 1) == 0
                    longs[key] = n.value if ok else None
                elif lib.xlu_cfg_get_list(cfg, k, ctypes.byref(lst), ctypes.byref(count), 1) == 0:
                    values[key] = [
                        _value(libs, cfg, lib.xlu_cfg_get_listitem2(lst, i))
                        for i in range(count.value)
                    ]
            return XenReading(None, values, longs)
        finally:
            lib.xlu_cfg_destroy(cfg)


@dataclass(frozen=True, slots=True)
class XenDisk:
    """What ``xlu_disk_parse`` makes of one disk spec, or its message (``error``)."""

    error: str | None
    target: str | None = None
    format: str = "unknown"
    vdev: str | None = None
    readwrite: bool = False
    cdrom: bool = False
    #: Why Xen's parser gave no answer (see :attr:`XenReading.failed`).
    failed: str | None = None


def parse_disk_with_xen(spec: str) -> XenDisk:
    """Parse one ``disk = [...]`` entry as xl does before it starts a domain."""
    size = len(os.fsencode(spec))
    if size > MAX_XEN_DISK_SPEC:
        return XenDisk(
            None,
            failed=f"Xen's disk parser was not asked: the spec is {size} bytes, over "
            f"{MAX_XEN_DISK_SPEC >> 10} KiB (it corrupts its memory on such input)",
        )
    return _isolated(lambda: _parse_disk(spec), XenDisk, lambda why: XenDisk(None, failed=why))


def _parse_disk(spec: str) -> XenDisk:
    libs = _libs()
    if libs.xl is None:
        raise RuntimeError("Xen's libxenlight is not installed (Debian package libxenmisc4.*)")
    with _report(libs) as (fp, read_report):
        cfg = libs.xlu.xlu_cfg_init(fp, b"disk")
        if not cfg:
            raise MemoryError("xlu_cfg_init failed")
        disk = _Disk()
        libs.xl.libxl_device_disk_init(ctypes.byref(disk))
        try:
            specs = (ctypes.c_char_p * 1)(os.fsencode(spec))
            if libs.xlu.xlu_disk_parse(cfg, 1, specs, ctypes.byref(disk)) != 0:
                return XenDisk(read_report() or "Xen's parser rejects the disk spec")
            return XenDisk(
                None,
                None if disk.pdev_path is None else _text(disk.pdev_path),
                _FORMATS.get(disk.format, str(disk.format)),
                None if disk.vdev is None else _text(disk.vdev),
                bool(disk.readwrite),
                bool(disk.is_cdrom),
            )
        finally:
            libs.xl.libxl_device_disk_dispose(ctypes.byref(disk))
            libs.xlu.xlu_cfg_destroy(cfg)
