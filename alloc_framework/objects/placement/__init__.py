"""Placement entities and the SQL behind them.

One module per entity; plain classes, SQLAlchemy Core queries inside
``@db_api.reader`` / ``@db_api.writer`` functions that take the request
context first. Cross-entity searches live in ``research_context``.
"""
