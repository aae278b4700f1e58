"""Report documents written as XLSX, CSV and HTML and read back: sheets, headers and types,
the formula-injection guard, escaping, a self-contained HTML page with its charts, and rows
consumed once from an iterable."""

from __future__ import annotations

import csv
import re
import time
from collections import deque
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
from openpyxl import load_workbook

from plumbline.services.reports import render
from plumbline.services.reports.render import (
    FORMATS,
    STATUS_COLORS,
    Bars,
    Cell,
    Document,
    Line,
    Matrix,
    Section,
    Table,
    write,
    write_csv,
    write_html,
    write_xlsx,
)

ABOUT = [("Project", "Rocket <b>x</b>"), ("Data as of", "2024-03-01T12:00:00Z")]


class Once:
    """Rows that may be iterated once only, as rows read from a spool file."""

    def __init__(self, rows: Sequence[Sequence[Cell]]) -> None:
        self.rows = rows
        self.iterations = 0

    def __iter__(self) -> Iterator[Sequence[Cell]]:
        self.iterations += 1
        if self.iterations > 1:
            raise AssertionError("rows iterated twice")
        return iter(self.rows)


def document(tests: Once | None = None, runs: Once | None = None) -> Document:
    tests = tests or Once(
        [
            ("TC-1", "Login works", 3, 1.5, True, None),
            ("TC-2", "=1+1", -2, 0.25, False, "Grüße 日本"),
            ("TC-3", "<b>x</b>", 0, 0.0, True, "-5"),
        ]
    )
    runs = runs or Once([("R-1", "@SUM(A1)"), ("R-2", "plain")])
    return Document(
        title="Coverage <report>",
        about=ABOUT,
        sections=[
            Section(
                heading="Verdicts",
                charts=[
                    Bars(
                        "Verdicts by requirement", ["PASSING", "FAILING"], [7, 2], ["green", "red"]
                    ),
                    Line("Runs", ["2024-03-01", "2024-03-02"], [("passed", [1, 4], "#2e7d32")]),
                    Matrix(
                        "Trace",
                        ["REQ-1", "REQ-2"],
                        ["TC-1", "TC-2"],
                        {(0, 0): "PASSED", (1, 1): "SUSPECT"},
                    ),
                ],
                table=Table(
                    "Tests [all]: a very long title beyond 31 chars",
                    ["Key", "Name", "Steps", "Hours", "Automated", "Owner"],
                    tests,
                ),
            ),
            Section(heading="Runs", table=Table("Runs", ["Run", "Note"], runs)),
            Section(heading="Only charts", charts=[Bars("Empty", [], [], [])]),
        ],
    )


# --- XLSX ---------------------------------------------------------------------------------


def test_xlsx_sheets_headers_types_and_guard(tmp_path: Path) -> None:
    path = tmp_path / "r.xlsx"
    assert write_xlsx(document(), path) == 5
    book = load_workbook(path)
    assert book.sheetnames == [
        "About",
        "Verdicts by requirement",
        "Tests all a very long title bey",
        "Runs",
        "Empty",
    ]
    about = book["About"]
    assert [[c.value for c in row] for row in about.iter_rows()] == [
        ["Coverage <report>", None],
        ["Project", "Rocket <b>x</b>"],
        ["Data as of", "2024-03-01T12:00:00Z"],
    ]
    assert about["A1"].font.b
    bars = book["Verdicts by requirement"]
    assert [[c.value for c in row] for row in bars.iter_rows()] == [
        ["Label", "Value"],
        ["PASSING", 7],
        ["FAILING", 2],
    ]
    sheet = book["Tests all a very long title bey"]
    assert sheet.freeze_panes == "A2"
    assert [c.value for c in sheet[1]] == ["Key", "Name", "Steps", "Hours", "Automated", "Owner"]
    assert all(c.font.b for c in sheet[1])
    assert not sheet["A2"].font.b
    assert sheet.column_dimensions["A"].width == 10  # at least 10
    assert sheet.column_dimensions["E"].width == len("Automated") + 4
    assert [c.value for c in sheet[2]] == ["TC-1", "Login works", 3, 1.5, True, None]
    second = sheet[3]
    assert [c.value for c in second] == ["TC-2", "'=1+1", -2, 0.25, False, "Grüße 日本"]
    assert second[1].data_type == "s"  # text, not a formula
    assert isinstance(second[2].value, int)
    assert isinstance(second[3].value, float)
    assert [c.value for c in sheet[4]][5] == "'-5"
    assert [c.value for c in book["Runs"]["A2":"B3"][0]] == ["R-1", "'@SUM(A1)"]


