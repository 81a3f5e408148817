"""Entry point: ``python -m bench <benchmark> [options]``.

``<benchmark>`` names a module of this package with a ``main(argv) -> int``:
``python -m bench ingest --help``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

HELPERS = {"graph", "fastput"}  # modules of the package that are not benchmarks


def benchmarks() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_") and m.name not in HELPERS)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = benchmarks()
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in names:
        print(f"usage: python -m bench {{{','.join(names)}}} [options]   (e.g. python -m bench ingest --help)")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(f"bench.{argv[0]}")
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
