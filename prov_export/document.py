"""PROV-O triples read as a PROV-DM document, and that document written as PROV-N, PROV-JSON
and PROV-XML.

The mapping (``prov_export.mapping``) writes RDF only; the other serialisations are this
one reading of those triples, so there is still one mapping. The reading follows PROV-O's
own correspondence with PROV-DM:

- a node typed ``prov:Entity``, ``prov:Activity`` or ``prov:Agent`` (or one of their
  subclasses) is an element; its other types are ``prov:type`` attributes, ``rdfs:label``
  is ``prov:label``, an activity's start and end times are its own, and its other
  properties are attributes;
- each starting-point property (``prov:used``, ``prov:wasDerivedFrom``, …) is a relation;
  where a qualified influence node says the same with more (a role, a plan, a time, the
  activity of a derivation), the relation is that node — identified by its IRI — and the
  unqualified triple is not a second relation;
- ``prov:generatedAtTime`` and ``prov:invalidatedAtTime`` are the time of the entity's
  generation or invalidation, so a time survives in every format as the PROV-DM
  statement it is, never as an attribute.

Everything is written in one order — elements by kind and id, relations by kind, their
arguments and id — so the bytes depend only on the triples.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from rdflib import Literal, URIRef
from rdflib.namespace import RDF, RDFS, XSD

from gaf.errors import ExportError
from prov_export.mapping import PROV, Triple

#: The prefixes PROV-N, PROV-JSON and PROV-XML know without a declaration.
PREDEFINED = {"prov": str(PROV), "xsd": str(XSD)}

#: Element kinds, and the PROV classes that make a node one of them.
_KINDS = {
    PROV.Entity: "entity", PROV.Plan: "entity", PROV.Collection: "entity", PROV.Bundle: "entity",
    PROV.Activity: "activity",
    PROV.Agent: "agent", PROV.Person: "agent", PROV.Organization: "agent", PROV.SoftwareAgent: "agent",
}  # fmt: skip
_BASE_CLASSES = {PROV.Entity, PROV.Activity, PROV.Agent}

#: Each relation kind's arguments, in PROV-N order, with their PROV-JSON and PROV-XML names;
#: a ``time`` argument is a time, every other one an identifier.
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "wasGeneratedBy": ("entity", "activity", "time"),
    "used": ("activity", "entity", "time"),
    "wasInformedBy": ("informed", "informant"),
    "wasInvalidatedBy": ("entity", "activity", "time"),
    "wasDerivedFrom": ("generatedEntity", "usedEntity", "activity", "generation", "usage"),
    "wasAttributedTo": ("entity", "agent"),
    "wasAssociatedWith": ("activity", "agent", "plan"),
    "actedOnBehalfOf": ("delegate", "responsible", "activity"),
    "hadMember": ("collection", "entity"),
}

#: Starting-point properties: the relation each is, and whether it is a revision.
_DIRECT = {
    PROV.wasGeneratedBy: "wasGeneratedBy", PROV.used: "used", PROV.wasInformedBy: "wasInformedBy",
    PROV.wasInvalidatedBy: "wasInvalidatedBy", PROV.wasDerivedFrom: "wasDerivedFrom",
    PROV.wasRevisionOf: "wasDerivedFrom", PROV.wasAttributedTo: "wasAttributedTo",
    PROV.wasAssociatedWith: "wasAssociatedWith", PROV.actedOnBehalfOf: "actedOnBehalfOf", PROV.hadMember: "hadMember",
}  # fmt: skip

#: Qualified properties: the relation, and which property of the influence node fills each argument after the first.
_QUALIFIED: dict[URIRef, tuple[str, tuple[URIRef | None, ...]]] = {
    PROV.qualifiedGeneration: ("wasGeneratedBy", (PROV.activity, PROV.atTime)),
    PROV.qualifiedUsage: ("used", (PROV.entity, PROV.atTime)),
    PROV.qualifiedCommunication: ("wasInformedBy", (PROV.activity,)),
    PROV.qualifiedInvalidation: ("wasInvalidatedBy", (PROV.activity, PROV.atTime)),
    PROV.qualifiedDerivation: ("wasDerivedFrom", (PROV.entity, PROV.hadActivity, PROV.hadGeneration, PROV.hadUsage)),
    PROV.qualifiedRevision: ("wasDerivedFrom", (PROV.entity, PROV.hadActivity, PROV.hadGeneration, PROV.hadUsage)),
    PROV.qualifiedAttribution: ("wasAttributedTo", (PROV.agent,)),
    PROV.qualifiedAssociation: ("wasAssociatedWith", (PROV.agent, PROV.hadPlan)),
    PROV.qualifiedDelegation: ("actedOnBehalfOf", (PROV.agent, PROV.hadActivity)),
}
#: What the influence node's own type is: not an attribute of the relation.
_INFLUENCE_CLASSES = {
    PROV.Generation, PROV.Usage, PROV.Communication, PROV.Invalidation, PROV.Derivation, PROV.Revision,
    PROV.Attribution, PROV.Association, PROV.Delegation,
}  # fmt: skip
_REVISION = ("prov:type", "prov:Revision")


@dataclass(frozen=True, order=True)
class Value:
    """An attribute value: a qualified name (``gaf:Claim``), or a literal and its datatype
    (an ``xsd:`` or other qualified name; None for a plain string)."""

    text: str
    qualified_name: bool = False
    datatype: str | None = None


Attributes = tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Element:
    kind: str
    id: str
    start: str | None
    end: str | None
    attributes: Attributes


@dataclass(frozen=True)
class Relation:
    kind: str
    #: the arguments, each a qualified name or a time (None: not given, ``-`` in PROV-N)
    args: tuple[str | None, ...]
    id: str | None
    attributes: Attributes


@dataclass(frozen=True)
class Document:
    #: prefix → namespace, the declared ones only (``prov`` and ``xsd`` are predefined)
    prefixes: tuple[tuple[str, str], ...]
    elements: tuple[Element, ...]
    relations: tuple[Relation, ...]
    #: named bundles, by identifier: their own statements (their prefixes are the document's)
    bundles: tuple[tuple[str, Document], ...] = ()


# ---------------------------------------------------------------------- reading the triples


def read_dataset(graphs: Mapping[URIRef | None, Iterable[Triple]], prefixes: dict[str, str]) -> Document:
    """The PROV-DM document a dataset states: the default graph (key None) as the document's
    own statements, each named graph as a bundle of that identifier, each read on its own."""
    names = _Names(prefixes)
    top = read(graphs.get(None, ()), prefixes, names)
    inner = tuple((names.of(name), read(triples, prefixes, names)) for name, triples in sorted(
        ((n, t) for n, t in graphs.items() if n is not None), key=lambda kv: str(kv[0])))  # fmt: skip
    declared = tuple(sorted((k, v) for k, v in prefixes.items() if k in names.used() and k not in PREDEFINED))
    return Document(declared, top.elements, top.relations, inner)


def read(triples: Iterable[Triple], prefixes: dict[str, str], names: _Names | None = None) -> Document:
    """The PROV-DM document some PROV-O triples state, with names under ``prefixes``."""
    names = names or _Names(prefixes)
    by_subject: dict[Any, list[tuple[Any, Any]]] = defaultdict(list)
    influence: set[object] = set()
    for s, p, o in set(triples):
        by_subject[s].append((p, o))
        if p in _QUALIFIED:
            influence.add(o)
    for properties in by_subject.values():
        properties.sort(key=_term_order)

    relations: dict[tuple[str, str, str], list[Relation]] = defaultdict(list)  # by (kind, first, second argument)
    direct: set[tuple[str, str, str, bool]] = set()
    times: dict[tuple[URIRef, URIRef], list[str]] = defaultdict(list)
    elements: list[Element] = []
    for s in sorted(by_subject):
        if s in influence:
            continue
        properties = by_subject[s]
        kinds = {_KINDS[o] for p, o in properties if p == RDF.type and o in _KINDS}
        for p, o in properties:
            if p in _DIRECT:
                direct.add((_DIRECT[p], names.of(s), names.of(o), p == PROV.wasRevisionOf))
            elif p in (PROV.generatedAtTime, PROV.invalidatedAtTime):
                times[(s, p)].append(_time(o))
            elif p in _QUALIFIED:
                r = _qualified(names, s, p, o, by_subject[o])
                relations[(r.kind, r.args[0] or "", r.args[1] or "")].append(r)
        for kind in sorted(kinds):
            elements.append(_element(names, kind, s, properties))
    for kind, first, second, revision in sorted(direct):
        known = relations.get((kind, first, second))
        if known:  # a qualified form says the same, and more
            continue
        attributes = (_revision(names),) if revision else ()
        relations[(kind, first, second)].append(Relation(kind, _padded(kind, (first, second)), None, attributes))
    for kind, first, second, revision in sorted(direct):
        if revision and kind == "wasDerivedFrom":  # wasRevisionOf and wasDerivedFrom of one pair: one revision
            relations[(kind, first, second)] = [_as_revision(names, r) for r in relations[(kind, first, second)]]
    _timed(names, relations, times, PROV.generatedAtTime, "wasGeneratedBy")
    _timed(names, relations, times, PROV.invalidatedAtTime, "wasInvalidatedBy")
    used = names.used()
    declared = tuple(sorted((k, v) for k, v in prefixes.items() if k in used and k not in PREDEFINED))
    ordered = sorted({r for rs in relations.values() for r in rs}, key=_relation_order)
    return Document(declared, tuple(sorted(elements, key=lambda e: (e.kind, e.id))), tuple(ordered))


def _term_order(po: tuple[object, object]) -> tuple[str, str, str]:
    return str(po[0]), type(po[1]).__name__, str(po[1])


def _relation_order(r: Relation) -> tuple[str, tuple[str, ...], str, Attributes]:
    return r.kind, tuple(a or "" for a in r.args), r.id or "", r.attributes


class _Names:
    """IRIs as qualified names under the document's prefixes, noting which prefixes are used."""

    def __init__(self, prefixes: dict[str, str]):
        self.by_length = sorted(({**prefixes, **PREDEFINED}).items(), key=lambda kv: (-len(kv[1]), kv[0]))
        self._used: set[str] = set()

    def of(self, iri: object) -> str:
        text = str(iri)
        for prefix, namespace in self.by_length:
            if text.startswith(namespace) and len(text) > len(namespace):
                local = text[len(namespace):]
                if _is_local_name(local):
                    self._used.add(prefix)
                    return f"{prefix}:{local}"
        raise ExportError(f"no prefix for {text} that makes it a qualified name every PROV format accepts",
                          hint="IRIs are made by prov_export.mapping: a record id, an engine or an influence under the base")

    def used(self) -> set[str]:
        return self._used


