"""Bad input: always the right status and a JSON message that names the problem."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.harness import System, assert_error, user_body


def test_malformed_json(admin: httpx.Client) -> None:
    response = admin.post(
        "/users", content=b'{"username": ', headers={"Content-Type": "application/json"}
    )
    assert_error(response, 400, "not valid JSON")


def test_body_must_be_an_object(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=[1, 2]), 400)
    assert_error(admin.post("/projects", json="text"), 400)


def test_missing_body(admin: httpx.Client) -> None:
    response = admin.post("/users", headers={"Content-Type": "application/json"})
    assert_error(response, 400, "JSON body")


def test_wrong_types_name_the_field(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=user_body(username=1)), 400, "username")
    assert_error(
        admin.post("/projects", json={"isFolder": "yes", "fields": {"name": "x"}}), 400, "isFolder"
    )
    assert_error(admin.put("/users/1/active", json={"active": "false"}), 400, "active")
    assert_error(admin.post("/usergroups", json={"name": "g", "project": "7"}), 400, "project")


def test_unknown_fields_are_named(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=user_body(nickname="x")), 400, "nickname")
    assert_error(
        admin.post("/projects", json={"projectKey": "K", "fields": {"name": "x", "colour": 1}}),
        400,
        "colour",
    )


def test_missing_required_fields(admin: httpx.Client) -> None:
    body = {k: v for k, v in user_body().items() if k not in ("email", "password")}
    assert_error(admin.post("/users", json=body), 400, "email is required", "password is required")
    assert_error(admin.post("/projects", json={"projectKey": "NONAME"}), 400, "name")
    assert_error(admin.post("/usergroups", json={}), 400, "name is required")


def test_over_long_and_empty_strings(admin: httpx.Client) -> None:
    assert_error(admin.post("/users", json=user_body(firstName="x" * 300)), 400, "firstName", "255")
    assert_error(admin.post("/users", json=user_body(username="")), 400, "username")
    assert_error(admin.post("/users", json=user_body(email="not-an-email")), 400, "email")
    assert_error(admin.post("/users", json=user_body(licenseType="GOLD")), 400, "licenseType")


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


def test_bad_query_values(admin: httpx.Client) -> None:
    assert_error(admin.get("/users?includeInactive=maybe"), 400, "includeInactive")
    assert_error(admin.get("/activities"), 400, "project")
    assert_error(admin.get("/activities?project=abc"), 400, "project")
    assert_error(admin.get("/activities?project=1&date=yesterday"), 400, "date")
    assert_error(admin.get("/activities?project=1&eventType=EXPLODE"), 400, "eventType")
    assert_error(admin.get("/projects?include=data.nothing"), 400, "include", "data.createdBy")


def test_unknown_ids_are_404(admin: httpx.Client) -> None:
    assert_error(admin.get("/users/987654"), 404, "987654")
    assert_error(admin.get("/projects/987654"), 404, "987654")
    assert_error(admin.get("/usergroups/987654"), 404, "987654")
    assert_error(admin.get("/activities/987654?project=1"), 404, "987654")
    assert_error(admin.put("/projects/987654", json={"fields": {"name": "x"}}), 404)
    assert_error(admin.delete("/usergroups/987654"), 404)


def test_non_integer_path_ids(admin: httpx.Client) -> None:
    for path in ("/users/abc", "/projects/1.5", "/usergroups/%20"):
        response = admin.get(path)
        assert response.status_code in (400, 404), response.text
        assert response.json()["meta"]["message"]


def test_unknown_paths_and_methods(admin: httpx.Client) -> None:
    assert_error(admin.get("/nothing-here"), 404, "/rest/v1/nothing-here")
    response = admin.delete("/users/1")
    assert_error(response, 405, "DELETE", "GET")
    assert "PUT" in response.headers["allow"]
    assert_error(admin.patch("/projects", json=[]), 405, "PATCH")


def test_credentials(system: System, anonymous: httpx.Client) -> None:
    assert_error(anonymous.get("/users/current"), 401, "Authentication is required")
    for auth in (("admin", "wrong"), ("nobody", "x")):
        response = httpx.get(f"{system.url}/rest/v1/users/current", auth=auth)
        assert_error(response, 401, "not correct")
    for header in ("Basic !!!", "Basic " + "dXNlcg==", "Digest abc", "Bearer"):
        response = httpx.get(
            f"{system.url}/rest/v1/users/current", headers={"Authorization": header}
        )
        assert_error(response, 401)


def test_nul_characters_are_refused(admin: httpx.Client) -> None:
    assert_error(admin.get("/users?username=a%00b"), 400, "username", "NUL")
    assert_error(admin.post("/users", json=user_body(title="a\u0000b")), 400, "title", "NUL")


def test_numbers_beyond_64_bits(admin: httpx.Client) -> None:
    huge = 2**70
    assert_error(admin.get(f"/users/{huge}"), 400, "9223372036854775807")
    assert_error(admin.get(f"/items/{huge}"), 400, "9223372036854775807")
    assert_error(
        admin.post("/usergroups", json={"name": "g", "project": huge}), 400, "9223372036854775807"
    )
    assert_error(admin.get("/items", params={"project": huge}), 400, "9223372036854775807")


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
