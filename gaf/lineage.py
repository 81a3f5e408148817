"""OpenLineage events as claims: a pipeline's report of a run is a claim from its producer.

Data engineers already describe their pipelines in OpenLineage (Airflow, Spark, dbt,
Dagster); this module turns each event into the items ``gaf.ledger.ingest`` takes — one
claim, the source it comes from (the job) and the agent that observed it (the producer) —
so ``gaf ingest --format openlineage`` and ``POST /api/v1/lineage`` write through the one
checked, all-or-nothing ingest.

Validation is the ``openlineage-python`` package's own: its generated attrs classes
(``RunEvent``, ``JobEvent``, ``DatasetEvent``, ``Run``, ``Job``, ``Dataset``) are built from
the event, so their required fields and validators (eventTime ISO 8601, producer and
schemaURL URIs, runId a UUID, eventType one of the spec's) decide; the package ships no
JSON schema to check facets against, so facets are taken as the JSON objects they are.

Subjects (stable, documented in docs/openlineage.md): ``run:<runId>``,
``job:<namespace>/<name>``, ``dataset:<namespace>/<name>``; a name that is not a valid
key (blank ends, over 512 characters) is escaped deterministically by ``key_of``.

The mapping is one table, ``FACETS``: a facet's name and the function of its JSON that
lists its statements. A facet not in the table is kept whole, as its canonical JSON, in
one ``facet:<name>`` statement, so nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable, Iterator

import attr

from gaf.canonical import SAFE_INT
from gaf.errors import InvalidEvent, OverLimit, UnknownEventType, UnknownReference
from gaf.records import Claim
from gaf.settings import DEFAULT_LINEAGE_SKEW
from gaf.types import TEXT_CHARS, format_instant

if TYPE_CHECKING:
    from gaf.store import Questions

__all__ = ["FACETS", "InvalidEvent", "RestingOnRun", "UnknownEventType", "event_items", "key_of", "resting_on_run", "superseded_reports", "upstream_reports"]


#: Longest key gaf takes (gaf.types.Key); a longer name keeps its head and a digest of the whole.
KEY_CHARS = 512

def key_of(prefix: str, name: str) -> str:
    """``prefix:name`` as a gaf key: whitespace at either end is percent-escaped and a key over
    512 characters keeps its first 440 and the sha256 of the whole, so the same name always
    gives the same key and two names never meet."""
    text = f"{prefix}:{name}"
    if text != text.strip():
        head, body = len(text) - len(text.lstrip()), text.strip()
        tail = len(text) - head - len(body)
        text = "".join(f"%{ord(c):02X}" for c in text[:head]) + body + "".join(f"%{ord(c):02X}" for c in text[len(text) - tail:])
    if len(text) > KEY_CHARS:
        text = f"{text[:440]}…sha256:{hashlib.sha256(text.encode()).hexdigest()}"
    return text


def canonical(value: Any) -> str:
    """The JSON text of a value with sorted keys and no spaces: one event, one text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


Triple = tuple[str, str, Any]


def _schema(subject: str, facet: dict[str, Any]) -> list[Triple]:
    return [(subject, "has_field", f"{f.get('name')}: {f.get('type', '')}".strip().rstrip(":")) for f in facet.get("fields") or []]


def _exact(n: int) -> int | str:
    """A count as an exact number, never a float: past JSON's safe integers (2**53 - 1), which
    gaf's canonical JSON refuses, its digits as text."""
    return n if abs(n) <= SAFE_INT else str(n)


def _statistics(subject: str, facet: dict[str, Any]) -> list[Triple]:
    names = {"rowCount": "row_count", "size": "size_bytes", "fileCount": "file_count"}
    return [(subject, p, _exact(facet[k])) for k, p in names.items() if isinstance(facet.get(k), int) and not isinstance(facet.get(k), bool)]


