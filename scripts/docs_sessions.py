"""Re-run the shell sessions of docs/cli.md, docs/tutorial.md and docs/prov-mapping.md and write what they print.

An output shown in the docs is only worth reading if today's gaf prints it. These pages
are one shell session each: every ``sh`` block, in order, in one shell, from a fresh
scratch directory and a fresh embedded store. Each output block that follows an ``sh``
block directly is what that block printed (stdout and stderr, as a reader sees them); the
rest of the page is prose and is left byte for byte.

    python scripts/docs_sessions.py [--check] [PAGE ...]

Without ``--check`` the pages are rewritten; with it nothing is written and the blocks that
differ are listed (exit 1). The sessions pass ``--at`` to every write, so a run on a clean
clone gives the same records, the same ids and the same bytes. The only change made to
what a session prints is its scratch directory, written back as the page's own path
(``/tmp/gaf-cli``): the scratch path has that path's length, so tables wrap as on the page.

tests/test_docs_examples.py imports the helpers below for the other pages it checks.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import string
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The terminal width the docs' outputs were made at (rich wraps at it).
COLUMNS = "100"
#: A fenced block: its info string (``sh``, ``json``, empty …) and its body.
FENCE = re.compile(r"^```(\S*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)

#: The pages made by running them, and the scratch directory each one's session works in.
SESSIONS = {
    "docs/cli.md": "/tmp/gaf-cli",
    "docs/tutorial.md": "/tmp/gaf-tutorial",
    "docs/prov-mapping.md": "/tmp/gaf-prov",
}


@dataclass(frozen=True)
class Step:
    """One ``sh`` block of a page and the output block that follows it directly, if any."""

    commands: str
    shown: str | None
    #: Where the output block's body starts and ends in the page (None when there is none).
    span: tuple[int, int] | None
    info: str | None


def walkthrough(doc: str) -> list[Step]:
    """Every sh block of a page that reads as one session, in order, each with the output
    block (of any info string but ``sh``) that follows it with nothing in between."""
    fences = list(FENCE.finditer(doc))
    steps = []
    for n, block in enumerate(fences):
        if block.group(1) != "sh":
            continue
        following = fences[n + 1] if n + 1 < len(fences) else None
        if following is None or following.group(1) == "sh" or doc[block.end():following.start()].strip():
            steps.append(Step(block.group(2), None, None, None))
        else:
            steps.append(Step(block.group(2), following.group(2), following.span(2), following.group(1)))
    return steps


def run_in_one_shell(blocks: list[str], cwd: Path, scratch: Path, doc_scratch: str) -> list[str]:
    """Run the blocks one after another in one sh, as a reader pasting them would, with the
    page's scratch directory (``doc_scratch``) replaced by ``scratch``; each one's output
    (stdout and stderr), with ``scratch`` written back as the page writes it."""
    env = {k: v for k, v in os.environ.items() if k not in ("GAF_STORE", "NEO4J_URI")}
    env["COLUMNS"] = COLUMNS
    env["PYTHONPATH"] = str(ROOT)
    script = []
    # The block files live outside the scratch directory, so a session never sees them.
    with tempfile.TemporaryDirectory(prefix="gaf-docs-blocks-") as held:
        blocks_dir = Path(held)
        env["PATH"] = f"{put_on_path(blocks_dir / 'bin')}{os.pathsep}{env.get('PATH', '')}"
        outputs = [blocks_dir / f"output-{n}.txt" for n in range(len(blocks))]
        for n, (block, output) in enumerate(zip(blocks, outputs)):
            (blocks_dir / f"block-{n}.sh").write_text(block.replace(doc_scratch, str(scratch)))
            script.append(f'. "{blocks_dir}/block-{n}.sh" > "{output}" 2>&1')
        subprocess.run(["sh", "-c", "\n".join(script)], cwd=cwd, env=env, check=True, timeout=900)
        return [output.read_text().replace(str(scratch), doc_scratch) for output in outputs]


def put_on_path(bin_dir: Path) -> Path:
    """``gaf`` and ``python`` commands of this interpreter and this checkout, for the session
    and any script it runs (``sh story.sh``): ``gaf`` is the installed command as a reader
    has it, so ``gaf --help`` says ``Usage: gaf``, not ``python -m gaf``."""
    bin_dir.mkdir()
    commands = {
        "gaf": f"#!{sys.executable}\nimport sys\nfrom gaf.cli import main\nsys.exit(main())\n",
        "python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
    }
    for name, text in commands.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


@contextmanager
def scratch_like(doc_scratch: str) -> Iterator[Path]:
    """A fresh, empty directory whose path is as long as the page's (``/tmp/gaf-cli`` gives
    ``/tmp/`` and seven random characters), so what a session prints wraps where the page's
    does; removed afterwards."""
    parent, name = os.path.split(doc_scratch)
    alphabet = string.ascii_lowercase + string.digits
    while True:
        path = Path(parent) / "".join(secrets.choice(alphabet) for _ in name)
        try:
            path.mkdir()
            break
        except FileExistsError:
            continue
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class Drift:
    """An output block whose page text is not what its commands print today."""

    commands: str
    shown: str
    printed: str

    def __str__(self) -> str:
        first = self.commands.strip().splitlines()[0]
        return f"the output of `{first}` …:\n--- on the page\n{self.shown}--- printed\n{self.printed}"


def regenerate(page: Path) -> tuple[str, list[Drift]]:
    """The page with every shown output replaced by what its session prints, and the blocks
    that changed."""
    doc = page.read_text()
    steps = walkthrough(doc)
    doc_scratch = SESSIONS[page.relative_to(ROOT).as_posix()]
    with scratch_like(doc_scratch) as scratch:
        printed = run_in_one_shell([s.commands for s in steps], ROOT, scratch, doc_scratch)
    pieces, drifts, at = [], [], 0
    for step, got in zip(steps, printed):
        if step.span is None or step.shown is None:
            continue
        if got and not got.endswith("\n"):
            raise SystemExit(f"{page.name}: the output of {step.commands.splitlines()[0]!r} does not end a line")
        if got != step.shown:
            drifts.append(Drift(step.commands, step.shown, got))
        start, end = step.span
        pieces += [doc[at:start], got]
        at = end
    pieces.append(doc[at:])
    return "".join(pieces), drifts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 listing the blocks that differ")
    parser.add_argument("pages", nargs="*", default=list(SESSIONS), help=f"default: {' '.join(SESSIONS)}")
    args = parser.parse_args(argv)
    drifted = False
    for name in args.pages:
        page = (ROOT / name).resolve()
        if not page.is_relative_to(ROOT) or page.relative_to(ROOT).as_posix() not in SESSIONS:
            parser.error(f"{name} is not a page made by running it (those are {', '.join(SESSIONS)})")
        text, drifts = regenerate(page)
        for drift in drifts:
            print(f"{name}: {drift}", file=sys.stderr)
        if args.check:
            drifted |= bool(drifts)
        elif drifts:
            page.write_text(text)
            print(f"{name}: {len(drifts)} output block(s) rewritten")
        else:
            print(f"{name}: unchanged")
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main())
