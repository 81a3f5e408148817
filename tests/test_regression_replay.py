"""The regression net: stores made by an older gaf still load, verify and replay.

tests/fixtures/regression/ holds every record of the rent and access stores as made by
main at b7b1b5d, before issue 16 changed what projection computes (see the README
there). Loaded into either store, every record must keep its id, and every closure
must replay identically — or name the layer that changed, never fail obscurely: since
then the projection implementation (gaf-projection/2: excluded claims are inert; /3: one atom, one weighing) and
the verdict engine (gaf-hcategoriser/2) were bumped, so a closure whose GAF or verdict
differs must say so under exactly those layers, and nothing else may differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gaf.closure import replay
from gaf.ledger import ingest
from gaf.projection import IMPLEMENTATION
from gaf.verdict import ENGINE
from gaf.verify import verify
from tests.conftest import NOW

FIXTURES = Path(__file__).parent / "fixtures" / "regression"
#: The layers a change of implementation or engine version may name.
VERSIONED_LAYERS = {"projection implementation", "runtime/engine"}


def _ids(path: Path) -> set[str]:
    from gaf.records import parse_record

    return {parse_record(json.loads(line)).id for line in path.read_text(encoding="utf-8").splitlines()}


@pytest.mark.parametrize("example", ["rent", "access"])
def test_an_older_store_loads_keeps_every_id_and_replays_naming_only_versioned_layers(store, example, tmp_path):
    dump = FIXTURES / f"{example}-records.jsonl"
    report = ingest(store, dump, recorded_at=NOW)
    assert not report.write.failed, report.write.failed
    expected = _ids(dump)
    assert store.exists(expected) == expected  # every record, under the id it had
    assert verify(store).ok
    closures = sorted(store.ids("closure"))
    assert closures, "the dump holds closures"
    named: set[str] = set()
    for closure_id in closures:
        closure = store.get(closure_id)
        out = replay(store, closure_id)
        layers = {layer["layer"] for layer in out.layers}
        assert layers <= VERSIONED_LAYERS, (closure_id, out.layers)
        # A version that changed is always named, even where the result happens to be the same.
        assert ("projection implementation" in layers) == (closure.implementation != IMPLEMENTATION)
        assert ("runtime/engine" in layers) == (closure.engine != ENGINE)
        named |= layers
    assert named == VERSIONED_LAYERS