def _assertions(subject: str, facet: dict[str, Any]) -> list[Triple]:
    out = []
    for a in facet.get("assertions") or []:
        column = f"/{a['column']}" if a.get("column") else ""
        out.append((f"assertion:{subject.removeprefix('dataset:')}{column}/{a.get('assertion')}", "success", bool(a.get("success"))))
    return out


def _column_lineage(subject: str, facet: dict[str, Any]) -> list[Triple]:
    out = []
    for column, spec in sorted((facet.get("fields") or {}).items()):
        for f in spec.get("inputFields") or []:
            out.append((key_of("", f"{subject}#{column}")[1:], "derived_from", key_of("dataset", f"{f.get('namespace')}/{f.get('name')}#{f.get('field')}")))
    return out


#: Facet name → the statements it makes about its dataset (subject ``dataset:ns/name``).
#: A new facet is one line here; a facet not named is kept whole (``facet:<name>``).
FACETS: dict[str, Callable[[str, dict[str, Any]], list[Triple]]] = {
    "schema": _schema,
    "outputStatistics": _statistics,
    "dataQualityAssertions": _assertions,
    "columnLineage": _column_lineage,
}


def _build(cls: type, data: Any, where: str, **children: Any) -> Any:
    """One of openlineage-python's classes built from the event's fields (its ``children``
    built before it), so the package's required fields and validators judge them; facets are
    passed as empty (gaf reads them as JSON) and must each be a JSON object."""
    if not isinstance(data, dict):
        raise InvalidEvent("must be a JSON object", where=where, hint="see https://openlineage.io/spec")
    fields = {f.name: f for f in attr.fields(cls) if f.init}
    for name, f in fields.items():
        if f.default is attr.NOTHING and name not in data:
            raise InvalidEvent(f"{name} is missing", where=f"{where}.{name}", hint="the OpenLineage spec requires it")
    for name in ("facets", "inputFacets", "outputFacets"):
        if name in fields and data.get(name) is not None:
            if not isinstance(data[name], dict) or not all(isinstance(v, dict) for v in data[name].values()):
                raise InvalidEvent("must be a JSON object of facets, each an object", where=f"{where}.{name}")
            children.setdefault(name, {})
    given = {k: v for k, v in data.items() if k in fields} | children
    for name, value in given.items():
        if name not in children and fields[name].type in (str, "str") and not isinstance(value, str):
            raise InvalidEvent(f"{name} must be a string", where=f"{where}.{name}", hint="see https://openlineage.io/spec")
        if name not in children and fields[name].validator is not None:
            try:
                fields[name].validator(None, fields[name], value)
            except (ValueError, TypeError) as exc:
                raise InvalidEvent(f"{name} is not valid: {exc}", where=f"{where}.{name}", hint="see https://openlineage.io/spec") from None
    try:
        return cls(**given)
    except (ValueError, TypeError) as exc:
        raise InvalidEvent(f"not valid: {exc}", where=where, hint="see https://openlineage.io/spec") from None


def _datasets(event: dict[str, Any], side: str, cls: type, where: str) -> list[Any]:
    items = event.get(side) or []
    if not isinstance(items, list):
        raise InvalidEvent("must be a list", where=f"{where}.{side}")
    return [_build(cls, d, f"{where}.{side}[{i}]") for i, d in enumerate(items)]