def test_xlsx_sheet_names_are_made_valid_and_unique(tmp_path: Path) -> None:
    titles = ["a/b", "A/B", "x" * 40, "x" * 40, "'quoted'", "History", ""]
    doc = Document(
        "t",
        [],
        [Section(h, table=Table(h, ["k"], Once([("bell\x07 ring",)]))) for h in titles],
    )
    path = tmp_path / "names.xlsx"
    assert write_xlsx(doc, path) == len(titles)
    book = load_workbook(path)
    names = book.sheetnames
    assert names[:3] == ["About", "a b", "A B (2)"]
    assert names[3] == "x" * 31
    assert names[4] == "x" * 27 + " (2)"
    assert names[5] == "quoted"
    assert names[6] != "History"
    assert names[7] == "Sheet"
    assert all(len(n) <= 31 for n in names)
    assert book["a b"]["A2"].value == "bell ring"  # a control character openpyxl would refuse


def test_a_hundred_thousand_rows_stream_to_xlsx(tmp_path: Path) -> None:
    def rows() -> Iterator[Sequence[Cell]]:
        for n in range(100_000):
            yield (n, f"item {n}", n % 2 == 0)

    doc = Document("big", [], [Section("all", table=Table("Items", ["n", "name", "even"], rows()))])
    started = time.monotonic()
    assert write_xlsx(doc, tmp_path / "big.xlsx") == 100_000
    assert time.monotonic() - started < 30
    sheet = load_workbook(tmp_path / "big.xlsx", read_only=True)["Items"]
    rows_back = sheet.iter_rows(values_only=True)
    assert next(rows_back) == ("n", "name", "even")
    assert deque(enumerate(rows_back, start=1), maxlen=1)[0] == (
        100_000,
        (99_999, "item 99999", False),
    )


def test_a_table_longer_than_a_sheet_goes_on_in_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "MAX_SHEET_ROWS", 3)  # the header and two rows
    rows = Once([(n,) for n in range(5)])
    doc = Document("t", [], [Section("s", table=Table("Long", ["n"], rows))])
    assert write_xlsx(doc, tmp_path / "long.xlsx") == 5
    book = load_workbook(tmp_path / "long.xlsx")
    assert book.sheetnames == ["About", "Long", "Long (2)", "Long (3)"]
    assert [[c.value for c in r] for r in book["Long (3)"].iter_rows()] == [["n"], [4]]
    assert book["Long (2)"].freeze_panes == "A2"


# --- CSV ----------------------------------------------------------------------------------


def test_csv_tables_one_after_another(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    assert write_csv(document(), path) == 5
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    assert b"\r\n" in raw
    with path.open(encoding="utf-8-sig", newline="") as f:
        lines = list(csv.reader(f))
    assert lines == [
        ["Tests [all]: a very long title beyond 31 chars"],
        ["Key", "Name", "Steps", "Hours", "Automated", "Owner"],
        ["TC-1", "Login works", "3", "1.5", "True", ""],
        ["TC-2", "'=1+1", "-2", "0.25", "False", "Grüße 日本"],
        ["TC-3", "<b>x</b>", "0", "0.0", "True", "'-5"],
        [],
        ["Runs"],
        ["Run", "Note"],
        ["R-1", "'@SUM(A1)"],
        ["R-2", "plain"],
    ]


def test_csv_quotes_per_rfc_4180(tmp_path: Path) -> None:
    doc = Document(
        "t", [], [Section("s", table=Table("T", ["a"], Once([('say "hi", then\nleave',)])))]
    )
    write_csv(doc, tmp_path / "q.csv")
    assert '"say ""hi"", then\nleave"' in (tmp_path / "q.csv").read_text(encoding="utf-8-sig")


# --- HTML ---------------------------------------------------------------------------------

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}


