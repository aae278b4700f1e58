"""ReqIF import (labs): ``POST /projects/{id}/reqif``: a round trip (export, import into
an empty project, export again: the same objects, values, tree and relations), a
document of another tool mapped by name and by a mapping, what cannot be mapped (with a
suggestion), a dry run, and hostile files refused."""

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
from lxml import etree
from reqif.parser import ReqIFParser
from reqif.unparser import ReqIFUnparser

from tests.e2e.api import Team, assert_error, created_id, new_project, project_key
from tests.e2e.topology import System
from tests.e2e.tracegraph import build_graph, new_item
from tests.reqifdocs import FOREIGN, MAPPING, objects_of, relations_of, tree_of
from tests.reqifschema import assert_valid


@pytest.fixture
def graph(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    g = build_graph(admin, project)
    folder = new_item(admin, project, "FLD", "Folder F")
    body = {
        "project": project["id"],
        "itemType": project["types"]["REQ"]["id"],
        "location": {"parent": {"item": folder}},
        "fields": {"name": "Nested", "description": "<p>In <i>F</i></p><ol><li>a</li></ol>"},
    }
    response = admin.post("/items", json=body)
    assert response.status_code == 201, response.text
    return g


def _empty(admin: httpx.Client, project: dict[str, Any]) -> dict[str, Any]:
    return {"id": new_project(admin, project_key("RI")), "types": project["types"]}


def _import(
    labs: httpx.Client, project: int, data: bytes, mapping: str | None = None, **params: Any
) -> httpx.Response:
    url = f"/projects/{project}/reqif"
    if mapping is None:
        return labs.post(
            url, content=data, params=params, headers={"Content-Type": "application/xml"}
        )
    return labs.post(
        url,
        files={"file": ("spec.reqif", data, "application/xml"), "mapping": (None, mapping)},
        params=params,
    )


def _content(doc: Any) -> tuple[Any, ...]:
    """What a round trip keeps: objects (type, values but the document key), tree,
    relations."""
    objects = {
        made: (
            found["type"],
            {
                name: etree.tostring(v) if isinstance(v, etree._Element) else v
                for name, v in found["values"].items()
                if name != "ReqIF.ForeignID"
            },
        )
        for made, found in objects_of(doc).items()
    }
    return objects, tree_of(doc), relations_of(doc)


def _rewritten(document: bytes, tmp_path: Path) -> bytes:
    """``document`` as the ``reqif`` library parses and writes it back."""
    source = tmp_path / "exported.reqif"
    source.write_bytes(document)
    written: str = ReqIFUnparser.unparse(ReqIFParser.parse(str(source)))
    return written.encode()


def test_a_round_trip_keeps_objects_values_tree_and_relations(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any], tmp_path: Path
) -> None:
    source = graph["project"]
    exported = labs.get(f"/projects/{source['id']}/reqif").content
    first = assert_valid(exported)
    target = _empty(admin, source)
    dry = _import(labs, target["id"], exported, dryRun="true")
    assert dry.status_code == 200, dry.text
    planned = dry.json()["data"]
    assert (planned["dryRun"], planned["items"], planned["relationships"]) == (True, 8, 4)
    assert planned["byType"] == {"REQ": 4, "TC": 3, "FLD": 1}
    assert admin.get("/items", params={"project": target["id"]}).json()["data"] == []
    done = _import(labs, target["id"], exported)
    assert done.status_code == 200, done.text
    assert (done.json()["data"]["items"], done.json()["data"]["relationships"]) == (8, 4)
    again = assert_valid(labs.get(f"/projects/{target['id']}/reqif").content)
    assert _content(again) == _content(first)
    # The same document again: every item is there as it is; nothing is written.
    again_done = _import(labs, target["id"], exported)
    assert again_done.status_code == 200, again_done.text
    same = again_done.json()["data"]
    assert (same["items"], same["versions"], same["unchanged"]) == (0, 0, 8)
    assert (same["added"], same["changed"], same["moved"], same["left"]) == ([], [], [], [])
    # Written again by another tool (the reqif library's parser and writer): the same.
    rewritten = _rewritten(exported, tmp_path)
    third = _empty(admin, source)
    assert _import(labs, third["id"], rewritten).status_code == 200
    third_export = assert_valid(labs.get(f"/projects/{third['id']}/reqif").content)
    assert _content(third_export) == _content(first)
    # The zipped form imports too.
    other = _empty(admin, source)
    zipped = labs.get(f"/projects/{source['id']}/reqif", params={"format": "reqifz"}).content
    response = labs.post(
        f"/projects/{other['id']}/reqif",
        content=zipped,
        headers={"Content-Type": "application/zip"},
    )
    assert response.status_code == 200, response.text