def _validate(event: dict[str, Any], where: str) -> str:
    """The event's kind (run, job or dataset), once openlineage-python's classes accept it
    (imported here: every gaf command imports this module, few read OpenLineage events, and
    the package takes a quarter of a second and 25 MB to import)."""
    from openlineage.client.generated import base as ol

    event_types = tuple(t.value for t in ol.EventType)  # the run states the spec names
    if "run" in event:
        kind = "run"
    elif "job" in event:
        kind = "job"
    elif "dataset" in event:
        kind = "dataset"
    else:
        raise UnknownEventType("not a RunEvent, JobEvent or DatasetEvent (no run, job or dataset)", where=where,
                               hint="an OpenLineage event names its run, job or dataset")  # fmt: skip
    if kind == "run" and event.get("eventType") is not None and event["eventType"] not in event_types:
        raise UnknownEventType(f"unknown eventType {event['eventType']!r}", where=f"{where}.eventType",
                               hint=f"one of {', '.join(event_types)}")  # fmt: skip
    if kind == "dataset":
        _build(ol.DatasetEvent, event, where, dataset=_build(ol.Dataset, event["dataset"], f"{where}.dataset"))
        return kind
    inputs = _datasets(event, "inputs", ol.InputDataset, where)
    outputs = _datasets(event, "outputs", ol.OutputDataset, where)
    job = _build(ol.Job, event["job"], f"{where}.job")
    if kind == "job":
        _build(ol.JobEvent, event, where, job=job, inputs=inputs, outputs=outputs)
    else:
        state = ol.EventType(event["eventType"]) if event.get("eventType") is not None else None
        _build(ol.RunEvent, event, where, run=_build(ol.Run, event["run"], f"{where}.run"), job=job,
               inputs=inputs, outputs=outputs, eventType=state)  # fmt: skip
    return kind


