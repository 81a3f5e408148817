"""Benchmarks for gaf: ``python -m bench ingest --help``.

Each figure is printed beside a baseline measured in the same run on the same
machine, so the numbers say what gaf costs over the database itself rather than
how fast one machine happened to be on one day. See docs/benchmarks.md.
"""

import json
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
