"""Bad input on users, user groups, projects and activities, and what the answers say.

Every answer has the right status and a JSON body whose ``meta.status`` is the reason
phrase and whose ``meta.message`` names the problem; nothing a client sends is a 500.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from tests.e2e.api import assert_error, project_key, unique, user_body
from tests.e2e.topology import System

BIG = 2**64  # more than any id can be


@pytest.fixture(scope="module")
def records(system: System) -> dict[str, int]:
    """One project, group and user the tests below aim their bad requests at."""
    with system.client(("admin", system.admin_password)) as admin:
        key = project_key("BAD")
        project = admin.post("/projects", json={"projectKey": key, "fields": {"name": key}})
        group = admin.post("/usergroups", json={"name": unique("bad")})
        user = admin.post("/users", json=user_body(firstName="Bad", lastName="Input"))
        return {
            "project": project.json()["meta"]["id"],
            "group": group.json()["meta"]["id"],
            "user": user.json()["meta"]["id"],
        }


def _json(client: httpx.Client, method: str, path: str, content: bytes) -> httpx.Response:
    return client.request(
        method, path, content=content, headers={"Content-Type": "application/json"}
    )


@pytest.mark.parametrize(
    "content",
    [b'{"username": ', b"{'username': 'x'}", b'{"a": 1} trailing', b"\xff\xfe", b"{,}"],
)
def test_malformed_json(admin: httpx.Client, records: dict[str, int], content: bytes) -> None:
    for method, path in (
        ("POST", "/users"),
        ("PUT", f"/users/{records['user']}"),
        ("POST", "/usergroups"),
        ("PUT", f"/usergroups/{records['group']}"),
        ("POST", "/projects"),
        ("PUT", f"/projects/{records['project']}"),
    ):
        assert_error(_json(admin, method, path, content), 400, "not valid JSON")


def test_bodies_that_are_not_objects(admin: httpx.Client, records: dict[str, int]) -> None:
    for content in (b"[]", b'"text"', b"42", b"null"):
        assert_error(_json(admin, "POST", "/users", content), 400)
        assert_error(_json(admin, "PUT", f"/projects/{records['project']}", content), 400)
        assert_error(_json(admin, "POST", f"/usergroups/{records['group']}/users", content), 400)
    assert_error(admin.post("/projects", json={"projectKey": "K", "fields": []}), 400, "fields")


def test_body_must_be_an_object(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=[1, 2]), 400)
    assert_error(admin.post("/projects", json="text"), 400)


def test_missing_body(admin: httpx.Client) -> None:
    response = admin.post("/users", headers={"Content-Type": "application/json"})
    assert_error(response, 400, "JSON body")


def test_wrong_types_name_the_field(admin: httpx.Client, records: dict[str, int]) -> None:
    user, group, project = records["user"], records["group"], records["project"]
    cases = [
        (admin.post("/users", json=user_body(username=1)), "username"),
        (admin.post("/users", json=user_body(firstName=["A"])), "firstName"),
        (admin.post("/users", json=user_body(phone=123)), "phone"),
        (admin.put(f"/users/{user}", json={"title": True}), "title"),
        (admin.put(f"/users/{user}/active", json={"active": "false"}), "active"),
        (admin.put(f"/users/{user}/active", json={"active": 0}), "active"),
        (admin.post("/usergroups", json={"name": 5}), "name"),
        (admin.post("/usergroups", json={"name": "g", "project": "7a"}), "project"),
        (admin.put(f"/usergroups/{group}", json={"description": {"text": "x"}}), "description"),
        (admin.post(f"/usergroups/{group}/users", json={"user": " 5"}), "user"),
        (admin.post(f"/usergroups/{group}/users", json={"user": 5.5}), "user"),
        (admin.post("/projects", json={"isFolder": "yes", "fields": {"name": "x"}}), "isFolder"),
        (admin.post("/projects", json={"projectKey": 7, "fields": {"name": "x"}}), "projectKey"),
        (admin.put(f"/projects/{project}", json={"parent": "3.0"}), "parent"),
        (admin.put(f"/projects/{project}", json={"fields": {"name": 3}}), "fields.name"),
    ]
    for response, field in cases:
        assert_error(response, 400, field)


def test_wrong_types_on_create_and_activation(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=user_body(username=1)), 400, "username")
    assert_error(
        admin.post("/projects", json={"isFolder": "yes", "fields": {"name": "x"}}), 400, "isFolder"
    )
    assert_error(admin.put("/users/1/active", json={"active": "false"}), 400, "active")
    assert_error(admin.post("/usergroups", json={"name": "g", "project": "7a"}), 400, "project")


def test_unknown_fields_are_named(admin: httpx.Client, records: dict[str, int]) -> None:
    cases = [
        (admin.post("/users", json=user_body(nickname="x")), "nickname"),
        (admin.put(f"/users/{records['user']}", json={"shoeSize": 44}), "shoeSize"),
        (admin.put(f"/users/{records['user']}/active", json={"active": True, "x": 1}), "x"),
        (admin.post("/usergroups", json={"name": unique("g"), "colour": "red"}), "colour"),
        (
            admin.post(f"/usergroups/{records['group']}/users", json={"user": 1, "role": "x"}),
            "role",
        ),
        (
            admin.post("/projects", json={"projectKey": "K", "owner": 1, "fields": {"name": "x"}}),
            "owner",
        ),
        (
            admin.put(f"/projects/{records['project']}", json={"fields": {"colour": "red"}}),
            "colour",
        ),
    ]
    for response, field in cases:
        assert_error(response, 400, field, "not a known field")


def test_unknown_fields_of_a_new_user_or_project(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=user_body(nickname="x")), 400, "nickname")
    assert_error(
        admin.post("/projects", json={"projectKey": "K", "fields": {"name": "x", "colour": 1}}),
        400,
        "colour",
    )


def test_missing_required_fields(admin: httpx.Client, records: dict[str, int]) -> None:
    body = {k: v for k, v in user_body().items() if k not in ("email", "password")}
    assert_error(admin.post("/users", json=body), 400, "email is required", "password is required")
    assert_error(admin.post("/usergroups", json={"description": "x"}), 400, "name is required")
    assert_error(
        admin.post(f"/usergroups/{records['group']}/users", json={}), 400, "user is required"
    )
    assert_error(admin.put(f"/users/{records['user']}/active", json={}), 400, "active is required")
    assert_error(admin.post("/projects", json={"projectKey": unique("K")}), 400, "name")
    assert_error(admin.post("/projects", json={"fields": {"name": "x"}}), 400, "projectKey")


def test_required_fields_of_new_users_projects_and_groups(admin: httpx.Client) -> None:
    body = {k: v for k, v in user_body().items() if k not in ("email", "password")}
    assert_error(admin.post("/users", json=body), 400, "email is required", "password is required")
    assert_error(admin.post("/projects", json={"projectKey": "NONAME"}), 400, "name")
    assert_error(admin.post("/usergroups", json={}), 400, "name is required")


def test_over_long_and_empty_strings(admin: httpx.Client, records: dict[str, int]) -> None:
    assert_error(admin.post("/users", json=user_body(firstName="x" * 300)), 400, "firstName", "255")
    assert_error(admin.put(f"/users/{records['user']}", json={"lastName": "x" * 256}), 400, "255")
    assert_error(admin.post("/users", json=user_body(phone="1" * 65)), 400, "phone", "64")
    assert_error(admin.post("/users", json=user_body(username="")), 400, "username", "empty")
    assert_error(admin.post("/users", json=user_body(email="no-at-sign")), 400, "email")
    assert_error(admin.post("/users", json=user_body(licenseType="GOLD")), 400, "licenseType")
    assert_error(admin.post("/usergroups", json={"name": "g" * 256}), 400, "name", "255")
    assert_error(admin.post("/usergroups", json={"name": ""}), 400, "name")
    assert_error(
        admin.post("/usergroups", json={"name": unique("g"), "description": "d" * 65536}),
        400,
        "description",
        "65535",
    )
    assert_error(
        admin.post("/projects", json={"projectKey": unique("K"), "fields": {"name": "n" * 300}}),
        400,
        "fields.name",
        "255",
    )
    assert_error(
        admin.post("/projects", json={"projectKey": "K" * 40, "fields": {"name": "x"}}),
        400,
        "projectKey",
    )
    assert admin.get(f"/users/{records['user']}").json()["data"]["lastName"] == "Input"


def test_user_fields_too_long_empty_or_malformed(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=user_body(firstName="x" * 300)), 400, "firstName", "255")
    assert_error(admin.post("/users", json=user_body(username="")), 400, "username")
    assert_error(admin.post("/users", json=user_body(email="not-an-email")), 400, "email")
    assert_error(admin.post("/users", json=user_body(licenseType="GOLD")), 400, "licenseType")


def test_nul_characters_are_refused(admin: httpx.Client) -> None:
    assert_error(admin.get("/users?username=a%00b"), 400, "username", "NUL")
    assert_error(admin.post("/users", json=user_body(title="a\u0000b")), 400, "title", "NUL")


def test_bodies_must_say_they_are_json(admin: httpx.Client, records: dict[str, int]) -> None:
    body = b'{"name": "typed"}'
    for headers in (
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Content-Type": "application/xml"},
        # An empty type is not an absent one (a JSON body without the header is read as
        # JSON for Basic and Bearer callers: test_attachments, test_a_lock_put_...).
        {"Content-Type": ""},
    ):
        for method, path in (
            ("POST", "/usergroups"),
            ("PUT", f"/usergroups/{records['group']}"),
            ("POST", "/users"),
            ("PUT", f"/projects/{records['project']}"),
        ):
            response = admin.request(method, path, content=body, headers=headers)
            assert_error(response, 400, "Content-Type", "application/json")
    assert admin.get(f"/usergroups/{records['group']}").json()["data"]["name"] != "typed"
    # Parameters of the media type are fine.
    response = admin.post(
        "/usergroups",
        content=b'{"name": "%s"}' % unique("charset").encode(),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 201, response.text


def test_content_type_must_be_json(admin: httpx.Client) -> None:
    response = admin.post(
        "/users", content=b'{"username": "x"}', headers={"Content-Type": "text/plain"}
    )
    assert_error(response, 400, "Content-Type", "application/json")
    response = admin.post(
        "/users",
        content=b"username=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(response, 400, "application/json")


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"maxResults": "0"}, ("maxResults", "between 1 and 50", "0")),
        ({"maxResults": "51"}, ("maxResults", "between 1 and 50", "51")),
        ({"maxResults": "abc"}, ("maxResults", "integer", "abc")),
        ({"maxResults": "-3"}, ("maxResults",)),
        ({"maxResults": "2.5"}, ("maxResults", "integer")),
        ({"startAt": "-1"}, ("startAt", "-1")),
        ({"startAt": "one"}, ("startAt", "integer")),
    ],
)
def test_paging_parameters(
    admin: httpx.Client, records: dict[str, int], query: dict[str, str], words: tuple[str, ...]
) -> None:
    for path, extra in (
        ("/users", {}),
        ("/usergroups", {}),
        (f"/usergroups/{records['group']}/users", {}),
        ("/projects", {}),
        ("/activities", {"project": str(records["project"])}),
    ):
        assert_error(admin.get(path, params={**extra, **query}), 400, *words)


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("maxResults=0", ("maxResults", "between 1 and 50", "got 0")),
        ("maxResults=51", ("maxResults", "between 1 and 50", "got 51")),
        ("maxResults=abc", ("maxResults", "integer")),
        ("startAt=-1", ("startAt",)),
        ("startAt=x", ("startAt", "integer")),
    ],
)
def test_paging_out_of_range(admin: httpx.Client, query: str, words: tuple[str, ...]) -> None:
    for path in ("/users", "/projects", "/usergroups"):
        assert_error(admin.get(f"{path}?{query}"), 400, *words)


def test_paging_at_the_limit_is_fine(admin: httpx.Client, records: dict[str, int]) -> None:
    for path, extra in (("/users", {}), ("/projects", {}), ("/activities", records)):
        page = admin.get(path, params={**extra, "maxResults": 50, "startAt": 0})
        assert page.status_code == 200
        assert page.json()["meta"]["pageInfo"]["resultCount"] <= 50


def test_bad_query_values(admin: httpx.Client) -> None:
    assert_error(admin.get("/users?includeInactive=maybe"), 400, "includeInactive")
    assert_error(admin.get("/activities"), 400, "project")
    assert_error(admin.get("/activities?project=abc"), 400, "project")
    assert_error(admin.get("/activities?project=1&date=yesterday"), 400, "date")
    assert_error(admin.get("/activities?project=1&eventType=EXPLODE"), 400, "eventType")
    assert_error(
        admin.get("/projects?include=nothing"), 400, "include", "nothing", "data.createdBy"
    )


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/users", {"startAt": str(2**31)}),
        ("/projects", {"startAt": str(BIG)}),
        ("/usergroups", {"project": str(BIG)}),
        ("/activities", {"project": str(BIG)}),
    ],
)
def test_out_of_range_query_integers(admin: httpx.Client, path: str, query: dict[str, str]) -> None:
    response = admin.get(path, params=query)
    assert response.status_code == 400, response.text
    assert next(iter(query)) in response.json()["meta"]["message"]


def test_unknown_ids_are_404(admin: httpx.Client, records: dict[str, int]) -> None:
    missing = 987654321
    for response in (
        admin.get(f"/users/{missing}"),
        admin.put(f"/users/{missing}", json={"title": "x"}),
        admin.put(f"/users/{missing}/active", json={"active": True}),
        admin.get(f"/usergroups/{missing}"),
        admin.put(f"/usergroups/{missing}", json={"name": unique("x")}),
        admin.delete(f"/usergroups/{missing}"),
        admin.get(f"/usergroups/{missing}/users"),
        admin.post(f"/usergroups/{missing}/users", json={"user": records["user"]}),
        admin.delete(f"/usergroups/{missing}/users/{records['user']}"),
        admin.get(f"/projects/{missing}"),
        admin.put(f"/projects/{missing}", json={"fields": {"name": "x"}}),
        admin.get(f"/activities/{missing}"),
    ):
        assert_error(response, 404, str(missing))


def test_unknown_ids_on_each_resource_are_404(admin: httpx.Client) -> None:
    assert_error(admin.get("/users/987654"), 404, "987654")
    assert_error(admin.get("/projects/987654"), 404, "987654")
    assert_error(admin.get("/usergroups/987654"), 404, "987654")
    assert_error(admin.get("/activities/987654?project=1"), 404, "987654")
    assert_error(admin.put("/projects/987654", json={"fields": {"name": "x"}}), 404)
    assert_error(admin.delete("/usergroups/987654"), 404)


def test_wrong_methods_are_405_with_a_json_body(
    admin: httpx.Client, records: dict[str, int]
) -> None:
    cases = [
        ("DELETE", f"/users/{records['user']}", "GET", "PUT"),
        ("PATCH", f"/users/{records['user']}", "GET", "PUT"),
        ("POST", "/users/current", "GET"),
        ("GET", f"/users/{records['user']}/active", "PUT"),
        ("PUT", "/usergroups", "GET", "POST"),
        ("PATCH", f"/usergroups/{records['group']}", "DELETE", "PUT"),
        ("PUT", f"/usergroups/{records['group']}/users", "GET", "POST"),
        ("DELETE", f"/projects/{records['project']}", "GET", "PUT"),
        ("POST", f"/projects/{records['project']}", "GET", "PUT"),
        ("POST", "/activities", "GET"),
        ("DELETE", "/activities/1", "GET"),
    ]
    for method, path, *allowed in cases:
        response = admin.request(method, path, json={} if method != "GET" else None)
        assert_error(response, 405, method, *allowed)
        assert set(allowed) <= {m.strip() for m in response.headers["allow"].split(",")}


def test_unknown_paths_and_methods(admin: httpx.Client) -> None:
    assert_error(admin.get("/nothing-here"), 404, "/rest/v1/nothing-here")
    response = admin.delete("/users/1")
    assert_error(response, 405, "DELETE", "GET")
    assert "PUT" in response.headers["allow"]
    assert_error(admin.patch("/projects", json=[]), 405, "PATCH")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/users/abc"),
        ("GET", "/users/1.5"),
        ("GET", "/users/%20"),
        ("GET", f"/users/{BIG}"),
        ("GET", f"/users/-{BIG}"),
        ("PUT", "/users/abc"),
        ("PUT", f"/users/{BIG}/active"),
        ("GET", "/usergroups/x"),
        ("GET", f"/usergroups/{BIG}"),
        ("DELETE", f"/usergroups/{BIG}"),
        ("GET", "/usergroups/x/users"),
        ("DELETE", f"/usergroups/1/users/{BIG}"),
        ("GET", "/projects/1e3"),
        ("GET", f"/projects/{BIG}"),
        ("PUT", f"/projects/{BIG}"),
        ("GET", "/activities/abc"),
        ("GET", f"/activities/{BIG}"),
    ],
)
def test_path_ids_that_are_not_ids(admin: httpx.Client, method: str, path: str) -> None:
    body: dict[str, object] = (
        {"title": "x"} if path.startswith("/users") else {"fields": {"name": "x"}}
    )
    if path.endswith("/active"):
        body = {"active": True}
    response = admin.request(method, path, json=body if method == "PUT" else None)
    assert response.status_code in (400, 404), response.text
    assert response.json()["meta"]["message"]
    if response.status_code == 400:
        message = response.json()["meta"]["message"]
        assert any(name in message for name in ("userId", "id", "projectId", "activityId"))


def test_non_integer_path_ids(admin: httpx.Client) -> None:
    for path in ("/users/abc", "/projects/1.5", "/usergroups/%20"):
        response = admin.get(path)
        assert response.status_code in (400, 404), response.text
        assert response.json()["meta"]["message"]


def test_body_ids_that_do_not_fit(admin: httpx.Client, records: dict[str, int]) -> None:
    assert_error(
        admin.post(f"/usergroups/{records['group']}/users", json={"user": BIG}), 400, "user"
    )
    assert_error(
        admin.post("/usergroups", json={"name": unique("g"), "project": BIG}), 400, "project"
    )
    assert_error(
        admin.put(f"/usergroups/{records['group']}", json={"project": -BIG}), 400, "project"
    )
    assert_error(
        admin.post(
            "/projects", json={"projectKey": unique("K"), "parent": BIG, "fields": {"name": "x"}}
        ),
        400,
        "parent",
    )
    assert_error(admin.put(f"/projects/{records['project']}", json={"id": BIG}), 400, "id")
    assert_error(
        admin.put(f"/projects/{records['project']}", json={"fields": {"projectManager": BIG}}),
        400,
        "projectManager",
    )
    assert_error(admin.put(f"/users/{records['user']}", json={"id": BIG}), 400, "id")


def test_numbers_beyond_64_bits(admin: httpx.Client) -> None:
    huge = 2**70
    assert_error(admin.get(f"/users/{huge}"), 400, "9223372036854775807")
    assert_error(admin.get(f"/items/{huge}"), 400, "9223372036854775807")
    assert_error(
        admin.post("/usergroups", json={"name": "g", "project": huge}), 400, "9223372036854775807"
    )
    assert_error(admin.get("/items", params={"project": huge}), 400, "9223372036854775807")


def test_nothing_odd_is_a_500(admin: httpx.Client, records: dict[str, int]) -> None:
    odd = [
        admin.get("/users", params={"username": "é" * 255}),
        admin.get("/users", params={"email": "%", "lastName": "_"}),
        admin.get("/users", params={"startAt": 1_000_000}),
        admin.get("/usergroups", params={"project": -1}),
        admin.get("/activities", params={"project": 0}),
        admin.get("/activities", params={"project": records["project"], "itemType": -1}),
        admin.get("/projects", params={"include": ""}),
        admin.put(f"/users/{records['user']}", json={}),
        admin.put(f"/usergroups/{records['group']}", json={}),
        admin.put(f"/projects/{records['project']}", json={}),
        admin.post("/usergroups", json={"name": "ü" * 255}),
        admin.post("/usergroups", json={"name": "<script>alert(1)</script>" + unique("")}),
        admin.post("/projects", json={"isFolder": True, "fields": {"name": "'; DROP TABLE x; --"}}),
        admin.put(f"/users/{records['user']}", json={"title": "🚀" * 255}),
        admin.get("/users", params={"username": "a\u0000b"}),
    ]
    for response in odd:
        assert response.status_code < 500, response.text
        assert response.headers["content-type"].startswith("application/json")


def test_no_500_for_odd_but_legal_requests(admin: httpx.Client) -> None:
    odd = [
        admin.get("/users?startAt=99999999"),
        admin.get("/projects?maxResults=50&startAt=0&include="),
        admin.post("/projects", json={"projectKey": "Z" * 33, "fields": {"name": "x"}}),
        admin.put("/users/1", json={}),
        admin.post("/usergroups", json={"name": "ü" * 255}),
    ]
    for response in odd:
        assert response.status_code < 500, response.text


@pytest.mark.parametrize("size", [40_000, 60_000])
def test_an_over_long_url_is_a_json_414(system: System, size: int) -> None:
    """Too long for httpx to send: over a socket. A JSON error, then the connection closed."""
    with socket.create_connection(("127.0.0.1", system.gateway.http_port), timeout=10) as sock:
        target = f"/rest/v1/projects?x={'a' * size}"
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0].startswith("HTTP/1.1 414 "), lines[0]
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json"
    assert headers["x-content-type-options"] == "nosniff"
    meta = json.loads(body)["meta"]
    assert meta["status"] == "Request-URI Too Long"
    assert "The URL must be at most 32768 bytes" in meta["message"]
    assert system.client(auth=None).get("/projects", params={"x": "a" * 10_000}).status_code == 401


def test_answers_say_nosniff(system: System, admin: httpx.Client, project: dict[str, Any]) -> None:
    """API answers, files, errors and refusals alike: a browser takes none for another
    type than the one they say (an uploaded page is not run as HTML)."""
    body = {"fields": {"name": "page", "description": "html"}}
    attachment = admin.post(f"/projects/{project['id']}/attachments", json=body)
    attachment_id = attachment.json()["meta"]["id"]
    page = {"file": ("page.txt", b"<script>alert(1)</script>", "text/plain")}
    assert admin.put(f"/attachments/{attachment_id}/file", files=page).status_code == 200
    answers = [
        admin.get(f"/attachments/{attachment_id}/file"),
        admin.get("/projects"),
        admin.get("/projects/99999999"),
        system.client(auth=None).get("/projects"),
        admin.get("/files", params={"url": "nowhere"}),
        httpx.get(f"{system.url}/healthz"),
    ]
    for response in answers:
        assert response.headers.get_list("x-content-type-options") == ["nosniff"], response.url
