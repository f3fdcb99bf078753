"""How a heap profile's cost-centre-stack band is named, by every reader: one rule.

GHC names a ``-hc`` band in the ``.hp`` as ``(N)inner/outer`` (``fprint_ccs`` in the RTS's
``ProfHeap.c``): ``N`` is the runtime's number of the stack, given as stacks are made, and the
rest is the stack's cost centres, a CAF as ``Module.CAF``, cut to ``+RTS -L`` characters. The
eventlog of the same run names the stack by its cost-centre ids, which carry no such number. So
a band is its stack's name without the number: in a ``.hp`` whose job asks for
:func:`cost_centre_bands`, :func:`drop_stack_number` (the Python reader, and the compiled
scanner, which it tells so); in an eventlog, :func:`stack_band`. The same stack then has the
same name in either file, and in two builds, whose numbers differ. Stacks whose cut names are
equal are one band (their bytes summed), in both files alike.

Only a cost-centre-stack profile loses the number: a retainer profile (``-hr``) writes ``(N)`` in
front of each retainer set, and there it tells apart sets whose cut names are equal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from halvm_prof.rts import split_rts
from halvm_prof.words import plural

#: ``(N)`` before a stack's name in a ``.hp``.
STACK_NUMBER = re.compile(r"\([0-9]+\)(?=.)", re.DOTALL)


def heap_breakdown(job: str) -> str | None:
    """The heap profile's breakdown as the ``.hp``'s ``JOB`` line (the command line, which GHC
    writes with every RTS flag, ``GHCRTS`` and ``-with-rtsopts`` too) says: the letter of its last
    ``-h<letter>`` RTS flag (``c`` for ``-hc``, ``""`` for a bare ``-h``), None without one. A
    longer ``-hc<name>`` restricts the profile, it does not break it down."""
    found = None
    for arg in split_rts(job.split())[1]:
        if arg == "-h" or (len(arg) == 3 and arg.startswith("-h") and arg[2].isalpha()):
            found = arg[2:]
    return found


def cost_centre_bands(job: str) -> bool:
    """Whether the profile of ``job`` breaks the heap down by cost-centre stack, its ``.hp``
    naming bands ``(N)stack``: ``-hc``, or a bare ``-h`` (``-hc`` in a profiled program; in
    another, ``-hT``, whose names hold no such number)."""
    return heap_breakdown(job) in ("c", "")


def drop_stack_number(name: str) -> str:
    """``(N)stack`` as ``stack``; any other name as it is."""
    return STACK_NUMBER.sub("", name, count=1) if name[:1] == "(" else name


def ccs_length(args: Sequence[str], default: int = 25) -> int:
    """The ``+RTS -L<n>`` of a command line: how long a cost-centre stack's name may be."""
    length = default
    for arg in split_rts(list(args[1:]))[1]:
        if arg.startswith("-L") and arg[2:].isdigit() and int(arg[2:]) > 0:
            length = int(arg[2:])
    return length


def stack_name_length(job: str) -> int | None:
    """How long the band names of the profile of ``job`` (a ``.hp``'s JOB line) may be: its
    ``+RTS -L``, GHC's 25 by default, when they are cost-centre stacks; else None."""
    return ccs_length(job.split()) if cost_centre_bands(job) else None


def is_cut(band: str, length: int) -> bool:
    """Whether GHC cut the cost-centre-stack band ``band`` at ``+RTS -L<length>``: it keeps
    ``length - 4`` characters and ``...`` (the ``(N)`` before a ``.hp``'s name not counted)."""
    name = drop_stack_number(band)
    return name.endswith("...") and len(name) == length - 1


#: What ``run`` passes for whole names (``halvm_prof.run.plan.NAME_LENGTH``).
WHOLE_NAMES = 200


def cut_note(bands: Iterable[str], length: int | None) -> str | None:
    """What every output of a profile says, once, when GHC cut some of its band names; None
    when it cut none (or its bands are not cost-centre stacks)."""
    if length is None:
        return None
    cut = sum(1 for b in bands if is_cut(b, length))
    if not cut:
        return None
    default = ", GHC's default" if length == 25 else ""
    return (
        f"{plural(cut, 'band name')} {'is' if cut == 1 else 'are'} cut at {length} characters "
        f"(+RTS -L{length}{default}), ending in '...': run the program with +RTS "
        f"-L{WHOLE_NAMES} for whole names (halvm-prof run adds it)"
    )


def stack_band(names: Sequence[tuple[str, str]], max_length: int = 25) -> str:
    """A cost-centre stack's band name as GHC writes it into a ``.hp`` (``fprint_ccs``), without
    the stack's number: ``names`` are (label, module) of its cost centres, innermost first, MAIN
    left out; a CAF is ``Module.CAF``; ``/`` joins the others; a name over ``max_length``
    characters keeps ``max_length - 4`` of them and ``...``."""
    if not names:
        return "MAIN"
    parts = []
    for i, (label, module) in enumerate(names):
        if label == "CAF":
            parts.append(f"{module}.CAF")
        else:
            parts.append(label + ("/" if i + 1 < len(names) else ""))
    text = "".join(parts)
    return text if len(text) <= max_length else text[: max(0, max_length - 4)] + "..."
