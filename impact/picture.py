"""The impact picture: what rests on a change, drawn as a layered graph that stays readable.

A report of thousands of records cannot be drawn box by box, and a picture that draws
the first few hundred shows no decision at all. So a kind with more records than
``PER_KIND`` is drawn as counts — one box per kind, status and layer ("2,558 facts ·
invalidated") — and each such box stands for the records it lists (the page opens the
list, and the workbench can draw a kind record by record on request). A kind with few
records is drawn one box per record, named in words (``gaf.labels``). The decisions —
closures, verdicts, actions — are never hidden: pictured when few, and always listed by
subject beside the picture (``impact.report.decisions``).

The layout is Sugiyama's layered drawing, done by grandalf (a pure-Python engine: no
Graphviz, no browser script, nothing beyond ``pip install``): layers by longest path,
crossings reduced by median ordering, coordinates by Brandes and Köpf. The picture reads
left to right in the order of the chain, every line pointing from a layer to a later one.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gaf.canonical import kind_of
from gaf.labels import short
from impact.analysis import ImpactReport

if TYPE_CHECKING:
    from grandalf.graphs import Vertex

#: A kind with more records than this is drawn as counts, one box per status and layer.
PER_KIND = 12
#: Records of one kind the workbench draws one by one at most, when asked to (``expand``).
MAX_EXPANDED = 300
#: Box and gap sizes, in pixels: boxes of one layer stacked in a column, columns left to right.
BOX_W, BOX_H, GAP_Y, GAP_X, MARGIN = 200, 42, 12, 56, 16
COLOURS = {"trigger": "#222222", "invalidated": "#c0392b", "weakened": "#d35400", "unconfirmed": "#6c7a89"}
#: Kinds whose records are decisions: the picture and the page never lose one.
DECISIONS = ("closure", "verdict", "action")
PLURAL = {"evaluation": "evaluations", "derivation": "derivations", "gaf": "GAFs", "policy": "policies", "proposition": "propositions"}


@dataclass
class Box:
    """One box of the picture: a record, or a count of records of one kind, status and layer."""

    key: str  #: the record's id, or ``kind/status/layer`` for a count
    kind: str
    status: str  #: trigger, invalidated, weakened or unconfirmed
    members: tuple[str, ...]  #: the records it stands for (one for a record's own box)
    label: str
    layer: int = 0  #: the column the layout put it in
    x: float = 0.0  #: top-left corner
    y: float = 0.0

    @property
    def counted(self) -> bool:
        return self.key not in self.members

    def overlaps(self, other: Box) -> bool:
        return self.x < other.x + BOX_W and other.x < self.x + BOX_W and self.y < other.y + BOX_H and other.y < self.y + BOX_H


@dataclass
class Line:
    """The dependencies between two boxes, drawn from the dependency to the dependent."""

    start: str
    end: str
    rels: tuple[str, ...]
    count: int
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Picture:
    boxes: list[Box]
    lines: list[Line]
    width: float
    height: float
    #: kinds drawn as counts, with how many records each has
    collapsed: dict[str, int]

    def box(self, key: str) -> Box:
        return next(b for b in self.boxes if b.key == key)


def picture(report: ImpactReport, labels: Mapping[str, str] | None = None, *, per_kind: int = PER_KIND,
            expand: Iterable[str] = ()) -> Picture:  # fmt: skip
    """The report's affected subgraph, kinds of more than ``per_kind`` records drawn as counts
    (those in ``expand`` record by record, up to ``MAX_EXPANDED``), laid out in layers."""
    names = labels or {}
    status: dict[str, str] = {a.id: a.status for a in report.affected}
    triggers = trigger_ids(report) - set(status)
    status.update({t: "trigger" for t in triggers})
    kinds = {a.id: a.kind for a in report.affected} | {t: kind_of(t) for t in triggers}  # each record says its kind
    edges = sorted({(dependency, rel, dependent) for dependent, rel, dependency in report.edges if dependent in status and dependency in status})
    depth = _depths(sorted(status), edges)
    per = defaultdict(list)
    for rid in status:
        if rid not in triggers:
            per[kinds[rid]].append(rid)
    wanted = set(expand)
    collapsed = {k: len(v) for k, v in sorted(per.items()) if len(v) > per_kind and not (k in wanted and len(v) <= MAX_EXPANDED)}
    box_of: dict[str, str] = {}
    members: dict[str, list[str]] = defaultdict(list)
    for rid in sorted(status):
        kind = kinds[rid]
        key = f"{kind}/{status[rid]}/{depth[rid]}" if kind in collapsed and rid not in triggers else rid
        box_of[rid] = key
        members[key].append(rid)
    boxes = []
    for key, ids in members.items():
        kind, state = kinds[ids[0]], status[ids[0]]
        label = f"{len(ids):,} {_plural(kind, len(ids))} · {state}" if key not in ids else names.get(key, short(key))
        boxes.append(Box(key, kind, state, tuple(ids), label))
    joined: dict[tuple[str, str], set[str]] = defaultdict(set)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for dependency, rel, dependent in edges:
        pair = (box_of[dependency], box_of[dependent])
        joined[pair].add(rel)
        counts[pair] += 1
    lines = [Line(a, b, tuple(sorted(joined[(a, b)])), counts[(a, b)]) for a, b in sorted(joined)]
    width, height = _lay_out(boxes, lines)
    return Picture(sorted(boxes, key=lambda b: (b.layer, b.y, b.key)), lines, width, height, collapsed)


def trigger_ids(report: ImpactReport) -> set[str]:
    """The records a report starts from: the trigger, the scopes and propositions a new claim
    falls into, and the first record of every path (a run's claims: a run is not a record)."""
    ids = {report.trigger["id"]} if report.trigger.get("kind") not in ("new_claim", "run_invalidated") else set()
    ids |= set(report.trigger.get("scopes", [])) | set(report.trigger.get("propositions", []))
    return {i for i in ids if ":" in i} | {a.path[0] for a in report.affected if a.path}


def _plural(kind: str, n: int) -> str:
    word = kind.replace("_", " ")
    return word if n == 1 else PLURAL.get(kind, word + "s")


def _depths(nodes: list[str], edges: list[tuple[str, str, str]]) -> dict[str, int]:
    """Each record's longest path from a record nothing here depends on: counts of one kind are
    split by it, so a count's lines, like a record's, point only to later layers."""
    after: dict[str, list[str]] = defaultdict(list)
    waiting = dict.fromkeys(nodes, 0)
    for dependency, _, dependent in edges:
        after[dependency].append(dependent)
        waiting[dependent] += 1
    depth = dict.fromkeys(nodes, 0)
    ready = [n for n in nodes if not waiting[n]]
    while ready:
        n = ready.pop()
        for m in after[n]:
            depth[m] = max(depth[m], depth[n] + 1)
            waiting[m] -= 1
            if not waiting[m]:
                ready.append(m)
    return depth  # a cycle (none is stored: records name only older ones) would leave its members where they are


class _View:
    """What grandalf reads and writes on a vertex or edge: its size, its centre, its route.
    grandalf draws layers top to bottom; the picture turns that a quarter, so a box's
    width along a layer is its height here."""

    def __init__(self, w: float = BOX_H, h: float = BOX_W):
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)
        self.path: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.path = points


