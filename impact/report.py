"""Impact reports for people: Markdown, and a self-contained HTML page with a picture.

The picture is ``impact.picture``'s layered drawing, inline SVG, so the page needs no
network and no JavaScript; the workbench's impact page draws the same picture. Every
decision the report reaches is listed by subject, however many there are. A truncated
report says so in its first line.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from gaf.canonical import short_ids
from gaf.labels import Labels, short
from gaf.store import GafStore
from impact.analysis import ImpactReport
from impact.picture import DECISIONS, PER_KIND, anchor, picture, svg, trigger_ids



def headline(report: ImpactReport) -> str:
    """The first line of every rendering: complete or not, and how much is affected."""
    t = report.totals()
    inval = sum(v["invalidated"] for v in t.values())
    weak = sum(v["weakened"] for v in t.values())
    state = "COMPLETE" if report.complete else "INCOMPLETE (" + "; ".join(report.cut) + ")"
    line = f"Impact of {report.trigger['kind']} {report.trigger['id']}: {state} — {inval} invalidated, {weak} weakened"
    c = report.confirmation
    if c is not None:
        line += (f"; {c['recomputed']} of {c['reached']} reached closures recomputed: {c.get('verdict_changed', 0)} verdict(s) change, "
                 f"{c.get('basis_changed', 0)} basis changed, {c.get('needs_review', 0)} need review, {c['unaffected']} unaffected")  # fmt: skip
    return line


def closure_rows(report: ImpactReport) -> list[list[str]]:
    """One row per moved closure: id, subject, outcome, verdict before → after, facts lost/weakened/gained."""
    rows = []
    for c in report.closures:
        verdict = f"{c.before['label'] if c.before else '?'} → {c.after['label'] if c.after else '?'}"
        lost = sum(f.status == "invalidated" for f in c.facts)
        weak = sum(f.status == "weakened" for f in c.facts)
        rows.append([c.closure, c.subject, c.outcome, verdict, f"-{lost} ~{weak} +{len(c.gained)}"])
    return rows


def run_paths(report: ImpactReport) -> list[list[str]]:
    """For the impact of a pipeline run: one row per closure reached and voided claim it rests on
    (through the report's edges), with the path of runs and datasets from the run to the run
    that made the claim; by closure, then path."""
    if report.trigger.get("kind") != "run_invalidated":
        return []
    paths = {c["claim"]: c["path"] for c in report.trigger.get("claims", [])}
    beneath: dict[str, set[str]] = {}
    for dependent, _, dependency in report.edges:
        beneath.setdefault(dependent, set()).add(dependency)
    rows = []
    for closure in sorted(a.id for a in report.affected if a.kind == "closure"):
        seen, todo = {closure}, [closure]
        while todo:
            for d in beneath.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        found = sorted((paths[k], k) for k in seen & paths.keys())
        rows += [[closure, k, " → ".join(p)] for p, k in found]
    return rows


def to_markdown(report: ImpactReport) -> str:
    """The report as Markdown: headline, totals, actions to compensate, every record with its path."""
    lines = [f"# {headline(report)}", ""]
    if report.as_of:
        lines += [f"As of {report.as_of}.", ""]
    lines += [f"> Note: {n}" for n in report.notes] + ([""] if report.notes else [])
    lines += ["| kind | invalidated | weakened |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['invalidated']} | {v['weakened']} |" for k, v in report.totals().items()]
    if report.to_compensate:
        lines += ["", "## Executed actions that need cancellation or compensation", ""]
        lines += [f"- `{a}`" for a in report.to_compensate]
    if report.closures:
        lines += ["", "## Closures, recomputed", "", "| closure | subject | outcome | verdict | facts lost ~weakened +gained |",
                  "|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| `{r[0]}` | {r[1]} | {r[2]} | {r[3]} | {r[4]} |" for r in closure_rows(report)]
    if report.to_review:
        lines += ["", "## Executed actions whose basis changed (verdict holds): review", ""]
        lines += [f"- `{a}`" for a in report.to_review]
    lines += ["", "## Affected records", "", "| record | status | reason | path from the trigger |", "|---|---|---|---|"]
    shown = _prefixes(report)
    for a in report.affected:
        path = " → ".join(f"`{shown[p]}`" for p in a.path)
        lines.append(f"| `{a.id}` | {a.status} | {a.reason} | {path} |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Decision:
    """A closure, verdict or action a report reaches, for the list by subject."""

    id: str
    kind: str
    status: str
    #: the verdict a recomputation gives, before → after ("—" when not recomputed or unmoved)
    recomputed: str
    #: the closures that superseded it (a closure's; empty for the others and for standing ones)
    superseded_by: tuple[str, ...]


def decisions(report: ImpactReport, labels: Labels) -> dict[str, list[Decision]]:
    """Every closure, verdict and action the report reaches, grouped by the subject it is
    about (its records loaded into ``labels``), subjects and rows sorted: the list that shows
    every decision however large the report."""
    reached = [a for a in report.affected if a.kind in DECISIONS]
    labels.load(a.id for a in reached)
    later: dict[str, list[str]] = defaultdict(list)
    for older, newer, _ in labels.store.dependents([a.id for a in reached if a.kind == "closure"], ("SUPERSEDES",)):
        later[older].append(newer)
    labels.load(i for ids in later.values() for i in ids)
    moved = {c.closure: c for c in report.closures}
    groups: dict[str, list[Decision]] = defaultdict(list)
    for a in reached:
        record = labels.records.get(a.id)
        closure = a.id if a.kind == "closure" else getattr(record, "closure", None) if a.kind == "verdict" else None
        change = moved.get(closure or "")
        recomputed = f"{change.before['label']} → {change.after['label']}" if change and change.before and change.after else "—"
        decision = Decision(a.id, a.kind, a.status, recomputed, tuple(sorted(later.get(a.id, ()))))
        groups[labels.subject(a.id) or "—"].append(decision)
    return {subject: sorted(rows, key=lambda d: (DECISIONS.index(d.kind), d.id)) for subject, rows in sorted(groups.items())}


def to_html(report: ImpactReport, store: GafStore | None = None, *, per_kind: int = PER_KIND) -> str:
    """A self-contained HTML page: headline, the picture (``impact.picture``), every count's
    records behind a ``<details>``, every decision by subject, and the tables. With a store,
    records are named in words (``gaf.labels``); without, by their short ids."""
    labels = Labels(store) if store is not None else None
    if labels is not None:
        labels.load([*trigger_ids(report), *(a.id for a in report.affected)])
    name = labels.text if labels is not None else short
    drawn = picture(report, {i: name(i) for i in (*trigger_ids(report), *(a.id for a in report.affected))}, per_kind=per_kind)
    shown = _prefixes(report)
    body = [
        f"<h1>{html.escape(headline(report))}</h1>",
        f"<p>As of {html.escape(report.as_of)}.</p>" if report.as_of else "",
        '<div class="picture">' + svg(drawn, lambda box: "#" + anchor(box) if box.counted else None) + "</div>",
        *(f'<details id="{anchor(box)}"><summary>{html.escape(box.label)} (column {box.layer + 1})</summary><ul>'
          + "".join(f"<li>{html.escape(name(m))} <code>{html.escape(short(m))}</code></li>" for m in box.members) + "</ul></details>"
          for box in drawn.boxes if box.counted),
        "<h2>Totals</h2>",
        _table(["kind", "invalidated", "weakened"], [[k, v["invalidated"], v["weakened"]] for k, v in report.totals().items()]),
    ]  # fmt: skip
    if labels is not None:
        grouped = decisions(report, labels)
        body.append(f"<h2>Decisions, by subject ({sum(map(len, grouped.values()))})</h2>" if grouped else "<h2>Decisions</h2><p>None reached.</p>")
        for subject, rows in grouped.items():
            body += [f"<h3>{html.escape(subject)}</h3>",
                     _table(["kind", "decision", "status", "verdict if recomputed", "superseded by"],
                            [[d.kind, f"{labels.text(d.id)} ({short(d.id)})", d.status, d.recomputed,
                              ", ".join(labels.text(i) for i in d.superseded_by) or "—"] for d in rows])]  # fmt: skip
    if report.to_compensate:
        body += ["<h2>Executed actions that need cancellation or compensation</h2>",
                 "<ul>" + "".join(f"<li><code>{html.escape(a)}</code></li>" for a in report.to_compensate) + "</ul>"]  # fmt: skip
    if report.closures:
        body += ["<h2>Closures, recomputed</h2>",
                 _table(["closure", "subject", "outcome", "verdict", "facts lost ~weakened +gained"], closure_rows(report))]  # fmt: skip
    body += [
        "<h2>Affected records</h2>",
        _table(["record", "status", "reason", "path from the trigger"],
               [[a.id, a.status, a.reason, " → ".join(shown[p] for p in a.path)] for a in report.affected]),  # fmt: skip
        # The machine-readable report rides along; "</" is escaped so it cannot close the script.
        '<script type="application/json" id="impact">' + _script_safe(report.to_dict()) + "</script>",
    ]
    style = ("body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:.3em .6em;font-size:.9em}code{font-size:.85em}"
             ".picture{overflow:auto;max-height:80vh;border:1px solid #ddd}details{margin:.3em 0}")  # fmt: skip
    title = html.escape(headline(report))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")  # fmt: skip


def _prefixes(report: ImpactReport) -> dict[str, str]:
    """The ids a report's paths name, each as its shortest prefix unique among them."""
    return short_ids(p for a in report.affected for p in a.path)


def _script_safe(data: Any) -> str:
    return json.dumps(data).replace("</", "<\\/")


def _table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"
