"""The auditor's workbench: server-rendered pages over the library, beside the API.

Each page makes the library call the API route (or the command) of the same question
makes — ``reopen.history``, ``closure.evidence``, ``impact.source_invalidated``,
``lifecycle.review_queue``, ``store.resolve_id`` — and shows its answer to a person: every
id as a link whose text says what the record is (a proposition's statement, a source's
key, a verdict's label), ids themselves cut to 12 hex digits.

A browser signs in once: the login form posts a token's secret, kept in an HttpOnly,
SameSite=Strict cookie and checked on every page as the API checks its header. Every
form carries a per-session CSRF token (an HMAC of the session cookie under a key the app
draws at start), checked on every POST. Under ``--no-auth`` no sign-in is needed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import impact
from gaf import closure as closing
from gaf import labels as labelling
from gaf import lifecycle
from gaf import reopen as reopening
from gaf.errors import GafError, NotAuthenticated, UnknownReference
from gaf.lineage import run_subject
from gaf.records import Claim, limits
from gaf.records.registry import RECORD_TYPES
from gaf.store import GafStore, Questions
from gaf.web.app import status_of
from gaf.web.html import Markup, dl, esc, form, join, link, page, path, short, table, tag
from gaf.web.tokens import Role, require
from impact.picture import MAX_EXPANDED, PER_KIND, anchor, picture, svg
from impact.report import decisions, run_paths

log = logging.getLogger("gaf.web")

#: Where the pages' one stylesheet is, shipped with the package.
STATIC = Path(__file__).parent / "static"
#: The cookies: the token's secret (set by signing in) and the session the CSRF token is bound to.
TOKEN_COOKIE, SESSION_COOKIE = "gaf_token", "gaf_session"
#: A sign-in form is small; a larger body is refused before it is parsed.
MAX_FORM_BYTES = 8192
#: Rows a page's table shows before it says how many more there are.
ROWS = 500
#: Every relationship a record can be pointed at through: a record page lists what points at it.
RELS = tuple(sorted({rel for cls in RECORD_TYPES.values() for rel, _ in cls.REFS.values()}))


class Labels(labelling.Labels):
    """Records named in words (``gaf.labels.Labels``), as links to their pages."""

    def link(self, record_id: str) -> Markup:
        """A link to a record's page (a closure's to the closure page), its text the record's label (the id
        is in the link itself: a title repeating it weighed a third of a large impact page)."""
        target = path("closures", record_id) if record_id.startswith("closure:") else path("records", record_id)
        return link(target, self.text(record_id))

    def links(self, ids: Any) -> Markup:
        ids = [ids] if isinstance(ids, str) else list(ids or [])
        return join((self.link(i) for i in ids), ", ") if ids else Markup("—")


# ---------------------------------------------------------------------- the pages: (title, body) from one library question


def search_page(store: GafStore, q: str) -> tuple[str, Markup]:
    """Search: a subject's closures (``reopen.history``), the claims that say what was typed
    (``labels.claims_saying``), or the record an id prefix, a key or NAME@VERSION names."""
    if not q:
        return "Search", tag("p", "Find a subject (rent:lease-17/2026-07), a claim by what it says (paid(tx-4471), or one of "
                                  "its words: tx-4471), an id or a prefix of one (closure:d12021c1b0ba), a source or agent key "
                                  "(bank-ledger) or a policy as NAME@VERSION.")  # fmt: skip
    found: list[Markup] = []
    labels = Labels(store)
    closures = reopening.history(store, q)
    if closures:
        labels.load([c["closure"] for c in closures])
        found.append(tag("h2", f"Closures about {q}"))
        found.append(table(("closed", "closure", "verdict", "superseded by"),
                           [(c["closed_at"][:10], labels.link(c["closure"]), c["label"] or "—", labels.links(c["superseded_by"]))
                            for c in closures]))  # fmt: skip
    claims = labelling.claims_saying(store, q)
    if claims:
        labels.load(c.source for c in claims[:ROWS])
        found.append(tag("h2", f"Claims that say {q}"))
        found.append(table(("claim", "says", "source", ""),
                           [(labels.link(c.id), tag("ul", *(tag("li", labelling.said(st)) for st in c.statements)), labels.link(c.source),
                             link(path("impact", "claim", c.id), "what rests on it")) for c in claims[:ROWS]],
                           caption=_more(len(claims))))  # fmt: skip
    try:
        record_id = store.resolve_id(q)
    except GafError as exc:
        record_id, why = None, exc.what
    if record_id is not None and store.has(record_id):
        labels.load([record_id])
        found.append(tag("h2", "Record"))
        found.append(tag("p", labels.link(record_id), " ", tag("code", short(record_id)), *[Markup(" · ") + e for e in _impact_links(record_id)]))
    if not found:
        return "Search", tag("p", f"Nothing found for {q!r}: no closure has that subject, no claim says it, and "
                                  f"{why if record_id is None else 'no record has that id'}.")  # fmt: skip
    return f"Search: {q}", join(found)


def _impact_links(record_id: str) -> list[Markup]:
    """The impact page of a record, where it has one: a source's, a claim's, a policy version's."""
    kind = record_id.split(":", 1)[0]
    if kind not in IMPACT_OF:
        return []
    return [link(path("impact", IMPACT_OF[kind], record_id), f"what rests on this {IMPACT_WORD[kind]} (impact)")]


