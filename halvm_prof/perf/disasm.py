"""Machine code to instructions, by binutils' ``objdump``: the disassembler ``perf annotate``
itself runs, so an instruction reads here as it does there.

GHC lays each info table right before the code it describes (tables next to code), inside what
the symbol table or DWARF calls one function. Disassembled from the function's start, the table's
bytes read as made-up instructions that can run on past the start of the code behind them; so
each piece of code (a range GHC's DWARF gives a procedure or block) is disassembled on its own,
from its first byte, and what lies between pieces is never read as code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import NamedTuple

from halvm_prof.errors import InputError, ToolError

#: objdump's instruction lines: ``  40c7a5:\tmov    %r14,%rax``
_LINE = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
#: More instructions than this in one range are not read (a range's size is the file's claim).
MAX_INSTRUCTIONS = 50_000


class Decoded(NamedTuple):
    """One instruction: its address and objdump's text of it."""

    address: int
    text: str


def find_objdump() -> str:
    """The ``objdump`` program, or a :class:`ToolError` saying how to get it."""
    found = shutil.which("objdump")
    if found is None:
        raise ToolError(
            "objdump is not installed; the annotation disassembles with it",
            hint="install binutils: apt-get install binutils",
        )
    return found


def disassemble(
    binary: str | os.PathLike[str], low: int, high: int, objdump: str | None = None
) -> list[Decoded]:
    """The instructions of ``binary`` from address ``low`` up to ``high``, in order."""
    tool = objdump or find_objdump()
    path = os.fspath(binary)
    args = [
        tool,
        "--disassemble-all",
        "--disassemble-zeroes",
        "--no-show-raw-insn",
        "--wide",
        f"--start-address={low:#x}",
        f"--stop-address={high:#x}",
        path,
    ]
    try:
        done = subprocess.run(
            args, capture_output=True, check=False, timeout=120, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"objdump took over {e.timeout:.0f} s", path=path) from e
    except OSError as e:
        raise ToolError(f"cannot run objdump: {e.strerror}", path=tool) from e
    if done.returncode:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(
            f"objdump cannot disassemble it ({said[-1] if said else f'exit {done.returncode}'})",
            path=path,
            hint="give the program's binary, built with ghc -g",
        )
    out: list[Decoded] = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        m = _LINE.match(line)
        if m is None:
            continue
        addr = int(m[1], 16)
        if low <= addr < high:
            out.append(Decoded(addr, " ".join(m[2].split("\t")).rstrip()))
            if len(out) >= MAX_INSTRUCTIONS:
                break
    return out
