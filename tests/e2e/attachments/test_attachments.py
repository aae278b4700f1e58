"""Attachments over HTTP: records, their files (streamed both ways, ranges, limits), their
places on items, test plans and test runs, locks, comments, the search and the feed."""

from __future__ import annotations

import hashlib
import os
from typing import Any
from urllib.parse import quote

import httpx

from tests.e2e.api import (
    Team,
    assert_error,
    create_item,
    created_id,
    eventually,
    ids_of,
    total_of,
    unique,
)
from tests.e2e.testrecords import (
    add_cases,
    default_group,
    new_cycle,
    new_plan,
    new_test_case,
    runs_of,
)


def new_attachment(
    client: httpx.Client, project: dict[str, Any], name: str = "Evidence", **fields: object
) -> int:
    """An attachment record (no file yet) in ``project``."""
    body = {"fields": {"name": name, "description": "what it shows", **fields}}
    return created_id(client.post(f"/projects/{project['id']}/attachments", json=body))


def upload(
    client: httpx.Client,
    attachment: int,
    content: bytes,
    name: str = "log.txt",
    kind: str = "text/plain",
) -> httpx.Response:
    return client.put(f"/attachments/{attachment}/file", files={"file": (name, content, kind)})


def test_attachment_lifecycle(admin: httpx.Client, project: dict[str, Any]) -> None:
    name = unique("Screenshot ")
    attachment = new_attachment(admin, project, name)
    data = admin.get(f"/attachments/{attachment}").json()["data"]
    assert data["type"] == "attachments"
    assert data["id"] == attachment
    assert data["documentKey"].startswith(f"{project['key']}-ATT-")
    assert data["itemType"] == project["types"]["ATT"]["id"]
    assert data["fields"]["name"] == name
    assert data["fields"]["description"] == "what it shows"
    assert (data["fileName"], data["mimeType"], data["fileSize"]) == ("", "", 0)
    assert data["lock"]["locked"] is False
    assert_error(admin.get(f"/attachments/{attachment}/file"), 404, "no file", "PUT")

    content = os.urandom(300_000)
    response = upload(admin, attachment, content, "screen.png", "image/png")
    assert response.status_code == 200, response.text
    assert response.json()["meta"]["status"] == "OK"
    data = admin.get(f"/attachments/{attachment}").json()["data"]
    assert (data["fileName"], data["mimeType"], data["fileSize"]) == (
        "screen.png",
        "image/png",
        len(content),
    )
    download = admin.get(f"/attachments/{attachment}/file")
    assert download.status_code == 200
    assert download.content == content
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["etag"] == f'"{hashlib.sha256(content).hexdigest()}"'
    assert download.headers["content-disposition"].startswith('attachment; filename="screen.png"')

    # A new upload replaces the file; the old bytes were served until then.
    newer = b"second version"
    assert upload(admin, attachment, newer, "notes.txt").status_code == 200
    again = admin.get(f"/attachments/{attachment}/file")
    assert again.content == newer
    assert again.headers["etag"] != download.headers["etag"]

    missing = 9_000_000_000_000
    assert_error(admin.get(f"/attachments/{missing}"), 404, str(missing))
    assert_error(upload(admin, missing, b"x"), 404, str(missing))


def test_ranges_and_file_urls(admin: httpx.Client, project: dict[str, Any]) -> None:
    attachment = new_attachment(admin, project)
    content = bytes(range(256)) * 40
    upload(admin, attachment, content, "data.bin", "application/x-thing")
    path = f"/attachments/{attachment}/file"
    part = admin.get(path, headers={"Range": "bytes=10-19"})
    assert part.status_code == 206
    assert part.content == content[10:20]
    assert part.headers["content-range"] == f"bytes 10-19/{len(content)}"
    assert admin.get(path, headers={"Range": "bytes=-5"}).content == content[-5:]
    tail = admin.get(path, headers={"Range": "bytes=10000-"})
    assert tail.status_code == 206
    assert tail.content == content[10000:]
    outside = admin.get(path, headers={"Range": f"bytes={len(content)}-"})
    assert_error(outside, 416, "outside")
    assert outside.headers["content-range"] == f"bytes */{len(content)}"
    stale = admin.get(path, headers={"Range": "bytes=0-0", "If-Range": '"not-the-etag"'})
    assert stale.status_code == 200
    assert stale.content == content

    # GET /files?url= takes the file's own URL, absolute or not.
    url = str(admin.base_url).rstrip("/") + path
    by_url = admin.get("/files", params={"url": url})
    assert by_url.status_code == 200
    assert by_url.content == content
    assert admin.get("/files", params={"url": path}).content == content
    assert_error(admin.get("/files", params={"url": "https://elsewhere.example/x"}), 400, "url")
    assert_error(admin.get("/files"), 400, "url")


