"""Impact analysis: what rests on a source, a claim, a closed scope or a policy version."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from datetime import datetime, timezone
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import impact
from gaf.errors import InvalidRecord
from gaf.canonical import kind_of
from gaf.ledger import ingest
from gaf.projection import evaluate, project
from gaf.records import (
    GAF, AcceptedFact, Agent, Claim, Closure, Evaluation, Projection, Proposition, Source, Verdict,
    VerdictRules,
)  # fmt: skip
from gaf.rules import body, rule
from impact.report import headline, to_html, to_markdown
from tests.conftest import NOW, RENT
from tests.rentcase import AFTER_E, BEFORE_E, PAYMENT, close_both, load

U = timezone.utc


def _bank(store) -> str:
    return store.find("source", key="bank-ledger")[0].id


def test_invalidating_the_bank_ledger_reaches_the_payment_facts_both_gafs_closures_and_verdicts(store):
    c1, c2 = close_both(store)
    report = impact.source_invalidated(store, _bank(store))
    found = report.by_id()
    assert report.complete
    for rec in (c1.closure, c2.closure, c1.verdict, c2.verdict):
        assert found[rec.id].status == "invalidated" and found[rec.id].path[0] == _bank(store)
    assert {c1.closure.gaf, c2.closure.gaf} <= found.keys()
    facts = [store.get(a.id) for a in report.affected if a.kind == "fact"]
    stated = {store.get(f.proposition).predicate for f in facts}
    assert {"credited_to", "amount", "paid"} <= stated  # the payment received, and what was derived from it
    for a in report.affected:
        assert a.path[-1] == a.id and all(kind_of(p) for p in a.path)


def test_an_executed_action_on_an_affected_verdict_is_flagged_for_compensation(store):
    from gaf.actions import act
    from tests.rentcase import authority

    _, c2 = close_both(store)
    ids = authority(store)
    done = act(store, verdict=c2.verdict.id, action_kind="receipt", subject="rent:lease-17/2026-07", authorised_by=ids["agent"],
               grant=ids["grant:receipt"], policy=ids["policy"], idempotency_key="k1", at=AFTER_E)  # fmt: skip
    report = impact.source_invalidated(store, _bank(store))
    assert report.by_id()[done.action.id].status == "invalidated"
    assert report.to_compensate == [done.action.id]


def test_a_compensated_action_and_its_compensation_need_no_further_compensation(store):
    from datetime import timedelta

    from gaf.actions import act, compensate
    from tests.rentcase import authority

    _, c2 = close_both(store)
    ids = authority(store)
    done = act(store, verdict=c2.verdict.id, action_kind="receipt", subject="rent:lease-17/2026-07", authorised_by=ids["agent"],
               grant=ids["grant:receipt"], policy=ids["policy"], idempotency_key="k1", at=AFTER_E)  # fmt: skip
    undo = compensate(store, done.action.id, authorised_by=ids["agent"], grant=ids["grant:receipt"], policy=ids["policy"],
                      idempotency_key="undo-k1", at=AFTER_E + timedelta(days=1), reason="sent to the wrong address")  # fmt: skip
    report = impact.source_invalidated(store, _bank(store))
    assert {done.action.id, undo.action.id} <= set(report.by_id())  # both rest on the invalidated verdict
    assert report.to_compensate == []
    before = impact.source_invalidated(store, _bank(store), as_of=AFTER_E + timedelta(hours=1))
    assert before.to_compensate == [done.action.id]  # as it stood before the compensation


def test_as_of_answers_for_the_graph_as_it_stood_then(store):
    c1, c2 = close_both(store)
    then = impact.source_invalidated(store, _bank(store), as_of=datetime(2026, 7, 16, tzinfo=U))
    assert c1.closure.id in then.by_id() and c2.closure.id not in then.by_id()
    assert then.as_of == "2026-07-16T00:00:00.000Z"


def test_claim_e_does_not_fall_into_the_ledgers_closed_scopes_but_a_late_reversal_does(store):
    c1, c2 = close_both(store)
    (claim_e,) = [c for c in store.find("claim") if any(s.predicate == "allocated_to" for s in c.statements)]
    assert impact.scopes_hit(store, claim_e) == []  # another source, other predicates: outside the ledger's scopes
    bank = store.get(_bank(store))
    reversal = Claim(
        source=bank.id, observer=store.find("agent", key="bank")[0].id, observed_at="2026-07-25T00:00:00Z",
        recorded_at="2026-07-25T00:00:00Z", transformation="api_export",
        statements=[{"subject": PAYMENT, "predicate": "reversed", "value": True, "valid": {"start": "2026-07-24", "end": "2026-07-25"}}],
    )  # fmt: skip
    hit = impact.scopes_hit(store, reversal)
    assert len(hit) == 1 and store.get(hit[0]).predicate == "reversed"
    report = impact.new_claim(store, reversal)
    found = report.by_id()
    assert found[c1.closure.id].reason == "negative" and found[c2.closure.id].reason == "negative"
    assert found[c2.closure.id].path == [hit[0], c2.closure.id]


def test_a_derivation_that_relied_on_absence_is_reached_by_a_claim_in_that_scope(store):
    ledger, observer = Source(key="ledger", name="ledger"), Agent(key="o", name="o", agent_type="software")
    decl = {"source": ledger.id, "predicate": "credit", "object": "acct:1",
            "valid": {"start": "2026-07-01", "end": "2026-08-01"}, "as_of": "2026-07-01"}  # fmt: skip
    policy = Projection(name="p", version=1, question="q", completeness=[decl],
                        trust=[{"source": ledger.id, "predicates": ["credit", "account"], "authoritative": True}],
                        derivation_rules=[rule("unpaid", "unpaid(?A)", body("account(?A, ?A)", "not credit(_, ?A)"))])  # fmt: skip
    account = Claim(source=ledger.id, observer=observer.id, observed_at="2026-07-02", recorded_at="2026-07-02",
                    transformation="api_export", statements=[{"subject": "acct:1", "predicate": "account", "object": "acct:1"}])  # fmt: skip
    store.put([ledger, observer, account, policy], at=NOW)
    result = project(store, policy, as_of=datetime(2026, 7, 3, tzinfo=U), reviewer=observer.id, at=datetime(2026, 7, 3, tzinfo=U))
    (derivation,) = result.evaluated.derivations
    credit = Claim(source=ledger.id, observer=observer.id, observed_at="2026-07-10", recorded_at="2026-07-10",
                   transformation="api_export", statements=[{"subject": "tx:9", "predicate": "credit", "object": "acct:1"}])  # fmt: skip
    report = impact.new_claim(store, credit)
    found = report.by_id()
    assert found[derivation.id].reason == "negative" and found[derivation.id].status == "invalidated"
    assert found[result.gaf.id].status == "invalidated"


def test_a_fact_that_keeps_another_justification_is_only_weakened(store):
    ledger, notes = Source(key="ledger", name="ledger"), Source(key="notes", name="notes")
    observer = Agent(key="o", name="o", agent_type="software")
    policy = Projection(name="p", version=1, question="q",
                        trust=[{"source": ledger.id, "predicates": ["credit"], "authoritative": True},
                               {"source": notes.id, "predicates": ["flag"], "authoritative": True}],
                        derivation_rules=[rule("known", "known(?X)", body("credit(?X, ?A)"), body("flag(?X)"))])  # fmt: skip
    claims = [Claim(source=src.id, observer=observer.id, observed_at="2026-07-02", recorded_at="2026-07-02",
                    transformation="api_export", statements=[st_])
              for src, st_ in ((ledger, {"subject": "x", "predicate": "credit", "object": "a"}),
                               (notes, {"subject": "x", "predicate": "flag"}))]  # fmt: skip
    store.put([ledger, notes, observer, *claims, policy], at=NOW)
    at = datetime(2026, 7, 3, tzinfo=U)
    result = project(store, policy, as_of=at, reviewer=observer.id, at=at)
    known = result.evaluated.candidate("known", "x")
    assert len(known) == 2
    report = impact.source_invalidated(store, notes.id)
    found = report.by_id()
    statuses = sorted(found[c.id].status for c in known if c.id in found)
    assert statuses == ["weakened"]  # only the flag-based justification was hit, and the other holds
    (flag,) = result.evaluated.candidate("flag", "x")
    assert found[flag.id].status == "invalidated"  # flag(x) itself had no other support...
    assert found[result.gaf.id].status == "invalidated"  # ...so the GAF loses a fact


def test_a_policy_change_reaches_closures_after_its_effective_date_unless_retroactive(store):
    c1, c2 = close_both(store)
    later = impact.policy_changed(store, c1.closure.projection, effective=datetime(2026, 7, 20, tzinfo=U))
    assert [a.id for a in later.affected if a.kind == "closure"] == [c2.closure.id]
    assert later.by_id()[c2.closure.id].reason == "policy" and c2.verdict.id in later.by_id()
    every = impact.policy_changed(store, c1.closure.rules, effective=datetime(2026, 7, 20, tzinfo=U), retroactive=True)
    assert sorted(a.id for a in every.affected if a.kind == "closure") == sorted([c1.closure.id, c2.closure.id])


def test_a_report_cut_by_a_limit_says_so_first(store):
    close_both(store)
    report = impact.source_invalidated(store, _bank(store), limits=impact.Limits(depth=2))
    assert not report.complete and "depth limit 2" in report.cut[0]
    assert report.to_dict()["complete"] is False
    assert headline(report).split(": ", 1)[1].startswith("INCOMPLETE")
    assert to_markdown(report).splitlines()[0].startswith("# Impact of") and "INCOMPLETE" in to_markdown(report).splitlines()[0]


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: dict[str, int] = defaultdict(int)
        self.data = ""
        self._in_json = False

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        self._in_json = tag == "script" and ("type", "application/json") in attrs

    def handle_data(self, data):
        if self._in_json:
            self.data += data


def test_the_html_report_is_self_contained_and_pictures_every_affected_record(store):
    close_both(store)
    report = impact.source_invalidated(store, _bank(store))
    page = to_html(report)
    parser = _Page()
    parser.feed(page)
    assert parser.tags["svg"] == 1 and parser.tags["rect"] == len(report.affected) + 1  # + the trigger
    assert "http" not in page.replace("http://www.w3.org/2000/svg", "")  # no network fetches
    assert json.loads(parser.data)["totals"] == json.loads(json.dumps(report.totals()))


# ---------------------------------------------------------------------- random provenance graphs


@st.composite
def provenance(draw, tag: str):
    """A random but valid provenance graph: sources → claims → evaluations → facts → GAFs → closures → verdicts."""
    agent = Agent(key=f"a-{tag}", name="agent", agent_type="software")
    sources = [Source(key=f"s{i}-{tag}", name=f"s{i}") for i in range(draw(st.integers(1, 3)))]
    policy = Projection(name=f"p-{tag}", version=1, question="q")
    props = [Proposition(subject=f"x{i}-{tag}", predicate="p") for i in range(draw(st.integers(1, 4)))]
    claims = [Claim(source=draw(st.sampled_from(sources)).id, observer=agent.id, observed_at=NOW, recorded_at=NOW,
                    transformation="api_export", statements=[{"subject": f"c{i}-{tag}", "predicate": "q"}])
              for i in range(draw(st.integers(1, 5)))]  # fmt: skip
    evaluations, facts = [], []
    for i in range(draw(st.integers(1, 6))):
        support = draw(st.lists(st.sampled_from(claims), min_size=1, max_size=2, unique_by=lambda c: c.id))
        ev = Evaluation(proposition=draw(st.sampled_from(props)).id, projection=policy.id, outcome="accepted",
                        reason=f"r{i}", supporting=sorted(c.id for c in support))  # fmt: skip
        evaluations.append(ev)
        facts.append(AcceptedFact(proposition=ev.proposition, justification=ev.id, projection=policy.id))
    gafs = [GAF(projection=policy.id, facts=sorted({f.id for f in draw(st.lists(st.sampled_from(facts), min_size=1, max_size=3))}))
            for _ in range(draw(st.integers(1, 3)))]  # fmt: skip
    rules = VerdictRules(name=f"r-{tag}", version=1, conclusion="c", rules=[{"name": "w", "role": "warrant"}])
    closures, verdicts = [], []
    for g in gafs:
        c = Closure(question="q", subject=f"s-{tag}", as_of=NOW, gaf=g.id, projection=policy.id, projection_version=1,
                    implementation="i", rules=rules.id, rules_version=1, engine="e", closed_at=NOW)  # fmt: skip
        closures.append(c)
        verdicts.append(Verdict(closure=c.id, label="x", strength=0, low=0, high=0, engine="e"))
    return [agent, *sources, policy, rules, *props, *claims, *evaluations, *facts, *gafs, *closures, *verdicts], sources


def oracle(records, trigger: str) -> dict[str, str]:
    """An independent answer: reachability over the records' own references, then statuses by definition."""
    by_id = {r.id: r for r in records}
    deps = {r.id: {t for rel, t in r.edges() if rel in impact.analysis.POSITIVE} for r in records}
    reached = {trigger}
    changed = True
    while changed:
        changed = False
        for rid, ds in deps.items():
            if rid not in reached and ds & reached:
                reached.add(rid)
                changed = True

    def invalid(rid: str, seen=frozenset()) -> bool:
        if rid == trigger:
            return True
        if rid in seen or rid not in reached:
            return False
        r = by_id[rid]
        if isinstance(r, AcceptedFact):
            if not invalid(r.justification, seen | {rid}):
                return False
            return not any(isinstance(o, AcceptedFact) and o.id != rid and o.proposition == r.proposition
                           and o.projection == r.projection and not invalid(o.justification, seen | {rid})
                           for o in records)  # fmt: skip
        return any(invalid(d, seen | {rid}) for d in deps[rid])

    return {rid: ("invalidated" if invalid(rid) else "weakened") for rid in reached - {trigger} if kind_of(rid) in impact.analysis.REPORTED}


