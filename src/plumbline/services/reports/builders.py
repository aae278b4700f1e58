"""Each report's making: its data read page by page through the REST API (``reading``),
rows spooled to a file as they come, and a ``render.Document`` whose tables read the spool
back, so neither the reading nor the writing holds more than a page and the charts'
aggregates in memory."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson

from plumbline.common.dates import format_datetime, utcnow
from plumbline.services.reports.catalog import REPORTS
from plumbline.services.reports.reading import Reader, ReportFailed
from plumbline.services.reports.render import (
    STATUS_COLORS,
    VERDICT_COLORS,
    Bars,
    Cell,
    Document,
    Line,
    Matrix,
    Section,
    Table,
)

Progress = Callable[[int, str], Awaitable[None]]
#: The most rows and columns a trace matrix draws (the sheets hold everything).
MATRIX_ROWS = 2_000
MATRIX_COLUMNS = 200
VERDICTS = ("PASSING", "FAILING", "BLOCKED", "NOT_RUN", "NOT_COVERED")
STATUSES = ("PASSED", "FAILED", "BLOCKED", "INPROGRESS", "NOT_RUN")
CHANGE_HEADER = (
    "Kind", "Change", "Id", "From version", "To version", "Changed fields", "From item",
    "To item", "Relationship type",
)  # fmt: skip


class Spool:
    """Rows kept in files while a report is read, read back once when it is written."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files: dict[str, Any] = {}
        self.counts: Counter[str] = Counter()

    def add(self, name: str, row: Sequence[Cell]) -> None:
        out = self.files.get(name)
        if out is None:
            out = self.files[name] = (self.directory / f"{len(self.files)}.jsonl").open("wb")
        out.write(orjson.dumps(list(row)) + b"\n")
        self.counts[name] += 1

    def rows(self, name: str) -> Iterator[list[Cell]]:
        """The rows spooled as ``name``, in order (none when none were)."""
        out = self.files.get(name)
        if out is None:
            return
        out.close()
        with Path(out.name).open("rb") as spooled:
            for line in spooled:
                yield orjson.loads(line)

    def close(self) -> None:
        for out in self.files.values():
            out.close()


def _about(project: Any, params: dict[str, Any], reader: Reader) -> list[tuple[str, str]]:
    lines = [("Project", f"{project['fields'].get('name', '')} ({project['id']})")]
    lines += [
        (name, ", ".join(map(str, v)) if isinstance(v, list) else str(v))
        for name, v in params.items()
    ]
    if reader.as_of is not None:
        lines.append(
            ("Data as of", f"{reader.as_of}: one consistent moment, read from the history")
        )
    elif reader.first_read is not None and reader.last_read is not None:
        lines.append(
            (
                "Data read",
                f"{format_datetime(reader.first_read)} to {format_datetime(reader.last_read)}, "
                "page by page: what changed meanwhile may show in part",
            )
        )
    lines.append(("Generated", format_datetime(utcnow())))
    return lines


async def _names(reader: Reader, path: str) -> dict[int, str]:
    found: dict[int, str] = {}
    async for body, _ in reader.pages(path):
        found |= {int(r["id"]): str(r.get("name") or r.get("display") or "") for r in body["data"]}
    return found