def test_file_names_are_data(admin: httpx.Client, project: dict[str, Any]) -> None:
    attachment = new_attachment(admin, project)
    name = '../../etc/pässwd "quoted" 文件.txt'
    assert upload(admin, attachment, b"secret?", name).status_code == 200
    assert admin.get(f"/attachments/{attachment}").json()["data"]["fileName"] == name
    download = admin.get(f"/attachments/{attachment}/file")
    assert download.content == b"secret?"
    fallback = ".._.._etc_p_sswd _quoted_ __.txt"  # ASCII, no quotes, no path separators
    assert download.headers["content-disposition"] == (
        f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
    )


def test_upload_needs_a_file_part(admin: httpx.Client, project: dict[str, Any]) -> None:
    attachment = new_attachment(admin, project)
    no_part = admin.put(f"/attachments/{attachment}/file", files={"other": ("x", b"y")})
    assert no_part.status_code == 200  # the first file part is taken when none is "file"
    not_form = admin.put(
        f"/attachments/{attachment}/file",
        content=b"raw",
        headers={"Content-Type": "application/octet-stream"},
    )
    assert_error(not_form, 400, "multipart/form-data", "file")
    empty_form = admin.put(
        f"/attachments/{attachment}/file", data={"note": "no file here"}, files={}
    )
    assert empty_form.status_code == 400


def test_attachments_on_items_plans_and_runs(admin: httpx.Client, project: dict[str, Any]) -> None:
    item = create_item(admin, project, "Requirement")
    case = new_test_case(admin, project, "Case")
    plan = new_plan(admin, project)
    add_cases(admin, plan, default_group(admin, plan), case)
    [run] = [r["id"] for r in runs_of(admin, new_cycle(admin, plan))]
    first, second = new_attachment(admin, project, "A"), new_attachment(admin, project, "B")
    for base, owner in (("items", item), ("testplans", plan), ("testruns", run)):
        assert (
            admin.post(f"/{base}/{owner}/attachments", json={"attachment": first}).status_code
            == 201
        )
        assert (
            created_id(admin.post(f"/{base}/{owner}/attachments", json={"attachment": second}))
            == second
        )
        listed = admin.get(f"/{base}/{owner}/attachments")
        assert ids_of(listed) == [first, second]
        assert total_of(listed) == 2
        again = admin.post(f"/{base}/{owner}/attachments", json={"attachment": first})
        assert_error(again, 400, "already")
        assert admin.delete(f"/{base}/{owner}/attachments/{first}").status_code == 204
        assert ids_of(admin.get(f"/{base}/{owner}/attachments")) == [second]
        assert_error(admin.delete(f"/{base}/{owner}/attachments/{first}"), 404, "not attached")
        # The attachment itself stays.
        assert admin.get(f"/attachments/{first}").status_code == 200
    assert_error(
        admin.post(f"/items/{item}/attachments", json={"attachment": 1}), 400, "attachment"
    )
    assert_error(admin.get("/items/9000000000000/attachments"), 404)

    # Duplicating with includeAttachments: the copy has the same attachments.
    copy = created_id(admin.post(f"/items/{item}/duplicate", json={"includeAttachments": True}))
    assert ids_of(admin.get(f"/items/{copy}/attachments")) == [second]
    plain = created_id(admin.post(f"/items/{item}/duplicate", json={}))
    assert ids_of(admin.get(f"/items/{plain}/attachments")) == []

    # A deleted item keeps no attachments; the attachment stays in its project.
    assert admin.delete(f"/items/{copy}").status_code == 204
    assert admin.get(f"/attachments/{second}").status_code == 200