_EXAMPLES = itertools.count()


def _levelwise(monkeypatch) -> None:
    """The walk made level by level, as when the store cannot expand in one statement (an as-of question)."""
    monkeypatch.setattr(impact.analysis, "_expand_at_once", lambda *_: None)


def _check_random_graphs(store, data, monkeypatch, expands_at_once: bool = True) -> None:
    tag = f"g{next(_EXAMPLES)}"  # each example's records are its own, though they share one store
    records, sources = data.draw(provenance(tag))
    store.put(records, at=NOW)
    trigger = data.draw(st.sampled_from(sources)).id
    # The dependency walk (the tier that gives paths; these hand-made closures are not
    # projections anything could recompute, so the confirmation tier is tested elsewhere).
    report = impact.walk(store, {trigger: "positive"}, trigger={"kind": "source_invalidated", "id": trigger})
    assert {a.id: a.status for a in report.affected} == oracle(records, trigger)
    if expands_at_once:  # the report above came from the store's one expansion, not the level-wise walk
        assert store.snapshot(lambda q: q.reach([trigger], impact.analysis.DEPENDENCY, depth=64, cap=10**6)) is not None
    # The level-wise expansion (what as-of questions walk, and a walk whose one statement overran its time
    # limit) must give the same report, paths and edges included.
    with monkeypatch.context() as m:
        _levelwise(m)
        levelwise = impact.walk(store, {trigger: "positive"}, trigger={"kind": "source_invalidated", "id": trigger})
    assert [a.to_dict() for a in levelwise.affected] == [a.to_dict() for a in report.affected]
    assert levelwise.edges == report.edges
    # Under a time limit it keeps to, the one statement is kept: the same report again.
    limited = impact.walk(store, {trigger: "positive"}, trigger={"kind": "source_invalidated", "id": trigger},
                          limits=impact.analysis.Limits(seconds=600))  # fmt: skip
    assert [a.to_dict() for a in limited.affected] == [a.to_dict() for a in report.affected]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_random_graphs_agree_with_an_independent_walk_on_ladybug(ladybug_store, monkeypatch, data):
    _check_random_graphs(ladybug_store, data, monkeypatch)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_random_graphs_agree_when_ladybug_expands_fewer_hops_than_the_walk_needs(ladybug_store, monkeypatch, data):
    # LadybugDB expands a variable-length pattern at most 30 hops; where the deepest dependent
    # sits at that bound, reach says it cannot answer and the walk goes level by level. Here the
    # bound is 2, so most graphs need more and some do not: both ways must give the report.
    from gaf.store import questions

    monkeypatch.setattr(questions, "LADYBUG_MAX_HOPS", 2)
    _check_random_graphs(ladybug_store, data, monkeypatch, expands_at_once=False)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_random_graphs_agree_with_an_independent_walk_on_neo4j(neo4j_store, monkeypatch, data):
    _check_random_graphs(neo4j_store, data, monkeypatch)