def _files_of(admin: httpx.Client, project: int) -> dict[str, list[tuple[str, bytes]]]:
    """Each item's name and its attachments' files (name, bytes)."""
    found: dict[str, list[tuple[str, bytes]]] = {}
    for item in admin.get("/items", params={"project": project, "maxResults": 50}).json()["data"]:
        listed = admin.get(f"/items/{item['id']}/attachments").json()["data"]
        found[item["fields"]["name"]] = sorted(
            (a["fileName"], admin.get(f"/attachments/{a['id']}/file").content) for a in listed
        )
    return {name: files for name, files in found.items() if files}


def _attach(admin: httpx.Client, project: int, item: int, name: str, content: bytes) -> int:
    made = created_id(
        admin.post(f"/projects/{project}/attachments", json={"fields": {"name": name}})
    )
    sent = admin.put(f"/attachments/{made}/file", files={"file": (name, content, "image/png")})
    assert sent.status_code == 200, sent.text
    linked = admin.post(f"/items/{item}/attachments", json={"attachment": made})
    assert linked.status_code == 201, linked.text
    return made


def _labs_of(client: httpx.Client) -> httpx.Client:
    return httpx.Client(
        base_url=str(client.base_url).replace("/rest/v1", "/rest/labs"), auth=client.auth
    )


def test_a_reqifz_carries_the_items_attachments_both_ways(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any], team: Team
) -> None:
    source = graph["project"]
    r1, r2, _ = graph["r"]
    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
    shared = _attach(admin, source["id"], r1, "diagram.png", picture)
    assert admin.post(f"/items/{r2}/attachments", json={"attachment": shared}).status_code == 201
    _attach(admin, source["id"], r2, "notes.txt", b"second file")
    links = labs.get(f"/projects/{source['id']}/attachmentlinks").json()
    assert sorted(link["owner"] for link in links["data"]) == [r1, r2, r2]
    assert {link["attachment"]["fileName"] for link in links["data"]} == {
        "diagram.png",
        "notes.txt",
    }
    # Who may read the project may list them; who may not, not.
    with _labs_of(team.clients["READ_ONLY"]) as reader, _labs_of(team.clients["NONE"]) as none:
        seen = reader.get(f"/projects/{source['id']}/attachmentlinks")
        assert seen.status_code == 200, seen.text
        assert len(seen.json()["data"]) == 3
        assert_error(none.get(f"/projects/{source['id']}/attachmentlinks"), 401)
    assert_error(labs.get("/projects/987654321/attachmentlinks"), 404)
    zipped = labs.get(f"/projects/{source['id']}/reqif", params={"format": "reqifz"}).content
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        names = archive.namelist()
        document = assert_valid(archive.read(names[0]))
        files = {n.rsplit("/", 1)[1]: archive.read(n) for n in names[1:]}
    # The document first, then each file once (diagram.png hangs on two items).
    assert names[0].endswith(".reqif")
    assert all(n.startswith("files/") for n in names[1:])
    assert files == {"diagram.png": picture, "notes.txt": b"second file"}
    named = {
        ident: sorted(o.get("data") for o in value.iter("{*}object"))
        for ident, found in objects_of(document).items()
        for name, value in found["values"].items()
        if name == "PL.Attachments"
    }
    assert sorted(len(paths) for paths in named.values()) == [1, 2]
    assert {path for paths in named.values() for path in paths} == set(names[1:])
    _files_imported(admin, labs, source, zipped, picture)


