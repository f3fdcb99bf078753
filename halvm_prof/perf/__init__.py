"""perf for Haskell: read perf.data, symbolise GHC code, flat profiles, eventlog alignment.

``layout`` declares the perf.data format, ``reader`` streams it (``scan``: its per-sample loops),
``elf`` reads symbols, line rows and GHC source notes with pyelftools (``symcache`` keeps what it
read), ``symbolize`` maps sample addresses through the process's mappings (GHC symbols are
decoded by ``formats.ghc_names``), ``categories`` sorts code into user, library, RTS and kernel,
``profile`` builds the flat profile, ``annotate`` (with ``disasm``) the per-instruction one,
``merge`` puts samples on the eventlog's clock (``eventlog_merge`` writes them into it) and
``record`` runs ``perf record`` the way ``merge`` needs.
"""