def test_an_unknown_or_mistyped_trigger_is_a_typed_error_that_names_it(store, monkeypatch):
    from gaf.errors import UnknownReference

    load(store)
    missing = "source:" + "0" * 64
    with pytest.raises(UnknownReference, match=missing):
        impact.source_invalidated(store, missing)
    with pytest.raises(UnknownReference, match=missing):  # under a time limit
        impact.source_invalidated(store, missing, limits=impact.analysis.Limits(seconds=60))
    _levelwise(monkeypatch)
    with pytest.raises(UnknownReference, match=missing):  # the level-wise expansion checks too
        impact.source_invalidated(store, missing)
    with pytest.raises(InvalidRecord, match="is not a claim id"):
        impact.claim_retracted(store, missing)


def test_the_one_statement_walk_is_planned_as_a_pruning_breadth_first_expand(neo4j_store):
    # The speed of impact on Neo4j (and its immunity to diamond-shaped graphs) rests on this plan.
    neo4j_store.init()
    from gaf.store.questions import _REACH

    cypher = _REACH.format(label="Source", rels="|".join(impact.analysis.DEPENDENCY), depth=64)
    with neo4j_store._driver.session(database=neo4j_store.database) as session:
        plan = session.run("EXPLAIN " + cypher, {"ids": ["source:x"], "cap": 10}).consume().plan

    def operators(node) -> list[str]:
        return [node["operatorType"], *(op for child in node.get("children", []) for op in operators(child))]

    assert any(op.startswith("VarLengthExpand(Pruning") for op in operators(plan)), operators(plan)