def _is_local_name(local: str) -> bool:
    """Whether a local part is one PROV-N, XML (an NCName) and PROV-JSON all accept."""
    return bool(local) and (local[0].isalpha() or local[0] == "_") and all(c.isalnum() or c in "-_." for c in local) and local.isascii()


def _time(o: object) -> str:
    if not isinstance(o, Literal) or o.datatype != XSD.dateTime:
        raise ExportError(f"a PROV time must be an xsd:dateTime literal, not {o!r}")
    return str(o)


def _value(names: _Names, o: object) -> Value:
    if isinstance(o, URIRef):
        return Value(names.of(o), qualified_name=True)
    if isinstance(o, Literal):
        return Value(str(o), datatype=names.of(o.datatype) if o.datatype is not None else None)
    raise ExportError(f"a PROV attribute cannot be a blank node ({o})", hint="influence nodes are IRIs in prov_export.mapping")


def _element(names: _Names, kind: str, s: URIRef, properties: list[tuple[Any, Any]]) -> Element:
    start = end = None
    attributes: list[tuple[str, Value]] = []
    for p, o in properties:
        if p == RDF.type:
            if o not in _BASE_CLASSES and _KINDS.get(o) in (None, kind):
                attributes.append(("prov:type", _value(names, o)))
        elif p == PROV.startedAtTime and kind == "activity":
            start = _time(o)
        elif p == PROV.endedAtTime and kind == "activity":
            end = _time(o)
        elif p in _DIRECT or p in _QUALIFIED or p in (PROV.generatedAtTime, PROV.invalidatedAtTime, PROV.startedAtTime, PROV.endedAtTime):
            continue
        elif p == RDFS.label:
            attributes.append(("prov:label", _value(names, o)))
        else:
            attributes.append((names.of(p), _value(names, o)))
    return Element(kind, names.of(s), start, end, tuple(sorted(attributes)))