def _lay_out(boxes: list[Box], lines: list[Line]) -> tuple[float, float]:
    """Place every box and route every line; each connected part laid out by grandalf's
    Sugiyama layout, the parts stacked top to bottom. Returns the picture's size."""
    # grandalf imported here, not at the top: it loads numpy, and every gaf command imports this module
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    vertices = {b.key: Vertex(b.key) for b in boxes}
    for v in vertices.values():
        v.view = _View()
    edges = {}
    for line in lines:
        e = Edge(vertices[line.start], vertices[line.end])
        e.view = _View()
        edges[(line.start, line.end)] = e
    graph = Graph(list(vertices.values()), list(edges.values()))
    by_key = {b.key: b for b in boxes}
    by_pair = {(ln.start, ln.end): ln for ln in lines}
    top, width = float(MARGIN), 0.0
    for part in sorted(graph.C, key=lambda c: min(v.data for v in c.sV)):
        layout = SugiyamaLayout(part)
        layout.xspace, layout.yspace = GAP_Y, GAP_X
        roots = sorted((v for v in part.sV if not v.e_in()), key=lambda v: v.data)
        layout.init_all(roots=roots, inverted_edges=[])
        layout.draw(3)
        placed = [(by_key[v.data], v) for v in part.sV]
        for box, v in placed:
            box.layer = layout.grx[v].rank
        _separate(placed)
        low = min(box.y for box, _ in placed)
        for box, v in placed:
            box.x, box.y = MARGIN + box.layer * (BOX_W + GAP_X), top + box.y - low
        for e in part.sE:
            line = by_pair[(e.v[0].data, e.v[1].data)]
            start, end = by_key[line.start], by_key[line.end]
            bends = [(MARGIN + cy, top + cx - low) for cx, cy in e.view.path[1:-1]]  # grandalf's (x, y), turned a quarter
            line.points = [(start.x + BOX_W, start.y + BOX_H / 2), *bends, (end.x, end.y + BOX_H / 2)]
        width = max(width, max(box.x for box, _ in placed) + BOX_W + MARGIN)
        top = max(box.y for box, _ in placed) + BOX_H + 2 * GAP_Y
    return width, max(top - 2 * GAP_Y + MARGIN, 2 * MARGIN)


