"""The auditor query library: named, tested Cypher questions, run read-only."""

from queries.runner import Query, check_read_only, favorites, load, parse_param, reference, run

__all__ = ["Query", "check_read_only", "favorites", "load", "parse_param", "reference", "run"]
