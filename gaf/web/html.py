"""The markup of the auditor's pages: escaped text, links, tables and the one page layout.

Every value that reaches a page passes through ``esc`` (``Markup`` is text already made
safe here), so a claim's statement or a reason a person typed is shown, never run. The
pages load one stylesheet and nothing else, all from the app (``/static/``): the
Content-Security-Policy ``default-src 'self'`` allows nothing inline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape as _escape
from typing import Any
from urllib.parse import quote

from gaf.labels import short

__all__ = ["Markup", "dl", "esc", "form", "join", "link", "page", "path", "short", "table", "tag"]


class Markup(str):
    """Text that is HTML already: built here from escaped parts, so it is not escaped again;
    what is added to it is escaped on the way in."""

    def __add__(self, other: Any) -> Markup:
        return Markup(str.__add__(self, esc(other)))

    def __radd__(self, other: Any) -> Markup:
        return Markup(str.__add__(esc(other), self))


def esc(value: Any) -> Markup:
    """Any value as safe HTML: markup as it is, anything else as escaped text."""
    return value if isinstance(value, Markup) else Markup(_text(value))


def _text(value: Any) -> str:
    """A value that is not markup, as escaped text (None as nothing)."""
    return _escape("" if value is None else str(value), quote=True)


def _inner(parts: Iterable[Any]) -> str:
    """Parts as one piece of HTML: markup as it is, anything else escaped (``esc`` without a
    Markup per part: a large page builds tens of thousands of elements)."""
    return "".join([p if isinstance(p, Markup) else _text(p) for p in parts])


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(esc(sep).join(esc(p) for p in parts))


def tag(name: str, *content: Any, **attrs: Any) -> Markup:
    """``<name attrs>content</name>``; ``class_`` is written ``class``; a None or False attribute is left out."""
    if not attrs:
        return Markup(f"<{name}>{_inner(content)}</{name}>")
    written = "".join(
        f' {k.rstrip("_").replace("_", "-")}' + ("" if v is True else f'="{esc(v)}"') for k, v in attrs.items() if v not in (None, False)
    )
    return Markup(f"<{name}{written}>{_inner(content)}</{name}>")


def link(href: str, text: Any, **attrs: Any) -> Markup:
    return tag("a", text, href=href, **attrs)


def path(*parts: str) -> str:
    """A URL path whose parts are quoted (an id's colon stays, a subject's slash does not)."""
    return "/" + "/".join(p if _PLAIN.fullmatch(p) else quote(p, safe=":@") for p in parts)


#: What ``quote(p, safe=":@")`` leaves as it is: a part made only of these is its own quoting (every record id).
_PLAIN = re.compile(r"[A-Za-z0-9_.~:@-]*")


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]], *, caption: Any = None, class_: str | None = None) -> Markup:
    head = tag("thead", tag("tr", *(tag("th", h, scope="col") for h in headers)))
    body = "".join(["<tr>" + "".join(["<td>" + _inner((c,)) + "</td>" for c in row]) + "</tr>" for row in rows])
    return tag("div", tag("table", tag("caption", caption) if caption is not None else "", head, Markup(f"<tbody>{body}</tbody>"),
                          class_=class_), class_="scroll")  # fmt: skip


def dl(pairs: Iterable[tuple[Any, Any]]) -> Markup:
    """A definition list: a record's fields, a closure's particulars."""
    return tag("dl", *(Markup(tag("dt", k) + tag("dd", v)) for k, v in pairs))


def form(action: str, csrf: str, *fields: Any, method: str = "post", button: str = "Send") -> Markup:
    """A form that carries the session's CSRF token (checked on every POST)."""
    hidden = Markup(f'<input type="hidden" name="csrf" value="{esc(csrf)}">')
    return tag("form", hidden, *fields, tag("button", button, type="submit"), action=action, method=method)


def page(title: str, body: Any, *, signed_in: bool, csrf: str, status_line: Any = "") -> str:
    """The one layout: a header with the search box and the sections, the body, no script."""
    nav = tag("nav", link("/", "Search"), link("/queue", "Review queue"),
              form("/logout", csrf, button="Sign out") if signed_in else "")  # fmt: skip
    search = tag("form", tag("label", "Find", for_="q", class_="hidden"),
                 Markup('<input id="q" name="q" type="search" placeholder="subject, id prefix or source key">'),
                 tag("button", "Search", type="submit"), action="/", method="get", role="search")  # fmt: skip
    return (
        Markup("<!doctype html>\n")
        + tag("html",
              tag("head", Markup('<meta charset="utf-8">'), Markup('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                  tag("title", f"{title} · gaf"), Markup('<link rel="stylesheet" href="/static/gaf.css">')),
              tag("body", tag("header", link("/", "gaf", class_="brand"), search, nav), status_line, tag("main", tag("h1", title), body)),
              lang="en")  # fmt: skip
        + Markup("\n")
    )
