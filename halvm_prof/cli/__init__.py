"""The command line: thin click commands over the library (:mod:`halvm_prof.cli.app` holds the
``halvm-prof`` group). This package is the only place that imports click; the package itself
does not, so that ``convert-profile DISK FILE`` (:mod:`halvm_prof.cli.c_tool`) starts without it.
"""
