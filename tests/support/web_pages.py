"""The site's pages as a person reads them: tables under their headings, and the links."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Table:
    heading: str
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    links: list[list[str]] = field(default_factory=list)
    """The hrefs in each row, in order."""


class PageParser(HTMLParser):
    """The page as a person reads it: each table with the heading above it, and the links."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self.links: dict[str, str] = {}
        self._heading = ""
        self._h2: list[str] | None = None
        self._cell: list[str] | None = None
        self._link: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            self._h2 = []
        elif tag == "table":
            self.tables.append(Table(self._heading))
        elif tag == "tr":
            self.tables[-1].rows.append([])
            self.tables[-1].links.append([])
        elif tag in ("th", "td"):
            self._cell = []
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            self._link = (href, [])
            if self._cell is not None:
                self.tables[-1].links[-1].append(href)

    def handle_data(self, data: str) -> None:
        for collecting in (self._h2, self._cell, self._link[1] if self._link else None):
            if collecting is not None:
                collecting.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._h2 is not None:
            self._heading, self._h2 = "".join(self._h2).strip(), None
        elif tag == "th" and self._cell is not None:
            self.tables[-1].headers.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "td" and self._cell is not None:
            self.tables[-1].rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "a" and self._link is not None:
            self.links["".join(self._link[1]).strip()] = self._link[0]
            self._link = None

    def table(self, heading: str) -> Table:
        """The one table under `heading`, its header row left out of `rows`."""
        found = [t for t in self.tables if t.heading == heading]
        assert len(found) == 1, f"one table under {heading!r}: {[t.heading for t in self.tables]}"
        table = found[0]
        body = [(row, links) for row, links in zip(table.rows, table.links, strict=True) if row]
        return Table(table.heading, table.headers, [row for row, _ in body], [links for _, links in body])


def parse(html: str) -> PageParser:
    parser = PageParser()
    parser.feed(html)
    return parser


def hostile_name() -> str:
    """A bot or user name that is markup, made unique: a page must show it as text."""
    return f"<script>window.pwned=1</script>{uuid.uuid4().hex[:6]}"
