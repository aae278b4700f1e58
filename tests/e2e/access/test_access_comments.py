"""The access matrix for comments: each role x read, list, create.

A comment belongs to its location's project (the item's, or the project commented on).
Reading one needs READ there; commenting or replying needs WRITE (READ_WRITE): a comment
is a change to the project's record. The contract has no change or delete of comments.
"""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.api import (
    MATRIX_ROLES,
    Team,
    assert_answers,
    assert_error,
    create_item,
    created_id,
    grant,
    ids_of,
    new_project,
    total_of,
)


def _comment(client: httpx.Client, text: str, **body: Any) -> httpx.Response:
    return client.post("/comments", json={"body": {"text": text}, **body})


def _new_comment(admin: httpx.Client, text: str, **body: Any) -> int:
    return created_id(_comment(admin, text, **body))


def test_comments_by_role(team: Team, admin: httpx.Client) -> None:
    project = team.project["id"]
    may_read, may_write = team.expect("READ_ONLY"), team.expect("READ_WRITE")
    for role in MATRIX_ROLES:
        client = team.clients[role]
        item = create_item(admin, team.project, f"Discussed by {role}")
        on_item = _new_comment(admin, "On the item", location={"item": item})
        on_project = _new_comment(admin, "On the project", location={"project": project})
        reads = {
            "item comment": client.get(f"/comments/{on_item}"),
            "project comment": client.get(f"/comments/{on_project}"),
            "item's comments": client.get(f"/items/{item}/comments"),
            "replies": client.get(f"/comments/{on_item}/replies"),
        }
        listed = client.get("/comments", params={"maxResults": 50})
        writes = {
            "on item": _comment(client, role, location={"item": item}),
            "on project": _comment(client, role, location={"project": project}),
            "reply": _comment(client, role, inReplyTo=on_item),
        }
        assert listed.status_code == 200, (role, listed.text)
        assert_answers(reads, may_read[role], role, "no access")
        if may_read[role]:
            assert on_item in ids_of(reads["item's comments"]), role
            if role != "ORG_ADMIN":  # the org admin's first page holds every project's
                assert {on_item, on_project} <= set(ids_of(listed)), role
        else:
            assert not {on_item, on_project} & set(ids_of(listed)), role
        assert_answers(writes, may_write[role], role)
        if role == "READ_ONLY":
            assert_error(writes["on item"], 401, "READ_ONLY", "READ_WRITE", f"item {item}")


def test_comments_of_other_projects_do_not_leak(
    team: Team, admin: httpx.Client, make_user: Any
) -> None:
    """Not listed nor counted, not linked through a reply, not replied to."""
    other: dict[str, Any] = {"id": new_project(admin), "types": team.project["types"]}
    hidden_item = create_item(admin, other, "Elsewhere")
    on_hidden_item = _new_comment(admin, "Secret", location={"item": hidden_item})
    theirs = _new_comment(admin, "Secret too", location={"project": other["id"]})
    # An admin's reply placed in the team's project, answering a hidden comment.
    mine = _new_comment(admin, "Answer", inReplyTo=theirs, location={"project": team.project["id"]})
    user_id, _n, _p, reader = make_user()
    grant(admin, team.project["id"], "READ_WRITE", user=user_id)
    listed = reader.get(
        "/comments", params=[("include", "data.inReplyTo"), ("include", "data.location.item")]
    )
    assert ids_of(listed) == [mine]
    assert total_of(listed) == 1
    linked = listed.json().get("linked", {})
    assert str(theirs) not in linked.get("comments", {})
    assert str(hidden_item) not in linked.get("items", {})
    assert_error(reader.get(f"/comments/{theirs}"), 401, "no access", f"comment {theirs}")
    assert_error(reader.get(f"/comments/{on_hidden_item}"), 401, f"comment {on_hidden_item}")
    assert_error(reader.get(f"/comments/{theirs}/replies"), 401, f"comment {theirs}")
    assert_error(reader.get(f"/items/{hidden_item}/comments"), 401, f"item {hidden_item}")
    assert_error(
        _comment(reader, "Me too", inReplyTo=theirs, location={"project": team.project["id"]}),
        401,
        f"comment {theirs}",
    )