def _qualified(names: _Names, s: URIRef, p: URIRef, node: object, properties: list[tuple[Any, Any]]) -> Relation:
    kind, fills = _QUALIFIED[p]
    args: list[str | None] = [names.of(s)]
    found = dict.fromkeys(fills)
    attributes: list[tuple[str, Value]] = []
    for q, o in properties:
        if q in found:
            found[q] = _time(o) if q == PROV.atTime else names.of(o)
        elif q == RDF.type:
            if o not in _INFLUENCE_CLASSES:
                attributes.append(("prov:type", _value(names, o)))
        elif q == PROV.hadRole:
            attributes.append(("prov:role", _value(names, o)))
        elif q == RDFS.label:
            attributes.append(("prov:label", _value(names, o)))
        else:
            attributes.append((names.of(q), _value(names, o)))
    if p == PROV.qualifiedRevision:
        attributes.append(_revision(names))
    args += [found[f] for f in fills]
    return Relation(kind, _padded(kind, args), names.of(node), tuple(sorted(attributes)))


def _padded(kind: str, args: Iterable[str | None]) -> tuple[str | None, ...]:
    given = list(args)
    return tuple(given + [None] * (len(ARGUMENTS[kind]) - len(given)))


def _revision(names: _Names) -> tuple[str, Value]:
    names.of(PROV.Revision)
    return _REVISION[0], Value(_REVISION[1], qualified_name=True)


