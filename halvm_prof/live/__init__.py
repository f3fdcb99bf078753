"""Live views of a running program: ``state`` folds followers into bounded series, ``server``
serves the page, ``/snapshot.json`` and Server-Sent Events, ``runner`` starts a GHC program
for ``halvm-prof run`` and saves what it writes."""
