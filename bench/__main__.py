"""Entry point: ``python -m bench <benchmark> [options]``.

``<benchmark>`` names a module of this package with a ``main(argv: list[str] | None
= None) -> int`` that parses ``argv`` and returns the exit code, which this entry
point exits with: ``python -m bench ingest --help``. The modules in HELPERS are
not benchmarks: they are imported by the benchmarks.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

#: Modules of the package that are not benchmarks: the synthetic graph (graph).
HELPERS = {"graph"}


def modules() -> list[str]:
    """Every module of the package, benchmarks and helpers."""
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_"))


def benchmarks() -> list[str]:
    return [name for name in modules() if name not in HELPERS]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    names = benchmarks()
    usage = f"usage: python -m bench {{{','.join(names)}}} [options]   (e.g. python -m bench ingest --help)"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        return 0 if argv else 2
    if argv[0] not in names:
        why = "is a helper module, not a benchmark" if argv[0] in HELPERS else "is not a benchmark"
        print(f"{argv[0]} {why}\n{usage}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{argv[0]}")
    return int(module.main(argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
