"""Benchmarks for gaf: ``python -m bench ingest --help``.

Each figure is printed beside a baseline measured in the same run on the same
machine, so the numbers say what gaf costs over the database itself rather than
how fast one machine happened to be on one day. See docs/benchmarks.md.
"""

import argparse
import json
import os
import statistics
from pathlib import Path
from typing import Any

from rich.console import Console


def save_result(result: dict[str, Any], path: Path | None, console: Console) -> None:
    """Write a benchmark's result where ``--json`` says (nowhere when not given), and say so."""
    if path is not None:
        path.write_text(json.dumps(result, indent=1) + "\n")
        console.print(f"saved {path}")


def percentiles(values: list[float]) -> dict[str, float]:
    """p50 (median), p95 (nearest rank), max and n of some measurements, rounded to 2 places."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * 95 // 100))
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(rank) - 1], 2),
        "max": round(ordered[-1], 2),
        "n": len(ordered),
    }


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark run on either store: --stores, --empty-neo4j, --json."""
    parser.add_argument("--stores", default="ladybug", help="comma-separated: ladybug, neo4j (neo4j needs NEO4J_URI)")
    parser.add_argument("--empty-neo4j", action="store_true", help="empty the Neo4j database NEO4J_URI names first")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")


def chosen_stores(args: argparse.Namespace, console: Console) -> list[str] | None:
    """The stores --stores names, or None (said on the console) when one is unknown or Neo4j has no NEO4J_URI."""
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if unknown := sorted(set(stores) - {"ladybug", "neo4j"}):
        console.print(f"unknown store {unknown[0]!r}: use ladybug, neo4j")
        return None
    if "neo4j" in stores and not os.environ.get("NEO4J_URI"):
        console.print("--stores neo4j needs NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD) naming a server")
        return None
    return stores


def open_neo4j(empty: bool = False, *, again: bool = False) -> Any:
    """The Neo4j store NEO4J_URI names (NEO4J_USER / NEO4J_PASSWORD), initialised; emptied first when ``empty``.

    A database that holds nodes and is not to be emptied is refused: a benchmark never measures, or deletes, data it
    was not told it may. ``again``: the benchmark's own database, opened again to read what it wrote.
    """
    from gaf.store.neo4j import Neo4jStore

    store = Neo4jStore(os.environ["NEO4J_URI"], user=os.environ.get("NEO4J_USER", "neo4j"), password=os.environ.get("NEO4J_PASSWORD", ""))
    if again:
        return store
    held = store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    if held and not empty:
        store.close()
        raise SystemExit(f"the Neo4j database at {store.location} holds {held:,} nodes: point NEO4J_URI at an empty one, "
                         "or pass --empty-neo4j to empty it first")  # fmt: skip
    if held:
        with store._driver.session(database=store.database) as session:  # each statement in its own transactions
            # relationships first: a node with half a million of them (a source of every claim)
            # would make one DETACH DELETE outgrow the server's heap
            session.run("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS").consume()
            session.run("MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
    store.init()
    return store
