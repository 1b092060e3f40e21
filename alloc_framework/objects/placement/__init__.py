"""Placement entities and the SQL behind them.

One module per entity; plain classes, SQLAlchemy Core queries inside
``@db_api.reader`` / ``@db_api.writer`` functions that take the request
context first. Cross-entity searches: ``allocation_candidate`` (the
candidates search), ``candidate_explanation`` (its ``explain``),
``provider_search`` (the filtered provider listing), all three built on
the predicates of ``candidate_predicates``.
"""
