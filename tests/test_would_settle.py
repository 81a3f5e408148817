"""What would settle a verdict: the unknown premises that alone move its label, grouped, the rest counted.

On random worlds the premises listed are exactly those a brute force finds — every atom
the world can state, unknown in the verdict's fact base, tried with a claim from each
source, affirmed and denied, re-projected and re-judged the plain way — and every other
unknown premise the trace names is counted, never dropped. It is computed when a verdict
is shown, so verdict ids do not move; the rent case's ids below were computed before it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from hypothesis import given, settings
from typer.testing import CliRunner

from gaf.cli import app
from gaf.derive import Truth, holds, show
from gaf.projection import cone_claims, evaluate_over
from gaf.records import Claim
from gaf.rules import atom
from gaf.verdict import UNDETERMINED, judge
from gaf.whatif import Settling, settling, settling_over
from tests.conftest import RENT, ROOT
from tests.rentcase import PAYMENT, RENT_JULY, close_both
from tests.worlds import BASE, POLARITIES, SOURCES, SUBJECT, World, payment_atoms, payments_world, said, statement, world

#: The rent case's verdicts (before claim E, undetermined; after, paid), as gaf made them
#: before what would settle a verdict was computed at display time — with the projection
#: implementation since renamed gaf-projection/4, then /5, then /6 (the rent case's GAFs are the
#: same; its closures name the new implementation, so their ids, and their verdicts', moved each time).
RENT_VERDICTS = ("verdict:3dbef76c5d9fc3e713ad4b6cf32a36edc19fce0cf78fb9e2cece4768da58ddfb",
                 "verdict:02b61082d62ca5b241b3079f8a4ce2141fb11c0e92a1450e8797421faa49f7e9")  # fmt: skip


def _label(w: World, claims: list[Claim]) -> str:
    evaluated = evaluate_over(w.policy, claims, as_of=w.closure.as_of)
    return judge(w.rules, evaluated.fact_base(), subject=w.closure.subject).label


def _brute_force(w: World, atoms: list[tuple[str, ...]]) -> set[str]:
    """The atoms, unknown in the verdict's fact base, that a claim from some source stating
    them, affirmed or denied, alone turns to another label."""
    base = _label(w, w.claims)
    facts = evaluate_over(w.policy, w.claims, as_of=w.closure.as_of).fact_base()
    out = set()
    for a in atoms:
        predicate, subject, *target = a
        argument = {"object": target[0]} if target else {}
        if holds([atom(predicate, subject, *target)], facts, {})[0] != Truth.UNKNOWN:
            continue
        if any(_label(w, [*w.claims, said(source, [statement(predicate, polarity, argument, subject=subject)], None)]) != base
               for source in SOURCES for polarity in POLARITIES):  # fmt: skip
            out.add(show((predicate, subject, target[0] if target else None)))
    return out


def _settles_exactly_what_brute_force_finds(w: World, atoms: list[tuple[str, ...]]) -> None:
    evaluated = evaluate_over(w.policy, w.claims, as_of=w.closure.as_of)
    judged = judge(w.rules, evaluated.fact_base(), subject=w.closure.subject)
    if judged.label != UNDETERMINED:
        return
    found = settling_over(w.policy, w.rules, w.claims, w.closure, label=judged.label, named=judged.settles)
    assert not found.untried and found.stored_label is None
    movers = {show(g) for g in found.movers}
    assert movers == _brute_force(w, atoms)
    # the rest: every other premise the trace names, counted once, none of them listed
    assert set(judged.settles) <= movers | set(found.rest) and not movers & set(found.rest)
    shown = found.lines()
    if found.rest:
        assert f"… and {len(found.rest)} more unknown premise" in shown[-1]
    listed = [line for line in shown if line.startswith("    ")]
    assert len(listed) <= 5 and (not movers or f"{len(movers)} unknown premise" in shown[0])


@settings(max_examples=60)
@given(world())
def test_the_premises_that_would_settle_a_verdict_are_exactly_those_brute_force_finds(w):
    _settles_exactly_what_brute_force_finds(w, [(p, SUBJECT) for p in BASE])


@settings(max_examples=40)
@given(payments_world())
def test_of_every_payment_against_every_instalment_only_those_that_move_the_verdict_are_listed(w):
    _settles_exactly_what_brute_force_finds(w, payment_atoms())


def test_groups_show_a_pattern_a_count_and_a_few_examples():
    movers = tuple(("allocated_to", f"payment:{k:02d}", "rent:7") for k in range(50)) + (("amount", "payment:x", 1000),)
    shown = Settling("closure:x", UNDETERMINED, movers, rest=("paid(rent:7)", "delinquent(rent:7)"), tries=64).lines()
    assert shown == [
        "  would settle it, each alone (affirmed or denied): 51 unknown premises",
        "    allocated_to(…, rent:7) ×50: payment:00, payment:01, payment:02, … and 47 more",
        "    amount(payment:x, 1000)",
        "  … and 2 more unknown premises that do not (delinquent 1, paid 1)",
    ]


def test_a_verdict_its_cone_no_longer_gives_is_said_so_and_nothing_is_tried(store):
    c1, _ = close_both(store)
    policy, rules = store.get(c1.closure.projection), store.get(c1.closure.rules)
    claims = cone_claims(store, policy, c1.closure.as_of)
    found = settling_over(policy, rules, claims, c1.closure, label="paid", named=c1.verdict.trace["would_settle"])
    assert (found.stored_label, found.label, found.movers) == ("paid", UNDETERMINED, ())
    assert found.lines()[0] == "  would settle it: not tried — its cone now gives undetermined, not paid (gaf replay says why)"
    assert set(found.rest) == set(c1.verdict.trace["would_settle"])


def test_premises_beyond_the_bound_are_counted_as_not_tried(store):
    c1, _ = close_both(store)
    bounded = settling(store, c1.closure.id, tries=0)
    assert bounded.movers == () and bounded.untried == (f"allocated_to({PAYMENT}, {RENT_JULY})",)
    assert "1 not tried (only the first 0 are; gaf verdict --tries N tries more)" in bounded.lines()[-1]


def test_the_rent_case_would_be_settled_by_the_allocation_alone_and_its_verdict_ids_do_not_move(store):
    c1, c2 = close_both(store)
    assert (c1.verdict.id, c2.verdict.id) == RENT_VERDICTS
    found = settling(store, c1.closure.id)
    assert [show(g) for g in found.movers] == [f"allocated_to({PAYMENT}, {RENT_JULY})"]
    assert found.rest == (f"delinquent({RENT_JULY})", f"paid({RENT_JULY})") and found.untried == ()
    assert settling(store, c2.closure.id) == Settling(c2.closure.id, "paid")


def _fifty_payments(path: Path) -> Path:
    """The rent case with 49 more payments of 1000 credited to the landlord in July, none allocated."""
    claims = [{"kind": "claim", "source": "bank-ledger", "observer": "bank", "observed_at": "2026-07-06T00:00:00Z",
               "recorded_at": "2026-07-12T08:00:00Z", "transformation": "api_export", "scope": "account landlord-a",
               "statements": [{"subject": f"payment:tx-{9000 + k}", "predicate": "credited_to", "object": "account:landlord-a",
                               "valid": {"start": "2026-07-05", "end": "2026-07-06"}},
                              {"subject": f"payment:tx-{9000 + k}", "predicate": "amount", "value": 1000}]}
              for k in range(49)]  # fmt: skip
    path.write_text(yaml.safe_dump(claims), encoding="utf-8")
    return path


def test_a_verdict_on_fifty_payments_shows_what_would_settle_it_in_a_screenful(tmp_path):
    store, runner = str(tmp_path / "s.lbug"), CliRunner()
    for args in (["ingest", str(RENT / "claims.yaml")], ["ingest", str(_fifty_payments(tmp_path / "more.yaml"))],
                 ["policy", "add", str(RENT / "policy.yaml")], ["rules", "add", str(RENT / "verdict-rules.yaml")]):  # fmt: skip
        assert runner.invoke(app, [*args, "--store", store]).exit_code == 0
    gaf = runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15", "--store", store,
                              "--json"])  # fmt: skip
    closed = runner.invoke(app, ["close", yaml.safe_load(gaf.stdout)["gaf"], "--rules", "rent-paid", "--subject", RENT_JULY,
                                 "--as-of", "2026-07-15", "--at", "2026-07-15", "--store", store])  # fmt: skip
    assert "would settle it, each alone (affirmed or denied): 50 unknown premises" in closed.stdout
    closure = closed.stdout.split()[1]
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)}
    shown = subprocess.run([sys.executable, "-m", "gaf", "verdict", closure, "--store", store], env=env, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert len(lines) <= 15, shown.stdout
    assert "would settle it, each alone (affirmed or denied): 50 unknown premises" in shown.stdout
    assert "allocated_to(…, rent:lease-17/2026-07) ×50" in shown.stdout
    # every other premise the trace names is counted, not listed
    named = yaml.safe_load(runner.invoke(app, ["verdict", closure, "--store", store, "--json"]).stdout)["trace"]["would_settle"]
    assert f"… and {len(named) - 50} more unknown premises" in shown.stdout.replace("\n", " ")
