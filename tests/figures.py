"""The figures of docs/reliability.md, recorded by the tests that produce them.

Each reliability test states what it did as counts (faults injected, writers,
records checked, inputs refused, records lost). They are printed (seen with
``pytest -s``) and, when GAF_RELIABILITY_FIGURES names a JSON file, added to it
under their section, so the page can cite one run rather than a recollection.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def record(section: str, **counts: Any) -> None:
    """Print one test's figures and keep them in $GAF_RELIABILITY_FIGURES if set."""
    print(f"\n[reliability] {section}: {json.dumps(counts, sort_keys=True)}")
    target = os.environ.get("GAF_RELIABILITY_FIGURES")
    if not target:
        return
    path = Path(target)
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault(section, []).append(counts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
