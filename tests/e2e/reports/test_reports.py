"""Reports (labs): the contract's ``GET /reports/metadata`` and ``POST /reports/{reportId}``,
the work they start, its progress and failure, and the files opened back (openpyxl, the
csv module, Chromium)."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pytest

from tests.e2e.api import MakeUser, assert_error, created_id, grant
from tests.e2e.browser import chromium
from tests.e2e.testrecords import runs_of
from tests.e2e.topology import System
from tests.e2e.tracegraph import build_graph


@pytest.fixture
def graph(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    return build_graph(admin, project)


def _start(labs: httpx.Client, report: str, project: int, fmt: str, **parameters: Any) -> str:
    response = labs.post(
        f"/reports/{report}", json={"project": project, "format": fmt, "parameters": parameters}
    )
    assert response.status_code == 202, response.text
    body = response.json()
    assert response.headers["location"] == body["meta"]["location"]
    assert body["meta"]["location"].endswith(f"/rest/labs/reports/works/{body['data']['workId']}")
    assert body["data"]["status"] in ("QUEUED", "RUNNING", "DONE")
    return str(body["data"]["workId"])


def _finished(labs: httpx.Client, work: str, seconds: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        response = labs.get(f"/reports/works/{work}")
        assert response.status_code == 200, response.text
        data = dict(response.json()["data"])
        if data["status"] in ("DONE", "FAILED"):
            return data
        assert time.monotonic() < deadline, data
        time.sleep(0.1)


def _file(labs: httpx.Client, data: dict[str, Any]) -> httpx.Response:
    assert data["status"] == "DONE", data
    response = labs.get(data["file"])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(data["mediaType"].split(";")[0])
    assert int(response.headers["content-length"]) == data["size"] == len(response.content)
    assert data["fileName"] in response.headers["content-disposition"]
    return response


def test_metadata_lists_the_reports_with_their_parameters(
    labs: httpx.Client, admin: httpx.Client, project: dict[str, Any]
) -> None:
    response = labs.get("/reports/metadata", params={"project": project["id"]})
    assert response.status_code == 200, response.text
    reports = {r["id"]: r for r in response.json()["data"]}
    assert set(reports) == {
        "trace-matrix",
        "coverage-summary",
        "test-cycle-summary",
        "baseline-comparison",
        "reqif-export",
    }
    cycle = reports["test-cycle-summary"]
    assert cycle["formats"] == ["XLSX", "CSV", "HTML"]
    assert reports["reqif-export"]["formats"] == ["REQIF", "REQIFZ"]
    assert cycle["parameters"] == [
        {
            "name": "testCycle",
            "type": "integer",
            "required": True,
            "description": "The test cycle.",
        }
    ]
    direction = next(p for p in reports["trace-matrix"]["parameters"] if p["name"] == "direction")
    assert (direction["choices"], direction["defaultValue"]) == (
        ["downstream", "upstream"],
        "downstream",
    )
    assert_error(labs.get("/reports/metadata", params={"project": 987654}), 404)
    assert_error(labs.get("/reports/metadata"), 400, "project")
    assert admin.get("/reports/metadata", params={"project": project["id"]}).status_code == 404


def test_coverage_as_a_spreadsheet_holds_what_the_api_answers(
    labs: httpx.Client, graph: dict[str, Any], tmp_path: Path
) -> None:
    project = graph["project"]["id"]
    work = _start(
        labs, "coverage-summary", project, "XLSX", itemType=graph["req"], testCycle=graph["cycle"]
    )
    data = _finished(labs, work)
    assert (data["progress"], data["createdBy"]) == (100, data["createdBy"])
    assert data["parameters"] == {"itemType": graph["req"], "testCycle": graph["cycle"]}
    assert data["dataFrom"] <= data["dataTo"]
    path = tmp_path / data["fileName"]
    path.write_bytes(_file(labs, data).content)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames[0] == "About"
    items = book["Items"]
    assert items.freeze_panes == "A2"
    assert [c.value for c in items[1]] == [
        "Item",
        "Name",
        "Verdict",
        "Test cases",
        "Test case keys",
    ]
    assert items[1][0].font.bold
    api = labs.get(
        "/coverage",
        params={"project": project, "itemType": graph["req"], "testCycle": graph["cycle"]},
    ).json()
    expected = [
        [e["item"]["documentKey"], e["item"]["name"], e["verdict"], len(e["testCases"])]
        for e in api["data"]
    ]
    assert [[c.value for c in row[:4]] for row in items.iter_rows(min_row=2)] == expected
    verdicts = book["Items by verdict"]
    counted = {row[0].value: row[1].value for row in verdicts.iter_rows(min_row=2)}
    assert counted == {k: v for k, v in api["meta"]["totals"].items() if k != "ALL"}
    about = {row[0].value: row[1].value for row in book["About"].iter_rows() if row[0].value}
    assert about["testCycle"] == str(graph["cycle"])
    assert "Data read" in about


def test_a_report_at_a_baseline_reads_one_moment_and_says_so(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any], tmp_path: Path
) -> None:
    project = graph["project"]
    baseline = created_id(labs.post("/baselines", json={"name": "Audit", "project": project["id"]}))
    taken = admin.get(f"/baselines/{baseline}").json()["data"]["createdDate"]
    r1 = graph["r"][0]
    response = admin.patch(
        f"/items/{r1}", json=[{"op": "replace", "path": "/fields/name", "value": "Renamed"}]
    )
    assert response.status_code == 200, response.text
    work = _start(
        labs, "coverage-summary", project["id"], "XLSX", itemType=graph["req"], baseline=baseline
    )
    data = _finished(labs, work)
    path = tmp_path / data["fileName"]
    path.write_bytes(_file(labs, data).content)
    book = openpyxl.load_workbook(path)
    names = [row[1].value for row in book["Items"].iter_rows(min_row=2)]
    assert names == ["Need 1", "Need 2", "Need 3"]  # as they were, not "Renamed"
    about = {row[0].value: row[1].value for row in book["About"].iter_rows() if row[0].value}
    assert about["Data as of"].startswith(taken)
    assert "Data read" not in about
    assert_error(
        labs.post(
            "/reports/trace-matrix",
            json={
                "project": project["id"],
                "format": "CSV",
                "parameters": {"itemType": graph["req"], "asOf": "last week"},
            },
        ),
        400,
        "asOf",
    )


def test_a_cycle_summary_as_csv_lists_every_run(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    cycle = graph["cycle"]
    work = _start(labs, "test-cycle-summary", graph["project"]["id"], "CSV", testCycle=cycle)
    data = _finished(labs, work)
    rows = list(csv.reader(io.StringIO(_file(labs, data).content.decode("utf-8-sig"))))
    assert rows[0] == ["Runs"]
    assert rows[1] == ["Run", "Name", "Test case", "Status", "Executed", "Assigned to"]
    runs = runs_of(admin, cycle)
    assert sorted(r[0] for r in rows[2:]) == sorted(r["documentKey"] for r in runs)
    statuses = {r[0]: r[3] for r in rows[2:]}
    assert sorted(statuses.values()) == ["FAILED", "NOT_RUN", "PASSED"]


def test_a_trace_matrix_as_a_page_people_look_at(
    labs: httpx.Client, graph: dict[str, Any], tmp_path: Path
) -> None:
    work = _start(
        labs,
        "trace-matrix",
        graph["project"]["id"],
        "HTML",
        itemType=graph["req"],
        depth=2,
        testCycle=graph["cycle"],
    )
    data = _finished(labs, work)
    page_file = tmp_path / "trace.html"
    page_file.write_bytes(_file(labs, data).content)
    requested: list[str] = []
    with chromium() as browser:
        page = browser.new_page()
        page.on("request", lambda r: requested.append(r.url))
        page.goto(page_file.as_uri())
        assert page.locator("h1").inner_text().startswith("Trace matrix")
        matrix = page.locator("[data-kind=matrix]")
        assert matrix.count() == 1
        assert matrix.bounding_box() is not None  # drawn, with a size
        headings = page.locator("h2").all_inner_texts()
        assert {"Level 1", "Level 2"} <= set(headings)
        level_two = page.locator("table").last.inner_text()
        assert "Check 3" in level_two
    assert requested == [page_file.as_uri()]  # nothing fetched from anywhere


def test_a_baseline_comparison_lists_the_changes(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any], tmp_path: Path
) -> None:
    project = graph["project"]["id"]
    r1 = graph["r"][0]
    baseline = created_id(
        labs.post("/baselines", json={"name": "Before", "origin": {"project": project}})
    )
    assert (
        admin.patch(
            f"/items/{r1}", json=[{"op": "replace", "path": "/fields/name", "value": "Changed"}]
        ).status_code
        == 200
    )
    work = _start(labs, "baseline-comparison", project, "XLSX", baseline=baseline)
    data = _finished(labs, work)
    path = tmp_path / "changes.xlsx"
    path.write_bytes(_file(labs, data).content)
    changes = openpyxl.load_workbook(path)["Changes"]
    found = [(r[0].value, r[1].value, r[2].value) for r in changes.iter_rows(min_row=2)]
    assert ("ITEM", "CHANGED", r1) in found


def test_a_report_that_cannot_be_made_fails_with_the_reason(
    labs: httpx.Client, project: dict[str, Any]
) -> None:
    work = _start(labs, "test-cycle-summary", project["id"], "XLSX", testCycle=987654)
    data = _finished(labs, work)
    assert data["status"] == "FAILED"
    assert "987654" in data["message"]
    assert "file" not in data
    assert_error(labs.get(f"/reports/works/{work}/file"), 404, "FAILED")


def test_bad_requests_are_refused_at_once(labs: httpx.Client, project: dict[str, Any]) -> None:
    pid = project["id"]

    def start(report: str, **body: Any) -> httpx.Response:
        return labs.post(f"/reports/{report}", json={"project": pid, **body})

    assert_error(start("nonsense"), 404, "coverage-summary")
    assert_error(start("test-cycle-summary"), 400, "testCycle")
    assert_error(start("test-cycle-summary", parameters={"testCycle": "x"}), 400, "testCycle")
    assert_error(start("test-cycle-summary", parameters={"testCycle": 1, "color": 2}), 400, "color")
    assert_error(start("test-cycle-summary", format="PDF", parameters={"testCycle": 1}), 400)
    assert_error(
        start("trace-matrix", parameters={"itemType": 1, "depth": 9}), 400, "between 1 and 5"
    )
    assert_error(
        labs.post(
            "/reports/test-cycle-summary", json={"project": 987654, "parameters": {"testCycle": 1}}
        ),
        404,
    )
    assert_error(labs.get("/reports/works/no-such-work"), 404)


def test_works_are_their_owners(
    labs: httpx.Client,
    admin: httpx.Client,
    graph: dict[str, Any],
    system: System,
    make_user: MakeUser,
) -> None:
    project = graph["project"]["id"]
    user, name, password, _ = make_user()
    with system.client((name, password), version="labs") as stranger:
        # Without a role on the project: refused before anything is queued.
        refused = stranger.post(
            "/reports/test-cycle-summary",
            json={"project": project, "parameters": {"testCycle": graph["cycle"]}},
        )
        assert refused.status_code in (401, 404), refused.text
        grant(admin, project, "READ_ONLY", user=user)
        own = _start(stranger, "test-cycle-summary", project, "CSV", testCycle=graph["cycle"])
        assert _finished(stranger, own)["status"] == "DONE"
        others = _start(labs, "test-cycle-summary", project, "CSV", testCycle=graph["cycle"])
        assert_error(stranger.get(f"/reports/works/{others}"), 404)
        assert_error(stranger.get(f"/reports/works/{others}/file"), 404)
        listed = [w["workId"] for w in stranger.get("/reports/works").json()["data"]]
        assert listed == [own]
        everyone = [w["workId"] for w in labs.get("/reports/works").json()["data"]]
        assert {own, others} <= set(everyone)