def _as_revision(names: _Names, r: Relation) -> Relation:
    revision = _revision(names)
    if revision in r.attributes:
        return r
    return Relation(r.kind, r.args, r.id, tuple(sorted((*r.attributes, revision))))


def _timed(names: _Names, relations: dict[tuple[str, str, str], list[Relation]], times: dict[tuple[URIRef, URIRef], list[str]],
           prop: URIRef, kind: str) -> None:  # fmt: skip
    """An entity's generation (or invalidation) time, on the relations that generated it
    without one, or as a relation of its own when no activity is known."""
    keys: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # this kind's relations by their first argument
    for key in relations:
        if key[0] == kind:
            keys[key[1]].append(key)
    for (s, p), at in sorted(times.items()):
        if p != prop:
            continue
        entity = names.of(s)
        mine = [(key, r) for key in keys.get(entity, ()) for r in relations[key]]
        for time in sorted(set(at)):
            if any(r.args[2] == time for _, r in mine):
                continue
            untimed = [(key, r) for key, r in mine if r.args[2] is None]
            if not untimed:
                relations[(kind, entity, "")].append(Relation(kind, (entity, None, time), None, ()))
                continue
            for key, r in untimed:
                relations[key] = [Relation(x.kind, (*x.args[:2], time), x.id, x.attributes) if x is r else x for x in relations[key]]


# ---------------------------------------------------------------------- PROV-N


def provn(doc: Document) -> str:
    """The document in PROV-N (W3C), as ProvToolbox reads it."""
    lines = ["document"]
    lines += [f"  prefix {p} <{ns}>" for p, ns in doc.prefixes]
    lines.append("")
    lines += _provn_statements(doc, "  ")
    for name, bundle in doc.bundles:
        lines += ["", f"  bundle {name}", *_provn_statements(bundle, "    "), "  endBundle"]
    lines.append("endDocument")
    return "\n".join(lines) + "\n"


def _provn_statements(doc: Document, indent: str) -> list[str]:
    lines = []
    for e in doc.elements:
        args = [e.id]
        if e.kind == "activity":
            args += [e.start or "-", e.end or "-"]
        lines.append(f"{indent}{e.kind}({', '.join(args)}{_provn_attributes(e.attributes)})")
    for r in doc.relations:
        head = f"{r.id}; " if r.id else ""
        args = [a or "-" for a in r.args]
        lines.append(f"{indent}{r.kind}({head}{', '.join(args)}{_provn_attributes(r.attributes)})")
    return lines


def _provn_attributes(attributes: Attributes) -> str:
    if not attributes:
        return ""
    return ", [" + ", ".join(f"{k}={_provn_value(v)}" for k, v in attributes) + "]"


def _provn_value(v: Value) -> str:
    if v.qualified_name:
        return f"'{v.text}'"
    text = '"' + v.text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'
    return f"{text} %% {v.datatype}" if v.datatype and v.datatype != "xsd:string" else text


# ---------------------------------------------------------------------- PROV-JSON


