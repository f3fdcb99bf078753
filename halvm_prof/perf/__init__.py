"""perf for Haskell: read perf.data, symbolise GHC code, flat profiles, eventlog alignment.

``layout`` declares the perf.data format, ``reader`` streams it, ``names`` decodes GHC symbols,
``elf`` reads symbols, line rows and GHC source notes with pyelftools, ``symbolize`` maps sample
addresses through the process's mappings, ``categories`` sorts code into user, library, RTS and
kernel, ``profile`` builds the flat profile, ``merge`` puts samples on the eventlog's clock and
``record`` runs ``perf record`` the way ``merge`` needs.
"""