class Page(HTMLParser):
    """Collects tags and text, and checks every element is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def charts(self) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == "svg"]


def parse(path: Path) -> tuple[str, Page]:
    source = path.read_text(encoding="utf-8")
    page = Page()
    page.feed(source)
    page.close()
    assert page.stack == []
    return source, page


def test_html_is_self_contained_and_escaped(tmp_path: Path) -> None:
    path = tmp_path / "r.html"
    assert write_html(document(), path) == 5
    source, page = parse(path)
    lowered = source.lower()
    for banned in ("<script", "http://", "https://", "src=", "href=", "url(", "@import"):
        assert banned not in lowered, banned
    assert '<meta charset="utf-8">' in source
    assert "<b>x</b>" not in source
    assert "&lt;b&gt;x&lt;/b&gt;" in source
    assert "Coverage &lt;report&gt;" in source
    names = [t for t, _ in page.tags]
    assert names.count("h1") == 1
    assert names.count("h2") == 3
    assert names.count("dt") == 2
    assert names.count("table") == 2
    assert names.count("thead") == 2
    charts = page.charts()
    assert [c["data-kind"] for c in charts] == ["bars", "line", "matrix", "bars"]
    assert all(c["class"] == "chart" and c["role"] == "img" and c["aria-label"] for c in charts)
    text = "".join(page.text)
    assert "Grüße 日本" in text
    assert "Verdicts by requirement" in text
    assert "PASSING" in text
    assert "2024-03-01" in text
    assert "2024-03-02" in text
    assert STATUS_COLORS["PASSED"] in source
    for block in re.findall(r"<svg .*?</svg>", source, re.DOTALL):
        ElementTree.fromstring(block)  # each chart is well-formed on its own
    assert STATUS_COLORS["SUSPECT"] in source


def test_html_refuses_colours_that_could_fetch(tmp_path: Path) -> None:
    bad = "url(http://evil.example/x.svg#p)"
    doc = Document(
        "t",
        [],
        [
            Section(
                "s",
                charts=[Bars("b", ["a"], [1], [bad]), Line("l", ["2024-03-01"], [("s", [1], bad)])],
            )
        ],
    )
    write_html(doc, tmp_path / "c.html")
    source = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "evil" not in source
    assert "url(" not in source


def test_html_draws_degenerate_charts(tmp_path: Path) -> None:
    doc = Document(
        "t",
        [],
        [
            Section(
                "s",
                charts=[
                    Line("one day", ["2024-03-01"], [("a", [3], "blue"), ("b", [0], "red")]),
                    Line("no days", [], []),
                    Bars("zeros", ["x", "y"], [0, 0], ["red", "blue"]),
                    Matrix("empty", [], [], {}),
                ],
            )
        ],
    )
    assert write_html(doc, tmp_path / "d.html") == 0
    source, page = parse(tmp_path / "d.html")
    assert [c["data-kind"] for c in page.charts()] == ["line", "line", "bars", "matrix"]
    assert source.count("<circle") == 2  # a single day is a point per series
    zero_bars = source.split('data-kind="bars"')[1].split("</svg>")[0]
    assert ">x<" in zero_bars
    assert ">y<" in zero_bars
    assert zero_bars.count(">0<") == 2


def test_html_matrix_over_the_limits_says_what_was_left_out(tmp_path: Path) -> None:
    columns = [f"TC-{n}-with-a-long-name-beyond-24" for n in range(250)]
    rows = [f"REQ-{n}" for n in range(2_003)]
    marks = {(0, 0): "FAILED", (0, 249): "PASSED", (2_002, 0): "PASSED", (1, 1): "BLOCKED"}
    doc = Document("t", [], [Section("s", charts=[Matrix("big", rows, columns, marks)])])
    write_html(doc, tmp_path / "m.html")
    source, page = parse(tmp_path / "m.html")
    text = "".join(page.text)
    assert "50 of 250 columns left out" in text
    assert "3 of 2003 rows left out" in text
    matrix = source.split('data-kind="matrix"')[1].split("</svg>")[0]
    assert "REQ-1999" in matrix
    assert "REQ-2000" not in matrix
    assert "TC-199-" in matrix
    assert "TC-200-" not in matrix
    assert matrix.count(STATUS_COLORS["FAILED"]) == 1
    assert STATUS_COLORS["PASSED"] not in matrix
    assert matrix.count("<rect") == 1 + 2  # the background and the two marks shown
    assert "TC-0-with-a-long-name-b…" in matrix  # cut to 24, whole in a tooltip
    assert "<title>TC-0-with-a-long-name-beyond-24</title>" in matrix
    legend = source.split('class="legend"')[1]
    assert all(status in legend for status in STATUS_COLORS)


# --- all formats --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_rows_are_consumed_once(tmp_path: Path, fmt: str) -> None:
    tests, runs = Once([("TC-1", "a", 1, 1.0, True, None)]), Once([])
    assert write(document(tests, runs), tmp_path / f"r{FORMATS[fmt][1]}", fmt) == 1
    assert tests.iterations == runs.iterations == 1


def test_generator_rows_written_by_each_format(tmp_path: Path) -> None:
    for fmt, (_, suffix) in FORMATS.items():
        rows = ((n, str(n)) for n in range(3))
        doc = Document("g", [], [Section("s", table=Table("T", ["n", "s"], rows))])
        assert write(doc, tmp_path / f"g{suffix}", fmt) == 3
        assert next(rows, None) is None


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"'PDF'.*XLSX, CSV, HTML"):
        write(document(), tmp_path / "r.pdf", "PDF")
    assert not (tmp_path / "r.pdf").exists()