def test_a_count_limit_cuts_the_one_statement_walk_and_says_so(store):
    close_both(store)
    (ledger,) = store.find("source", key="bank-ledger")
    full = impact.source_invalidated(store, ledger.id)
    cut = impact.source_invalidated(store, ledger.id, limits=impact.analysis.Limits(count=3))
    assert full.complete and not cut.complete and "count limit 3" in cut.cut[0]
    with pytest.raises(InvalidRecord):
        impact.analysis.Limits(depth=0)


def test_a_time_limit_the_one_statement_walk_overran_is_walked_level_by_level_and_says_where_it_stopped(store, monkeypatch):
    close_both(store)
    (ledger,) = store.find("source", key="bank-ledger")
    within = impact.source_invalidated(store, ledger.id, limits=impact.analysis.Limits(seconds=600))
    assert within.complete and within.affected == impact.source_invalidated(store, ledger.id).affected
    # The walk's clock (only its: the store's driver keeps the real one), each reading 10 s after the last:
    # the one statement took 10 s, over a limit of 5.
    ticks = itertools.count(step=10)
    monkeypatch.setattr(impact.analysis, "time", SimpleNamespace(monotonic=lambda: float(next(ticks))))
    over = impact.walk(store, {ledger.id: "positive"}, trigger={"kind": "source_invalidated", "id": ledger.id},
                       limits=impact.analysis.Limits(seconds=5))  # fmt: skip
    assert not over.complete and over.cut == ["time limit 5 s reached at depth 0"] and not over.affected