def _separate(placed: list[tuple[Box, Vertex]]) -> None:
    """A box's place along its layer from the layout, then pushed down just enough that no
    two boxes of a layer touch (the averaged alignments may bring neighbours too close)."""
    column: dict[int, list[tuple[float, Box]]] = defaultdict(list)
    for box, v in placed:
        column[box.layer].append((v.view.xy[0] - BOX_H / 2, box))
    for stacked in column.values():
        floor = float("-inf")
        for y, box in sorted(stacked, key=lambda t: (t[0], t[1].key)):
            box.y = max(y, floor)
            floor = box.y + BOX_H + GAP_Y


def svg(drawn: Picture, href: Callable[[Box], str | None] = lambda box: None) -> str:
    """The picture as SVG: each box coloured by status, named in words (its id in its tooltip),
    a link where ``href`` gives one; each line with its relationships and count in its tooltip."""
    w, h = round(drawn.width), round(drawn.height)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="impact-picture" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
             f'role="img" aria-label="what rests on the change: {len(drawn.boxes)} boxes">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#888"/></marker></defs>']  # fmt: skip
    for line in drawn.lines:
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in line.points)
        width = 1 if line.count == 1 else 2 if line.count < 100 else 3
        parts.append(f'<polyline points="{points}" fill="none" stroke="#9aa3ad" stroke-width="{width}" marker-end="url(#arrow)">'
                     f'<title>{html.escape(", ".join(line.rels))} × {line.count}</title></polyline>')  # fmt: skip
    for box in drawn.boxes:
        colour = COLOURS[box.status]
        fill = "#f4f6f8" if box.counted else "white"
        title = f"{box.label} — {box.key}" if not box.counted else f"{box.label}: the list opens below"
        second = f"{box.kind.replace('_', ' ')} · {box.status}" if not box.counted else "counted: open the list"
        body = (f'<title>{html.escape(title)}</title>'
                f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="{fill}" stroke="{colour}" '
                f'stroke-width="{3 if box.counted else 2}"/>'
                f'<text x="{box.x + 7:.1f}" y="{box.y + 17:.1f}" font-size="12" fill="#1d232b">{html.escape(_fit(box.label, 30))}</text>'
                f'<text x="{box.x + 7:.1f}" y="{box.y + 33:.1f}" font-size="10" fill="{colour}">{html.escape(second)}</text>')  # fmt: skip
        target = href(box)
        key = html.escape(box.key, quote=True)
        parts.append(f'<a href="{html.escape(target, quote=True)}" data-key="{key}">{body}</a>' if target
                     else f'<g data-key="{key}">{body}</g>')  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts)


def anchor(box: Box) -> str:
    """The id of the list a count's box opens (``#count-fact-invalidated-3``)."""
    return "count-" + box.key.replace("/", "-").replace("_", "-")


def _fit(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"
