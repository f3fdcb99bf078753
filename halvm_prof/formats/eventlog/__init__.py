"""GHC eventlogs: a streaming reader, ``ghc-events show`` text and heap profiles.

``layout`` declares the header, ``events`` the event types, ``reader`` walks the events (file
order, time order, follow mode), ``show`` prints them as ghc-events 0.21 does, ``heap`` turns
heap samples into the shared model. The runtime timeline is its own stage:
``halvm_prof/timeline/``.
"""
