"""The impact picture: every record placed, no two boxes overlapping, lines from a layer to a
later one, and counts that add up to the report's — the report itself is the oracle."""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

import impact
from gaf.canonical import kind_of
from gaf.labels import Labels
from impact.picture import BOX_H, BOX_W, MAX_EXPANDED, picture, svg, trigger_ids
from impact.report import DECISIONS, decisions, to_html
from tests.rentcase import close_both
from tests.worlds import impact_report


def _check(report, drawn) -> None:
    # every record (the trigger and each affected one) stands in exactly one box
    pictured = Counter(m for box in drawn.boxes for m in box.members)
    assert set(pictured) == {*trigger_ids(report), *(a.id for a in report.affected)}
    assert set(pictured.values()) == {1}
    # no two boxes overlap, and each lies inside the picture
    boxes = sorted(drawn.boxes, key=lambda b: (b.x, b.y))
    for i, a in enumerate(boxes):
        assert 0 <= a.x and a.x + BOX_W <= drawn.width and 0 <= a.y and a.y + BOX_H <= drawn.height
        assert not any(a.overlaps(b) for b in boxes[i + 1 :]), a.key
    # a line runs from a box's right side to a box of a later layer's left side, through later columns
    for line in drawn.lines:
        start, end = drawn.box(line.start), drawn.box(line.end)
        assert start.layer < end.layer
        assert line.points[0] == (start.x + BOX_W, start.y + BOX_H / 2) and line.points[-1] == (end.x, end.y + BOX_H / 2)
        assert [x for x, _ in line.points] == sorted(x for x, _ in line.points)
    # every dependency between pictured records is drawn, counted once
    assert sum(line.count for line in drawn.lines) == len({(a, b) for a, _, b in report.edges})
    # the counts add up to the report's totals, kind by kind and status by status
    totals: dict[str, Counter] = {}
    for box in drawn.boxes:
        if box.status != "trigger":
            totals.setdefault(box.kind, Counter())[box.status] += len(box.members)
    assert {k: {s: n for s, n in v.items() if n} for k, v in report.totals().items()} == {k: dict(v) for k, v in totals.items()}


@given(impact_report(), st.integers(1, 15))
def test_every_record_is_placed_once_no_boxes_overlap_lines_run_forward_and_counts_add_up(report, per_kind):
    drawn = picture(report, per_kind=per_kind)
    _check(report, drawn)
    kinds = Counter(a.kind for a in report.affected)
    assert drawn.collapsed == {k: n for k, n in sorted(kinds.items()) if n > per_kind}
    for box in drawn.boxes:
        assert box.counted == (box.kind in drawn.collapsed and box.status != "trigger")


@given(impact_report())
def test_a_kind_expanded_is_drawn_record_by_record_and_the_rest_stay_counted(report):
    kinds = Counter(a.kind for a in report.affected)
    big = sorted(k for k, n in kinds.items() if n > 2)
    drawn = picture(report, per_kind=2, expand=big[:1])
    _check(report, drawn)
    assert set(drawn.collapsed) == set(big[1:]) and all(kinds[k] <= MAX_EXPANDED for k in big[:1])


def test_the_rent_story_is_drawn_record_by_record_named_in_words(store):
    close_both(store)
    bank = store.resolve_id("bank-ledger")
    report = impact.source_invalidated(store, bank)
    labels = Labels(store)
    labels.load([bank, *(a.id for a in report.affected)])
    drawn = picture(report, {i: labels.text(i) for i in labels.records})
    _check(report, drawn)
    assert not drawn.collapsed and not any(b.counted for b in drawn.boxes)
    assert drawn.box(bank).label == "bank-ledger" and drawn.box(bank).status == "trigger"
    for a in report.affected:
        assert drawn.box(a.id).label == labels.text(a.id) != a.id


def test_every_decision_is_listed_once_under_its_subject_however_the_picture_counts(store):
    c1, c2 = close_both(store)
    report = impact.source_invalidated(store, store.resolve_id("bank-ledger"))
    labels = Labels(store)
    grouped = decisions(report, labels)
    listed = [d.id for rows in grouped.values() for d in rows]
    assert sorted(listed) == sorted(a.id for a in report.affected if a.kind in DECISIONS)
    for subject, rows in grouped.items():
        for d in rows:
            record = store.get(d.id)
            about = store.get(record.closure).subject if d.kind == "verdict" else record.subject
            assert about == subject
    (july,) = [d for rows in grouped.values() for d in rows if d.id == c1.closure.id]
    assert july.superseded_by == tuple(store.superseded_by(c1.closure.id)) == (c2.closure.id,)
    # the HTML report, every kind counted, still lists each decision and draws one box per count
    page = to_html(report, store, per_kind=1)
    for d in listed:
        assert labels.text(d) in page
    assert page.count("<rect") == len(picture(report, per_kind=1).boxes)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if a.get("id"):
            self.ids.add(a["id"])


@given(impact_report())
def test_each_counted_box_links_to_the_list_of_its_records(report):
    drawn = picture(report, per_kind=3)
    parser = _Links()
    parser.feed(svg(drawn, lambda b: f"#count-{b.key}" if b.counted else None))
    assert sorted(parser.hrefs) == sorted(f"#count-{b.key}" for b in drawn.boxes if b.counted)
    assert all(kind_of(m) == b.kind for b in drawn.boxes for m in b.members)