def history_page(store: GafStore, subject: str) -> tuple[str, Markup]:
    """A subject's closures, oldest first, with what each supersedes and what supersedes it (``gaf history``)."""
    rows = reopening.history(store, subject)
    labels = Labels(store)
    labels.load([i for c in rows for i in (c["closure"], c["projection"], *c["supersedes"], *c["superseded_by"])])
    body = table(("closed", "as of", "closure", "verdict", "policy", "supersedes", "superseded by"),
                 [(c["closed_at"][:19], c["as_of"][:19], labels.link(c["closure"]), c["label"] or "—", labels.link(c["projection"]),
                   labels.links(c["supersedes"]), labels.links(c["superseded_by"])) for c in rows])  # fmt: skip
    return f"History of {subject}", body if rows else tag("p", f"No closure is about {subject}.")


def queue_page(store: GafStore) -> tuple[str, Markup]:
    """The review queue: policy exceptions awaiting a decision (``gaf policy queue``), and policy
    candidates awaiting ratification (``lifecycle.awaiting_ratification``)."""
    queue = lifecycle.review_queue(store)
    candidates = lifecycle.awaiting_ratification(store)
    labels = Labels(store)
    labels.load([i for e in queue for i in (e.id, e.policy, e.closure)] + [i for c in candidates for i in (c.proposed_by, *c.cases)])
    body: list[Any] = [tag("h2", "Policy exceptions awaiting a decision")]
    body.append(table(("raised", "subject", "closure", "policy", "reason", "exception"),
                      [(f"{e.raised_at:%Y-%m-%d}", link(path("history") + "?subject=" + quote(e.subject), e.subject),
                        labels.links(e.closure), labels.link(e.policy), e.reason, labels.link(e.id)) for e in queue])
                if queue else tag("p", "None."))  # fmt: skip
    body.append(tag("h2", "Policy candidates awaiting ratification"))
    body.append(table(("proposed", "name", "rule", "from the cases", "proposed by", "candidate"),
                      [(f"{c.proposed_at:%Y-%m-%d}", c.name, c.text, labels.links(c.cases), labels.link(c.proposed_by), labels.link(c.id))
                       for c in candidates])
                if candidates else tag("p", "None."))  # fmt: skip
    return "Review queue", join(body)