# ---------------------------------------------------------------------- confirmation by recomputation

AT = datetime(2026, 7, 3, tzinfo=U)
OBSERVER = Agent(key="o", name="o", agent_type="software")
SRC = [Source(key=f"src{i}", name=f"source {i}") for i in range(3)]


def _said(source: Source, subject: str, polarity: str = "affirmed", hours: int = 1, predicate: str = "credit") -> Claim:
    seen = datetime(2026, 7, 2, tzinfo=U).replace(hour=hours)
    return Claim(source=source.id, observer=OBSERVER.id, observed_at=seen, recorded_at=seen, transformation="api_export",
                 statements=[{"subject": subject, "predicate": predicate, "object": "acct:1", "polarity": polarity}])  # fmt: skip


def _decided(store, claims: list[Claim], *, trusted=(0, 1), subjects=("x:1",)):
    """Two sources trusted for ``credit`` (neither authoritative), a warrant on it, one closure per subject."""
    from gaf.closure import close

    policy = Projection(name="p", version=1, question="q", scope={"subjects": ["x:*"]},
                        trust=[{"source": SRC[i].id, "predicates": ["credit"]} for i in trusted])  # fmt: skip
    rules = VerdictRules(name="r", version=1, conclusion="c",
                         rules=[{"name": "credited", "role": "warrant", "condition": ["credit(?subject, ?A)"]}],
                         bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}])  # fmt: skip
    store.put([OBSERVER, *SRC, *claims, policy, rules], at=AT)
    projected = project(store, policy, as_of=AT, reviewer=OBSERVER.id, at=AT)
    return {s: close(store, projected.gaf.id, rules, subject=s, as_of=AT, closed_at=AT) for s in subjects}


def test_invalidating_the_bank_ledger_is_confirmed_to_move_the_standing_verdict_from_paid_to_unpaid(store):
    _, c2 = close_both(store)
    report = impact.source_invalidated(store, _bank(store))
    assert report.complete and report.confirmation == {"reached": 1, "recomputed": 1, "unaffected": 0, "verdict_changed": 1}
    (moved,) = report.closures
    assert moved.closure == c2.closure.id and (moved.before["label"], moved.after["label"]) == ("paid", "unpaid")
    assert "amount(payment:tx-4471, 1000)" in {f.atom for f in moved.facts if f.status == "invalidated"}


