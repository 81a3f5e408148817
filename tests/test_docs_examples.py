"""The examples in the docs print what the docs say they print.

A figure or an output written into the docs comes from a real run, and a run of the
same commands on today's code must give it again: otherwise the docs describe a gaf
that no longer exists. This runs the shell examples of docs/projection.md that show
their output — the refused inputs and the completeness "last day" example, each of
which makes a store of its own — in a copy of examples/rent, on the embedded store; the
walkthrough of docs/prov-mapping.md; and the sessions of docs/cli.md and docs/tutorial.md,
which scripts/docs_sessions.py writes and these tests re-run.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _docs_sessions():
    """scripts/docs_sessions.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("docs_sessions", ROOT / "scripts" / "docs_sessions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


docs_sessions = _docs_sessions()
FENCE = docs_sessions.FENCE
run_in_one_shell = docs_sessions.run_in_one_shell

PROJECTION_DOC = ROOT / "docs" / "projection.md"
#: The scratch directory the page's examples write to; the test writes to tmp_path instead.
DOC_SCRATCH = "/tmp/gaf-projection"
HEADING = re.compile(r"^## (.+)$", re.MULTILINE)


def shown_examples(doc: str) -> list[tuple[str, str]]:
    """The (commands, output) pairs to run: a sh block followed directly by a plain block.

    Only those that stand on their own: the blocks under "Refused inputs", which share the
    store the first of them makes, and any block that makes a store of its own (exports
    GAF_STORE). The others rest on what the page's earlier Python examples wrote.
    """
    headings = [(m.start(), m.group(1)) for m in HEADING.finditer(doc)]
    fences = list(FENCE.finditer(doc))
    pairs = []
    for block, following in zip(fences, fences[1:]):
        if block.group(1) != "sh" or following.group(1) != "" or doc[block.end():following.start()].strip():
            continue
        section = [title for start, title in headings if start < block.start()][-1]
        if section == "Refused inputs" or "export GAF_STORE=" in block.group(2):
            pairs.append((block.group(2), following.group(2)))
    return pairs




def test_projection_doc_examples_print_what_the_doc_says(tmp_path: Path) -> None:
    examples = shown_examples(PROJECTION_DOC.read_text())
    assert len(examples) >= 4, "the refused-input and last-day examples were not found in docs/projection.md"
    if any("jq " in commands for commands, _ in examples) and shutil.which("jq") is None:
        pytest.skip(reason="the examples pick ids out of --json with jq, which is not installed")
    rent = tmp_path / "rent"
    shutil.copytree(ROOT / "examples" / "rent", rent)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    printed = run_in_one_shell([commands for commands, _ in examples], rent, scratch, DOC_SCRATCH)
    for (commands, documented), got in zip(examples, printed):
        assert got == documented, f"docs/projection.md shows another output for:\n{commands}"


RECORDS_DOC = ROOT / "docs" / "records.md"


def python_examples(doc: str) -> list[tuple[str, str]]:
    """The (code, output) pairs of a page: a python block followed directly by a plain block."""
    fences = list(FENCE.finditer(doc))
    return [
        (block.group(2), following.group(2))
        for block, following in zip(fences, fences[1:])
        if block.group(1) == "python" and following.group(1) == "" and not doc[block.end():following.start()].strip()
    ]


def test_records_doc_python_examples_print_what_the_doc_says() -> None:
    examples = python_examples(RECORDS_DOC.read_text())
    assert len(examples) >= 2, "the content-id and exact-number examples were not found in docs/records.md"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for code, documented in examples:
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert run.stdout == documented, f"docs/records.md shows another output for:\n{code}"


PROJECTION_SECTIONS = ("Derivation rules", "Arithmetic and aggregates", "One value per subject", "Amounts in a currency")
VERDICTS_DOC = ROOT / "docs" / "verdicts.md"


def section_python_examples(doc: str, sections: tuple[str, ...]) -> list[tuple[str, str]]:
    """The python examples (with their output) under the given ``##`` or ``###`` headings."""
    headings = [(m.start(), m.group(1)) for m in re.finditer(r"^#{2,3} (.+)$", doc, re.MULTILINE)]
    fences = list(FENCE.finditer(doc))
    out = []
    for block, following in zip(fences, fences[1:]):
        if block.group(1) != "python" or following.group(1) != "" or doc[block.end():following.start()].strip():
            continue
        if [title for start, title in headings if start < block.start()][-1] in sections:
            out.append((block.group(2), following.group(2)))
    return out


@pytest.mark.parametrize(
    ("page", "sections", "least"),
    [(PROJECTION_DOC, PROJECTION_SECTIONS, 4), (VERDICTS_DOC, ("Arithmetic in a condition",), 1)],
    ids=["projection", "verdicts"],
)
def test_the_rule_language_examples_print_what_the_docs_say(page: Path, sections: tuple[str, ...], least: int) -> None:
    examples = section_python_examples(page.read_text(), sections)
    assert len(examples) >= least, f"the examples under {', '.join(sections)} were not found in {page.name}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for code, documented in examples:
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert run.stdout == documented, f"{page.name} shows another output for:\n{code}"


@pytest.mark.parametrize("page", sorted(docs_sessions.SESSIONS), ids=lambda page: Path(page).stem)
def test_the_pages_made_by_running_them_regenerate_byte_for_byte(page: str) -> None:
    """docs/cli.md, docs/tutorial.md and docs/prov-mapping.md are one shell session each, every
    write with its `--at`: run again from a fresh store, every output block they show — ids,
    tables, JSON, errors, the `store:` lines, PROV's triple counts and canonical hashes, the
    Turtle, the query results — is what the session prints, byte for byte."""
    if shutil.which("jq") is None:
        pytest.skip(reason="the pages pick ids out of --json with jq, which is not installed")
    path = ROOT / page
    shown = [step for step in docs_sessions.walkthrough(path.read_text()) if step.shown is not None]
    assert len(shown) >= 6, f"the session's outputs were not found in {page}"
    _, drifts = docs_sessions.regenerate(path)
    assert not drifts, "\n\n".join(map(str, drifts)) + f"\n\n`python scripts/docs_sessions.py {page}` writes what it prints"
