"""Benchmarks for gaf: ``python -m bench ingest --help``.

Each figure is printed beside a baseline measured in the same run on the same
machine, so the numbers say what gaf costs over the database itself rather than
how fast one machine happened to be on one day. See docs/benchmarks.md.
"""
