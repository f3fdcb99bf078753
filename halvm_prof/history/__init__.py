"""Run history: every run's figures kept in a store, queried for trends and baselines.

``figures`` reads a run's files through the existing readers into plain figures; ``schema`` and
``store`` keep them in SQLite or PostgreSQL; ``trend`` builds what the trend page and ``runs
trend`` show; ``baseline`` turns a stored run back into what ``analysis.diff`` compares.
"""