def record_page(store: GafStore, text: str) -> tuple[str, Markup]:
    """Any record: its fields, every record it names as a link, and what points at it (``gaf show``)."""
    record_id = store.resolve_id(text)
    record: Any = store.get(record_id)
    if record is None:
        raise UnknownReference(f"no record {record_id}", where="id")
    incoming = store.dependents([record_id], RELS)
    labels = Labels(store, {record_id: record})
    labels.load([record_id, *_refs(record), *(d for _, d, _ in incoming[:ROWS])])
    fields: list[tuple[Any, Any]] = [("id", tag("code", record_id))]
    for name, value in record.to_json().items():
        if name in ("kind", "id"):
            continue
        if name in record.REFS:
            shown: Any = labels.links(value)
        elif name == "statements":
            shown = tag("ul", *(tag("li", labelling.said(s)) for s in record.statements))
        elif isinstance(value, dict | list):
            shown = tag("code", json.dumps(value, ensure_ascii=False)) if value else "—"
        else:
            shown = value
        fields.append((name.replace("_", " "), shown))
    more = [link(path("closures", record_id), "the closure page: verdict and argument")] if record.KIND == "closure" else []
    more += _impact_links(record_id)
    if isinstance(record, Claim) and record.scope == "openlineage":  # a pipeline's report: the runs it reports on
        runs = sorted({st.subject for st in record.statements if st.predicate == "of_job" and st.subject.startswith("run:")})
        more += [link(path("impact", "run", run), f"what rests on {run} (impact)") for run in runs]
    if record.KIND in ("closure", "action", "policy_exception"):
        more.append(link(path("history") + "?subject=" + quote(record.subject), f"history of {record.subject}"))
    body = [tag("p", *more) if more else "", dl(fields), tag("h2", "Pointed at by")]
    if incoming:
        rows = [(rel.lower().replace("_", " "), labels.link(dependent)) for _, dependent, rel in incoming[:ROWS]]
        body.append(table(("as", "record"), rows, caption=_more(len(incoming))))
    else:
        body.append(tag("p", "Nothing points at this record."))
    return f"{record.KIND.replace('_', ' ')}: {labels.text(record_id)}", join(body)


def _refs(record: Any) -> list[str]:
    out: list[str] = []
    for name in record.REFS:
        value = getattr(record, name)
        out += [value] if isinstance(value, str) else list(value or ())
    return out


def _more(total: int) -> str | None:
    return f"the first {ROWS} of {total}" if total > ROWS else None


#: How each rule's activation reads.
ACTIVATION = {"true": "holds", "false": "does not hold", "unknown": "is unknown: its premises are neither established nor ruled out"}
#: How each role reads, in the argument.
ROLE = {"warrant": "Warrant", "rebuttal": "Rebuttal", "defeater": "Defeater"}


def closure_page(store: GafStore, text: str) -> tuple[str, Markup]:
    """A closure: its question, versions, verdict with interval, and the trace as an argument,
    each premise followed down to the accepted fact, its proposition, the claims and their
    sources and the evaluation that admitted them (``closure.evidence``)."""
    closure_id = store.resolve_id(text, ("closure",))
    evidence = closing.evidence(store, closure_id)
    verdict = reopening.verdict_of(store, closure_id)
    labels = Labels(store)
    labels.load(evidence.ids | ({verdict.id} if verdict else set()))
    c = labels.records[closure_id]
    later = store.superseded_by(closure_id)
    labels.load([*later, *c.supersedes])
    facts = {labels.records[f].proposition: f for f in labels.records[c.gaf].facts}
    body: list[Any] = [dl([
        ("question", c.question), ("purpose", c.purpose),
        ("subject", link(path("history") + "?subject=" + quote(c.subject), c.subject)),
        ("as of", f"{c.as_of:%Y-%m-%d %H:%M}"), ("closed", f"{c.closed_at:%Y-%m-%d %H:%M}"),
        ("policy", labels.link(c.projection)), ("rules", labels.link(c.rules)),
        ("supersedes", labels.links(c.supersedes)), ("superseded by", labels.links(later)),
        ("id", tag("code", short(closure_id))),
    ])]  # fmt: skip
    if verdict is None:
        body.append(tag("p", "No verdict is stored for this closure."))
        return f"Closure of {c.subject}", join(body)
    body.append(tag("section", tag("h2", "Verdict"),
                    tag("p", tag("strong", verdict.label, class_=f"label {verdict.label}"),
                        f" — interval [{verdict.low:g}, {verdict.high:g}], strength {verdict.strength:g} ", labels.link(verdict.id)),
                    class_="verdict"))  # fmt: skip
    if later:
        body.append(tag("p", "This closure is superseded by ", labels.links(later), ".", class_="superseded"))
    trace = verdict.trace
    body.append(tag("h2", "Why: the argument"))
    for rule in trace.get("rules", []):
        premises = [tag("li", _ground(labels, facts, p, 0)) for p in rule.get("facts", [])]
        listed = {labels.text(p) for p in rule.get("facts", [])}
        premises += [tag("li", tag("span", u, class_="unknown"), " — unknown") for u in rule.get("unknown_premises", []) if u not in listed]
        body.append(tag("article",
                        tag("h3", f"{ROLE.get(rule['role'], rule['role'])} “{rule['name']}” {ACTIVATION.get(rule['activation'], rule['activation'])}"),
                        tag("p", tag("em", "Backing: "), rule.get("backing") or "—", class_="backing"),
                        tag("p", f"{rule.get('strength_class', '')}, qualifier {rule.get('qualifier')}, strength {rule.get('strength')}"
                                 + (f"; attacked by {', '.join(rule['attackers'])}" if rule.get("attackers") else "")),
                        tag("h4", "Premises"), tag("ul", *premises) if premises else tag("p", "none established"),
                        class_=f"rule {rule['role']}"))  # fmt: skip
    settle = trace.get("would_settle", [])
    if settle:
        body.append(tag("h2", "What would settle it"))
        for atom in settle:
            known = [f for p, f in facts.items() if _terms(atom) & {labels.records[p].subject, labels.records[p].object}]
            body.append(tag("article", tag("h3", atom),
                            tag("p", "What the closure knew about its terms:") if known else tag("p", "Nothing known about its terms."),
                            tag("ul", *(tag("li", _ground(labels, facts, f, 0)) for f in sorted(known, key=labels.text))),
                            class_="settle"))  # fmt: skip
    if c.excluded:
        body.append(tag("h2", "Claims the policy set aside"))
        rows = [(labels.link(labels.records[e].claim), labels.text(labels.records[e].proposition), labels.records[e].reason)
                for e in c.excluded if e in labels.records]  # fmt: skip
        body.append(table(("claim", "about", "why"), rows))
    return f"Closure of {c.subject}", join(body)