def _facets(owner: dict[str, Any], path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every facet of an object (facets, inputFacets, outputFacets), sorted by name, with its path."""
    for group in ("facets", "inputFacets", "outputFacets"):
        for name, facet in sorted((owner.get(group) or {}).items()):
            yield name, f"{path}.{group}.{name}", facet


def _triples(event: dict[str, Any], kind: str, where: str) -> list[Triple]:
    out: list[Triple] = []

    def facet_triples(subject: str, owner: dict[str, Any], path: str) -> None:
        for name, fpath, facet in _facets(owner, path):
            text = canonical(facet)
            if len(text) > TEXT_CHARS:
                raise OverLimit(f"facet {name} is {len(text):,} characters of JSON, over the limit of {TEXT_CHARS:,}",
                                where=fpath, hint="send a smaller facet")  # fmt: skip
            mapping = FACETS.get(name)
            if mapping is not None and isinstance(facet, dict):
                out.extend(mapping(subject, facet))
            else:
                out.append((subject, f"facet:{name}", text))

    def dataset(d: dict[str, Any], path: str) -> str:
        subject = key_of("dataset", f"{d['namespace']}/{d['name']}")
        facet_triples(subject, d, path)
        return subject

    if kind == "dataset":
        out.append((dataset(event["dataset"], f"{where}.dataset"), "described", True))
        return out
    job = key_of("job", f"{event['job']['namespace']}/{event['job']['name']}")
    subject = job
    if kind == "run":
        subject = key_of("run", event["run"]["runId"])
        out.append((subject, "of_job", job))
        if event.get("eventType"):
            out.append((subject, "state", event["eventType"]))
        facet_triples(subject, event["run"], f"{where}.run")
    else:
        out.append((job, "described", True))
    facet_triples(job, event["job"], f"{where}.job")
    for i, d in enumerate(event.get("inputs") or []):
        out.append((subject, "read", dataset(d, f"{where}.inputs[{i}]")))
    for i, d in enumerate(event.get("outputs") or []):
        out.append((subject, "wrote", dataset(d, f"{where}.outputs[{i}]")))
    return out


def triples(event: dict[str, Any], where: str = "event") -> list[Triple]:
    """The (subject, predicate, value) statements an event makes, in the table's order."""
    return _triples(event, _validate(event, where), where)


def _statement(subject: str, predicate: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str) and predicate in ("of_job", "read", "wrote", "derived_from"):
        return {"subject": subject, "predicate": predicate, "object": value}
    return {"subject": subject, "predicate": predicate, "value": value}


def event_items(event: dict[str, Any], *, at: datetime, where: str = "event", skew: float = DEFAULT_LINEAGE_SKEW) -> list[dict[str, Any]]:
    """The gaf items one OpenLineage event becomes: its producer (an agent), its job or
    dataset (the source) and one claim observed at its eventTime. ``at`` is the ingest's
    time (never a clock read here); an eventTime more than ``skew`` seconds after it is
    refused, as is anything the spec refuses — nothing is returned for a bad event."""
    kind = _validate(event, where)
    if not event.get("producer"):  # openlineage-python defaults it to "", the spec requires it
        raise InvalidEvent("producer is missing", where=f"{where}.producer", hint="the OpenLineage spec requires it")
    observed = datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00"))
    if observed.tzinfo is None:
        raise InvalidEvent("eventTime has no time zone", where=f"{where}.eventTime", hint="end it with Z or an offset")
    if observed > at + timedelta(seconds=skew):
        raise InvalidEvent(f"eventTime {event['eventTime']} is more than {skew:g} s after the ingest's time {at.isoformat()}",
                           where=f"{where}.eventTime", hint="fix the producer's clock, or raise GAF_LINEAGE_SKEW")  # fmt: skip
    statements = [_statement(*t) for t in _triples(event, kind, where)]
    producer = key_of("producer", event["producer"])
    source = key_of("job", f"{event['job']['namespace']}/{event['job']['name']}") if kind != "dataset" else \
        key_of("dataset", f"{event['dataset']['namespace']}/{event['dataset']['name']}")
    return [
        {"kind": "agent", "key": producer, "name": event["producer"][:TEXT_CHARS], "agent_type": "software"},
        {"kind": "source", "key": source, "name": source},
        {"kind": "claim", "source": source, "observer": producer, "observed_at": observed.isoformat().replace("+00:00", "Z"),
         "transformation": "api_export", "scope": "openlineage", "statements": statements},
    ]


# ---------------------------------------------------------------------- runs that fail or are corrected
# A run's reports are the claims with a statement ``of_job(run:<runId>, job)``. A run writes a
# dataset when a COMPLETE report of it lists the dataset as an output; a run reads the version
# of a dataset that the last run to write it before the reader began wrote. What rests on a
# run found wrong is its own reports, and the reports of every run that read what it wrote,
# and so on downstream: ``resting_on_run`` walks that, dataset by dataset.

#: The states after which a run that had completed is known wrong.
FAILED = ("FAIL", "ABORT")


@dataclass
class Run:
    """What the store holds of one run: its reports and what they say."""

    run: str
    job: str | None = None
    claims: list[Claim] = field(default_factory=list)
    read: set[str] = field(default_factory=set)
    #: dataset → when the run wrote it (its first COMPLETE report listing it)
    wrote: dict[str, str] = field(default_factory=dict)

    @property
    def began(self) -> str:
        """When its first report was observed."""
        return min(format_instant(c.observed_at) for c in self.claims)

    def states(self) -> list[tuple[str, str, str]]:
        """(observed at, state, claim id) of each report that names a state, in time order."""
        return sorted((format_instant(c.observed_at), str(st.value), c.id) for c in self.claims for st in c.statements
                      if st.subject == self.run and st.predicate == "state" and st.value is not None)  # fmt: skip


def runs_of(claims: Iterable[Claim]) -> dict[str, Run]:
    """The runs these claims report on, by run subject, each with all of these claims of it."""
    runs: dict[str, Run] = {}
    for c in sorted(claims, key=lambda c: c.id):
        for st in c.statements:
            if st.predicate == "of_job" and st.subject.startswith("run:"):
                run = runs.setdefault(st.subject, Run(st.subject))
                run.job = run.job or st.object
                if all(k.id != c.id for k in run.claims):
                    run.claims.append(c)
    for run in runs.values():
        for c in run.claims:
            said = {(st.predicate, st.value) for st in c.statements if st.subject == run.run}
            complete = ("state", "COMPLETE") in said
            for st in c.statements:
                if st.subject != run.run or st.object is None:
                    continue
                if st.predicate == "read":
                    run.read.add(st.object)
                elif st.predicate == "wrote" and complete:
                    at = format_instant(c.observed_at)
                    run.wrote[st.object] = min(run.wrote.get(st.object, at), at)
    return runs


@dataclass
class RestingOnRun:
    """What rests on a run found wrong: why it is wrong, with the claims that show it, what it
    wrote, and every claim voided with the path of runs and datasets that leads to it."""

    run: str
    job: str | None
    #: ``failed_after_complete``, ``rerun`` or ``declared`` (nothing in the store shows it wrong)
    why: str
    evidence: list[str]
    wrote: list[str]
    #: claim id → the path from the run to the run that made it: [run, dataset, run, …]
    claims: dict[str, list[str]]

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "job": self.job, "why": self.why, "evidence": self.evidence, "wrote": self.wrote,
                "claims": [{"claim": k, "path": self.claims[k]} for k in sorted(self.claims)]}  # fmt: skip