def test_a_fact_corroborated_by_two_sources_that_loses_one_is_weakened_and_its_verdict_holds(store):
    (closed,) = _decided(store, [_said(SRC[0], "x:1"), _said(SRC[1], "x:1", hours=2)]).values()
    report = impact.source_invalidated(store, SRC[1].id)
    (moved,) = report.closures
    assert moved.outcome == "basis_changed" and moved.before == moved.after
    (fact,) = moved.facts
    assert fact.status == "weakened" and fact.sources_before == sorted([SRC[0].id, SRC[1].id]) and fact.sources_after == [SRC[0].id]
    found = report.by_id()
    assert found[fact.fact].status == "weakened" and found[closed.closure.id].status == "weakened"
    assert found[closed.verdict.id].status == "weakened" and report.to_compensate == []


def test_a_new_claim_that_only_corroborates_an_accepted_fact_leaves_the_closure_unaffected(store):
    (closed,) = _decided(store, [_said(SRC[0], "x:1")]).values()
    report = impact.new_claim(store, _said(SRC[1], "x:1", hours=5))
    assert report.confirmation == {"reached": 1, "recomputed": 1, "unaffected": 1}
    assert closed.closure.id not in report.by_id() and closed.verdict.id not in report.by_id()


def test_a_new_claim_from_a_source_the_policy_does_not_trust_is_reached_and_confirmed_unaffected(store):
    _decided(store, [_said(SRC[0], "x:1")])
    report = impact.new_claim(store, _said(SRC[2], "x:1", polarity="denied", hours=5))
    assert report.complete and report.confirmation == {"reached": 1, "recomputed": 1, "unaffected": 1}
    assert report.closures == []


def test_retracting_the_denial_that_left_a_proposition_contested_moves_the_verdict_out_of_undetermined(store):
    denial = _said(SRC[1], "x:1", polarity="denied", hours=2)
    (closed,) = _decided(store, [_said(SRC[0], "x:1"), denial]).values()
    assert closed.verdict.label == "undetermined"
    report = impact.claim_retracted(store, denial.id)
    (moved,) = report.closures
    assert moved.outcome == "verdict_changed" and (moved.before["label"], moved.after["label"]) == ("undetermined", "yes")
    assert report.by_id()[closed.closure.id].status == "invalidated"


def test_a_new_claim_about_another_subject_in_the_policys_scope_changes_the_basis_of_every_closure_under_it(store):
    closed = _decided(store, [_said(SRC[0], "x:1")], subjects=("x:1", "x:2"))
    report = impact.new_claim(store, _said(SRC[0], "x:2", hours=5))
    outcomes = {c.closure: c.outcome for c in report.closures}
    assert outcomes == {closed["x:1"].closure.id: "basis_changed", closed["x:2"].closure.id: "verdict_changed"}
    assert [c.gained for c in report.closures] == [["credit(x:2, acct:1)"]] * 2


def test_more_reached_closures_than_the_recompute_limit_make_the_report_incomplete_and_say_which(store):
    closed = _decided(store, [_said(SRC[0], "x:1")], subjects=("x:1", "x:2"))
    report = impact.source_invalidated(store, SRC[0].id, limits=impact.Limits(recompute=1))
    assert not report.complete and "2 of 2 reached closures not recomputed" in report.cut
    assert {c.closure: c.outcome for c in report.closures} == {c.closure.id: "not_confirmed" for c in closed.values()}
    assert all(report.by_id()[c.closure.id].status == "unconfirmed" for c in closed.values())


def test_each_rent_source_invalidated_moves_the_standing_verdict_as_recomputation_says(store):
    _, c2 = close_both(store)
    outcomes = {}
    for source in store.find("source"):
        report = impact.source_invalidated(store, source.id)
        assert report.complete and report.confirmation["reached"] == 1
        outcomes[source.key] = [(c.closure, c.outcome, c.before["label"], c.after["label"]) for c in report.closures]
    moved = c2.closure.id
    assert outcomes == {
        "bank-ledger": [(moved, "verdict_changed", "paid", "unpaid")],
        "contract-registry": [(moved, "verdict_changed", "paid", "undetermined")],
        "transfer-receipts": [(moved, "verdict_changed", "paid", "undetermined")],
        "tenant-messages": [],
        "landlord-messages": [],
    }
