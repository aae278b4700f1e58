"""Report documents rendered as XLSX, CSV or a self-contained HTML file.

A report is first described as a :class:`Document` (about lines, sections with charts and a
table) and then handed to one of the writers here, so that every format shows the same thing.

Memory stays bounded however large a report is: table rows are an iterable (usually read from
a spool file) consumed once and written as they come; XLSX uses openpyxl's write-only mode and
HTML goes to the file piece by piece instead of being built as one string.

The HTML is meant to be opened from anywhere (a mail attachment, a file share), so it holds no
scripts and refers to nothing outside itself (no links, images, fonts or style sheets; a
Content-Security-Policy says the same to the browser), and every user-provided text is escaped.

Spreadsheets run what looks like a formula: a text cell starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is written to CSV and XLSX with a leading ``'`` (the OWASP
advice against CSV injection), so a title such as ``=HYPERLINK(...)`` stays text.
"""

from __future__ import annotations

import csv
import html
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

Cell = str | int | float | bool | None

FORMATS: Final[dict[str, tuple[str, str]]] = {
    "XLSX": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ".xlsx"),
    "CSV": ("text/csv; charset=utf-8", ".csv"),
    "HTML": ("text/html; charset=utf-8", ".html"),
}
"""Format name -> (media type, file suffix)."""

STATUS_COLORS: Final[dict[str, str]] = {
    "PASSED": "#2e7d32",
    "FAILED": "#c62828",
    "BLOCKED": "#ef6c00",
    "NOT_RUN": "#9e9e9e",
    "INPROGRESS": "#1565c0",
    "LINKED": "#555555",
    "SUSPECT": "#fbc02d",
}
"""Trace matrix cell status -> CSS colour (SUSPECT is drawn as an outline)."""

VERDICT_COLORS: Final[dict[str, str]] = {
    "PASSING": "#2e7d32",
    "FAILING": "#c62828",
    "BLOCKED": "#ef6c00",
    "NOT_RUN": "#9e9e9e",
    "NOT_COVERED": "#f4a6a6",
}
"""Requirement verdict -> CSS colour, for callers' bar charts."""

MAX_SHEET_ROWS: Final = 1_048_576  # Excel's limit, the header row included
MAX_MATRIX_ROWS: Final = 2000
MAX_MATRIX_COLUMNS: Final = 200


@dataclass(frozen=True)
class Bars:
    """A bar chart: one bar per label, coloured with the CSS colour at the same index."""

    title: str
    labels: Sequence[str]
    values: Sequence[int]
    colors: Sequence[str]


@dataclass(frozen=True)
class Line:
    """A line chart of counts over ISO days; each series is (name, value per day, CSS colour)."""

    title: str
    days: Sequence[str]
    series: Sequence[tuple[str, Sequence[int], str]]


@dataclass(frozen=True)
class Matrix:
    """A trace matrix: a status word (see :data:`STATUS_COLORS`) at some (row, column)."""

    title: str
    rows: Sequence[str]
    columns: Sequence[str]
    marks: Mapping[tuple[int, int], str]


Chart = Bars | Line | Matrix


@dataclass(frozen=True)
class Table:
    """A table; ``rows`` is consumed once, so a document can be written only once."""

    title: str
    header: Sequence[str]
    rows: Iterable[Sequence[Cell]]


@dataclass(frozen=True)
class Section:
    """A heading with its charts and at most one table."""

    heading: str
    charts: Sequence[Chart] = ()
    table: Table | None = None


@dataclass(frozen=True)
class Document:
    """A whole report: its title, the label/value lines stated at the top, its sections."""

    title: str
    about: Sequence[tuple[str, str]]
    sections: Sequence[Section]