def _terms(atom: str) -> set[str]:
    """The terms of an atom as ``show`` writes it: ``allocated_to(payment:tx-4471, rent:lease-17/2026-07)``."""
    inside = re.search(r"\((.*)\)", atom)
    return {t.strip().strip('"') for t in inside.group(1).split(",")} if inside else set()


def _ground(labels: Labels, facts: dict[str, str], premise: str, depth: int) -> Markup:
    """A premise and what it stands on: the fact (or proposition), the evaluation or derivation
    that admitted it, the claims behind that and their sources, down to three levels."""
    record = labels.records.get(premise)
    fact_id = premise if premise.startswith("fact:") else facts.get(premise)
    head = labels.link(fact_id or premise)
    if record is not None and record.KIND == "proposition" and fact_id is None:
        return Markup(head + " — unknown: not established in this closure's GAF")
    fact = labels.records.get(fact_id) if fact_id else None
    why = labels.records.get(fact.justification) if fact is not None else None
    if why is None:
        return head
    if why.KIND == "evaluation":
        claims = [tag("li", labels.link(cl), " — ", tag("span", "source ", labels.link(labels.records[cl].source), class_="source")
                      if cl in labels.records else "") for cl in why.supporting]  # fmt: skip
        refuted = [tag("li", "refuted by ", labels.link(cl)) for cl in why.refuting]
        return Markup(head + tag("ul", tag("li", labels.link(why.id), f" ({why.reason})", tag("ul", *claims, *refuted))))
    if why.KIND == "derivation" and depth < 3:
        used = [tag("li", _ground(labels, facts, f, depth + 1)) for f in why.premises]
        return Markup(head + tag("ul", tag("li", labels.link(why.id), tag("ul", *used))))
    return Markup(head + tag("ul", tag("li", labels.link(why.id))))


#: The impact pages: a record kind → the path word of its page, and the word a link says.
IMPACT_OF = {"source": "source", "claim": "claim", "projection": "policy", "rules": "policy", "run": "run"}
IMPACT_WORD = {"source": "source", "claim": "claim", "projection": "policy version", "rules": "rules version"}
#: Records a count's list names on a page (the report's JSON, ``gaf impact … --json``, has them all).
LISTED = 100


def impact_source_page(store: GafStore, text: str, expand: str, seconds: float) -> tuple[str, Markup]:
    """What rests on a source (``impact.source_invalidated``)."""
    source_id = store.resolve_id(text, ("source",))
    return _impact(store, source_id, impact.source_invalidated, expand, seconds, "were invalid")


def impact_claim_page(store: GafStore, text: str, expand: str, seconds: float) -> tuple[str, Markup]:
    """What rests on one claim (``impact.claim_retracted``)."""
    claim_id = store.resolve_id(text, ("claim",))
    return _impact(store, claim_id, impact.claim_retracted, expand, seconds, "were retracted")