async def _report(progress: Progress, done: int, total: int, what: str) -> None:
    await progress(min(99, 5 + 90 * done // max(total, 1)), f"{what}: {done} of {total}")


def _scope(params: dict[str, Any]) -> dict[str, Any]:
    """The runs' scope and the moment the data is read at, as the API takes them."""
    named = ("testCycle", "testPlan", "release", "asOf", "baseline")
    return {k: params[k] for k in named if k in params}


def _run(node: dict[str, Any]) -> tuple[str, str]:
    run = node.get("latestRun")
    if run is None:
        return ("NO_RUN", "") if node.get("type") == "items" else ("", "")
    return str(run["testRunStatus"]), str(run.get("executionDate", ""))


async def trace_matrix(
    reader: Reader, project: int, params: dict[str, Any], spool: Spool, progress: Progress
) -> Document:
    """A sheet per level, and the first level as a matrix."""
    info = (await reader.get(f"v1/projects/{project}"))["data"]
    rel_names = await _names(reader, "v1/relationshiptypes")
    query = {
        "project": project,
        "itemType": params["itemType"],
        "direction": params["direction"],
        "depth": params["depth"],
        "relationshipType": params.get("relationshipType", []),
        **_scope(params),
    }
    rows: list[str] = []
    columns: dict[int, int] = {}
    column_labels: list[str] = []
    marks: dict[tuple[int, int], str] = {}
    related: set[int] = set()
    levels = 0
    done = 0
    async for body, total in reader.pages("labs/trace", query):
        for trace in body["data"]:
            root = trace["item"]
            keys = {root["id"]: root.get("documentKey", "")}
            row_index = len(rows) if len(rows) < MATRIX_ROWS else None
            if row_index is not None:
                rows.append(_label(root))
            for number, level in enumerate(trace["levels"], start=1):
                levels = max(levels, number)
                for link in level:
                    node = link["item"]
                    keys[node["id"]] = node.get("documentKey", "")
                    status, day = _run(node)
                    spool.add(
                        f"level {number}",
                        [
                            root.get("documentKey", ""),
                            root.get("name", ""),
                            keys.get(link["fromItem"], str(link["fromItem"])),
                            node.get("documentKey", ""),
                            node.get("name", ""),
                            rel_names.get(link["relationshipType"], str(link["relationshipType"])),
                            bool(link["suspect"]),
                            status,
                            day,
                        ],
                    )
                    if number != 1 or row_index is None:
                        continue
                    related.add(node["id"])
                    column = columns.get(node["id"])
                    if column is None and len(columns) < MATRIX_COLUMNS:
                        column = columns[node["id"]] = len(columns)
                        column_labels.append(
                            f"{node.get('documentKey', '')} {node.get('name', '')}"
                        )
                    if column is not None:
                        word = status if status in STATUS_COLORS else "LINKED"
                        marks[(row_index, column)] = "SUSPECT" if link["suspect"] else word
            done += 1
        await _report(progress, done, total, "items traced")
    header = [
        "Item", "Item name", "From", "Related", "Related name", "Relationship type", "Suspect",
        "Latest result", "Executed",
    ]  # fmt: skip
    drawn = "Level 1 as a matrix"
    if done > len(rows) or len(related) > len(columns):
        drawn += (
            f" (the first {len(rows)} of {done} items, and {len(columns)} of the "
            f"{len(related)} items they reach: the sheets hold all)"
        )
    sections = [
        Section(
            drawn,
            charts=[Matrix("Trace matrix", rows, column_labels, marks)],
        ),
        *(
            Section(
                f"Level {n}",
                table=Table(f"Level {n}", header, spool.rows(f"level {n}")),
            )
            for n in range(1, levels + 1)
        ),
    ]
    return Document(
        f"Trace matrix: {info['fields'].get('name', '')}", _about(info, params, reader), sections
    )


async def coverage_summary(
    reader: Reader, project: int, params: dict[str, Any], spool: Spool, progress: Progress
) -> Document:
    """The totals as bars, the items with their verdicts, and every verifying test case."""
    info = (await reader.get(f"v1/projects/{project}"))["data"]
    query = {
        "project": project,
        "itemType": params["itemType"],
        "relationshipType": params.get("relationshipType", []),
        **_scope(params),
        **({"filter": params["filter"]} if "filter" in params else {}),
    }
    totals: dict[str, int] = {}
    done = 0
    async for body, total in reader.pages("labs/coverage", query):
        totals = body["meta"]["totals"]
        for entry in body["data"]:
            item, cases = entry["item"], entry["testCases"]
            spool.add(
                "items",
                [
                    item.get("documentKey", ""),
                    item.get("name", ""),
                    entry["verdict"],
                    len(cases),
                    "; ".join(c.get("documentKey", "") for c in cases),
                ],
            )
            for case in cases:
                status, day = _run(case)
                spool.add(
                    "cases",
                    [
                        item.get("documentKey", ""),
                        case.get("documentKey", ""),
                        case.get("name", ""),
                        status,
                        day,
                    ],
                )
            done += 1
        await _report(progress, done, total, "items judged")
    bars = Bars(
        "Items by verdict",
        VERDICTS,
        [int(totals.get(v, 0)) for v in VERDICTS],
        [VERDICT_COLORS[v] for v in VERDICTS],
    )
    sections = [
        Section("Totals", charts=[bars]),
        Section(
            "Items",
            table=Table(
                "Items",
                ["Item", "Name", "Verdict", "Test cases", "Test case keys"],
                spool.rows("items"),
            ),
        ),
        Section(
            "Verifying test cases",
            table=Table(
                "Test cases",
                ["Item", "Test case", "Test case name", "Latest result", "Executed"],
                spool.rows("cases"),
            ),
        ),
    ]
    return Document(
        f"Coverage: {info['fields'].get('name', '')}", _about(info, params, reader), sections
    )


def _key(record: Any) -> str:
    return str(record.get("documentKey", ""))


def _label(record: Any) -> str:
    return f"{_key(record)} {record.get('name', '')}"


def _running(counts: Counter[str], days: Sequence[str]) -> list[int]:
    """The running total of ``counts`` over ``days``."""
    return list(itertools.accumulate(counts[d] for d in days))


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


async def test_cycle_summary(
    reader: Reader, project: int, params: dict[str, Any], spool: Spool, progress: Progress
) -> Document:
    """Runs by status as bars, execution over time as lines, and every run."""
    info = (await reader.get(f"v1/projects/{project}"))["data"]
    cycle = (await reader.get(f"v1/testcycles/{params['testCycle']}"))["data"]
    if cycle.get("project") != project:
        raise ReportFailed(f"Test cycle {params['testCycle']} is not in project {project}.")
    statuses: Counter[str] = Counter()
    executed: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    done = 0
    async for body, total in reader.pages(f"v1/testcycles/{params['testCycle']}/testruns"):
        for run in body["data"]:
            fields = run["fields"]
            status = str(fields.get("testRunStatus") or "NOT_RUN")
            day = str(fields.get("executionDate") or "")
            statuses[status] += 1
            if day and status != "NOT_RUN":
                executed[day[:10]] += 1
                if status == "PASSED":
                    passed[day[:10]] += 1
            spool.add(
                "runs",
                [
                    run.get("documentKey", ""),
                    fields.get("name", ""),
                    fields.get("testCase"),
                    status,
                    day,
                    fields.get("assignedTo"),
                ],
            )
            done += 1
        await _report(progress, done, total, "runs read")
    charts: list[Bars | Line] = [
        Bars(
            "Runs by status",
            STATUSES,
            [statuses[s] for s in STATUSES],
            [STATUS_COLORS[s] for s in STATUSES],
        )
    ]
    if executed:
        days = _days(date.fromisoformat(min(executed)), date.fromisoformat(max(executed)))
        names = [d.isoformat() for d in days]
        charts.append(
            Line(
                "Execution over time (runs by the day of their last result)",
                names,
                [
                    (
                        "With a result",
                        list(itertools.accumulate(executed[d] for d in names)),
                        "#1f77b4",
                    ),
                    (
                        "Passed",
                        list(itertools.accumulate(passed[d] for d in names)),
                        STATUS_COLORS["PASSED"],
                    ),
                    ("All runs", [done] * len(names), "#999999"),
                ],
            )
        )
    sections = [
        Section("Results", charts=charts),
        Section(
            "Runs",
            table=Table(
                "Runs",
                ["Run", "Name", "Test case", "Status", "Executed", "Assigned to"],
                spool.rows("runs"),
            ),
        ),
    ]
    title = f"Test cycle summary: {cycle['fields'].get('name', '')}"
    return Document(title, _about(info, params, reader), sections)


async def baseline_comparison(
    reader: Reader, project: int, params: dict[str, Any], spool: Spool, progress: Progress
) -> Document:
    """What changed between two moments, counted as bars and listed."""
    info = (await reader.get(f"v1/projects/{project}"))["data"]
    baseline = (await reader.get(f"v1/baselines/{params['baseline']}"))["data"]
    if baseline.get("project") != project:
        raise ReportFailed(f"Baseline {params['baseline']} is not of project {project}.")
    query = {"to": params["to"]} if "to" in params else {}
    counted: Counter[str] = Counter()
    done = 0
    async for body, total in reader.pages(f"labs/baselines/{params['baseline']}/compare", query):
        for change in body["data"]:
            label = f"{change['kind'].title()}s {change['change'].lower()}"
            counted[label] += 1
            spool.add(
                "changes",
                [
                    change["kind"],
                    change["change"],
                    change["id"],
                    change.get("fromVersion"),
                    change.get("toVersion"),
                    ", ".join(change.get("changedFields", [])),
                    change.get("fromItem"),
                    change.get("toItem"),
                    change.get("relationshipType"),
                ],
            )
            done += 1
        await _report(progress, done, total, "changes read")
    labels = [
        "Items added", "Items removed", "Items changed", "Relationships added",
        "Relationships removed",
    ]  # fmt: skip
    colors = ["#2ca02c", "#d62728", "#ff7f0e", "#17becf", "#9467bd"]
    sections = [
        Section(
            "Changes",
            charts=[Bars("Changes by kind", labels, [counted[x] for x in labels], colors)],
        ),
        Section(
            "Changes",
            table=Table(
                "Changes",
                CHANGE_HEADER,
                spool.rows("changes"),
            ),
        ),
    ]
    to = f"baseline {params['to']}" if "to" in params else "now"
    title = f"Baseline comparison: {baseline['name']} ({baseline['createdDate']}) to {to}"
    return Document(title, _about(info, params, reader), sections)


BUILDERS = {
    "trace-matrix": trace_matrix,
    "coverage-summary": coverage_summary,
    "test-cycle-summary": test_cycle_summary,
    "baseline-comparison": baseline_comparison,
}
#: Reports written as files of their own (not a Document rendered): ``reqif.export``.
EXPORTS = frozenset(("reqif-export",))
assert set(BUILDERS) | EXPORTS == set(REPORTS)
