"""The programs halvm-prof starts: ``run`` (a program watched live, its files saved), the leak
hunt's runs, ``run --baseline``'s run alone, and the ``+RTS --info`` probe before each.

``plan`` decides the RTS flags, ``process`` starts, tails and ends a program with its whole
process group, ``exitwatch`` reads a program's threads from ``/proc`` to tell GHC's exit
deadlock, ``program`` is ``run``'s :class:`~halvm_prof.run.program.Run`, ``hunt`` the hunt's
loop, ``cost`` what watching costs. Profiles are read only through the entrance
(``inputs``), pages written only through :mod:`halvm_prof.pages`.
"""
