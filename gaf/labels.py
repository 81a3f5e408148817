"""What each record is, in words: the names people read instead of 64-hex ids.

An auditor does not recognise ``fact:9c1e…``; they recognise "fact: paid(tx-4471)", the
source's key "bank-ledger", a verdict's label "undetermined [-1, 1]". The workbench's links
and the impact picture both name records through ``Labels``, so a record reads the same
everywhere; ``claims_saying`` goes the other way, from what a person types to the claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gaf.records.ledger import Claim, Proposition, statement_text
from gaf.store import GafStore, Questions

#: A whole record id (a text field of the same name, such as a rule's conclusion, is not one).
WHOLE_ID = re.compile(r"^[a-z_]+:[0-9a-f]{64}$")
#: The fields whose record a label names (a fact by its proposition, a claim by its source, …).
NAMED_BY = ("proposition", "source", "closure", "conclusion")


def short(record_id: str) -> str:
    """An id as people read it: its kind and the first 12 hex digits (``closure:d12021c1b0ba``)."""
    kind, _, digits = record_id.partition(":")
    return f"{kind}:{digits[:12]}" if digits else record_id


def said(s: Any) -> str:
    """A statement or proposition as people read it (``gaf.records.ledger.statement_text``)."""
    return statement_text(s.predicate, s.subject, s.object, s.value, denied=getattr(s, "polarity", None) == "denied",
                          unit=getattr(s, "unit", None))  # fmt: skip


class Labels:
    """What each record is, in words; the records it needs to say so (a fact's proposition, a
    claim's source, a verdict's closure) fetched in two rounds. A record not loaded reads as
    its short id."""

    def __init__(self, store: Questions, known: dict[str, Any] | None = None):
        self.store = store
        self.records: dict[str, Any] = dict(known or {})

    def load(self, ids: Iterable[str | None]) -> None:
        wanted = {i for i in ids if i}
        self.records.update(self.store.get_many({i for i in wanted if i not in self.records}))
        second = set()
        for i in wanted:
            fields = getattr(self.records.get(i), "__dict__", {})  # a record's fields, without pydantic's lookup of a missing one
            for name in NAMED_BY:
                ref = fields.get(name)
                if isinstance(ref, str) and WHOLE_ID.match(ref) and ref not in self.records:
                    second.add(ref)
        self.records.update(self.store.get_many(second))

    def text(self, record_id: str) -> str:
        r = self.records.get(record_id)
        if r is None:
            return short(record_id)
        # boilerplate: one branch a record kind, each saying it in its own words from its own fields; a chain rather
        # than a table, as one branch asks what fields a record has (name and version: policies, rule sets), not its kind.
        kind = r.KIND
        if kind == "proposition":
            return said(r)
        if kind == "fact":
            return f"fact: {self.text(r.proposition)}"
        if kind == "evaluation":
            return f"{r.outcome}: {self.text(r.proposition)}"
        if kind == "exclusion":
            return f"excluded from {self.text(r.proposition)}"
        if kind == "derivation":
            return f"derived by {r.rule}: {self.text(r.conclusion)}"
        if kind == "claim":
            return f"claim from {self.text(r.source)}, observed {r.observed_at:%Y-%m-%d}"
        if kind in ("source", "agent"):
            return str(r.key)
        if kind == "closure":
            return f"{r.subject}, closed {r.closed_at:%Y-%m-%d}"
        if kind == "verdict":
            return f"{r.label} [{r.low:g}, {r.high:g}]"
        if hasattr(r, "name") and hasattr(r, "version"):
            return f"{r.name}@{r.version}"
        if kind == "gaf":
            return f"GAF of {len(r.facts)} facts"
        if kind == "action":
            return f"{r.action_kind} on {r.subject}"
        if kind == "policy_exception":
            return f"exception on {r.subject}"
        return short(record_id)

    def subject(self, record_id: str) -> str | None:
        """The subject a decision is about: a closure's or an action's own, a verdict's closure's."""
        r = self.records.get(record_id)
        if r is None:
            return None
        if r.KIND == "verdict":
            return self.subject(r.closure)
        value = getattr(r, "subject", None)
        return value if isinstance(value, str) else None


#: A statement as people write it: ``paid(tx-4471)`` or ``allocated_to(tx-4471, rent:lease-17/2026-07)``.
WRITTEN = re.compile(r"^\s*([^\s(),]+)\s*\(\s*([^,()]+?)\s*(?:,\s*([^,()]+?)\s*)?\)\s*$")


def claims_saying(store: GafStore, text: str) -> list[Claim]:
    """The claims with a statement that reads as ``text``: a statement as people write it
    (``paid(tx-4471)``), or one word that is a statement's subject, predicate or object —
    the reverse of naming a claim by what it says. Sorted by id."""
    written = WRITTEN.match(text)
    if written:
        predicate, subject, obj = written.groups()
        found = store.find(Proposition, predicate=predicate, subject=subject)
        propositions = [p for p in found if obj is None or p.object == obj]
    else:
        word = text.strip()
        propositions = [p for column in ("subject", "predicate", "object") for p in store.find(Proposition, **{column: word})]
    stating = store.dependents([p.id for p in propositions], ("ASSERTS", "DENIES"))
    return sorted(store.get_many({claim for _, claim, _ in stating}, Claim).values(), key=lambda c: c.id)
