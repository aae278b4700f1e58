"""ReqIF documents StrictDoc wrote (``tests/data/strictdoc``: its own exporter, two
documents in one file, a custom grammar with single and multiple choice fields, XHTML or
escaped strings, sections three deep, parent relations across documents): what cannot
be mapped comes with a configuration that ``plumbline config apply`` takes, then they
import with the suggested mapping and export back schema-valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.api import eventually, new_project, project_key
from tests.e2e.topology import System, run_cli
from tests.reqifdocs import objects_of
from tests.reqifschema import assert_valid

STRICTDOC = Path(__file__).parents[2] / "data" / "strictdoc"


def _import(
    labs: httpx.Client, project: int, data: bytes, mapping: dict[str, Any], **params: str
) -> httpx.Response:
    return labs.post(
        f"/projects/{project}/reqif",
        params=params,
        files={"file": ("strictdoc.reqif", data), "mapping": (None, json.dumps(mapping))},
    )


def _depth(items: dict[int, dict[str, Any]], item: dict[str, Any]) -> int:
    parent = item["location"]["parent"].get("item")
    return 1 if parent is None else 1 + _depth(items, items[parent])


def test_strictdoc_documents_import_with_the_suggested_configuration_and_export_back(
    system: System,
    admin: httpx.Client,
    labs: httpx.Client,
    project: dict[str, Any],
    tmp_path: Path,
) -> None:
    xhtml = (STRICTDOC / "strictdoc-xhtml.reqif").read_bytes()
    assert_valid(xhtml)
    asked = {"types": {"REQUIREMENT": "SDREQ"}, "attributes": {"MID": None}}
    refused = _import(labs, project["id"], xhtml, asked)
    assert refused.status_code == 400, refused.text
    suggested = refused.json()["suggested"]
    config = suggested["configuration"]
    # One item type per name (StrictDoc writes the types once per document), with the
    # key asked for, ReqIF.Text as the description, the multiple choice a multi-select.
    assert [t["typeKey"] for t in config["itemTypes"]] == ["SDREQ", "SECTION"]
    fields = {f["name"]: f for f in config["itemTypes"][0]["fields"]}
    assert "mid" not in fields
    assert fields["description"]["fieldType"] == "TEXT"
    assert fields["targetPlatforms"] == {
        "name": "targetPlatforms",
        "label": "Target platforms",
        "fieldType": "MULTI_LOOKUP",
        "pickList": "Target platforms",
    }
    assert {r["name"] for r in config["relationshipTypes"]} == {"Parent", "Refines"}
    document = tmp_path / "suggested.yaml"
    document.write_text(json.dumps(config))
    applied = run_cli(system, "config", "apply", str(document))
    assert applied.returncode == 0, applied.stderr
    mapping = suggested["mapping"]
    mapping["attributes"] = {**mapping.get("attributes", {}), "MID": None}

    # The configuration reaches the gateway's catalog by an event: a dry run tells when.
    assert eventually(
        lambda: _import(labs, project["id"], xhtml, mapping, dryRun="true").status_code == 200
    ), _import(labs, project["id"], xhtml, mapping, dryRun="true").text
    done = _import(labs, project["id"], xhtml, mapping)
    assert done.status_code == 200, done.text
    answer = done.json()["data"]
    # 15 objects (9 requirements, 5 sections, a text), a folder per document; 9 relations.
    assert (answer["items"], answer["relationships"]) == (17, 9)
    assert answer["byType"] == {"SDREQ": 9, "SECTION": 5, "TXT": 1, "FLD": 2}
    items = {
        i["id"]: i
        for page in (0, 50)
        for i in admin.get(
            "/items", params={"project": project["id"], "startAt": page, "maxResults": 50}
        ).json()["data"]
    }
    assert len(items) == 17
    by_global = {i["globalId"]: i for i in items.values()}
    first = by_global["SYS-MID-001"]["fields"]
    assert first["name"] == "Import of ReqIF files"
    assert "<p>The system shall import ReqIF 1.2 files.</p>" in first["description"]
    assert isinstance(first["priority"], int)
    assert len(first["targetPlatforms"]) == 2
    # Folder, three sections, a requirement: five deep.
    assert max(_depth(items, i) for i in items.values()) == 5
    exported = assert_valid(labs.get(f"/projects/{project['id']}/reqif").content)
    assert len(objects_of(exported)) == 17
    # The same document again changes nothing.
    again = _import(labs, project["id"], xhtml, mapping).json()["data"]
    assert (again["items"], again["versions"], again["unchanged"]) == (0, 0, 17)

    # The same documents as escaped strings, other identifiers: into a project of its own.
    strings = (STRICTDOC / "strictdoc-sdoc.reqif").read_bytes()
    assert_valid(strings)
    second = _import(labs, new_project(admin, project_key("SD")), strings, mapping)
    assert second.status_code == 200, second.text
    assert (second.json()["data"]["items"], second.json()["data"]["relationships"]) == (17, 9)