def write(document: Document, path: Path, fmt: str) -> int:
    """Write ``document`` to ``path`` in ``fmt`` (a key of :data:`FORMATS`); return the rows."""
    writer = _WRITERS.get(fmt)
    if writer is None:
        raise ValueError(f"unknown report format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return writer(document, path)


def _guard(value: Cell) -> Cell:
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return "'" + value
    return value


# --- XLSX ---------------------------------------------------------------------------------


def write_xlsx(document: Document, path: Path) -> int:
    """Write an "About" sheet, a sheet per Bars chart (its numbers) and a sheet per table.

    Returns the number of table rows written (the Bars sheets are not counted).
    """
    workbook = Workbook(write_only=True)
    taken: set[str] = set()
    about = _sheet(workbook, "About", ("", ""), taken, widths=(24, 60))
    about.append([_bold(about, document.title)])
    for label, value in document.about:
        about.append([_xlsx(label), _xlsx(value)])
    count = 0
    for section in document.sections:
        for chart in section.charts:
            if isinstance(chart, Bars):
                sheet = _sheet(workbook, chart.title, ("Label", "Value"), taken)
                for label, number in zip(chart.labels, chart.values, strict=False):
                    sheet.append([_xlsx(label), number])
        if section.table is not None:
            count += _xlsx_table(workbook, section.table, taken)
    workbook.save(path)
    return count


def _xlsx_table(workbook: Any, table: Table, taken: set[str]) -> int:
    # Excel opens no sheet longer than MAX_SHEET_ROWS: a longer table goes on in "Title (2)".
    sheet: Any = None
    room = count = 0
    for row in table.rows:
        if not room:
            sheet, room = _sheet(workbook, table.title, table.header, taken), MAX_SHEET_ROWS - 1
        sheet.append([_xlsx(cell) for cell in row])
        room, count = room - 1, count + 1
    if sheet is None:
        _sheet(workbook, table.title, table.header, taken)
    return count


def _xlsx(value: Cell) -> Cell:
    if isinstance(value, str):
        # Control characters make openpyxl refuse the whole file.
        return str(ILLEGAL_CHARACTERS_RE.sub("", _guard(value)))
    return value


def _bold(sheet: Any, value: Cell) -> Any:
    cell = WriteOnlyCell(sheet, value=_xlsx(value))
    cell.font = Font(bold=True)
    return cell


def _sheet(
    workbook: Any,
    title: str,
    header: Sequence[str],
    taken: set[str],
    widths: Sequence[int] = (),
) -> Any:
    """A new sheet with a bold frozen header row (an empty header writes no row)."""
    sheet = workbook.create_sheet(_sheet_name(title, taken))
    for index, name in enumerate(header, start=1):
        width = widths[index - 1] if index <= len(widths) else min(max(len(name) + 4, 10), 60)
        # Write-only sheets take column widths only before the first row.
        sheet.column_dimensions[get_column_letter(index)].width = width
    if any(header):
        sheet.freeze_panes = "A2"
        sheet.append([_bold(sheet, name) for name in header])
    return sheet


_SHEET_UNSAFE = re.compile(r"[\[\]:*?/\\\x00-\x1f]")


def _sheet_name(title: str, taken: set[str]) -> str:
    """Excel's rules: 31 characters at most, none of []:*?/\\, no ' at the ends, unique
    regardless of case, and "History" is reserved."""
    base = " ".join(_SHEET_UNSAFE.sub(" ", title).split()).strip("'")[:31].rstrip(" '") or "Sheet"
    if base.casefold() == "history":
        base = "History (report)"
    name, number = base, 2
    while name.casefold() in taken:
        suffix = f" ({number})"
        name, number = base[: 31 - len(suffix)] + suffix, number + 1
    taken.add(name.casefold())
    return name


# --- CSV ----------------------------------------------------------------------------------


def write_csv(document: Document, path: Path) -> int:
    """Write every table: its title on a line of its own, its header, its rows, then an empty
    line before the next table. UTF-8 with a BOM so that Excel reads it as UTF-8; RFC 4180
    quoting and CRLF line ends. Charts and about lines are left out. Returns the rows."""
    count = 0
    with path.open("w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out)
        first = True
        for section in document.sections:
            table = section.table
            if table is None:
                continue
            if not first:
                writer.writerow([])
            first = False
            writer.writerow([_guard(table.title)])
            writer.writerow([_guard(name) for name in table.header])
            for row in table.rows:
                writer.writerow([_guard(cell) for cell in row])
                count += 1
    return count


# --- HTML ---------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
dl.about{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
dl.about dt{font-weight:600}dl.about dd{margin:0}
figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}
svg.chart text{font:12px system-ui,sans-serif;fill:#222}
svg.chart .axis,svg.chart .grid{stroke:#bbb;stroke-width:1}
.caption{color:#a00}ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:1em}
.swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}
table{border-collapse:collapse;margin:1em 0}caption{font-weight:600;text-align:left}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}td.n{text-align:right}
thead th{background:#eee;position:sticky;top:0}
"""

# The browser enforces what the writer promises: no scripts, nothing loaded from elsewhere.
_CSP = "default-src 'none'; style-src 'unsafe-inline'"

_COLOR = re.compile(r"#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,30}|(?:rgb|hsl)a?\([0-9.,%\s/]+\)")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _color(value: str) -> str:
    # A colour goes into an attribute: anything else (say url(...)) could fetch from elsewhere.
    return value if _COLOR.fullmatch(value) else "#888888"


def write_html(document: Document, path: Path) -> int:
    """Write one self-contained HTML5 page with inline SVG charts; return the table rows."""
    count = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n')
        out.write(f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n')
        out.write(f"<title>{_e(document.title)}</title>\n<style>{_CSS}</style>\n</head>\n")
        out.write(f'<body>\n<h1>{_e(document.title)}</h1>\n<dl class="about">\n')
        for label, value in document.about:
            out.write(f"<dt>{_e(label)}</dt><dd>{_e(value)}</dd>\n")
        out.write("</dl>\n")
        for section in document.sections:
            out.write(f"<section>\n<h2>{_e(section.heading)}</h2>\n")
            for chart in section.charts:
                out.write(f"<figure>\n<figcaption>{_e(chart.title)}</figcaption>\n")
                _chart_svg(out, chart)
                out.write("</figure>\n")
            if section.table is not None:
                count += _html_table(out, section.table)
            out.write("</section>\n")
        out.write("</body>\n</html>\n")
    return count


def _html_table(out: TextIO, table: Table) -> int:
    out.write(f"<table>\n<caption>{_e(table.title)}</caption>\n<thead><tr>")
    out.write("".join(f"<th>{_e(name)}</th>" for name in table.header))
    out.write("</tr></thead>\n<tbody>\n")
    count = 0
    for row in table.rows:
        out.write(f"<tr>{''.join(map(_td, row))}</tr>\n")
        count += 1
    out.write("</tbody>\n</table>\n")
    return count


def _td(cell: Cell) -> str:
    if cell is None:
        return "<td></td>"
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return f'<td class="n">{cell}</td>'
    return f"<td>{_e(cell)}</td>"


def _svg_open(out: TextIO, kind: str, title: str, width: float, height: float) -> None:
    t = _e(title)
    out.write(
        f'<svg class="chart" data-kind="{kind}" role="img" aria-label="{t}" width="{width:.0f}"'
        f' height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}"><title>{t}</title>\n'
    )


def _text(x: float, y: float, text: str, limit: int = 0, anchor: str = "start") -> str:
    """An SVG text, cut to ``limit`` characters with the whole of it in a tooltip."""
    shown = text if not limit or len(text) <= limit else text[: limit - 1] + "…"
    tip = f"<title>{_e(text)}</title>" if shown != text else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{_e(shown)}{tip}</text>'


def _bars_svg(out: TextIO, chart: Bars) -> None:
    label_w, bar_w, row_h = 200, 360, 22
    pairs = list(zip(chart.labels, chart.values, strict=False))
    peak = max((value for _, value in pairs), default=0) or 1  # all zero: no division by zero
    _svg_open(out, "bars", chart.title, label_w + bar_w + 70, row_h * len(pairs) + 6)
    for index, (label, value) in enumerate(pairs):
        y = index * row_h
        width = bar_w * max(value, 0) / peak
        color = _color(chart.colors[index]) if index < len(chart.colors) else "#888888"
        out.write(_text(label_w - 6, y + 15, label, 30, "end"))
        out.write(f'<rect x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row_h - 6}"')
        out.write(f' fill="{color}"/>{_text(label_w + width + 4, y + 15, str(value))}\n')
    out.write("</svg>\n")


def _line_svg(out: TextIO, chart: Line) -> None:
    left, top, plot_w, plot_h = 56, 12, 560, 200
    days = len(chart.days)
    highest = max((value for _, values, _ in chart.series for value in values), default=0)
    peak = highest or 1

    def xy(index: int, value: int) -> tuple[float, float]:
        x = left + (plot_w / 2 if days == 1 else plot_w * index / max(days - 1, 1))
        return x, top + plot_h - plot_h * max(value, 0) / peak

    legend_y = top + plot_h + 40
    _svg_open(out, "line", chart.title, left + plot_w + 80, legend_y + 18 * len(chart.series))
    bottom, right = top + plot_h, left + plot_w
    out.write(f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>')
    out.write(f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}"/>\n')
    out.write(_text(left - 6, bottom + 4, "0", anchor="end"))
    if highest:
        out.write(_text(left - 6, top + 4, str(highest), anchor="end"))
    if days:
        out.write(_text(xy(0, 0)[0], bottom + 18, chart.days[0], anchor="middle"))
    if days > 1:
        out.write(_text(right, bottom + 18, chart.days[-1], anchor="end"))
    out.write("\n")
    for number, (name, values, raw_color) in enumerate(chart.series):
        color = _color(raw_color)
        points = [xy(index, value) for index, value in zip(range(days), values, strict=False)]
        out.write(f"<g><title>{_e(name)}</title>")
        if len(points) == 1:
            out.write(f'<circle cx="{points[0][0]:.1f}" cy="{points[0][1]:.1f}" r="4"')
            out.write(f' fill="{color}"/>')
        elif points:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            out.write(f'<polyline points="{coords}" fill="none" stroke="{color}"')
            out.write(' stroke-width="2"/>')
        y = legend_y + 18 * number
        out.write(f'</g><rect x="{left}" y="{y - 10}" width="12" height="12" fill="{color}"/>')
        out.write(_text(left + 18, y, name) + "\n")
    out.write("</svg>\n")


def _matrix_svg(out: TextIO, chart: Matrix) -> None:
    cell = 14
    rows, columns = chart.rows[:MAX_MATRIX_ROWS], chart.columns[:MAX_MATRIX_COLUMNS]
    left = 7 * min(max((len(row) for row in rows), default=0), 40) + 12
    top = 7 * min(max((len(column) for column in columns), default=0), 24) + 12
    width, height = left + cell * len(columns), top + cell * len(rows)
    _svg_open(out, "matrix", chart.title, width + 4, height + 4)
    out.write(f'<rect x="{left}" y="{top}" width="{width - left}" height="{height - top}"')
    out.write(' fill="#f7f7f7"/>\n')
    for index, column in enumerate(columns):
        x = left + cell * index
        out.write(f'<line class="grid" x1="{x}" y1="{top}" x2="{x}" y2="{height}"/>')
        label = _text(0, 0, column, 24)
        out.write(f'<g transform="translate({x + cell - 3},{top - 4}) rotate(-90)">{label}</g>\n')
    for index, row in enumerate(rows):
        y = top + cell * index
        out.write(f'<line class="grid" x1="{left}" y1="{y}" x2="{width}" y2="{y}"/>')
        out.write(_text(left - 4, y + cell - 3, row, 40, "end") + "\n")
    for (row_index, column_index), status in chart.marks.items():
        if not (0 <= row_index < len(rows) and 0 <= column_index < len(columns)):
            continue
        x, y = left + cell * column_index + 2, top + cell * row_index + 2
        color = STATUS_COLORS.get(status, "#222222")
        # A suspect link is an outline, so that it reads apart from a run's result.
        paint = f'fill="none" stroke="{color}" stroke-width="2"'
        if status != "SUSPECT":
            paint = f'fill="{color}"'
        out.write(f'<rect x="{x}" y="{y}" width="{cell - 4}" height="{cell - 4}" {paint}>')
        out.write(f"<title>{_e(status)}</title></rect>\n")
    out.write("</svg>\n")
    left_out = [
        f"{total - len(shown)} of {total} {noun} left out (the first {len(shown)} are shown)"
        for shown, total, noun in (
            (rows, len(chart.rows), "rows"),
            (columns, len(chart.columns), "columns"),
        )
        if total > len(shown)
    ]
    if left_out:
        out.write(f'<p class="caption">{_e("; ".join(left_out))}.</p>\n')
    out.write('<ul class="legend">')
    for status, color in STATUS_COLORS.items():
        look = f"border:2px solid {color}" if status == "SUSPECT" else f"background:{color}"
        out.write(f'<li><span class="swatch" style="{look}"></span>{_e(status)}</li>')
    out.write("</ul>\n")


def _chart_svg(out: TextIO, chart: Chart) -> None:
    if isinstance(chart, Bars):
        _bars_svg(out, chart)
    elif isinstance(chart, Line):
        _line_svg(out, chart)
    else:
        _matrix_svg(out, chart)


_WRITERS: Final[dict[str, Callable[[Document, Path], int]]] = {
    "XLSX": write_xlsx,
    "CSV": write_csv,
    "HTML": write_html,
}