def impact_policy_page(store: GafStore, text: str, expand: str, seconds: float) -> tuple[str, Markup]:
    """Every closure decided under a policy or rules version, and what rests on them
    (``impact.policy_changed``, retroactively: every closure under it)."""
    policy_id = store.resolve_id(text, ("projection", "rules"))
    return _impact(store, policy_id, impact.policy_changed, expand, seconds, "changed")


def impact_run_page(store: GafStore, text: str, expand: str, seconds: float) -> tuple[str, Markup]:
    """What rests on a pipeline run found wrong (``impact.run_invalidated``): the runs downstream
    of what it wrote, and each decision with the dataset path that reaches it."""
    return _impact(store, run_subject(text), impact.run_invalidated, expand, seconds, "was wrong", record=False)


def _impact(store: GafStore, trigger: str, question: Callable[..., impact.ImpactReport], expand: str, seconds: float,
            change: str, record: bool = True) -> tuple[str, Markup]:  # fmt: skip
    """An impact page: the picture (``impact.picture``, the one ``gaf impact --html`` draws), each
    count's records behind a ``<details>``, the totals, and every decision reached, by subject.
    ``record``: the trigger is a stored record (a run is not: it is named by its reports)."""
    with impact.paused_collection():
        return store.snapshot(lambda q: _impact_in(q, trigger, question, expand, seconds, change, record))


def _impact_in(q: Questions, trigger: str, question: Callable[..., impact.ImpactReport], expand: str, seconds: float,
               change: str, record: bool) -> tuple[str, Markup]:  # fmt: skip
    # In one snapshot: the labels name the records the report read, as it read them (parsed once).
    started = time.perf_counter()
    report = question(q, trigger, limits=impact.Limits(seconds=seconds))
    computed = time.perf_counter() - started
    labels = Labels(q)
    expanded = [k for k in expand.split(",") if k]
    drawn = picture(report, per_kind=PER_KIND, expand=expanded)
    counted = [b for b in drawn.boxes if b.counted]
    paths = run_paths(report)
    labels.load([*([trigger] if record else []), *(b.key for b in drawn.boxes if not b.counted),
                 *(m for b in counted for m in b.members[:LISTED]), *(i for row in paths[:LISTED] for i in row[:2])])  # fmt: skip
    for box in drawn.boxes:
        box.label = box.label if box.counted else labels.text(box.key)
    grouped = decisions(report, labels)
    here = path("impact", IMPACT_OF[trigger.split(":", 1)[0]], trigger)
    named = labels.link(trigger) if record else tag("code", trigger)
    body: list[Any] = [tag("p", "If ", named, f" {change}, these records would need review.",
                           "" if report.complete else tag("strong", f" The walk stopped early ({', '.join(report.cut)}): the list is incomplete."))]  # fmt: skip
    body.append(tag("div", Markup(svg(drawn, lambda b: "#" + anchor(b) if b.counted else _page_of(b.key))), class_="picture"))
    for box in counted:
        more = len(box.members) - LISTED
        whole = box.kind in drawn.collapsed and drawn.collapsed[box.kind] <= MAX_EXPANDED
        body.append(tag("details",
                        tag("summary", f"{box.label} (column {box.layer + 1})"),
                        tag("p", link(here + "?expand=" + quote(",".join(sorted({*expanded, box.kind}))), f"draw every {box.kind} in the picture"))
                        if whole else "",
                        tag("ul", *(tag("li", labels.link(m)) for m in box.members[:LISTED])),
                        tag("p", f"and {more:,} more: the report's JSON lists them all (gaf impact … --json, or the API's impact route).")
                        if more > 0 else "",
                        id=anchor(box)))  # fmt: skip
    body.append(table(("kind", "invalidated", "weakened", "unconfirmed"),
                      [(k, t["invalidated"], t["weakened"], t["unconfirmed"]) for k, t in report.totals().items()], caption="Everything reached"))  # fmt: skip
    if paths:
        why = report.trigger
        body.append(tag("h2", "Decisions, by the dataset path from the run", id="paths"))
        body.append(tag("p", f"Why the run is wrong: {why['why']}. It wrote {', '.join(why['wrote']) or 'nothing'}; "
                             f"{len(why['claims']):,} claims of it and of the runs downstream count for nothing once it is recorded."))  # fmt: skip
        body.append(table(("decision", "rests on the claim", "path from the run"),
                          [(labels.link(c), labels.link(k), p) for c, k, p in paths[:LISTED]]))  # fmt: skip
    reached = sum(map(len, grouped.values()))
    body.append(tag("h2", f"Decisions, by subject ({reached:,})", id="decisions"))
    if not grouped:
        body.append(tag("p", "No closure, verdict or action rests on this."))
    for subject, rows in grouped.items():
        body.append(tag("section", tag("h3", link(path("history") + "?subject=" + quote(subject), subject)),
                        table(("kind", "decision", "status", "verdict if recomputed", "superseded by"),
                              [(d.kind, labels.link(d.id), d.status, d.recomputed, labels.links(d.superseded_by)) for d in rows]),
                        class_="subject"))  # fmt: skip
    shown = time.perf_counter() - started - computed
    body.append(tag("p", f"The report took {computed:.2f} s to compute, this page {shown:.2f} s more.", class_="timing",
                    data_report_seconds=f"{computed:.3f}", data_page_seconds=f"{shown:.3f}"))  # fmt: skip
    return f"Impact of {labels.text(trigger) if record else trigger}", join(body)