def _files_imported(
    admin: httpx.Client,
    labs: httpx.Client,
    source: dict[str, Any],
    zipped: bytes,
    picture: bytes,
) -> None:
    """The export's files imported into an empty project, again, and changed."""
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        names = archive.namelist()
        document = assert_valid(archive.read(names[0]))
    # Into an empty project: the same files on the same items; one attachment for the
    # shared file.
    target = _empty(admin, source)
    dry = _import(labs, target["id"], zipped, dryRun="true").json()["data"]
    assert dry["files"] == {"attached": 2, "links": 3, "replaced": 0, "unchanged": 0}
    done = _import(labs, target["id"], zipped)
    assert done.status_code == 200, done.text
    assert done.json()["data"]["files"] == dry["files"]
    assert _files_of(admin, target["id"]) == _files_of(admin, source["id"])
    assert len(labs.get(f"/projects/{target['id']}/attachmentlinks").json()["data"]) == 3
    again = labs.get(f"/projects/{target['id']}/reqif", params={"format": "reqifz"}).content
    with zipfile.ZipFile(io.BytesIO(again)) as archive:
        assert _content(assert_valid(archive.read(archive.namelist()[0]))) == _content(document)
        assert sorted(archive.namelist()[1:]) == sorted(names[1:])
    # Again: what is there stays; a file of the same name with other content replaces
    # the attachment's file (its next version), not a new attachment.
    same = _import(labs, target["id"], zipped).json()["data"]
    assert same["files"] == {"attached": 0, "links": 0, "replaced": 0, "unchanged": 3}
    changed = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(zipped)) as old, zipfile.ZipFile(changed, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            new.writestr(info, b"second file, revised" if data == b"second file" else data)
    revised = _import(labs, target["id"], changed.getvalue()).json()["data"]
    assert revised["files"] == {"attached": 0, "links": 0, "replaced": 1, "unchanged": 2}
    held = _files_of(admin, target["id"])
    assert sorted(file for files in held.values() for file in files) == sorted(
        [("diagram.png", picture)] * 2 + [("notes.txt", b"second file, revised")]
    )
    # The plain document names no files: nothing of them is imported.
    plain = labs.get(f"/projects/{source['id']}/reqif").content
    assert b"PL.Attachments" not in plain
    other = _empty(admin, source)
    imported = _import(labs, other["id"], plain)
    assert imported.status_code == 200, imported.text
    assert imported.json()["data"]["files"]["attached"] == 0


def _versions(admin: httpx.Client, project: int) -> dict[str, int]:
    """Each item's name and how many versions it has."""
    found = {}
    for item in admin.get("/items", params={"project": project, "maxResults": 50}).json()["data"]:
        versions = admin.get(f"/items/{item['id']}/versions", params={"maxResults": 50})
        found[item["fields"]["name"]] = len(versions.json()["data"])
    return found


def test_a_newer_revision_updates_the_items_in_place(
    admin: httpx.Client, labs: httpx.Client, graph: dict[str, Any]
) -> None:
    source = graph["project"]
    target = _empty(admin, source)
    first = labs.get(f"/projects/{source['id']}/reqif").content
    assert _import(labs, target["id"], first).status_code == 200
    by_name = {
        i["fields"]["name"]: i
        for i in admin.get("/items", params={"project": target["id"]}).json()["data"]
    }
    # The source changes: a renamed requirement, one moved into the folder (before what
    # is there), one put first among its siblings, a new one, a test case and a
    # relationship deleted.
    r1, _, r3 = graph["r"]
    fields = admin.get(f"/items/{r1}").json()["data"]["fields"] | {"name": "Need 1, revised"}
    assert admin.put(f"/items/{r1}", json={"fields": fields}).status_code == 200
    nested = next(
        i
        for i in admin.get("/items", params={"project": source["id"]}).json()["data"]
        if i["fields"]["name"] == "Nested"
    )
    folder = nested["location"]["parent"]["item"]
    moved = admin.put("/items/treelocation", json={"item": r3, "parent": {"item": folder}})
    assert moved.status_code == 200, moved.text
    first_place = {"item": graph["r"][1], "parent": {"project": source["id"]}}
    assert admin.put("/items/treelocation", json=first_place).status_code == 200
    added = new_item(admin, source, "REQ", "Need 4")
    assert admin.delete(f"/items/{graph['t'][2]}").status_code == 204
    assert admin.delete(f"/relationships/{graph['rels']['r1-r2']}").status_code == 204
    second = labs.get(f"/projects/{source['id']}/reqif").content
    revised = assert_valid(second)
    before = _versions(admin, target["id"])

    dry = _import(labs, target["id"], second, dryRun="true")
    assert dry.status_code == 200, dry.text
    told = dry.json()["data"]
    gid = admin.get(f"/items/{added}").json()["data"]["globalId"]
    assert (told["dryRun"], told["added"], told["items"], told["versions"]) == (True, [gid], 1, 2)
    assert [(c["item"], c["fields"]) for c in told["changed"]] == [
        (by_name["Need 1"]["id"], ["name"])
    ]
    assert [(m["item"], m["formerParent"], m["parent"]) for m in told["moved"]] == [
        (by_name["Need 3"]["id"], None, by_name["Folder F"]["id"])
    ]
    assert told["unchanged"] == 5
    # Need 2 first at the root, Need 3 before Nested: the document's order, no versions.
    assert sorted(told["reordered"], key=str) == sorted(
        [{"parent": None, "children": 6}, {"parent": by_name["Folder F"]["id"], "children": 2}],
        key=str,
    )
    assert [left["item"] for left in told["left"]] == [by_name["Check 3"]["id"]]
    [link] = told["relationshipsLeft"]
    assert (link["fromItem"], link["toItem"], link["relationshipType"]) == (
        by_name["Need 1"]["id"],
        by_name["Need 2"]["id"],
        graph["related"],
    )
    assert _versions(admin, target["id"]) == before  # a dry run writes nothing

    done = _import(labs, target["id"], second).json()["data"]
    assert (done["items"], done["versions"], done["deleted"], done["relationshipsDeleted"]) == (
        1,
        2,
        0,
        0,
    )
    after = _versions(admin, target["id"])
    # A new version only where something changed: the renamed and the moved one.
    assert {n: v for n, v in after.items() if v != before.get(n)} == {
        "Need 1, revised": 2,
        "Need 3": 2,
        "Need 4": 1,
    }
    assert "Check 3" in after  # left, not deleted unless asked
    gone = _import(labs, target["id"], second, deleteLeft="true").json()["data"]
    assert (gone["versions"], gone["deleted"], gone["relationshipsDeleted"]) == (0, 1, 1)
    assert "Check 3" not in _versions(admin, target["id"])
    # Now the two projects hold the same content.
    exported = assert_valid(labs.get(f"/projects/{target['id']}/reqif").content)
    assert _content(exported) == _content(revised)


def test_another_tools_document_is_mapped_or_told_what_cannot_be(
    admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    assert_valid(FOREIGN)
    refused = _import(labs, project["id"], FOREIGN)
    assert refused.status_code == 400, refused.text
    body = refused.json()
    said = " ".join(e["message"] for e in body["errors"])
    assert "Anforderung" in said
    assert "refines" in said
    suggested = body["suggested"]
    assert suggested["configuration"]["itemTypes"][0]["display"] == "Anforderung"
    assert suggested["mapping"]["types"]["Anforderung"]
    assert admin.get("/items", params={"project": project["id"]}).json()["data"] == []
    done = _import(labs, project["id"], FOREIGN, MAPPING)
    assert done.status_code == 200, done.text
    assert done.json()["data"]["items"] == 5  # 3 objects, a folder per specification
    made = {
        i["globalId"]: i
        for i in admin.get("/items", params={"project": project["id"]}).json()["data"]
    }
    assert set(made) >= {"sup-1", "sup-2", "sup-3"}
    first = made["sup-1"]
    assert first["fields"]["name"] == "Supplier need 1"
    assert "<b>1</b>" in first["fields"]["description"]
    assert made["sup-2"]["location"]["parent"] == {"item": first["id"]}
    folders = {
        i["fields"]["name"]: i["id"]
        for i in made.values()
        if i["fields"]["name"].startswith("Chapter")
    }
    assert first["location"]["parent"] == {"item": folders["Chapter one"]}
    assert made["sup-3"]["location"]["parent"] == {"item": folders["Chapter two"]}
    assert first["fields"]["priority"]
    related = admin.get(f"/items/{made['sup-3']['id']}/downstreamrelationships").json()["data"]
    assert [r["toItem"] for r in related] == [first["id"]]


def _work_done(labs: httpx.Client, started: httpx.Response) -> dict[str, Any]:
    """The work an import made apart started, once it has ended."""
    assert started.status_code == 202, started.text
    body = started.json()
    assert body["meta"]["location"].endswith(f"/reports/works/{body['data']['workId']}")
    assert body["data"]["report"] == "reqif-import"
    deadline = time.monotonic() + 120
    while (data := labs.get(body["meta"]["location"]).json()["data"])["status"] not in (
        "DONE",
        "FAILED",
    ):
        assert time.monotonic() < deadline, data
        time.sleep(0.1)
    return dict(data)


def test_an_import_made_apart_is_followed_as_a_work(
    admin: httpx.Client, labs: httpx.Client, project: dict[str, Any], team: Team
) -> None:
    refused = _work_done(labs, _import(labs, project["id"], FOREIGN, "{}", **{"async": "true"}))
    assert refused["status"] == "FAILED"
    assert "cannot be mapped" in refused["message"]
    reasons = labs.get(refused["file"])
    assert reasons.status_code == 200, reasons.text
    assert reasons.json()["suggested"]["mapping"]["types"]["Anforderung"]
    assert admin.get("/items", params={"project": project["id"]}).json()["data"] == []

    done = _work_done(labs, _import(labs, project["id"], FOREIGN, MAPPING, **{"async": "true"}))
    assert done["status"] == "DONE", done
    assert done["progress"] == 100
    assert done["message"].startswith("Imported 5 items and 1 relationships")
    answer = labs.get(done["file"]).json()["data"]
    assert (answer["items"], answer["added"][:2]) == (5, ["s1", "sup-1"])
    made = admin.get("/items", params={"project": project["id"]}).json()["data"]
    assert len(made) == 5
    # The same again, as a dry run: nothing would change, nothing is written.
    again = _import(labs, project["id"], FOREIGN, MAPPING, dryRun="true", **{"async": "true"})
    dry = _work_done(labs, again)
    assert dry["message"].startswith("Would import 0 items"), dry
    assert "5 unchanged" in dry["message"]
    # Who may only read the project may not import into it, apart or not; may try.
    reader = team.clients["READ_ONLY"]
    with httpx.Client(
        base_url=str(reader.base_url).replace("/rest/v1", "/rest/labs"), auth=reader.auth
    ) as as_reader:
        assert_error(_import(as_reader, project["id"], FOREIGN, MAPPING, **{"async": "true"}), 401)
        tried = _import(as_reader, project["id"], FOREIGN, MAPPING, dryRun="true")
        assert tried.status_code == 200, tried.text


def test_hostile_and_broken_files_are_refused(labs: httpx.Client, project: dict[str, Any]) -> None:
    pid = project["id"]
    entity = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><REQ-IF>&x;</REQ-IF>'
    assert_error(_import(labs, pid, entity), 400, "DTD")
    assert_error(_import(labs, pid, b"<not-xml"), 400, "well-formed")
    assert_error(_import(labs, pid, b"<html/>"), 400, "not a ReqIF")
    assert_error(_import(labs, pid, b""), 400, "empty")
    escape = io.BytesIO()
    with zipfile.ZipFile(escape, "w") as archive:
        archive.writestr("../evil.reqif", FOREIGN)
    assert_error(labs.post(f"/projects/{pid}/reqif", content=escape.getvalue()), 400, "outside")
    assert_error(_import(labs, pid, FOREIGN, '{"colour": {}}'), 400, "mapping.colour")
    assert_error(_import(labs, pid, FOREIGN, "not json"), 400, "mapping is not JSON")
    assert_error(_import(labs, 987654, FOREIGN, MAPPING), 404)


def test_the_command_imports_a_file_with_a_mapping(
    system: System, admin: httpx.Client, project: dict[str, Any], tmp_path: Path
) -> None:
    document = tmp_path / "supplier.reqif"
    document.write_bytes(FOREIGN)
    mapping = tmp_path / "mapping.json"
    mapping.write_text(MAPPING)

    def command(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "plumbline.cli", "reqif", "import", str(document),
             "--project", str(project["id"]), "--url", system.url, "--user", "admin",
             "--password", system.admin_password, "--quiet", *more],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    refused = command()
    assert refused.returncode == 1
    assert "cannot be mapped" in refused.stderr
    assert "suggested mapping" in refused.stderr
    dry = command("--mapping", str(mapping), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would import 5 items (2 FLD, 3 REQ) and 1 relationships" in dry.stdout
    assert admin.get("/items", params={"project": project["id"]}).json()["data"] == []
    done = command("--mapping", str(mapping))
    assert done.returncode == 0, done.stderr
    assert (
        f"imported 5 items (2 FLD, 3 REQ) and 1 relationships into project {project['id']}"
        in done.stdout
    )
    assert command("--mapping", str(tmp_path / "none.json")).returncode == 2
    # A newer revision: one object renamed; an item made by hand is not in the document.
    own = new_item(admin, project, "REQ", "Made by hand")
    document.write_bytes(FOREIGN.replace(b"Supplier need 2", b"Supplier need 2, revised"))
    told = command("--mapping", str(mapping), "--dry-run", "--delete-left")
    assert told.returncode == 0, told.stderr
    assert (
        "would write 1 new versions of items already there: 1 changed, 0 moved, 4 unchanged"
        in told.stdout
    )
    assert "  changed sup-2 (item " in told.stdout
    assert (
        "1 items and 0 relationships the document no longer holds: would be deleted" in told.stdout
    )
    assert f"  item {own} " in told.stdout
    kept = command("--mapping", str(mapping))
    assert "wrote 1 new versions" in kept.stdout
    assert "no longer holds: left as they are (--delete-left deletes them)" in kept.stdout
    assert admin.get(f"/items/{own}").status_code == 200
    names = {
        i["fields"]["name"]
        for i in admin.get("/items", params={"project": project["id"]}).json()["data"]
    }
    assert "Supplier need 2, revised" in names
