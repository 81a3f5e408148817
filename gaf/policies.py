"""Projection policies as published, versioned data: load, publish, revise, read.

A policy is written as YAML (sources and agents named by key) and read into the
``Projection`` record — one structure, two spellings. A published name@version
never changes: publishing it again with other content is refused, because the
closures decided under it cite exactly that content. A revision is a new version
that says which one it revises; the old one stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gaf.errors import BatchRejected, GafError, InvalidRecord, PolicyConflict, RuleError, UnestablishedPredicate, UnknownPolicy
from gaf.ledger import Keyed, load_yaml, read_text, resolve_key, yaml_plain
from gaf.projection import established_predicates
from gaf.records import ActionPolicy, Projection, RatifiedPolicy, VerdictRules
from gaf.rules import DerivationRule, atoms_of, check_body, check_rules, closest
from gaf.store.base import GafStore


def read_policy(store: GafStore, path: str | Path) -> Projection:
    """Read a policy file, resolving source and agent keys, and check its rules.

    Every error names the file and line, and for rules, the rule.
    """
    path = Path(path)
    data, node = read_mapping(path, "a policy file")
    return policy_from_dict(store, data, where=str(path), node=node)


def read_mapping(path: Path, what: str) -> tuple[dict[str, Any], Any]:
    """One YAML mapping and its node tree (for line numbers); typed errors with file, line and column."""
    data, node = load_yaml(read_text(path), str(path))
    if not isinstance(data, dict):
        raise InvalidRecord(f"{what} holds one mapping", where=str(path))
    return data, node


def policy_from_dict(store: GafStore, data: dict[str, Any], *, where: str = "policy", node: Any = None) -> Projection:
    """A Projection from its dict spelling, keys resolved to ids, rules checked."""
    data = yaml_plain(data)
    data.pop("kind", None)
    data.setdefault("version", 1)  # a revision's version is assigned when it is published
    _cite_ratified(store, data, where)
    keyed: Keyed = {}
    for i, trust in enumerate(data.get("trust") or []):
        if isinstance(trust, dict) and "source" in trust:
            trust["source"] = resolve_key(store, trust["source"], ("source",), keyed, _at(where, node, ["trust", i, "source"]))
    for i, decl in enumerate(data.get("completeness") or []):
        if isinstance(decl, dict) and "source" in decl:
            decl["source"] = resolve_key(store, decl["source"], ("source",), keyed, _at(where, node, ["completeness", i, "source"]))
    if isinstance(data.get("parties"), list):
        data["parties"] = [
            resolve_key(store, p, ("agent",), keyed, _at(where, node, ["parties", i])) for i, p in enumerate(data["parties"])
        ]
    try:
        policy = Projection.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = list(err["loc"])
        rule = _rule_name(data, loc)
        raise InvalidRecord(
            f"invalid policy: {'.'.join(str(p) for p in loc)}: {err['msg']}" + (f" (rule {rule})" if rule else ""),
            where=_at(where, node, loc),
        ) from None
    except GafError as exc:
        exc.where = exc.where or where
        raise
    try:
        check_rules(policy.derivation_rules, known_predicates=established_predicates(policy))
    except RuleError as exc:
        rule_ref = (exc.where or "").split(" ")[0]
        index = next((i for i, r in enumerate(policy.derivation_rules) if r.ref == rule_ref), None)
        loc = ["derivation_rules", index] if index is not None else []
        raise type(exc)(exc.what, where=f"{_at(where, node, loc)} ({exc.where})" if exc.where else where, hint=exc.hint) from None
    _check_declared_predicates(policy, where, node)
    return policy


def _check_declared_predicates(policy: Projection, where: str, node: Any) -> None:
    """A sign or a one-value declaration that names a predicate nothing states covers nothing: refused, not ignored."""
    established = established_predicates(policy)
    readable = readable_predicates(policy)
    for field, names, known in (("signs", sorted(policy.signs), readable), ("functional", policy.functional, established)):
        for predicate in names:
            if predicate not in known:
                near = closest(predicate, known)
                raise UnestablishedPredicate(
                    f"{field} names {predicate!r}, which "
                    + ("no trusted source establishes" if field == "functional" else "no trusted source establishes and no rule derives")
                    + (f"; did you mean {near}?" if near else ""),
                    where=_at(where, node, [field]),
                    hint="declare it of a predicate the policy's sources state" if field == "functional" else "name a predicate the policy reads",
                )


def _cite_ratified(store: GafStore, data: dict[str, Any], where: str) -> None:
    """``ratified: [name@version]`` becomes the ratified policies' ids, and their rules are applied."""
    cited = data.get("ratified") or []
    if not isinstance(cited, list):
        return
    ids, rules = [], list(data.get("derivation_rules") or [])
    for ref in cited:
        if isinstance(ref, str) and "@" in ref and not ref.startswith("policy:"):
            try:
                name, version = parse_ref(ref)
            except InvalidRecord:
                name, version = ref, None
            found = store.find(RatifiedPolicy, name=name, version=version) if version else []
            if not found:
                raise UnknownPolicy(f"no ratified policy {ref}", where=where, hint="ratify it first: gaf policy ratify")
            ratified = found[0]
            ids.append(ratified.id)
            if not any(isinstance(r, dict) and r.get("name") == ratified.rule.get("name") for r in rules):
                rules.append(ratified.rule)
        else:
            ids.append(ref)
    data["ratified"] = sorted(ids) if all(isinstance(i, str) for i in ids) else ids  # else refused as a field
    data["derivation_rules"] = rules


