"""``python -m halvm_prof`` runs the ``halvm-prof`` command."""

from halvm_prof.cli.entry import main

main()