def run_subject(text: str) -> str:
    """``run:<runId>`` for a run id given with or without its prefix."""
    text = text.strip()
    return text if text.startswith("run:") else key_of("run", text)


def _reports(store: Questions, runs: Iterable[str]) -> dict[str, Run]:
    return runs_of(store.cone_claims(sorted(set(runs)), [], ["of_job"]))


def resting_on_run(store: Questions, run: str) -> RestingOnRun:
    """Every claim that rests on a run, found wrong: the run's own reports, and downstream the
    reports of each run that read a dataset in the version a voided run wrote (it began at or
    after that write and before the dataset's next write by another run), with the path."""
    subject = run_subject(run)
    found = _reports(store, [subject]).get(subject)
    if found is None:
        raise UnknownReference(f"no claim in {store.location} reports the run {subject}",
                               hint="a run is named by its OpenLineage runId (run:<runId>), as `gaf show` lists its claims")  # fmt: skip
    why, evidence = _why(store, found)
    paths: dict[str, list[str]] = {subject: [subject]}
    frontier = [found]
    while frontier:
        nxt: list[Run] = []
        for bad in frontier:
            for dataset, written in sorted(bad.wrote.items()):
                for reader in _readers_of_version(store, dataset, written, bad.run):
                    if reader.run not in paths:
                        paths[reader.run] = paths[bad.run] + [dataset, reader.run]
                        nxt.append(reader)
        frontier = sorted(nxt, key=lambda r: r.run)
    claims = {c.id: paths[r] for r, got in _reports(store, paths).items() if r in paths for c in got.claims}
    return RestingOnRun(subject, found.job, why, evidence, sorted(found.wrote), dict(sorted(claims.items())))


def _readers_of_version(store: Questions, dataset: str, written: str, writer: str) -> list[Run]:
    """The runs that read the version of ``dataset`` that ``writer`` wrote at ``written``."""
    writers = _reports(store, _runs_naming(store, "wrote", dataset))
    later = [w.wrote[dataset] for w in writers.values() if w.run != writer and dataset in w.wrote and w.wrote[dataset] > written]
    until = min(later, default=None)
    readers = _reports(store, _runs_naming(store, "read", dataset))
    return [r for k, r in sorted(readers.items())
            if k != writer and dataset in r.read and written <= r.began and (until is None or r.began < until)]  # fmt: skip


def _runs_naming(store: Questions, predicate: str, target: str) -> set[str]:
    """The runs some claim says ``predicate(run, target)`` of: a dataset read or written, a job."""
    return {st.subject for c in store.claims_naming(predicate, [target]) for st in c.statements
            if st.predicate == predicate and st.object == target and st.subject.startswith("run:")}  # fmt: skip