def _rule_name(data: dict[str, Any], loc: list[int | str]) -> str | None:
    if len(loc) >= 2 and loc[0] == "derivation_rules" and isinstance(loc[1], int):
        rules = data.get("derivation_rules") or []
        if loc[1] < len(rules) and isinstance(rules[loc[1]], dict):
            return str(rules[loc[1]].get("name"))
    return None


def _at(where: str, node: Any, loc: list[int | str]) -> str:
    """file:line of the YAML node at a path of keys and indexes (the deepest one found)."""
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        if node is None:
            break
        line = node.start_mark.line + 1
    return f"{where}:{line}" if line else where


# ---------------------------------------------------------------------- what verdict rules may read
# A verdict rule reads the GAF, and a GAF holds only what its policy lets a trusted
# source establish, the question's conclusions, and what the policy's rules derive.
# A condition naming anything else can never hold — a typo that would close every
# decision to a permanent "undetermined" — so it is refused when a closure is made,
# and warned about when the rule set is published (it has no policy in hand yet).


@dataclass(frozen=True)
class Unestablished:
    """A predicate a verdict rule names that nothing under the policies makes true, and the nearest known one."""

    rule: str
    predicate: str
    closest: str | None

    def describe(self, under: str) -> str:
        text = f"verdict rule {self.rule} names {self.predicate}, which no rule derives and no trusted source establishes under {under}"
        return text + (f"; did you mean {self.closest}?" if self.closest else "")


def readable_predicates(policy: Projection) -> set[str]:
    """Every predicate a GAF projected under the policy can hold: established, concluded or derived."""
    return established_predicates(policy) | {r.head.predicate for r in policy.derivation_rules}


def unestablished_predicates(rules: VerdictRules, *policies: Projection) -> list[Unestablished]:
    """The predicates the rule set's conditions name that none of the policies establishes or derives.

    With several policies, a predicate counts as known if any of them makes it
    true (what ``gaf rules add`` can check before a closure picks one).
    """
    known = set().union(*(readable_predicates(p) for p in policies))
    found = []
    for rule in rules.rules:
        for clause in rule.condition:
            for inner in atoms_of(clause):
                if inner.predicate not in known:
                    found.append(Unestablished(rule.name, inner.predicate, closest(inner.predicate, known)))
    return list(dict.fromkeys(found))


def check_established(rules: VerdictRules, policy: Projection) -> None:
    """Refuse a rule set that names a predicate the policy neither establishes nor derives (before anything is written)."""
    found = unestablished_predicates(rules, policy)
    if found:
        raise UnestablishedPredicate(
            "; ".join(f.describe(policy.ref) for f in found),
            where=rules.ref,
            hint="correct the rule set and publish it as a revision (gaf rules revise), "
            "or give the policy a trust rule or a derivation rule for the predicate",
        )


# ---------------------------------------------------------------------- the policy book
# Projection policies and verdict rule sets are published the same way: by
# name@version, content-addressed, never changed, revised by a new version.

Versioned = Projection | VerdictRules | RatifiedPolicy | ActionPolicy
_VERSIONED: dict[str, type[Versioned]] = {cls.KIND: cls for cls in (Projection, VerdictRules, RatifiedPolicy, ActionPolicy)}

#: One versioned class: what goes in to publish or revise is what comes out.
V = TypeVar("V", Projection, VerdictRules, RatifiedPolicy, ActionPolicy)
#: The versioned class asked for, or any of them when the kind is named at run time (``get``).
AnyVersioned = TypeVar("AnyVersioned", bound=Versioned)


def _versioned(kind: str) -> type[Versioned]:
    """The record class of a versioned kind."""
    cls = _VERSIONED.get(kind)
    if cls is None:
        raise InvalidRecord(f"{kind} records are not versioned", hint=f"versioned kinds: {', '.join(sorted(_VERSIONED))}")
    return cls


def _published(store: GafStore, kind: str, **where: Any) -> list[Versioned]:
    """The published versions of a kind of versioned record matching ``where``, by id."""
    found: list[Versioned] = store.find(_versioned(kind), **where)
    return found


def _version(store: GafStore, cls: type[AnyVersioned], name: str, version: int) -> AnyVersioned:
    """One published version of a name."""
    found = store.find(cls, name=name, version=version)
    if not found:
        what, command = ("policy", "policy") if cls.KIND == "projection" else ("rule set", "rules")
        raise UnknownPolicy(f"no published {what} {name}@{version}", hint=f"gaf {command} list shows what is published")
    return found[0]


