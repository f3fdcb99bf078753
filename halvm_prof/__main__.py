"""``python -m halvm_prof`` runs the ``halvm-prof`` command."""

from halvm_prof.cli.app import main

main()