def _page_of(record_id: str) -> str:
    return path("closures", record_id) if record_id.startswith("closure:") else path("records", record_id)


# ---------------------------------------------------------------------- the door: sign-in, CSRF, one call at a time


class Pages:
    """The pages' side of the door: who is signed in, the session's CSRF token, and the store held for one page."""

    def __init__(self, app: Any):
        self.app = app  # gaf.web.app.App: the store, settings, tokens and clock the API serves with
        self.key = secrets.token_bytes(32)

    def csrf(self, session: str) -> str:
        return hmac.new(self.key, session.encode(), hashlib.sha256).hexdigest()

    def signed_in(self, request: Request) -> bool:
        """Whether the request's cookie holds a live token (any role reads); always under --no-auth."""
        if self.app.tokens is None:
            return True
        secret = request.cookies.get(TOKEN_COOKIE, "")
        if not secret:
            return False
        try:
            require(self.app.tokens.check(secret, self.app.clock()), Role.reader)
        except GafError:
            return False
        return True

    def session(self, request: Request) -> str:
        """The browser's session (its cookie), or a new one drawn once for this request."""
        if not hasattr(request.state, "session"):
            request.state.session = request.cookies.get(SESSION_COOKIE) or secrets.token_urlsafe(32)
        return str(request.state.session)

    def respond(self, request: Request, title: str, body: Any, status: int = 200) -> Response:
        """The page in the layout, with the session cookie set when the browser has none."""
        session = self.session(request)
        signed = self.app.tokens is not None and self.signed_in(request)
        response = HTMLResponse(page(title, body, signed_in=signed, csrf=self.csrf(session)), status_code=status,
                                headers={"cache-control": "no-store"})  # fmt: skip
        if request.cookies.get(SESSION_COOKIE) != session:
            _cookie(response, request, SESSION_COOKIE, session)
        return response

    def view(self, build: Callable[..., tuple[str, Markup]], *names: str) -> Callable[[Request], Any]:
        """A GET page: sign-in checked, then ``build(store, *params)`` run holding the store."""

        async def answer(request: Request) -> Response:
            if not self.signed_in(request):
                return RedirectResponse("/login?next=" + quote(request.url.path + ("?" + request.url.query if request.url.query else "")),
                                        status_code=303)  # fmt: skip
            values = [request.path_params.get(n) or request.query_params.get(n, "").strip() for n in names]
            try:
                title, body = await anyio.to_thread.run_sync(self._held, build, values)
            except GafError as exc:
                return self.respond(request, "Not found" if isinstance(exc, UnknownReference) else "Refused", _error(exc), _status(exc))
            except Exception:  # never a traceback on a page: it goes to the log
                log.exception("GET %s failed", request.url.path)
                return self.respond(request, "Server error", tag("p", "The server failed on this page; its log has the detail."), 500)
            return self.respond(request, title, body)

        return answer

    def _held(self, build: Callable[..., tuple[str, Markup]], values: list[str]) -> tuple[str, Markup]:
        settings = self.app.settings
        with self.app.held, limits(max_record_bytes=settings.max_record_bytes, max_input_bytes=settings.max_input_bytes):
            if build in IMPACT_PAGES:
                return build(self.app.store, *values, settings.api_seconds)
            return build(self.app.store, *values)

    async def login_form(self, request: Request) -> Response:
        return self.respond(request, "Sign in", _login_form(self, request, request.query_params.get("next", "/")))

    async def login(self, request: Request) -> Response:
        """Check the posted CSRF token and the token's secret; keep the secret in a cookie."""
        fields, refused = await self._posted(request)
        if refused is not None:
            return refused
        target = _local(fields.get("next", "/"))
        if self.app.tokens is None:
            return RedirectResponse(target, status_code=303)
        try:
            require(self.app.tokens.check(fields.get("token", "").strip(), self.app.clock()), Role.reader)
        except GafError as exc:
            return self.respond(request, "Sign in", join([_error(exc), _login_form(self, request, target)]), 401)
        response = RedirectResponse(target, status_code=303)
        _cookie(response, request, TOKEN_COOKIE, fields["token"].strip())
        return response

    async def logout(self, request: Request) -> Response:
        _, refused = await self._posted(request)
        if refused is not None:
            return refused
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(TOKEN_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def _posted(self, request: Request) -> tuple[dict[str, str], Response | None]:
        """A posted form, read under its limit, and refused (403) unless its CSRF token is the session's."""
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_FORM_BYTES:
                return {}, self.respond(request, "Refused", tag("p", f"A form of more than {MAX_FORM_BYTES} bytes is refused."), 413)
        fields = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        session = request.cookies.get(SESSION_COOKIE, "")
        if not session or not hmac.compare_digest(fields.get("csrf", ""), self.csrf(session)):
            return fields, self.respond(request, "Refused", tag("p", "This form is not from this session (its CSRF token does not match). "
                                                                     "Reload the page and send it again."), 403)  # fmt: skip
        return fields, None


#: The pages that compute an impact report, under the API's time limit.
IMPACT_PAGES = (impact_source_page, impact_claim_page, impact_policy_page, impact_run_page)


def _login_form(pages: Pages, request: Request, target: str) -> Markup:
    return join([
        tag("p", "Paste a token's secret (gaf token create --agent KEY --role reader prints one). It is kept in a cookie "
                 "this browser sends only to this server."),
        form("/login", pages.csrf(pages.session(request)),
             tag("label", "Token", for_="token"), Markup('<input id="token" name="token" type="password" autocomplete="off" required>'),
             Markup(f'<input type="hidden" name="next" value="{esc(_local(target))}">'), button="Sign in"),
    ])  # fmt: skip


def _local(target: str) -> str:
    """A redirect target on this server only: a path, never another host."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


def _cookie(response: Response, request: Request, name: str, value: str) -> None:
    response.set_cookie(name, value, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https")


def _error(exc: GafError) -> Markup:
    return tag("div", tag("p", exc.what), tag("p", "at ", exc.where) if exc.where else "", tag("p", exc.hint) if exc.hint else "",
               class_="error")  # fmt: skip


def _status(exc: GafError) -> int:
    return 401 if isinstance(exc, NotAuthenticated) else status_of(exc)


def routes(app: Any) -> list[Route | Mount]:
    """The pages, the sign-in and the static files, to mount beside the API."""
    pages = Pages(app)
    return [
        Route("/", pages.view(search_page, "q"), methods=["GET"]),
        Route("/closures/{id:path}", pages.view(closure_page, "id"), methods=["GET"]),
        Route("/records/{id:path}", pages.view(record_page, "id"), methods=["GET"]),
        Route("/history", pages.view(history_page, "subject"), methods=["GET"]),
        Route("/queue", pages.view(queue_page), methods=["GET"]),
        Route("/impact/source/{id:path}", pages.view(impact_source_page, "id", "expand"), methods=["GET"]),
        Route("/impact/claim/{id:path}", pages.view(impact_claim_page, "id", "expand"), methods=["GET"]),
        Route("/impact/policy/{id:path}", pages.view(impact_policy_page, "id", "expand"), methods=["GET"]),
        Route("/impact/run/{id:path}", pages.view(impact_run_page, "id", "expand"), methods=["GET"]),
        Route("/login", pages.login_form, methods=["GET"]),
        Route("/login", pages.login, methods=["POST"]),
        Route("/logout", pages.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
