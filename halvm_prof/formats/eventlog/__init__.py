"""GHC eventlogs: a streaming reader, ``ghc-events show`` text, heap profiles and timelines.

``layout`` declares the header, ``events`` the event types, ``reader`` walks the events (file
order, time order, follow mode), ``show`` prints them as ghc-events 0.21 does, ``heap`` and
``timeline`` turn them into the shared model.
"""
