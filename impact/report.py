"""Impact reports for people: Markdown, and a self-contained HTML page with a picture.

The picture is drawn here as SVG — columns in the order of the chain (source,
claim, evaluation, fact, derivation, GAF, closure, verdict, action), one box per
record coloured by status, one line per dependency — so the page needs no
network and no JavaScript. A truncated report says so in its first line.
"""

from __future__ import annotations

import html
import json
from typing import Any

from gaf.canonical import kind_of, short_ids
from impact.analysis import ImpactReport

COLUMNS = ("policy", "projection", "rules", "source", "completeness", "proposition", "claim", "evaluation", "fact",
           "derivation", "gaf", "closure", "verdict", "action")  # fmt: skip
COLOURS = {"trigger": "#222222", "invalidated": "#c0392b", "weakened": "#e67e22", "unconfirmed": "#7f8c8d"}
#: Boxes drawn at most; the rest are listed but not pictured (and the caption says so).
MAX_PICTURED = 240


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


def to_html(report: ImpactReport) -> str:
    """A self-contained HTML page: headline, picture of the affected subgraph, and the tables."""
    shown = _prefixes(report)
    body = [
        f"<h1>{html.escape(headline(report))}</h1>",
        f"<p>As of {html.escape(report.as_of)}.</p>" if report.as_of else "",
        svg(report),
        "<h2>Totals</h2>",
        _table(["kind", "invalidated", "weakened"], [[k, v["invalidated"], v["weakened"]] for k, v in report.totals().items()]),
    ]
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
             "td,th{border:1px solid #ccc;padding:.3em .6em;font-size:.9em}code{font-size:.85em}")  # fmt: skip
    title = html.escape(headline(report))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")  # fmt: skip


def svg(report: ImpactReport) -> str:
    """The affected subgraph as an SVG picture, laid out in the chain's column order."""
    status = {a.id: a.status for a in report.affected}
    trigger_ids = _trigger_ids(report)
    nodes = sorted({*trigger_ids, *status}, key=lambda r: (_column(r), r))
    pictured = nodes[:MAX_PICTURED]
    columns: dict[int, list[str]] = {}
    for rid in pictured:
        columns.setdefault(_column(rid), []).append(rid)
    order = sorted(columns)
    box_w, box_h, gap_x, gap_y, top = 150, 34, 60, 14, 40
    pos: dict[str, tuple[float, float]] = {}
    for x_index, col in enumerate(order):
        for y_index, rid in enumerate(columns[col]):
            pos[rid] = (20 + x_index * (box_w + gap_x), top + y_index * (box_h + gap_y))
    width = 40 + max(len(order), 1) * (box_w + gap_x)
    height = top + 20 + max((len(v) for v in columns.values()), default=1) * (box_h + gap_y)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="affected subgraph">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#888"/></marker></defs>']  # fmt: skip
    for x_index, col in enumerate(order):
        parts.append(f'<text x="{20 + x_index * (box_w + gap_x)}" y="24" font-size="13" font-weight="bold">{COLUMNS[col] if col < len(COLUMNS) else "other"}</text>')
    for dependent, rel, dependency in report.edges:
        if dependent in pos and dependency in pos:
            (x1, y1), (x2, y2) = pos[dependency], pos[dependent]
            parts.append(f'<line x1="{x1 + box_w}" y1="{y1 + box_h / 2}" x2="{x2}" y2="{y2 + box_h / 2}" stroke="#999" '
                         f'stroke-width="1" marker-end="url(#arrow)"><title>{rel}</title></line>')  # fmt: skip
    for rid in pictured:
        x, y = pos[rid]
        state = "trigger" if rid in trigger_ids else status[rid]
        parts.append(f'<g><title>{html.escape(rid)} ({state})</title><rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="5" '
                     f'fill="white" stroke="{COLOURS[state]}" stroke-width="2"/>'
                     f'<text x="{x + 6}" y="{y + 14}" font-size="11" fill="{COLOURS[state]}">{html.escape(kind_of(rid))} · {state}</text>'
                     f'<text x="{x + 6}" y="{y + 28}" font-size="10" font-family="monospace">{html.escape(rid.split(":", 1)[1][:16])}…</text></g>')  # fmt: skip
    if len(nodes) > len(pictured):
        parts.append(f'<text x="20" y="{height - 6}" font-size="12">{len(nodes) - len(pictured)} more records are listed below but not pictured</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _prefixes(report: ImpactReport) -> dict[str, str]:
    """The ids a report's paths name, each as its shortest prefix unique among them."""
    return short_ids(p for a in report.affected for p in a.path)


def _script_safe(data: Any) -> str:
    return json.dumps(data).replace("</", "<\\/")


def _trigger_ids(report: ImpactReport) -> set[str]:
    ids = {report.trigger["id"]} if report.trigger.get("kind") != "new_claim" else set()
    ids |= set(report.trigger.get("scopes", [])) | set(report.trigger.get("propositions", []))
    return {i for i in ids if ":" in i} | {a.path[0] for a in report.affected if a.path}


def _column(rid: str) -> int:
    kind = kind_of(rid)
    return COLUMNS.index(kind) if kind in COLUMNS else len(COLUMNS)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"
