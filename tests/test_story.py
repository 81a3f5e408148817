"""README command 1: the rent story script runs end to end on the embedded store, and again as a no-op."""

from __future__ import annotations

import os
import subprocess

from gaf.store.ladybug_compact import AUTO_COMPACT_FROM
from tests.conftest import RENT


def _story(store: str) -> str:
    env = dict(os.environ, GAF_STORE=store, COLUMNS="200")
    result = subprocess.run(["sh", str(RENT / "story.sh")], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def test_the_rent_story_runs_end_to_end_and_again_without_writing_twice(tmp_path):
    first = _story(str(tmp_path / "rent.lbug"))
    assert "undetermined: -1.000 (interval -1.000 … +1.000)" in first
    assert "allocated_to(payment:tx-4471, rent:lease-17/2026-07)" in first
    assert "does not let a verdict labelled 'undetermined' trigger 'collection-letter'" in " ".join(first.split())
    assert "undetermined → closure:" in first and "paid" in first
    assert first.count("identical: GAF") == 2
    flat = " ".join(first.split())
    assert "ratified rent-allocation@1" in flat and "1 closure(s) judged, 0 would flip" in flat
    assert "verdict paid: +1.000" in flat.split("== 12.")[1].split("== 13.")[0]  # August, with no landlord confirmation
    assert "policy exception, queued for review: outside rent-allocation@1" in flat  # September's 900
    # The store holds what its records need, not what each command's checkpoint left behind: a
    # writer compacts a file past AUTO_COMPACT_FROM as it closes it (62 MB before, bench/store_size.py).
    size = (tmp_path / "rent.lbug").stat().st_size
    assert size <= AUTO_COMPACT_FROM, f"the rent story's store is {size} bytes"
    again = _story(str(tmp_path / "rent.lbug"))
    assert "0 written, 13 already stored" in " ".join(again.split())
    assert "no new effect: this key was used before" in " ".join(again.split())
    assert "no standing closure was affected" in again  # the same premises: nothing to supersede
    assert (tmp_path / "rent.lbug").stat().st_size <= AUTO_COMPACT_FROM  # a second run that writes nothing leaves it small