def _why(store: Questions, run: Run) -> tuple[str, list[str]]:
    """Why the store shows the run wrong, and the claims that show it: a FAIL or ABORT after a
    COMPLETE of it; else a later COMPLETE run of its job that wrote one of the datasets it wrote."""
    states = run.states()
    completed = [at for at, state, _ in states if state == "COMPLETE"]
    if completed:
        failed = sorted(cid for at, state, cid in states if state in FAILED and at >= min(completed))
        if failed:
            return "failed_after_complete", failed
    if run.job is not None and run.wrote:
        reruns = [r for k, r in _reports(store, _runs_naming(store, "of_job", run.job)).items()
                  if k != run.run and any(d in r.wrote and r.wrote[d] > w for d, w in run.wrote.items())]  # fmt: skip
        if reruns:
            return "rerun", sorted(c.id for r in reruns for c in r.claims
                                   if any(st.predicate == "state" and st.value == "COMPLETE" for st in c.statements))  # fmt: skip
    return "declared", []


def superseded_reports(store: Questions, claims: Iterable[Claim], until: str) -> set[str]:
    """Of these claims, the reports of runs found wrong by what their pipeline reported, recorded
    by ``until``: a run that a later run of the same job rewrote (its COMPLETE report wrote a
    dataset the run wrote, after it did), and a run reported FAIL or ABORT after it completed.
    What a policy with ``reruns: supersede`` leaves out of its cone (``gaf.projection.cone``)."""
    every_run = runs_of(claims)
    failed = _failed_after_complete(store, every_run, until)
    runs = {k: r for k, r in every_run.items() if r.job is not None and r.wrote and k not in failed}
    if not runs:
        return {c.id for k in failed for c in every_run[k].claims}
    jobs = sorted({r.job for r in runs.values() if r.job is not None})
    every = runs_of(c for c in store.claims_naming("of_job", jobs) if format_instant(c.recorded_at) <= until)
    out: set[str] = set()
    for run in runs.values():
        if any(u.run != run.run and u.job == run.job and any(d in u.wrote and u.wrote[d] > w for d, w in run.wrote.items())
               for u in every.values()):  # fmt: skip
            out.update(c.id for c in run.claims)
    return out | {c.id for k in failed for c in every_run[k].claims}


def _failed_after_complete(store: Questions, runs: dict[str, Run], until: str) -> set[str]:
    """Which of these runs every report of theirs recorded by ``until`` shows FAIL or ABORT at
    or after a COMPLETE (the reports read whole from the store: a FAIL states nothing a policy
    reads, so it is not among the claims of a cone)."""
    whole = _reports(store, runs)
    out = set()
    for k, run in whole.items():
        states = [(at, state) for at, state, cid in run.states() if format_instant(next(c for c in run.claims if c.id == cid).recorded_at) <= until]
        completed = [at for at, state in states if state == "COMPLETE"]
        if completed and any(state in FAILED and at >= min(completed) for at, state in states):
            out.add(k)
    return out


def upstream_reports(store: Questions, claims: Iterable[Claim]) -> list[Claim]:
    """Every report of the runs these claims report on and of the runs upstream of them: for
    each dataset a run read, the run that wrote the version it read (the last to complete a
    write of it before the reader began), and so on up to datasets no run wrote — what a walk
    from a verdict back through the pipeline to its raw datasets needs, by id."""
    first = runs_of(claims)
    if not first:
        return []
    seen = _reports(store, first)
    todo = sorted(seen.values(), key=lambda r: r.run)
    while todo:
        run = todo.pop()
        for dataset in sorted(run.read):
            writers = _reports(store, _runs_naming(store, "wrote", dataset))
            before = [(w.wrote[dataset], k) for k, w in writers.items() if k != run.run and dataset in w.wrote and w.wrote[dataset] <= run.began]
            if before and (k := max(before)[1]) not in seen:
                seen[k] = writers[k]
                todo.append(writers[k])
    found = {c.id: c for r in seen.values() for c in r.claims}
    return [found[k] for k in sorted(found)]