def publish(store: GafStore, policy: V, *, at: datetime) -> V:
    """Publish a version; again with the same content is a no-op, other content is refused."""
    for other in store.find(type(policy), name=policy.name, version=policy.version):
        if other.id != policy.id:
            raise PolicyConflict(
                f"{policy.ref} is already published with other content ({other.id})",
                hint=f"publish the change as a revision: version {latest_version(store, policy.name, policy.KIND) + 1}",
            )
        return other
    try:
        store.put([policy], at=at)
    except BatchRejected as exc:
        # Another writer published other content under this name@version since the question
        # above: the store refused this one in its transaction (on Neo4j, by its constraint).
        conflicts = [e for e in exc.errors if isinstance(e, PolicyConflict)]
        if conflicts:
            raise conflicts[0] from None
        raise
    return policy


def revise(store: GafStore, policy: V, *, at: datetime) -> V:
    """Publish ``policy`` as the next version of its name (a projection also names the one it revises)."""
    latest = latest_version(store, policy.name, policy.KIND)
    if latest == 0:
        raise UnknownPolicy(f"no published {policy.KIND} named {policy.name!r} to revise", hint="publish version 1 first")
    previous = _version(store, type(policy), policy.name, latest)
    same = {"id", "version", "revises"}
    if policy.model_dump(exclude=same) == previous.model_dump(exclude=same):
        return previous  # the latest version already says exactly this
    data = policy.model_dump(exclude={"id"}) | {"version": latest + 1}
    if isinstance(policy, Projection):
        data["revises"] = previous.id
    return publish(store, type(policy).model_validate(data), at=at)


def latest_version(store: GafStore, name: str, kind: str = "projection") -> int:
    return max((p.version for p in _published(store, kind, name=name)), default=0)


def get(store: GafStore, name: str, version: int | None = None, kind: str = "projection") -> Versioned:
    """A published policy (or rule set): the given version, or the latest."""
    version = version or latest_version(store, name, kind)
    return _version(store, _versioned(kind), name, version)


def versions(store: GafStore, cls: type[AnyVersioned]) -> list[AnyVersioned]:
    """Every published version of one versioned class, by name, then version."""
    return sorted(store.find(cls), key=lambda p: (p.name, p.version))


def parse_ref(text: str, *, where: str | None = None) -> tuple[str, int | None]:
    """``NAME`` (the latest version) or ``NAME@VERSION``, as people name a published version."""
    name, at, version = text.partition("@")
    if not name.strip():
        raise InvalidRecord(f"{text!r} names no policy", where=where, hint="write NAME or NAME@VERSION")
    if not at:
        return name, None
    if not (version.isascii() and version.isdigit()) or int(version) < 1:
        raise InvalidRecord(
            f"{text!r}: a version is a whole number from 1, not {version!r}",
            where=where,
            hint=f"write {name}@1, {name}@2, …, or {name} alone for the latest",
        )
    return name, int(version)


def resolve(store: GafStore, ref: str, cls: type[AnyVersioned], *, where: str | None = None) -> AnyVersioned:
    """The published version ``NAME`` (its latest) or ``NAME@VERSION`` names, of one versioned class."""
    name, version = parse_ref(ref, where=where)
    return _version(store, cls, name, version or latest_version(store, name, cls.KIND))


def history(store: GafStore, name: str, kind: str = "projection") -> list[Versioned]:
    """Every published version, oldest first."""
    return sorted(_published(store, kind, name=name), key=lambda p: p.version)


def names(store: GafStore, kind: str = "projection") -> list[str]:
    return sorted({p.name for p in _published(store, kind)})


#: The model a YAML file is read into.
M = TypeVar("M", bound=BaseModel)


def read_rules(path: str | Path) -> VerdictRules:
    """Read a verdict rule set from YAML; errors name the file, line and rule.

    Each condition is checked as a rule body is (``gaf.rules.check_body``), with
    ``?subject`` and the rule's parameters bound: a variable nothing binds, a division by
    zero or values that need each other are refused here, before the set is published."""
    rules = _read_model(Path(path), VerdictRules, "verdict rules", "a rules file")
    for rule in rules.rules:
        try:
            check_body(rule.condition, {"?subject", *(f"?{k}" for k in rule.params)}, f"rule {rule.name}")
        except RuleError as exc:
            raise type(exc)(exc.what, where=f"{path}: {exc.where}", hint=exc.hint) from None
    return rules


def read_derivation_rule(path: str | Path) -> DerivationRule:
    """Read one derivation rule from YAML (a policy candidate's); errors name the file and line."""
    return _read_model(Path(path), DerivationRule, "derivation rule", "a rule file")


def _read_model(path: Path, model: type[M], what: str, holder: str) -> M:
    data, node = read_mapping(path, holder)
    data = yaml_plain(data)
    data.pop("kind", None)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = list(err["loc"])
        raise InvalidRecord(f"invalid {what}: {'.'.join(str(p) for p in loc) or '(rules)'}: {err['msg']}", where=_at(str(path), node, loc)) from None