def test_an_attachment_id_sent_as_a_string_of_digits(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    """An uploader takes the new attachment's id from ``meta.location`` (a string) and
    posts it as it is: the original's JSON binding takes a string of digits for an integer
    member, and so does every body here, with the same range check as a number."""
    response = admin.post(
        f"/projects/{project['id']}/attachments", json={"fields": {"name": "Spelled"}}
    )
    assert response.status_code == 201, response.text
    spelled = response.json()["meta"]["location"].rsplit("/", 1)[1]
    item = create_item(admin, project, "Requirement")
    added = admin.post(f"/items/{item}/attachments", json={"attachment": spelled})
    assert created_id(added) == int(spelled)
    assert ids_of(admin.get(f"/items/{item}/attachments")) == [int(spelled)]
    for wrong in ("12a", "", "1.5", f" {spelled}"):
        assert_error(
            admin.post(f"/items/{item}/attachments", json={"attachment": wrong}),
            400,
            "attachment: must be an integer (a JSON number or a string of digits)",
        )
    assert_error(
        admin.post(f"/items/{item}/attachments", json={"attachment": str(2**63)}),
        400,
        "attachment: Input should be less than or equal to 9223372036854775807",
    )


def test_attachment_of_another_project_is_refused(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    from tests.e2e.api import new_project

    other = {"id": new_project(admin)}
    foreign = new_attachment(admin, other)
    item = create_item(admin, project, "Requirement")
    assert_error(
        admin.post(f"/items/{item}/attachments", json={"attachment": foreign}), 400, "project"
    )


def test_lock_comments_search_and_feed(
    admin: httpx.Client, labs: httpx.Client, project: dict[str, Any]
) -> None:
    name = unique("Findable ")
    attachment = new_attachment(admin, project, name)
    assert admin.put(f"/attachments/{attachment}/lock", json={"locked": True}).status_code == 200
    lock = admin.get(f"/attachments/{attachment}/lock").json()["data"]
    assert lock["locked"] is True
    assert isinstance(lock["lockedBy"], int)
    assert admin.put(f"/attachments/{attachment}/lock", json={"locked": False}).status_code == 200

    comment = {
        "body": {"text": "looks right"},
        "location": {"item": attachment},
        "commentType": "GENERAL",
    }
    assert admin.post("/comments", json=comment).status_code == 201
    comments = admin.get(f"/attachments/{attachment}/comments").json()["data"]
    assert [c["body"]["text"] for c in comments] == ["looks right"]

    found = admin.get("/abstractitems", params={"project": project["id"], "contains": name})
    assert ids_of(found) == [attachment]
    assert admin.get(f"/abstractitems/{attachment}").json()["data"]["type"] == "attachments"
    by_type = admin.get(
        "/abstractitems",
        params={"project": project["id"], "itemType": project["types"]["ATT"]["id"]},
    )
    assert attachment in ids_of(by_type)

    upload(admin, attachment, b"evidence")
    feed = admin.get(
        "/activities", params={"project": project["id"], "objectType": "ITEM_ATTACHMENT"}
    )
    assert feed.status_code == 200, feed.text
    actions = {(a["item"], a["eventType"]) for a in feed.json()["data"]}
    assert (attachment, "CREATE") in actions
    assert (attachment, "UPDATE") in actions

    # Deleting (labs): the record, its file and its comments go.
    assert labs.delete(f"/attachments/{attachment}").status_code == 204
    assert_error(admin.get(f"/attachments/{attachment}"), 404)
    assert_error(admin.get(f"/attachments/{attachment}/file"), 404)
    assert eventually(lambda: admin.get(f"/abstractitems/{attachment}").status_code == 404)
    assert admin.delete(f"/attachments/{attachment}").status_code == 404  # labs only


def test_a_lock_put_without_a_content_type(admin: httpx.Client, project: dict[str, Any]) -> None:
    """A client PUTs the lock with no Content-Type at all: a Basic or Bearer caller's body
    without one is read as JSON when it parses. A text/plain or form type, a body that is
    not JSON, and a browser page's request (it carries Origin) stay refused."""
    attachment = new_attachment(admin, project)
    path = f"/attachments/{attachment}/lock"
    response = admin.put(path, content=b'{"locked": true}')
    assert "content-type" not in response.request.headers
    assert response.status_code == 200, response.text
    assert admin.get(path).json()["data"]["locked"] is True
    unlock = b'{"locked": false}'
    for headers, body, shown in (
        ({"Content-Type": "text/plain"}, unlock, "text/plain"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, unlock, "application/x-www"),
        ({"Content-Type": "multipart/form-data; boundary=x"}, unlock, "multipart/form-data"),
        ({}, b"locked=false", "none"),
        ({"Origin": "https://elsewhere.example"}, unlock, "none"),
    ):
        assert_error(
            admin.put(path, content=body, headers=headers),
            400,
            f"Request bodies must be JSON with Content-Type: application/json (got {shown}",
        )
    assert admin.get(path).json()["data"]["locked"] is True


def test_who_may_do_what(team: Team) -> None:
    admin = team.clients["ORG_ADMIN"]
    attachment = new_attachment(admin, team.project)
    upload(admin, attachment, b"kept")
    for role, client in team.clients.items():
        may_read = role != "NONE"
        may_write = role in ("READ_WRITE", "PROJECT_ADMIN", "ORG_ADMIN")
        read = client.get(f"/attachments/{attachment}/file")
        assert (read.status_code == 200) == may_read, (role, read.text)
        write = upload(client, attachment, f"by {role}".encode())
        assert (write.status_code == 200) == may_write, (role, write.text)
        if not may_write:
            assert write.status_code == 401
        created = client.post(
            f"/projects/{team.project['id']}/attachments", json={"fields": {"name": "x"}}
        )
        assert (created.status_code == 201) == may_write, (role, created.text)


def test_range_positions_beyond_64_bits_are_400s(
    admin: httpx.Client, project: dict[str, Any]
) -> None:
    attachment = new_attachment(admin, project)
    upload(admin, attachment, b"0123456789")
    path = f"/attachments/{attachment}/file"
    huge = "9" * 5000
    for header in (f"bytes={huge}-", f"bytes=0-{huge}", f"bytes=-{huge}", f"bytes={2**63}-"):
        for response in (
            admin.get(path, headers={"Range": header}),
            admin.get("/files", params={"url": path}, headers={"Range": header}),
        ):
            assert_error(response, 400, "Range", str(2**63 - 1))
            assert len(response.json()["meta"]["message"]) < 300
    # Leading zeros are no larger number.
    padded = admin.get(path, headers={"Range": "bytes=" + "0" * 5000 + "2-3"})
    assert padded.status_code == 206
    assert padded.content == b"23"
