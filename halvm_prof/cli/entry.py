"""The ``halvm-prof`` command's entry point, importing nothing before it can catch a Ctrl-C.

Loading a command (click, the command's modules) takes a few hundred milliseconds on a busy
machine; a Ctrl-C meanwhile ends it as one later does, with click's ``Aborted!`` and exit 1,
never a ``KeyboardInterrupt`` traceback.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the ``halvm-prof`` command (:func:`halvm_prof.cli.app.main`)."""
    try:
        from halvm_prof.cli.app import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        sys.exit(1)
