#!/usr/bin/env python3
"""ProvToolbox, the reference PROV implementation, from Maven Central, for the tests.

The PROV exports are checked by the tools compliance teams use, not by gaf's own
reading: ProvToolbox's ``provconvert`` (org.openprovenance.prov:prov-interop) parses
every PROV-N export and converts it to PROV-JSON, which the ``prov`` package then loads
beside gaf's own PROV-JSON. Maven resolves prov-interop and its dependencies into
<repo>/.provtoolbox/lib (gitignored; scripts/provtoolbox-pom.xml), and the converter runs
as a plain ``java -cp 'lib/*'`` — no ProvToolbox install, no network once fetched.

CLI:    python scripts/provtoolbox.py fetch
        python scripts/provtoolbox.py convert IN.provn OUT.json
Import: fetch() -> Path, convert(infile, outfile)

Environment: GAF_PROVTOOLBOX_HOME (default .provtoolbox/), JAVA_HOME (else ``java`` on
PATH; ProvToolbox 2.2.1 needs Java 15 or later).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
POM = REPO / "scripts" / "provtoolbox-pom.xml"
HOME = Path(os.environ.get("GAF_PROVTOOLBOX_HOME") or REPO / ".provtoolbox").resolve()
LIB = HOME / "lib"
VERSION = "2.2.1"
MARKER = LIB / ".version"
MAVEN_LOG = HOME / "maven.log"
MAIN = "org.openprovenance.prov.interop.CommandLineArguments"
CONVERT_TIMEOUT_S = 300


class ProvToolboxError(RuntimeError):
    """ProvToolbox could not be fetched or run: what failed and what to do."""


def fetch() -> Path:
    """Make lib/ hold ProvToolbox's jars (quick when done); return lib/."""
    if MARKER.is_file() and MARKER.read_text().strip() == VERSION and any(LIB.glob("prov-interop-*.jar")):
        return LIB
    if not shutil.which("mvn"):
        raise ProvToolboxError("Maven (mvn) is not on PATH: install it (apt-get install maven) to fetch ProvToolbox")
    partial = HOME / "lib.partial"
    shutil.rmtree(partial, ignore_errors=True)
    HOME.mkdir(parents=True, exist_ok=True)
    for offline in (True, False):
        command = ["mvn", "-B", "-q", *(["-o"] if offline else []), "-f", str(POM), f"-Dprovtoolbox.version={VERSION}",
                   f"-Dprovtoolbox.lib={partial}", "dependency:copy-dependencies"]  # fmt: skip
        with MAVEN_LOG.open("a") as out:
            out.write(f"\n$ {shlex.join(command)}\n")
            out.flush()
            ok = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO).returncode == 0
        if ok and any(partial.glob("prov-interop-*.jar")):
            (partial / ".version").write_text(VERSION + "\n")
            shutil.rmtree(LIB, ignore_errors=True)
            partial.rename(LIB)
            return LIB
        shutil.rmtree(partial, ignore_errors=True)
    raise ProvToolboxError(f"ProvToolbox {VERSION} did not resolve from Maven Central; see {MAVEN_LOG}")


def java_binary() -> str:
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ProvToolboxError("no Java: install a JDK 17 (apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    return java


def convert(infile: Path | str, outfile: Path | str) -> None:
    """``provconvert -infile IN -outfile OUT``: the formats are read from the file extensions
    (.provn, .json, .provx, .ttl …). A document ProvToolbox cannot read is an error with its words."""
    lib = fetch()
    command = [java_binary(), "-cp", f"{lib}/*", MAIN, "-infile", str(infile), "-outfile", str(outfile)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S)
    if run.returncode != 0 or not Path(outfile).is_file():
        said = "\n".join(line for line in (run.stderr + run.stdout).splitlines() if "Parsing not processed" not in line)
        raise ProvToolboxError(f"ProvToolbox could not convert {infile} (exit {run.returncode}):\n{said[-4000:]}")


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["fetch"] and len(argv) == 1:
            print(fetch())
            return 0
        if argv[:1] == ["convert"] and len(argv) == 3:
            convert(argv[1], argv[2])
            return 0
    except ProvToolboxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(__doc__.split("\n\n")[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
