"""ReqIF export (labs): ``GET /projects/{id}/reqif`` of a project, an item's subtree, a
filter's items and a baseline, as ``.reqif`` and ``.reqifz``, and the ``reqif-export``
report; every document validated against ReqIF 1.2's schema and read back."""

from __future__ import annotations

import io
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.api import MakeUser, assert_error, created_id, grant
from tests.e2e.topology import System
from tests.e2e.tracegraph import build_graph, new_item
from tests.reqifdocs import NS, objects_of, relations_of, tree_of
from tests.reqifschema import assert_valid


@pytest.fixture
def graph(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    """The trace graph, and a folder F holding r4 holding r5; r1 has a rich description
    and a priority."""
    g = build_graph(admin, project)
    folder = new_item(admin, project, "FLD", "Folder F")
    r4 = _child(admin, project, folder, "Need 4")
    r5 = _child(admin, project, r4, "Need 5")
    priority = next(f for f in project["types"]["REQ"]["fields"] if f["name"] == "priority")[
        "pickList"
    ]
    high = next(
        o["id"]
        for o in admin.get(f"/picklists/{priority}/options").json()["data"]
        if o["name"] == "High"
    )
    response = admin.patch(
        f"/items/{g['r'][0]}",
        json=[
            {
                "op": "add",
                "path": "/fields/description",
                "value": "<p>Must <b>hold</b></p><ul><li>one</li><li>two</li></ul>"
                "<script>alert(1)</script>",
            },
            {"op": "add", "path": "/fields/priority", "value": high},
        ],
    )
    assert response.status_code == 200, response.text
    return g | {"folder": folder, "r4": r4, "r5": r5, "high": high}


def _child(admin: httpx.Client, project: dict[str, Any], parent: int, name: str) -> int:
    body = {
        "project": project["id"],
        "itemType": project["types"]["REQ"]["id"],
        "location": {"parent": {"item": parent}},
        "fields": {"name": name},
    }
    return created_id(admin.post("/items", json=body))


def _export(labs: httpx.Client, project: int, **params: Any) -> httpx.Response:
    response = labs.get(f"/projects/{project}/reqif", params=params)
    assert response.status_code == 200, response.text
    return response


def _global_ids(admin: httpx.Client, *items: int) -> list[str]:
    return [admin.get(f"/items/{i}").json()["data"]["globalId"] for i in items]


def test_a_project_exports_as_valid_reqif_with_its_tree_values_and_relations(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    project = graph["project"]
    r1, r2, r3 = graph["r"]
    t1, t2, t3 = graph["t"]
    response = _export(labs, project["id"])
    assert response.headers["content-type"].startswith("application/xml")
    assert f"{project['key']}.reqif" in response.headers["content-disposition"]
    doc = assert_valid(response.content)
    ids = dict(
        zip(
            ("r1", "r2", "r3", "t1", "t2", "t3", "F", "r4", "r5"),
            _global_ids(admin, r1, r2, r3, t1, t2, t3, graph["folder"], graph["r4"], graph["r5"]),
            strict=True,
        )
    )
    objects = objects_of(doc)
    assert set(objects) == set(ids.values())
    first = objects[ids["r1"]]
    assert first["type"] == "PL-TYPE-REQ"
    assert first["values"]["name"] == "Need 1"
    assert first["values"]["ReqIF.ForeignID"].startswith(project["key"])
    assert first["values"]["priority"] == [f"PL-EV-{graph['high']}"]
    rich = first["values"]["description"]
    assert [li.text for li in rich.iterfind(".//x:li", NS)] == ["one", "two"]
    assert rich.find(".//x:b", NS).text == "hold"
    assert b"alert" not in response.content  # no script, nor its text
    assert tree_of(doc)[ids["F"]] == [ids["r4"]]
    assert tree_of(doc)[ids["r4"]] == [ids["r5"]]
    assert {ids[k] for k in ("r1", "r2", "r3", "t1", "F")} <= set(tree_of(doc)[""])
    assert relations_of(doc) == {
        (ids["r1"], ids["t1"], "Verified by"),
        (ids["r1"], ids["t2"], "Verified by"),
        (ids["r1"], ids["r2"], "Related to"),
        (ids["r2"], ids["t3"], "Verified by"),
    }
    # The same identifiers every time: objects, relations, hierarchy.
    again = assert_valid(_export(labs, project["id"]).content)
    for path in (".//r:SPEC-OBJECT", ".//r:SPEC-RELATION", ".//r:SPEC-HIERARCHY"):
        assert [e.get("IDENTIFIER") for e in doc.iterfind(path, NS)] == [
            e.get("IDENTIFIER") for e in again.iterfind(path, NS)
        ]


def test_a_subtree_a_baseline_and_a_zip(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    project = graph["project"]
    folder, r4, r5 = graph["folder"], graph["r4"], graph["r5"]
    f, four, five = _global_ids(admin, folder, r4, r5)
    subtree = assert_valid(_export(labs, project["id"], item=r4).content)
    assert set(objects_of(subtree)) == {four, five}
    assert tree_of(subtree) == {"": [four], four: [five]}
    zipped = _export(labs, project["id"], item=folder, format="reqifz")
    assert zipped.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        assert archive.namelist() == [f"{project['key']}.reqif"]
        inside = assert_valid(archive.read(archive.namelist()[0]))
    assert tree_of(inside) == {"": [f], f: [four], four: [five]}
    # A baseline: the items as it holds them.
    baseline = created_id(labs.post("/baselines", json={"name": "Sent", "project": project["id"]}))
    response = admin.patch(
        f"/items/{r4}", json=[{"op": "replace", "path": "/fields/name", "value": "Changed"}]
    )
    assert response.status_code == 200, response.text
    sent = objects_of(assert_valid(_export(labs, project["id"], baseline=baseline).content))
    assert sent[four]["values"]["name"] == "Need 4"
    now = objects_of(assert_valid(_export(labs, project["id"]).content))
    assert now[four]["values"]["name"] == "Changed"


def test_the_export_as_a_report_and_what_is_refused(
    admin: httpx.Client,
    labs: httpx.Client,
    graph: dict[str, Any],
    system: System,
    make_user: MakeUser,
) -> None:
    project = graph["project"]["id"]
    response = labs.post(
        "/reports/reqif-export", json={"project": project, "format": "REQIFZ", "parameters": {}}
    )
    assert response.status_code == 202, response.text
    work = response.json()["data"]["workId"]
    deadline = time.monotonic() + 60
    while (data := labs.get(f"/reports/works/{work}").json()["data"])["status"] not in (
        "DONE",
        "FAILED",
    ):
        assert time.monotonic() < deadline, data
        time.sleep(0.1)
    assert data["status"] == "DONE", data
    assert data["fileName"].endswith(".reqifz")
    with zipfile.ZipFile(io.BytesIO(labs.get(data["file"]).content)) as archive:
        assert len(objects_of(assert_valid(archive.read(archive.namelist()[0])))) == 9
    assert_error(labs.get(f"/projects/{project}/reqif", params={"format": "pdf"}), 400, "reqifz")
    assert_error(
        labs.get(f"/projects/{project}/reqif", params={"item": graph["r4"], "filter": 1}),
        400,
        "at most one",
    )
    assert_error(labs.get(f"/projects/{project}/reqif", params={"item": 987654}), 404, "987654")
    assert_error(labs.get("/projects/987654/reqif"), 404)
    user, name, password, _ = make_user()
    with system.client((name, password), version="labs") as stranger:
        assert_error(stranger.get(f"/projects/{project}/reqif"), 401)
    grant(admin, project, "READ_ONLY", user=user)
    with system.client((name, password), version="labs") as reader:
        assert_valid(_export(reader, project).content)
    v1 = str(labs.base_url).replace("/labs", "/v1")
    assert labs.get(f"{v1}/projects/{project}/reqif").status_code == 404


def test_the_command_writes_the_export_to_a_file(
    system: System, graph: dict[str, Any], tmp_path: Path
) -> None:
    project = graph["project"]["id"]
    target = tmp_path / "out.reqifz"

    def command(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plumbline.cli", "reqif", "export", "--project", str(project),
             "--url", system.url, "--user", "admin", "--password", system.admin_password,
             "--quiet", *more],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    done = command("--format", "reqifz", "-o", str(target), "--item", str(graph["folder"]))
    assert done.returncode == 0, done.stderr
    assert f"exported project {project} to {target}" in done.stdout
    with zipfile.ZipFile(target) as archive:
        assert len(objects_of(assert_valid(archive.read(archive.namelist()[0])))) == 3
    refused = command("-o", str(tmp_path / "none.reqif"), "--item", "987654")
    assert refused.returncode == 1
    assert "404" in refused.stderr
    assert "987654" in refused.stderr
    assert not (tmp_path / "none.reqif").exists()
    assert not (tmp_path / "none.reqif.partial").exists()
    usage = command("--item", "1", "--filter", "2")
    assert usage.returncode == 2
    assert "at most one" in usage.stderr