def provjson(doc: Document) -> str:
    """The document in PROV-JSON (W3C member submission), keys sorted; a relation without an
    identifier of its own gets a blank one made from what it says."""
    out: dict[str, dict[str, object]] = {"prefix": dict(doc.prefixes)}
    _json_statements(doc, out)
    for name, bundle in doc.bundles:
        out.setdefault("bundle", {})[name] = _json_statements(bundle, {})
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _json_statements(doc: Document, out: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    for e in doc.elements:
        body: dict[str, object] = {}
        if e.start:
            body["prov:startTime"] = e.start
        if e.end:
            body["prov:endTime"] = e.end
        body.update(_json_attributes(e.attributes))
        out.setdefault(e.kind, {})[e.id] = body
    for r in doc.relations:
        body = {f"prov:{name}": arg for name, arg in zip(ARGUMENTS[r.kind], r.args, strict=True) if arg is not None}
        body.update(_json_attributes(r.attributes))
        out.setdefault(r.kind, {})[r.id or _blank(r)] = body
    return out


def _blank(r: Relation) -> str:
    return "_:" + hashlib.sha256(repr((r.kind, r.args, r.attributes)).encode("utf-8")).hexdigest()[:16]


def _json_attributes(attributes: Attributes) -> dict[str, object]:
    grouped: dict[str, list[object]] = defaultdict(list)
    for k, v in attributes:
        if v.qualified_name:
            grouped[k].append({"$": v.text, "type": "prov:QUALIFIED_NAME"})
        elif v.datatype and v.datatype != "xsd:string":
            grouped[k].append({"$": v.text, "type": v.datatype})
        else:
            grouped[k].append(v.text)
    return {k: vs[0] if len(vs) == 1 else vs for k, vs in grouped.items()}


# ---------------------------------------------------------------------- PROV-XML

_XSI = "http://www.w3.org/2001/XMLSchema-instance"
#: Where the PROV-XML schema places each PROV attribute among an element's or relation's children.
_XML_ORDER = {"prov:label": 0, "prov:location": 1, "prov:role": 2, "prov:type": 3, "prov:value": 4}


def provxml(doc: Document) -> str:
    """The document in PROV-XML (W3C note), valid against its schema."""
    # XML names XML Schema's types in its own namespace, which has no "#"
    xmlns = [("prov", str(PROV)), ("xsd", "http://www.w3.org/2001/XMLSchema"), ("xsi", _XSI), *doc.prefixes]
    namespaces = " ".join(f"xmlns:{p}={quoteattr(ns)}" for p, ns in xmlns)
    lines = ["<?xml version='1.0' encoding='UTF-8'?>", f"<prov:document {namespaces}>", *_xml_statements(doc, "  ")]
    for name, bundle in doc.bundles:
        lines += [f"  <prov:bundleContent prov:id={quoteattr(name)}>", *_xml_statements(bundle, "    "), "  </prov:bundleContent>"]
    lines.append("</prov:document>")
    return "\n".join(lines) + "\n"


def _xml_statements(doc: Document, indent: str) -> list[str]:
    lines = []
    for e in doc.elements:
        children = []
        if e.start:
            children.append(f"<prov:startTime>{escape(e.start)}</prov:startTime>")
        if e.end:
            children.append(f"<prov:endTime>{escape(e.end)}</prov:endTime>")
        children += _xml_attributes(e.attributes)
        lines.append(_xml_record(e.kind, f" prov:id={quoteattr(e.id)}", children, indent))
    for r in doc.relations:
        children = []
        for name, arg in zip(ARGUMENTS[r.kind], r.args, strict=True):
            if arg is None:
                continue
            if name == "time":
                children.append(f"<prov:time>{escape(arg)}</prov:time>")
            else:
                children.append(f"<prov:{name} prov:ref={quoteattr(arg)}/>")
        children += _xml_attributes(r.attributes)
        lines.append(_xml_record(r.kind, f" prov:id={quoteattr(r.id)}" if r.id else "", children, indent))
    return lines


def _xml_record(kind: str, identity: str, children: list[str], indent: str) -> str:
    if not children:
        return f"{indent}<prov:{kind}{identity}/>"
    return f"{indent}<prov:{kind}{identity}>\n" + "".join(f"{indent}  {c}\n" for c in children) + f"{indent}</prov:{kind}>"


def _xml_attributes(attributes: Attributes) -> list[str]:
    ordered = sorted(attributes, key=lambda kv: (_XML_ORDER.get(kv[0], len(_XML_ORDER)), kv))
    out = []
    for k, v in ordered:
        if v.qualified_name:
            typed = ' xsi:type="xsd:QName"'
        elif v.datatype and v.datatype != "xsd:string":
            typed = f" xsi:type={quoteattr(v.datatype)}"
        else:
            typed = ""
        out.append(f"<{k}{typed}>{escape(v.text)}</{k}>")
    return out
