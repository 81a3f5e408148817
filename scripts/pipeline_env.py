#!/usr/bin/env python3
"""The pipeline tools of the worked example, in a virtual environment of their own.

examples/pipeline/ runs a real dbt project on DuckDB through the real ``dbt-ol`` wrapper
(openlineage-dbt), which emits OpenLineage events to ``gaf serve``. Those tools pin their
own dependencies, which must not fight gaf's, so they live in <repo>/.pipeline-env/
(gitignored), a venv made with this Python and the exact versions below from PyPI. dbt-core
2.x fetches a parser from GitHub while it installs (not reachable from every machine); the
1.10 line installs from PyPI alone.

CLI:    python scripts/pipeline_env.py fetch     (quick when done; prints the bin directory)
        python scripts/pipeline_env.py path      (the bin directory, or exit 1 when not fetched)
Import: fetch() -> Path, bin_dir() -> Path

Environment: GAF_PIPELINE_ENV (default .pipeline-env/).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOME = Path(os.environ.get("GAF_PIPELINE_ENV") or REPO / ".pipeline-env").resolve()
#: The tools and the versions that install together on Python 3.11 (checked 2026-12-05).
PINS = ("dbt-core==1.10.23", "dbt-duckdb==1.10.1", "duckdb==2.0.1", "openlineage-dbt==1.54.0")
MARKER = HOME / ".pins"
LOG = HOME / "pip.log"


class PipelineEnvError(RuntimeError):
    """The tools could not be installed: what failed and what to do."""


def bin_dir() -> Path:
    return HOME / "bin"


def fetch() -> Path:
    """Make the venv hold the pinned tools (quick when done); return its bin directory."""
    wanted = "\n".join(PINS) + "\n"
    if MARKER.is_file() and MARKER.read_text() == wanted and (bin_dir() / "dbt-ol").is_file():
        return bin_dir()
    if not (bin_dir() / "python").exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(HOME)
    command = [str(bin_dir() / "python"), "-m", "pip", "install", "--disable-pip-version-check", *PINS]
    with LOG.open("a") as out:
        out.write(f"\n$ {shlex.join(command)}\n")
        out.flush()
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0 or not (bin_dir() / "dbt-ol").is_file():
        raise PipelineEnvError(f"pip could not install {', '.join(PINS)} into {HOME} (see {LOG}): PyPI must be reachable")
    MARKER.write_text(wanted)
    return bin_dir()


def main(argv: list[str]) -> int:
    if argv == ["fetch"]:
        try:
            print(fetch())
        except PipelineEnvError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    if argv == ["path"]:
        if not (bin_dir() / "dbt-ol").is_file():
            print("not fetched: run python scripts/pipeline_env.py fetch", file=sys.stderr)
            return 1
        print(bin_dir())
        return 0
    print(__doc__.split("CLI:")[1].split("Import:")[0].rstrip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
