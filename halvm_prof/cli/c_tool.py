"""``convert-profile``: the C tool's program, its arguments and stdout lines kept.

``convert-profile DISK FILE``, the one form the C tool had, runs here without click: for a
conversion of a few hundred MiB, start-up is a third of the time, and click a third of the
start-up (benchmarks/bench_convert.py holds the whole against ``dd``). Any other command line
(an option, ``-`` for standard output, a folder, a missing disk, a wrong count, shell
completion) goes to the click command in :mod:`halvm_prof.cli.convert`; both convert with
:func:`halvm_prof.cli.plain.convert_lines`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from halvm_prof.cli.plain import DEBUG, convert_lines, error_message
from halvm_prof.errors import HalvmProfError


def _c_form(args: list[str]) -> bool:
    """Whether ``args`` is ``DISK FILE`` as the C tool took them: two operands, an existing
    disk that is not a folder, an output that is not one."""
    if len(args) != 2 or any(a.startswith("-") or not a for a in args):
        return False
    disk, file = args
    return os.path.exists(disk) and not os.path.isdir(disk) and not os.path.isdir(file)


def main() -> None:
    """Entry point of the ``convert-profile`` command."""
    from halvm_prof.files.output import (
        install_signal_cleanup,
        notes_to,
        remove_stale_temporaries_near,
    )
    from halvm_prof.words import printable

    args = sys.argv[1:]
    if not _c_form(args) or any(k.endswith("_COMPLETE") for k in os.environ):
        from halvm_prof.cli.convert import convert_profile_main

        convert_profile_main()
        return
    install_signal_cleanup()
    remove_stale_temporaries_near(args)

    def note(line: str) -> None:
        sys.stderr.write(f"{printable(line, newlines=False)}\n")

    with notes_to(note):
        _run(lambda: convert_lines(args[0], args[1], raw=False, force=False))


def _run(work: Callable[[], list[str]]) -> NoReturn:
    """Run ``work`` and print its lines, with click's exits: an error is one ``Error:`` line
    on stderr and exit 1, ^C is ``Aborted!`` and exit 1, a reader gone from stdout exit 0."""
    try:
        lines = work()
        sys.stdout.write("".join(f"{line}\n" for line in lines))
        sys.stdout.flush()
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        sys.exit(0)
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        sys.exit(1)
    except Exception as e:
        if os.environ.get(DEBUG) and not isinstance(e, HalvmProfError | OSError):
            raise
        sys.stderr.write(f"Error: {error_message(e)}\n")
        sys.exit(1)
    sys.exit(0)
